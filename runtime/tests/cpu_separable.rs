//! A kernel that is one convolution with a rank-1 mask runs on the CPU
//! backend as two one-dimensional passes; it must compute the evaluator's
//! values on every boundary mode, odd sizes, masks wider than the image,
//! regions of interest on both sides, and both operand orders.
//!
//! Tolerance: the two passes add the same products as the direct sum,
//! grouped by rows, so for the non-negative coefficients and inputs used
//! here the results differ by rounding only, at most `(w + h) · ε` relative
//! to the result (the classic bound of recursive summation); the bound
//! checked is `(w · h + 4) · ε · max(|e|, 1)`, as in the conformance suite.
//! A wrong tap, row or boundary remap changes a result by at least
//! 1/16 · 1/64 (inputs are multiples of 1/16 at least 0.5, coefficients at
//! least 1/64), far above that bound.
//!
//! The device runs every launch in parallel (`Device::cpu_serial_below(0)`):
//! `Device::cpu()` computes launches as small as these images directly.

use hipacc::core::ir::evaluate_kernel;
use hipacc::prelude::*;

/// Mask times input, in this order.
#[derive(Kernel)]
#[kernel(output = f32)]
struct MaskFirst {
    input: Accessor<f32>,
    mask: Mask<f32>,
}

#[kernel_body]
impl MaskFirst {
    fn kernel(&self) -> f32 {
        convolve(&self.mask, Sum, |dx, dy| {
            self.mask.at(dx, dy) * self.input.at(dx, dy)
        })
    }
}

/// Input times mask, in `f64`.
#[derive(Kernel)]
#[kernel(output = f64)]
struct InputFirst {
    input: Accessor<f64>,
    mask: Mask<f64>,
}

#[kernel_body]
impl InputFirst {
    fn kernel(&self) -> f64 {
        convolve(&self.mask, Sum, |dx, dy| {
            self.input.at(dx, dy) * self.mask.at(dx, dy)
        })
    }
}

/// Every second pixel along both axes (a pyramid's reduce step).
#[derive(Kernel)]
#[kernel(output = f32)]
struct Decimate {
    input: Accessor<f32>,
    mask: Mask<f32>,
}

#[kernel_body]
impl Decimate {
    fn kernel(&self) -> f32 {
        convolve(&self.mask, Sum, |dx, dy| {
            self.mask.at(dx, dy) * self.input.at(x() + dx, y() + dy)
        })
    }
}

/// Every second pixel along x only, in `f64`, operands swapped.
#[derive(Kernel)]
#[kernel(output = f64)]
struct DecimateX {
    input: Accessor<f64>,
    mask: Mask<f64>,
}

#[kernel_body]
impl DecimateX {
    fn kernel(&self) -> f64 {
        convolve(&self.mask, Sum, |dx, dy| {
            self.input.at(dx + x(), dy) * self.mask.at(dx, dy)
        })
    }
}

/// Every second pixel along y only.
#[derive(Kernel)]
#[kernel(output = f32)]
struct DecimateY {
    input: Accessor<f32>,
    mask: Mask<f32>,
}

#[kernel_body]
impl DecimateY {
    fn kernel(&self) -> f32 {
        convolve(&self.mask, Sum, |dx, dy| {
            self.mask.at(dx, dy) * self.input.at(dx, dy + y())
        })
    }
}

/// A rank-1 mask: the outer product of two small-integer taps over 64.
fn rank1(w: usize, h: usize) -> (Vec<f64>, Vec<f64>) {
    let row = (0..w).map(|i| (1 + (i * 5) % 7) as f64 / 8.0).collect();
    let col = (0..h).map(|j| (1 + (j * 3) % 5) as f64 / 8.0).collect();
    (row, col)
}

