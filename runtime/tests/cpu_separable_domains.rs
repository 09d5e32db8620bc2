//! A sum over a domain that visits its whole rectangle (a box filter) runs
//! on the CPU backend as two one-dimensional passes, like a convolution
//! with a mask of ones, also when the sum is multiplied by a parameter or
//! a constant (a box mean). It must compute the evaluator's values on every
//! boundary mode, odd sizes (1x1, 3x2, 127x33) and windows wider than the
//! image; domains with holes run the direct way.
//!
//! A `Min` or `Max` over such a domain runs as two passes too (the least
//! of each row's least values): `min` and `max` are associative, and the
//! passes keep the evaluator's order of operands, so every result must be
//! the same bits, also for NaN inputs (a NaN operand yields the other one;
//! a window of NaNs yields its last one), signed zeros (the first of equal
//! values wins) and infinities, under every boundary mode, in `f32` and
//! `f64`, and where a pipeline computes the reduction strip by strip.
//!
//! Tolerance: the two passes add the same pixels as the direct sum,
//! grouped by rows, so they differ by rounding only; the bound checked is
//! the conformance suite's `(n + 4) · ε · max(|e|, 1)` for `n` window
//! positions (here the sums are exact: the inputs are multiples of 1/16
//! of at most 1.5, so every partial sum of up to 255 of them fits f32's
//! 24 bits, and the products by the factor are the same operation). A
//! wrong tap, row or boundary remap changes a mean by at least
//! 1/16 · 1/255, far above that bound.
//!
//! The device runs every launch in parallel (`Device::cpu_serial_below(0)`):
//! `Device::cpu()` computes launches as small as these images directly.

use hipacc::core::ir::evaluate_kernel;
use hipacc::core::Pixel;
use hipacc::prelude::*;
use hipacc::Pipeline;

/// A box mean: the sum times a parameter.
#[derive(Kernel)]
#[kernel(output = f32)]
struct BoxMean {
    input: Accessor<f32>,
    window: Domain,
    scale: f32,
}

#[kernel_body]
impl BoxMean {
    fn kernel(&self) -> f32 {
        reduce(&self.window, Sum, |dx, dy| self.input.at(dx, dy)) * self.scale
    }
}

/// A box sum in `f64`, times a constant on the left.
#[derive(Kernel)]
#[kernel(output = f64)]
struct HalfBoxSum {
    input: Accessor<f64>,
    window: Domain,
}

#[kernel_body]
impl HalfBoxSum {
    fn kernel(&self) -> f64 {
        0.5 * reduce(&self.window, Sum, |dx, dy| self.input.at(dx, dy))
    }
}

/// A plain box sum.
#[derive(Kernel)]
#[kernel(output = f32)]
struct BoxSum {
    input: Accessor<f32>,
    window: Domain,
}

#[kernel_body]
impl BoxSum {
    fn kernel(&self) -> f32 {
        reduce(&self.window, Sum, |dx, dy| self.input.at(dx, dy))
    }
}

/// Erosion.
#[derive(Kernel)]
#[kernel(output = f32)]
struct Least {
    input: Accessor<f32>,
    window: Domain,
}

#[kernel_body]
impl Least {
    fn kernel(&self) -> f32 {
        reduce(&self.window, Min, |dx, dy| self.input.at(dx, dy))
    }
}

/// Dilation in `f64`, times a parameter.
#[derive(Kernel)]
#[kernel(output = f64)]
struct ScaledMost {
    input: Accessor<f64>,
    window: Domain,
    scale: f64,
}

#[kernel_body]
impl ScaledMost {
    fn kernel(&self) -> f64 {
        reduce(&self.window, Max, |dx, dy| self.input.at(dx, dy)) * self.scale
    }
}

/// A point operator feeding a reduction in a pipeline.
#[derive(Kernel)]
#[kernel(output = f32)]
struct Negate {
    input: Accessor<f32>,
}

#[kernel_body]
impl Negate {
    fn kernel(&self) -> f32 {
        -self.input.at(0, 0)
    }
}

/// Dilation.
#[derive(Kernel)]
#[kernel(output = f32)]
struct Most {
    input: Accessor<f32>,
    window: Domain,
}

#[kernel_body]
impl Most {
    fn kernel(&self) -> f32 {
        reduce(&self.window, Max, |dx, dy| self.input.at(dx, dy))
    }
}

const SIZES: [(usize, usize); 6] = [(1, 1), (3, 2), (1, 7), (5, 17), (64, 64), (127, 33)];
const WINDOWS: [(usize, usize); 6] = [(3, 3), (7, 7), (13, 13), (15, 3), (3, 9), (1, 5)];

