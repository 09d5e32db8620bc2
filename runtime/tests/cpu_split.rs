//! Bodies whose weighted window sums use rank-1 masks, and whose
//! unweighted sums cover every position of a window (boxes), run the sums
//! in two passes on the CPU, whatever else the body computes. The results match
//! the IR evaluator (direct sums, one pixel at a time) within the rounding
//! of a regrouped sum, on every boundary mode, odd sizes and images
//! smaller than the window; and a pipeline whose last stage takes that
//! path equals the same kernels run one by one, bit for bit.
//!
//! Tolerance: the two-pass sum of `n` terms differs from the direct one by
//! at most `(n + 4) ε Σ |w E|`; the bodies below combine a few such sums
//! with products of magnitude at most 4 (inputs in `[0.5, 1.5]`), so every
//! pixel must be within `256 ε (1 + max |reference|)` of the evaluator,
//! about `3e-5` of the output's scale. A wrong tap or boundary moves a
//! pixel by far more (a tenth of a tap weight at least).

use hipacc::core::ir::evaluate_kernel;
use hipacc::pipeline::Pipeline;
use hipacc::prelude::*;

mod cpu_support;
use cpu_support::{boundary, image};

/// Gaussian-weighted sums of products of two derivatives, then the Harris
/// response, with `let`s and a parameter.
#[derive(Kernel)]
#[kernel(output = f32)]
struct Response {
    ix: Accessor<f32>,
    iy: Accessor<f32>,
    mask: Mask<f32, 5, 5>,
    k: f32,
}

#[kernel_body]
impl Response {
    fn kernel(&self) -> f32 {
        let sxx = convolve(&self.mask, Sum, |dx, dy| {
            self.mask.at(dx, dy) * (self.ix.at(dx, dy) * self.ix.at(dx, dy))
        });
        let syy = convolve(&self.mask, Sum, |dx, dy| {
            (self.iy.at(dx, dy) * self.iy.at(dx, dy)) * self.mask.at(dx, dy)
        });
        let sxy = convolve(&self.mask, Sum, |dx, dy| {
            self.mask.at(dx, dy) * (self.ix.at(dx, dy) * self.iy.at(dx, dy))
        });
        let trace = sxx + syy;
        sxx * syy - sxy * sxy - self.k * trace * trace
    }
}

/// Unsharp masking in one body: a 3x7 blur around a point-wise sharpen.
#[derive(Kernel)]
#[kernel(output = f32)]
struct Unsharp {
    input: Accessor<f32>,
    mask: Mask<f32, 3, 7>,
    amount: f32,
}

#[kernel_body]
impl Unsharp {
    fn kernel(&self) -> f32 {
        let blur = convolve(&self.mask, Sum, |dx, dy| {
            self.mask.at(dx, dy) * self.input.at(dx, dy)
        });
        self.input() + self.amount * (self.input() - blur)
    }
}

/// Two blurs of different widths around the centre read, all of one
/// accessor: each reads the same source rows at other columns (the row
/// gathered for one must not stand in for another's).
#[derive(Kernel)]
#[kernel(output = f32)]
struct RowBlurs {
    input: Accessor<f32>,
    wide: Mask<f32, 5, 3>,
    narrow: Mask<f32, 3, 3>,
}

#[kernel_body]
impl RowBlurs {
    fn kernel(&self) -> f32 {
        let a = convolve(&self.wide, Sum, |dx, dy| {
            self.wide.at(dx, dy) * self.input.at(dx, dy)
        });
        let b = convolve(&self.narrow, Sum, |dx, dy| {
            self.narrow.at(dx, dy) * (self.input.at(dx, dy) * self.input.at(dx, dy))
        });
        self.input() * 3.0 - a + b
    }
}

/// The smaller eigenvalue of the structure tensor, summed over a domain
/// (Shi-Tomasi corners): three unweighted window sums of products, which
/// run as two passes of ones.
#[derive(Kernel)]
#[kernel(output = f32)]
struct MinEigen {
    ix: Accessor<f32>,
    iy: Accessor<f32>,
    window: Domain,
}

#[kernel_body]
impl MinEigen {
    fn kernel(&self) -> f32 {
        let sxx = reduce(&self.window, Sum, |dx, dy| {
            self.ix.at(dx, dy) * self.ix.at(dx, dy)
        });
        let syy = reduce(&self.window, Sum, |dx, dy| {
            self.iy.at(dx, dy) * self.iy.at(dx, dy)
        });
        let sxy = reduce(&self.window, Sum, |dx, dy| {
            self.ix.at(dx, dy) * self.iy.at(dx, dy)
        });
        let half_diff = (sxx - syy) * 0.5;
        (sxx + syy) * 0.5 - (half_diff * half_diff + sxy * sxy).sqrt()
    }
}