/// The row-major coefficients of [`rank1`], in `f64` and in `f32`.
fn rank1_coefficients(w: usize, h: usize) -> (Vec<f64>, Vec<f32>) {
    let (row, col) = rank1(w, h);
    let c: Vec<f64> = col
        .iter()
        .flat_map(|c| row.iter().map(move |r| r * c))
        .collect();
    let c32 = c.iter().map(|&v| v as f32).collect();
    (c, c32)
}

/// The same boundary condition for `f32` pixels.
fn as_f32(b: Boundary<f64>) -> Boundary<f32> {
    match b {
        Boundary::Constant(v) => Boundary::Constant(v as f32),
        Boundary::Clamp => Boundary::Clamp,
        Boundary::Repeat => Boundary::Repeat,
        Boundary::Mirror => Boundary::Mirror,
        Boundary::MirrorInterior => Boundary::MirrorInterior,
        Boundary::Undefined => Boundary::Undefined,
    }
}

fn boundaries(c: f64) -> Vec<Boundary<f64>> {
    vec![
        Boundary::Clamp,
        Boundary::Repeat,
        Boundary::Mirror,
        Boundary::MirrorInterior,
        Boundary::Constant(c),
    ]
}

fn value(x: usize, y: usize) -> f64 {
    0.5 + ((x * 7 + y * 13) % 17) as f64 / 16.0
}

fn assert_close(what: &str, got: &[f64], want: &[f64], terms: usize, eps: f64) {
    assert_eq!(got.len(), want.len(), "{what}");
    for (i, (g, e)) in got.iter().zip(want).enumerate() {
        let tol = (terms + 4) as f64 * eps * e.abs().max(1.0);
        assert!((g - e).abs() <= tol, "{what}: pixel {i}: {g} vs {e}");
    }
}

/// Runs `kernel` on the CPU and in the evaluator over `space` of an
/// `out`-sized image and compares.
fn check<K: Kernel>(
    what: &str,
    kernel: &K,
    out: (usize, usize),
    space: Rect,
    terms: usize,
    eps: f64,
) where
    K::Output: Into<f64>,
{
    let cpu = Image::<K::Output>::new(out.0, out.1).expect("out");
    let reference = Image::<K::Output>::new(out.0, out.1).expect("out");
    kernel
        .execute(
            &Device::cpu_serial_below(0),
            &IterationSpace::region(&cpu, space).expect("space"),
        )
        .expect("cpu");
    evaluate_kernel(
        kernel,
        &IterationSpace::region(&reference, space).expect("space"),
    )
    .expect("evaluator");
    let f = |img: &Image<K::Output>| -> Vec<f64> {
        img.to_vec()
            .expect("pixels")
            .into_iter()
            .map(Into::into)
            .collect()
    };
    assert_close(what, &f(&cpu), &f(&reference), terms, eps);
}

#[test]
fn separable_convolutions_match_the_evaluator() {
    let sizes = [(1, 1), (1, 7), (2, 3), (5, 17), (64, 64), (127, 33)];
    let masks = [(3, 3), (5, 5), (7, 7), (9, 3), (3, 15), (15, 15)];
    for (w, h) in sizes {
        let src64 = Image::from_fn(w, h, value).expect("image");
        let src32 = Image::from_fn(w, h, |x, y| value(x, y) as f32).expect("image");
        for (mw, mh) in masks {
            let (c, c32) = rank1_coefficients(mw, mh);
            for b in boundaries(0.75) {
                let b32 = as_f32(b);
                let what = format!("{w}x{h} mask {mw}x{mh} {b:?}");
                let k32 = MaskFirst {
                    input: Accessor::new(&src32).with_boundary(b32),
                    mask: Mask::from_vec(mw, mh, c32.clone()).expect("mask"),
                };
                let k64 = InputFirst {
                    input: Accessor::new(&src64).with_boundary(b),
                    mask: Mask::from_vec(mw, mh, c.clone()).expect("mask"),
                };
                let full = Rect::full(w, h);
                let eps32 = f64::from(f32::EPSILON);
                check(&format!("f32 {what}"), &k32, (w, h), full, mw * mh, eps32);
                check(
                    &format!("f64 {what}"),
                    &k64,
                    (w, h),
                    full,
                    mw * mh,
                    f64::EPSILON,
                );
                if w > 4 && h > 4 {
                    // A region of interest on the accessor and on the output.
                    let region = Rect::new(1, 2, w - 3, h - 4);
                    let k = MaskFirst {
                        input: Accessor::new(&src32).with_boundary(b32).with_region(region),
                        mask: Mask::from_vec(mw, mh, c32.clone()).expect("mask"),
                    };
                    let space = Rect::new(2, 1, w - 3, h - 4);
                    check(
                        &format!("f32 roi {what}"),
                        &k,
                        (w, h),
                        space,
                        mw * mh,
                        eps32,
                    );
                }
            }
        }
    }
}