fn value(x: usize, y: usize) -> f64 {
    0.5 + ((x * 7 + y * 13) % 17) as f64 / 16.0
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

/// Runs `kernel` on the CPU and in the evaluator over the whole `size`
/// image and compares within `(terms + 4) · eps · max(|e|, 1)`.
fn check<K: Kernel>(what: &str, kernel: &K, size: (usize, usize), terms: usize, eps: f64)
where
    K::Output: Into<f64>,
{
    let cpu = Image::<K::Output>::new(size.0, size.1).expect("out");
    let reference = Image::<K::Output>::new(size.0, size.1).expect("out");
    kernel
        .execute(&Device::cpu_serial_below(0), &IterationSpace::full(&cpu))
        .expect("cpu");
    evaluate_kernel(kernel, &IterationSpace::full(&reference)).expect("evaluator");
    let f = |img: &Image<K::Output>| -> Vec<f64> {
        img.to_vec()
            .expect("pixels")
            .into_iter()
            .map(Into::into)
            .collect()
    };
    for (i, (g, e)) in f(&cpu).iter().zip(&f(&reference)).enumerate() {
        let tol = (terms + 4) as f64 * eps * e.abs().max(1.0);
        assert!((g - e).abs() <= tol, "{what}: pixel {i}: {g} vs {e}");
    }
}

#[test]
fn box_sums_match_the_evaluator() {
    let eps32 = f64::from(f32::EPSILON);
    for (w, h) in SIZES {
        let src64 = Image::from_fn(w, h, value).expect("image");
        let src32 = Image::from_fn(w, h, |x, y| value(x, y) as f32).expect("image");
        for (dw, dh) in WINDOWS {
            let n = dw * dh;
            let domain = || Domain::new(dw, dh).expect("domain");
            for b in boundaries(0.75) {
                let what = format!("{w}x{h} domain {dw}x{dh} {b:?}");
                let mean = BoxMean {
                    input: Accessor::new(&src32).with_boundary(as_f32(b)),
                    window: domain(),
                    scale: 1.0 / n as f32,
                };
                check(&format!("mean {what}"), &mean, (w, h), n, eps32);
                let half = HalfBoxSum {
                    input: Accessor::new(&src64).with_boundary(b),
                    window: domain(),
                };
                check(&format!("f64 half {what}"), &half, (w, h), n, f64::EPSILON);
                let sum = BoxSum {
                    input: Accessor::new(&src32).with_boundary(as_f32(b)),
                    window: domain(),
                };
                check(&format!("sum {what}"), &sum, (w, h), n, eps32);
            }
        }
    }
}

#[test]
fn domains_with_holes_still_match() {
    let src = Image::from_fn(40, 23, |x, y| value(x, y) as f32).expect("image");
    let mut cross = Domain::new(5, 5).expect("domain");
    for (dx, dy) in [(-2, -2), (2, -2), (-2, 2), (2, 2), (0, 0)] {
        cross.set(dx, dy, false).expect("inside");
    }
    let k = BoxMean {
        input: Accessor::new(&src).with_boundary(Boundary::Mirror),
        window: cross,
        scale: 0.25,
    };
    check("holes", &k, (40, 23), 25, f64::from(f32::EPSILON));
}

/// Windows of the min/max checks: the sizes written out in the direct
/// path (3, 5, 7), wider ones and single rows and columns.
const EXTREMA_WINDOWS: [(usize, usize); 8] = [
    (3, 3),
    (5, 5),
    (7, 7),
    (13, 13),
    (15, 3),
    (3, 9),
    (1, 5),
    (5, 1),
];

/// Pixels with every value `min` and `max` treat specially: NaNs of
/// distinct payloads (and a negative one), signed zeros, infinities, a
/// block of NaNs wider than a 5x5 window, and a band of non-positive
/// values where maxima tie between `-0.0` and `+0.0`.
fn special(x: usize, y: usize) -> f64 {
    let nan = |k: usize| f64::from(f32::from_bits(0x7fc0_0000 | (k as u32 & 0xffff)));
    if (9..16).contains(&x) && (3..10).contains(&y) {
        return nan(1 + x * 64 + y);
    }
    let sign = if (20..30).contains(&y) { -1.0 } else { 1.0 };
    match (x * 7 + y * 13) % 19 {
        0 => nan(x + y),
        1 => -0.0,
        2 | 3 => sign * 0.0,
        4 => f64::INFINITY,
        5 => f64::NEG_INFINITY,
        6 => -nan(3),
        _ => sign * value(x, y),
    }
}

/// Runs `kernel` on the CPU and in the evaluator over the whole `size`
/// image and requires the same bits.
fn check_bits<K: Kernel>(what: &str, kernel: &K, size: (usize, usize))
where
    K::Output: Into<f64>,
{
    let cpu = Image::<K::Output>::new(size.0, size.1).expect("out");
    let reference = Image::<K::Output>::new(size.0, size.1).expect("out");
    kernel
        .execute(&Device::cpu_serial_below(0), &IterationSpace::full(&cpu))
        .expect("cpu");
    evaluate_kernel(kernel, &IterationSpace::full(&reference)).expect("evaluator");
    same_bits(what, &cpu, &reference);
}

/// Requires `got` and `want` to hold the same bits, pixel by pixel.
fn same_bits<T: Pixel + Into<f64>>(what: &str, got: &Image<T>, want: &Image<T>) {
    let bits = |img: &Image<T>| -> Vec<u64> {
        let v = img.to_vec().expect("pixels");
        // f32 to f64 keeps a NaN's payload and sign, and the sign of zero.
        v.into_iter().map(|p| p.into().to_bits()).collect()
    };
    for (i, (g, e)) in bits(got).iter().zip(&bits(want)).enumerate() {
        let (gv, ev) = (f64::from_bits(*g), f64::from_bits(*e));
        assert_eq!(
            g, e,
            "{what}: pixel {i}: {gv:?} ({g:#x}) vs {ev:?} ({e:#x})"
        );
    }
}

/// Boundary conditions for the min/max checks: every mode, with NaN and
/// negative-zero constants.
fn extrema_boundaries() -> Vec<Boundary<f64>> {
    let mut all = boundaries(0.75);
    all.push(Boundary::Constant(f64::NAN));
    all.push(Boundary::Constant(-0.0));
    all
}

#[test]
fn min_and_max_domains_give_the_evaluators_bits() {
    // 1030 columns: rows run in chunks of 512 outputs where taps regroup.
    let sizes = [
        (1, 1),
        (3, 2),
        (1, 7),
        (5, 17),
        (40, 37),
        (127, 33),
        (1030, 4),
    ];
    for (w, h) in sizes {
        let src32 = Image::from_fn(w, h, |x, y| special(x, y) as f32).expect("image");
        let src64 = Image::from_fn(w, h, special).expect("image");
        for (dw, dh) in EXTREMA_WINDOWS {
            for b in extrema_boundaries() {
                let what = format!("{w}x{h} domain {dw}x{dh} {b:?}");
                let input = || Accessor::new(&src32).with_boundary(as_f32(b));
                let window = || Domain::new(dw, dh).expect("domain");
                let least = Least {
                    input: input(),
                    window: window(),
                };
                check_bits(&format!("min {what}"), &least, (w, h));
                let most = Most {
                    input: input(),
                    window: window(),
                };
                check_bits(&format!("max {what}"), &most, (w, h));
                let scaled = ScaledMost {
                    input: Accessor::new(&src64).with_boundary(b),
                    window: window(),
                    scale: -1.5,
                };
                check_bits(&format!("f64 scaled max {what}"), &scaled, (w, h));
            }
        }
    }
}

#[test]
fn min_and_max_in_a_pipeline_give_the_evaluators_bits() {
    let (w, h) = (83, 61);
    let src = Image::from_fn(w, h, |x, y| special(x, y) as f32).expect("image");
    for b in extrema_boundaries() {
        let negated = Image::<f32>::new(w, h).expect("image");
        let out = Image::<f32>::new(w, h).expect("image");
        let negate = Negate {
            input: Accessor::new(&src),
        };
        let dilate = Most {
            input: Accessor::new(&negated).with_boundary(as_f32(b)),
            window: Domain::new(5, 5).expect("domain"),
        };
        Pipeline::new()
            .stage(&negate, &IterationSpace::full(&negated))
            .stage(&dilate, &IterationSpace::full(&out))
            .execute(&Device::cpu_serial_below(0))
            .expect("pipeline");
        let want_negated = Image::<f32>::new(w, h).expect("image");
        evaluate_kernel(&negate, &IterationSpace::full(&want_negated)).expect("evaluator");
        same_bits(&format!("negated {b:?}"), &negated, &want_negated);
        let want = Image::<f32>::new(w, h).expect("image");
        evaluate_kernel(&dilate, &IterationSpace::full(&want)).expect("evaluator");
        same_bits(&format!("pipeline max {b:?}"), &out, &want);
    }
}