/// A local variance: unweighted sums over every position of a mask (its
/// coefficients unused), as a box.
#[derive(Kernel)]
#[kernel(output = f32)]
struct Variance {
    input: Accessor<f32>,
    window: Mask<f32, 3, 5>,
}

#[kernel_body]
impl Variance {
    fn kernel(&self) -> f32 {
        let n = 15.0;
        let mean = convolve(&self.window, Sum, |dx, dy| self.input.at(dx, dy)) / n;
        let square = convolve(&self.window, Sum, |dx, dy| {
            self.input.at(dx, dy) * self.input.at(dx, dy)
        }) / n;
        square - mean * mean
    }
}

/// A derivative, for the pipeline.
#[derive(Kernel)]
#[kernel(output = f32)]
struct Diff {
    input: Accessor<f32>,
    dx: i32,
}

#[kernel_body]
impl Diff {
    fn kernel(&self) -> f32 {
        self.input.at(self.dx, 1 - self.dx) - self.input.at(-self.dx, self.dx - 1)
    }
}

/// A rank-1 `W x H` mask of positive weights.
fn mask<const W: usize, const H: usize>() -> Mask<f32, W, H> {
    let kx: [f32; W] = std::array::from_fn(|i| 1.0 + (i * (W - 1 - i)) as f32);
    let ky: [f32; H] = std::array::from_fn(|j| 0.5 + (j * (H - 1 - j)) as f32 / 4.0);
    Mask::fixed(std::array::from_fn(|r| {
        std::array::from_fn(|c| ky[r] * kx[c] / 16.0)
    }))
    .expect("odd")
}

/// Runs `kernel` on the CPU over the whole of a `w x h` output and checks
/// it against the evaluator.
fn check<K: Kernel<Output = f32>>(what: &str, kernel: &K, w: usize, h: usize) {
    let (cpu, reference) = (
        Image::<f32>::new(w, h).unwrap(),
        Image::<f32>::new(w, h).unwrap(),
    );
    // Both the parallel bands and one band on the calling thread.
    for device in [
        Device::cpu_serial_below(0),
        Device::cpu_serial_below(usize::MAX),
    ] {
        kernel
            .execute(&device, &IterationSpace::full(&cpu))
            .expect("cpu");
        evaluate_kernel(kernel, &IterationSpace::full(&reference)).expect("evaluator");
        let (got, want) = (cpu.to_vec().unwrap(), reference.to_vec().unwrap());
        let scale = 1.0 + want.iter().fold(0.0f32, |m, v| m.max(v.abs()));
        let tol = 256.0 * f32::EPSILON * scale;
        for (i, (g, r)) in got.iter().zip(&want).enumerate() {
            assert!(
                (g - r).abs() <= tol,
                "{what} {w}x{h}: pixel ({}, {}) is {g}, the evaluator gives {r} (tolerance {tol})",
                i % w,
                i / w
            );
        }
    }
}

const SIZES: [(usize, usize); 6] = [(1, 1), (2, 3), (4, 9), (13, 5), (67, 45), (130, 71)];

#[test]
fn harris_responses_match_the_evaluator_on_every_mode() {
    for (w, h) in SIZES {
        let (ix, iy) = (image(w, h, 1), image(w, h, 2));
        for mode in 0..5 {
            let k = Response {
                ix: Accessor::new(&ix).with_boundary(boundary(mode)),
                iy: Accessor::new(&iy).with_boundary(boundary(4 - mode)),
                mask: mask::<5, 5>(),
                k: 0.04,
            };
            check(&format!("harris, mode {mode}"), &k, w, h);
        }
    }
}

#[test]
fn one_kernel_unsharp_matches_the_evaluator_on_every_mode() {
    for (w, h) in SIZES {
        let input = image(w, h, 7);
        for mode in 0..5 {
            let k = Unsharp {
                input: Accessor::new(&input).with_boundary(boundary(mode)),
                mask: mask::<3, 7>(),
                amount: 1.5,
            };
            check(&format!("unsharp, mode {mode}"), &k, w, h);
        }
    }
}

#[test]
fn sums_of_several_widths_over_one_accessor_read_their_own_columns() {
    for (w, h) in SIZES {
        let input = image(w, h, 3);
        for mode in 0..5 {
            let k = RowBlurs {
                input: Accessor::new(&input).with_boundary(boundary(mode)),
                wide: mask::<5, 3>(),
                narrow: mask::<3, 3>(),
            };
            check(&format!("row blurs, mode {mode}"), &k, w, h);
        }
    }
}

#[test]
fn structure_tensors_over_domains_match_the_evaluator_on_every_mode() {
    for (w, h) in SIZES {
        let (ix, iy) = (image(w, h, 11), image(w, h, 12));
        for (dw, dh) in [(3, 3), (5, 5), (7, 3), (9, 9)] {
            for mode in 0..5 {
                let k = MinEigen {
                    ix: Accessor::new(&ix).with_boundary(boundary(mode)),
                    iy: Accessor::new(&iy).with_boundary(boundary(4 - mode)),
                    window: Domain::new(dw, dh).unwrap(),
                };
                check(&format!("min eigenvalue {dw}x{dh}, mode {mode}"), &k, w, h);
            }
        }
    }
}