#[test]
fn masks_that_do_not_separate_still_match() {
    let src = Image::from_fn(40, 23, |x, y| value(x, y) as f32).expect("image");
    let laplace = vec![0.0, 1.0, 0.0, 1.0, 4.0, 1.0, 0.0, 1.0, 0.0];
    let k = MaskFirst {
        input: Accessor::new(&src).with_boundary(Boundary::Mirror),
        mask: Mask::from_vec(3, 3, laplace).expect("mask"),
    };
    check(
        "cross",
        &k,
        (40, 23),
        Rect::full(40, 23),
        9,
        f64::from(f32::EPSILON),
    );
}

#[test]
fn decimating_convolutions_match_the_evaluator() {
    let sizes = [(1, 1), (1, 7), (2, 3), (5, 17), (64, 64), (127, 33)];
    let masks = [(3, 3), (5, 5), (7, 7), (9, 3), (15, 15)];
    let eps32 = f64::from(f32::EPSILON);
    for (w, h) in sizes {
        let src64 = Image::from_fn(w, h, value).expect("image");
        let src32 = Image::from_fn(w, h, |x, y| value(x, y) as f32).expect("image");
        // The coarse grid: half the size, rounded up.
        let (cw, ch) = (w.div_ceil(2), h.div_ceil(2));
        for (mw, mh) in masks {
            let (c, c32) = rank1_coefficients(mw, mh);
            let m32 = || Mask::from_vec(mw, mh, c32.clone()).expect("mask");
            for b in boundaries(0.75) {
                let b32 = as_f32(b);
                let what = format!("{w}x{h} mask {mw}x{mh} {b:?}");
                let terms = mw * mh;
                let both = Decimate {
                    input: Accessor::new(&src32).with_boundary(b32),
                    mask: m32(),
                };
                let full = Rect::full(cw, ch);
                check(&format!("xy {what}"), &both, (cw, ch), full, terms, eps32);
                let along_x = DecimateX {
                    input: Accessor::new(&src64).with_boundary(b),
                    mask: Mask::from_vec(mw, mh, c.clone()).expect("mask"),
                };
                let full = Rect::full(cw, h);
                check(
                    &format!("x {what}"),
                    &along_x,
                    (cw, h),
                    full,
                    terms,
                    f64::EPSILON,
                );
                let along_y = DecimateY {
                    input: Accessor::new(&src32).with_boundary(b32),
                    mask: m32(),
                };
                check(
                    &format!("y {what}"),
                    &along_y,
                    (w, ch),
                    Rect::full(w, ch),
                    terms,
                    eps32,
                );
                if w > 4 && h > 4 {
                    // A space away from the origin reads from `2 p + origin`.
                    let region = Rect::new(1, 2, w - 3, h - 4);
                    let k = Decimate {
                        input: Accessor::new(&src32).with_boundary(b32).with_region(region),
                        mask: m32(),
                    };
                    let space = Rect::new(1, 2, cw - 2, ch - 2);
                    check(&format!("xy roi {what}"), &k, (cw, ch), space, terms, eps32);
                }
            }
        }
    }
}
