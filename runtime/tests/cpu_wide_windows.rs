//! Reductions over windows whose size is known only at launch and is not
//! one the direct path writes out (9x9, 13x13, 11x7, a 9x9 domain with
//! holes) run tap by tap across rows on the CPU. Every pixel combines the
//! same terms in the same order as the IR evaluator, so the outputs must
//! be the same bits: on every boundary mode, on odd sizes, on images
//! smaller than the window, in parallel bands and on one thread.

use hipacc::core::ir::evaluate_kernel;
use hipacc::prelude::*;

mod cpu_support;
use cpu_support::{boundary, image};

/// A scaled box sum over a domain.
#[derive(Kernel)]
#[kernel(output = f32)]
struct BoxSum {
    input: Accessor<f32>,
    window: Domain,
    scale: f32,
}

#[kernel_body]
impl BoxSum {
    fn kernel(&self) -> f32 {
        reduce(&self.window, Sum, |dx, dy| self.input.at(dx, dy)) * self.scale
    }
}

/// Erosion of a point-wise expression, plus the centre pixel.
#[derive(Kernel)]
#[kernel(output = f32)]
struct ErodeDistance {
    input: Accessor<f32>,
    window: Domain,
}

#[kernel_body]
impl ErodeDistance {
    fn kernel(&self) -> f32 {
        reduce(&self.window, Min, |dx, dy| {
            (self.input.at(dx, dy) - 1.0).abs()
        }) + self.input()
    }
}

/// Dilation over a domain.
#[derive(Kernel)]
#[kernel(output = f32)]
struct Dilate {
    input: Accessor<f32>,
    window: Domain,
}

#[kernel_body]
impl Dilate {
    fn kernel(&self) -> f32 {
        reduce(&self.window, Max, |dx, dy| self.input.at(dx, dy))
    }
}

/// A mask convolution of a product of two images.
#[derive(Kernel)]
#[kernel(output = f32)]
struct Convolve {
    a: Accessor<f32>,
    b: Accessor<f32>,
    mask: Mask<f32>,
}

#[kernel_body]
impl Convolve {
    fn kernel(&self) -> f32 {
        convolve(&self.mask, Sum, |dx, dy| {
            self.mask.at(dx, dy) * (self.a.at(dx, dy) * self.b.at(dx, dy))
        })
    }
}

/// A `w x h` mask without rank-1 factors (so no two-pass sum applies).
fn full_rank_mask(w: usize, h: usize) -> Mask<f32> {
    let values = (0..w * h)
        .map(|k| {
            let (i, j) = (k % w, k / w);
            0.25 + ((i * 7 + j * 3 + i * j) % 11) as f32 / 8.0
        })
        .collect();
    Mask::from_vec(w, h, values).expect("odd sizes")
}

/// A 9x9 domain with its corners and a middle column switched off.
fn holed_domain() -> Domain {
    let mut d = Domain::new(9, 9).unwrap();
    for (dx, dy) in [(-4, -4), (4, -4), (-4, 4), (4, 4)] {
        d.set(dx, dy, false).unwrap();
    }
    for dy in -4..=4 {
        d.set(1, dy, false).unwrap();
    }
    d
}

/// Runs `kernel` on the CPU over the whole of a `w x h` output and checks
/// that it gives the evaluator's bits.
fn check<K: Kernel<Output = f32>>(what: &str, kernel: &K, w: usize, h: usize) {
    let (cpu, reference) = (
        Image::<f32>::new(w, h).unwrap(),
        Image::<f32>::new(w, h).unwrap(),
    );
    evaluate_kernel(kernel, &IterationSpace::full(&reference)).expect("evaluator");
    let want = reference.to_vec().unwrap();
    for device in [
        Device::cpu_serial_below(0),
        Device::cpu_serial_below(usize::MAX),
    ] {
        kernel
            .execute(&device, &IterationSpace::full(&cpu))
            .expect("cpu");
        let got = cpu.to_vec().unwrap();
        for (i, (g, r)) in got.iter().zip(&want).enumerate() {
            assert!(
                g.to_bits() == r.to_bits(),
                "{what} {w}x{h}: pixel ({}, {}) is {g}, the evaluator gives {r}",
                i % w,
                i / w
            );
        }
    }
}

const SIZES: [(usize, usize); 6] = [(1, 1), (2, 3), (4, 9), (13, 5), (67, 45), (131, 71)];

#[test]
fn domain_reductions_equal_the_evaluator_on_every_mode() {
    for (w, h) in SIZES {
        let input = image(w, h, 3);
        for mode in 0..5 {
            let acc = || Accessor::new(&input).with_boundary(boundary(mode));
            for n in [9, 13] {
                let k = BoxSum {
                    input: acc(),
                    window: Domain::new(n, n).unwrap(),
                    scale: 1.0 / (n * n) as f32,
                };
                check(&format!("{n}x{n} box, mode {mode}"), &k, w, h);
            }
            let k = ErodeDistance {
                input: acc(),
                window: Domain::new(11, 7).unwrap(),
            };
            check(&format!("11x7 erosion, mode {mode}"), &k, w, h);
            let k = Dilate {
                input: acc(),
                window: holed_domain(),
            };
            check(&format!("holed 9x9 dilation, mode {mode}"), &k, w, h);
        }
    }
}

#[test]
fn mask_convolutions_equal_the_evaluator_on_every_mode() {
    for (w, h) in SIZES {
        let (a, b) = (image(w, h, 5), image(w, h, 6));
        for mode in 0..5 {
            for (mw, mh) in [(9, 9), (13, 13), (11, 5)] {
                let k = Convolve {
                    a: Accessor::new(&a).with_boundary(boundary(mode)),
                    b: Accessor::new(&b).with_boundary(boundary(4 - mode)),
                    mask: full_rank_mask(mw, mh),
                };
                check(&format!("{mw}x{mh} convolution, mode {mode}"), &k, w, h);
            }
        }
    }
}