#[test]
fn a_domain_with_a_position_off_keeps_its_taps() {
    let (w, h) = (37, 29);
    let (ix, iy) = (image(w, h, 13), image(w, h, 14));
    let mut window = Domain::new(5, 5).unwrap();
    window.set(1, -2, false).unwrap();
    let k = MinEigen {
        ix: Accessor::new(&ix).with_boundary(Boundary::Mirror),
        iy: Accessor::new(&iy).with_boundary(Boundary::Repeat),
        window,
    };
    check("min eigenvalue, 5x5 less one", &k, w, h);
}

#[test]
fn unweighted_mask_sums_match_the_evaluator_on_every_mode() {
    for (w, h) in SIZES {
        let input = image(w, h, 15);
        for mode in 0..5 {
            let k = Variance {
                input: Accessor::new(&input).with_boundary(boundary(mode)),
                window: mask::<3, 5>(),
            };
            check(&format!("variance, mode {mode}"), &k, w, h);
        }
    }
}

#[test]
fn a_mask_without_rank_one_keeps_the_direct_sums() {
    let (w, h) = (37, 29);
    let (ix, iy) = (image(w, h, 5), image(w, h, 6));
    let mut values: [[f32; 5]; 5] =
        std::array::from_fn(|r| std::array::from_fn(|c| 1.0 + ((r * 5 + c * 3) % 7) as f32));
    values[2][2] = 40.0;
    let k = Response {
        ix: Accessor::new(&ix).with_boundary(Boundary::Mirror),
        iy: Accessor::new(&iy).with_boundary(Boundary::Clamp),
        mask: Mask::fixed(values).unwrap(),
        k: 0.04,
    };
    check("harris, full-rank mask", &k, w, h);
}

/// Runs derivatives of a `w x h` input (through `input_mode`) then
/// `last(ix, iy)` as a pipeline and kernel by kernel, on both CPU devices,
/// and checks that the outputs are the same bits.
fn check_fused<K: Kernel<Output = f32>>(
    what: &str,
    (w, h): (usize, usize),
    input_mode: Boundary<f32>,
    last: impl Fn(&Image<f32>, &Image<f32>) -> K,
) {
    let input = image(w, h, 9);
    let (ix, iy, out) = (
        Image::<f32>::new(w, h).unwrap(),
        Image::<f32>::new(w, h).unwrap(),
        Image::<f32>::new(w, h).unwrap(),
    );
    let diff = |dx: i32| Diff {
        input: Accessor::new(&input).with_boundary(input_mode),
        dx,
    };
    let (dx, dy, last) = (diff(1), diff(0), last(&ix, &iy));
    let spaces = [&ix, &iy, &out].map(IterationSpace::full);
    for device in [Device::cpu_serial_below(0), Device::cpu()] {
        out.write().unwrap().fill(f32::NAN);
        Pipeline::new()
            .stage(&dx, &spaces[0])
            .stage(&dy, &spaces[1])
            .stage(&last, &spaces[2])
            .execute(&device)
            .expect("fused");
        let fused = out.to_vec().unwrap();
        dx.execute(&device, &spaces[0]).unwrap();
        dy.execute(&device, &spaces[1]).unwrap();
        last.execute(&device, &spaces[2]).unwrap();
        let unfused = out.to_vec().unwrap();
        let same = fused
            .iter()
            .zip(&unfused)
            .all(|(a, b)| a.to_bits() == b.to_bits());
        assert!(same, "{what}, {w}x{h}: fused and unfused differ");
    }
}

#[test]
fn fused_harris_equals_kernel_by_kernel_bit_for_bit() {
    for size in SIZES {
        for mode in 0..5 {
            check_fused(
                &format!("harris, mode {mode}"),
                size,
                boundary(4 - mode),
                |ix, iy| Response {
                    ix: Accessor::new(ix).with_boundary(boundary(mode)),
                    iy: Accessor::new(iy).with_boundary(boundary(mode)),
                    mask: mask::<5, 5>(),
                    k: 0.04,
                },
            );
        }
    }
}

#[test]
fn fused_min_eigen_equals_kernel_by_kernel_bit_for_bit() {
    for size in SIZES {
        for mode in 0..5 {
            check_fused(
                &format!("min eigen, mode {mode}"),
                size,
                boundary(mode),
                |ix, iy| MinEigen {
                    ix: Accessor::new(ix).with_boundary(boundary(4 - mode)),
                    iy: Accessor::new(iy).with_boundary(boundary(mode)),
                    window: Domain::new(5, 3).unwrap(),
                },
            );
        }
    }
}
