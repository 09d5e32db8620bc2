//! Local operators with bodies around them (scaling, sums of two
//! convolutions, reductions and `iterate` over domains) run on the CPU
//! backend with their window loops written out: for masks whose size is in
//! their type (each axis 1, 3, 5, 7 or 9), and for masks and full domains
//! of run-time size that the launch recognises (3x3, 5x5, 7x7). Each must give the IR evaluator's
//! values bit for bit: the written-out loops keep the evaluator's row-major
//! order and start from the first position, so no sum is reordered.
//!
//! Covered: every boundary mode but `Undefined` (whose reads must stay
//! inside, which no full image allows here), odd image sizes down to 1x1,
//! windows wider than the image,
//! run-time sizes the launch does not write out (9x9, 3x5, a domain with a
//! hole, two windows of different sizes), parallel and serial launches.

use hipacc::core::ir::evaluate_kernel;
use hipacc::core::Pixel;
use hipacc::prelude::*;

/// A 5x5 convolution times a parameter, the mask's size in its type.
#[derive(Kernel)]
#[kernel(output = f32)]
struct Conv5Scaled {
    input: Accessor<f32>,
    mask: Mask<f32, 5, 5>,
    scale: f32,
}

#[kernel_body]
impl Conv5Scaled {
    fn kernel(&self) -> f32 {
        convolve(&self.mask, Sum, |dx, dy| {
            self.mask.at(dx, dy) * self.input.at(dx, dy)
        }) * self.scale
    }
}

/// A 3x3 convolution times a parameter, the mask's size in its type.
#[derive(Kernel)]
#[kernel(output = f32)]
struct Conv3Scaled {
    input: Accessor<f32>,
    mask: Mask<f32, 3, 3>,
    scale: f32,
}

#[kernel_body]
impl Conv3Scaled {
    fn kernel(&self) -> f32 {
        convolve(&self.mask, Sum, |dx, dy| {
            self.mask.at(dx, dy) * self.input.at(dx, dy)
        }) * self.scale
    }
}

/// The sum of two convolutions with masks of run-time size.
#[derive(Kernel)]
#[kernel(output = f32)]
struct ConvPair {
    input: Accessor<f32>,
    a: Mask<f32>,
    b: Mask<f32>,
}

#[kernel_body]
impl ConvPair {
    fn kernel(&self) -> f32 {
        let first = convolve(&self.a, Sum, |dx, dy| {
            self.a.at(dx, dy) * self.input.at(dx, dy)
        });
        let second = convolve(&self.b, Sum, |dx, dy| {
            self.input.at(dx, dy) * self.b.at(dx, dy)
        });
        first + second * 0.5
    }
}

/// Reductions over a domain inside a response formula, in `f64`.
#[derive(Kernel)]
#[kernel(output = f64)]
struct DomainStats {
    input: Accessor<f64>,
    window: Domain,
    weight: f64,
}

#[kernel_body]
impl DomainStats {
    fn kernel(&self) -> f64 {
        let hi = reduce(&self.window, Max, |dx, dy| self.input.at(dx, dy));
        let lo = reduce(&self.window, Min, |dx, dy| self.input.at(dx, dy));
        let sum = reduce(&self.window, Sum, |dx, dy| {
            self.input.at(dx, dy) * self.weight
        });
        let prod = reduce(&self.window, Prod, |dx, dy| self.input.at(dx, dy));
        (hi - lo) * 3.0 + sum + prod
    }
}

/// `iterate` over a domain, accumulating position-weighted values, with a
/// mask of the type's size beside it.
#[derive(Kernel)]
#[kernel(output = f32)]
struct IterateWeighted {
    input: Accessor<f32>,
    window: Domain,
    mask: Mask<f32, 3, 3>,
}

#[kernel_body]
impl IterateWeighted {
    fn kernel(&self) -> f32 {
        let mut acc: f32 = 0.0;
        let mut top: f32 = -1.0;
        iterate(&self.window, |dx, dy| {
            let v = self.input.at(dx, dy);
            acc += v * ((dx + 2 * dy) as f32);
            top = top.max(v);
        });
        let c = convolve(&self.mask, Sum, |dx, dy| {
            self.mask.at(dx, dy) * self.input.at(dx, dy)
        });
        acc + top * c
    }
}

/// A weighted mean whose weights depend on the pixel (`m(dx, dy) · |v|`)
/// over a 9x9 mask of the type's size, beside a 9x3 convolution: the
/// widest windows written out, and an axis of 9 beside one of 3.
#[derive(Kernel)]
#[kernel(output = f32)]
struct Weighted9 {
    input: Accessor<f32>,
    mask: Mask<f32, 9, 9>,
    wide: Mask<f32, 9, 3>,
}

#[kernel_body]
impl Weighted9 {
    fn kernel(&self) -> f32 {
        let mut num: f32 = 0.0;
        let mut den: f32 = 0.0;
        iterate(&self.mask, |dx, dy| {
            let v = self.input.at(dx, dy);
            let w = self.mask.at(dx, dy) * v.abs();
            num += w * v;
            den += w;
        });
        let c = convolve(&self.wide, Sum, |dx, dy| {
            self.wide.at(dx, dy) * self.input.at(dx, dy)
        });
        num / (den + 0.001) - c
    }
}

/// Integer reductions over a domain.
#[derive(Kernel)]
#[kernel(output = i32)]
struct DomainInt {
    input: Accessor<i32>,
    window: Domain,
}

#[kernel_body]
impl DomainInt {
    fn kernel(&self) -> i32 {
        reduce(&self.window, Max, |dx, dy| {
            self.input.at(dx, dy) * (dx - dy)
        }) + reduce(&self.window, Sum, |dx, dy| self.input.at(dx, dy))
    }
}

const SIZES: [(usize, usize); 5] = [(1, 1), (2, 3), (17, 5), (127, 33), (40, 41)];

fn value(x: usize, y: usize) -> f64 {
    // Multiples of 1/64 in [0.25, 1.25), with enough variety that a wrong
    // tap, order or boundary shows in the bits.
    0.25 + ((x * 37 + y * 101 + x * y) % 64) as f64 / 64.0
}

fn coefficients(w: usize, h: usize, seed: usize) -> Vec<f32> {
    (0..w * h)
        .map(|i| (1 + (i * 5 + seed) % 11) as f32 / 37.0)
        .collect()
}

fn boundaries<T: Pixel>(c: T) -> [Boundary<T>; 5] {
    [
        Boundary::Clamp,
        Boundary::Repeat,
        Boundary::Mirror,
        Boundary::MirrorInterior,
        Boundary::Constant(c),
    ]
}

/// The pixels of `img` as bits, for exact comparison.
fn bits<T: Pixel + Into<f64>>(img: &Image<T>) -> Vec<u64> {
    img.to_vec()
        .expect("pixels")
        .into_iter()
        .map(|v| Into::<f64>::into(v).to_bits())
        .collect()
}

/// Runs `kernel` over `space` of a `size` image on the CPU (parallel and
/// serial) and in the evaluator, and compares bit for bit.
fn check<K: Kernel>(what: &str, kernel: &K, size: (usize, usize), space: Rect)
where
    K::Output: Into<f64>,
{
    let reference = Image::<K::Output>::new(size.0, size.1).expect("out");
    evaluate_kernel(
        kernel,
        &IterationSpace::region(&reference, space).expect("space"),
    )
    .expect("evaluator");
    for device in [Device::cpu_serial_below(0), Device::cpu()] {
        let cpu = Image::<K::Output>::new(size.0, size.1).expect("out");
        kernel
            .execute(
                &device,
                &IterationSpace::region(&cpu, space).expect("space"),
            )
            .expect("cpu");
        let (got, want) = (bits(&cpu), bits(&reference));
        if let Some(i) = (0..got.len()).find(|&i| got[i] != want[i]) {
            panic!(
                "{what}: pixel ({}, {}): {} vs the evaluator's {}",
                i % size.0,
                i / size.0,
                f64::from_bits(got[i]),
                f64::from_bits(want[i])
            );
        }
    }
}

/// Masks that do not separate, with zero weights (skipped) and weights of
/// 1 and -1 (added and subtracted): a Laplacian, a Laplacian of Gaussian,
/// and a mask mixing them with weights whose products round (so the order
/// and rounding of every sum show in the bits). Each row runs in
/// register-held blocks and must give the evaluator's bits, over whole
/// images and a space inside one.
#[test]
fn masks_with_zero_and_unit_weights_match_the_evaluator() {
    let laplace = [[0.0, 1.0, 0.0], [1.0, -4.0, 1.0], [0.0, 1.0, 0.0]];
    let mixed = [[0.0, 1.0, 0.1], [-1.0, 1.0 / 3.0, 0.0], [0.7, -1.0, 0.0]];
    let log = [
        [0.0, 0.0, -1.0, 0.0, 0.0],
        [0.0, -1.0, -2.0, -1.0, 0.0],
        [-1.0, -2.0, 16.0, -2.0, -1.0],
        [0.0, -1.0, -2.0, -1.0, 0.0],
        [0.0, 0.0, -1.0, 0.0, 0.0],
    ];
    for size in SIZES.iter().copied().chain([(67, 41)]) {
        let src = Image::from_fn(size.0, size.1, |x, y| value(x, y) as f32).expect("image");
        let inner = Rect::new(
            size.0 / 4,
            size.1 / 3,
            size.0 - size.0 / 4,
            size.1 - size.1 / 3,
        );
        for space in [Rect::full(size.0, size.1), inner] {
            for b in boundaries(0.375f32) {
                let what = format!("{size:?} {space:?} {b:?}");
                let acc = Accessor::new(&src).with_boundary(b);
                for (name, m) in [("laplace", laplace), ("mixed", mixed)] {
                    let k = Conv3Scaled {
                        input: acc.clone(),
                        mask: Mask::fixed(m).expect("mask"),
                        scale: 0.25,
                    };
                    check(&format!("{name} {what}"), &k, size, space);
                }
                let k = Conv5Scaled {
                    input: acc,
                    mask: Mask::fixed(log).expect("mask"),
                    scale: -0.5,
                };
                check(&format!("log {what}"), &k, size, space);
            }
        }
    }
}

#[test]
fn convolutions_with_bodies_match_the_evaluator() {
    for size in SIZES {
        let src = Image::from_fn(size.0, size.1, |x, y| value(x, y) as f32).expect("image");
        let c5 = coefficients(5, 5, 1);
        let c3 = coefficients(3, 3, 2);
        let m5: Mask<f32, 5, 5> = Mask::fixed(std::array::from_fn(|r| {
            std::array::from_fn(|c| c5[r * 5 + c])
        }))
        .expect("mask");
        let m3: Mask<f32, 3, 3> = Mask::fixed(std::array::from_fn(|r| {
            std::array::from_fn(|c| c3[r * 3 + c])
        }))
        .expect("mask");
        {
            let space = Rect::full(size.0, size.1);
            let modes = boundaries(0.375f32).to_vec();
            for b in modes {
                let what = format!("{size:?} {b:?}");
                let acc = Accessor::new(&src).with_boundary(b);
                let k5 = Conv5Scaled {
                    input: acc.clone(),
                    mask: m5.clone(),
                    scale: 0.75,
                };
                check(&format!("conv5 {what}"), &k5, size, space);
                let k3 = Conv3Scaled {
                    input: acc,
                    mask: m3.clone(),
                    scale: 1.5,
                };
                check(&format!("conv3 {what}"), &k3, size, space);
            }
        }
    }
}

#[test]
fn pairs_of_convolutions_of_runtime_size_match_the_evaluator() {
    // Equal squares are written out; 9x9 and unequal sizes are not.
    let masks = [
        ((3, 3), (3, 3)),
        ((5, 5), (5, 5)),
        ((7, 7), (7, 7)),
        ((9, 9), (9, 9)),
        ((3, 5), (3, 5)),
        ((3, 3), (5, 5)),
    ];
    for size in SIZES {
        let src = Image::from_fn(size.0, size.1, |x, y| value(x, y) as f32).expect("image");
        for ((aw, ah), (bw, bh)) in masks {
            {
                let space = Rect::full(size.0, size.1);
                let modes: Vec<_> = { boundaries(0.5f32).to_vec() };
                for b in modes {
                    let k = ConvPair {
                        input: Accessor::new(&src).with_boundary(b),
                        a: Mask::from_vec(aw, ah, coefficients(aw, ah, 3)).expect("mask"),
                        b: Mask::from_vec(bw, bh, coefficients(bw, bh, 4)).expect("mask"),
                    };
                    let what = format!("pair {aw}x{ah}+{bw}x{bh} {size:?} {b:?}");
                    check(&what, &k, size, space);
                }
            }
        }
    }
}

/// Domains: full squares (written out), a 9x9, a 5x3 and a ring (not).
fn domains() -> Vec<Domain> {
    let mut ring = Domain::new(5, 5).expect("domain");
    ring.set(0, 0, false).expect("centre");
    ring.set(2, -2, false).expect("corner");
    let mut out: Vec<Domain> = [1, 3, 5, 7, 9]
        .iter()
        .map(|&n| Domain::new(n, n).expect("domain"))
        .collect();
    out.push(Domain::new(5, 3).expect("domain"));
    out.push(ring);
    out
}

#[test]
fn domain_reductions_match_the_evaluator() {
    for size in SIZES {
        let src = Image::from_fn(size.0, size.1, value).expect("image");
        let ints =
            Image::from_fn(size.0, size.1, |x, y| (value(x, y) * 64.0) as i32 - 40).expect("image");
        for window in domains() {
            {
                let space = Rect::full(size.0, size.1);
                let modes: Vec<_> = {
                    boundaries(0.625f64)
                        .into_iter()
                        .zip(boundaries(7i32))
                        .collect()
                };
                for (b, bi) in modes {
                    let what = format!(
                        "{}x{} domain {size:?} {b:?}",
                        window.width(),
                        window.height()
                    );
                    let k = DomainStats {
                        input: Accessor::new(&src).with_boundary(b),
                        window: window.clone(),
                        weight: 0.3,
                    };
                    check(&format!("stats {what}"), &k, size, space);
                    let k = DomainInt {
                        input: Accessor::new(&ints).with_boundary(bi),
                        window: window.clone(),
                    };
                    let reference = Image::<i32>::new(size.0, size.1).expect("out");
                    let cpu = Image::<i32>::new(size.0, size.1).expect("out");
                    evaluate_kernel(
                        &k,
                        &IterationSpace::region(&reference, space).expect("space"),
                    )
                    .expect("evaluator");
                    k.execute(
                        &Device::cpu_serial_below(0),
                        &IterationSpace::region(&cpu, space).expect("space"),
                    )
                    .expect("cpu");
                    assert_eq!(
                        cpu.to_vec().expect("pixels"),
                        reference.to_vec().expect("pixels"),
                        "int {what}"
                    );
                }
            }
        }
    }
}

#[test]
fn iterate_over_domains_matches_the_evaluator() {
    let m3: Mask<f32, 3, 3> =
        Mask::fixed([[0.25, 0.5, 0.25], [0.5, 1.0, 0.5], [0.25, 0.5, 0.75]]).expect("mask");
    for size in SIZES {
        let src = Image::from_fn(size.0, size.1, |x, y| value(x, y) as f32).expect("image");
        // The 3x3 domain shares the mask's size (written out); the others not.
        for window in domains() {
            {
                let space = Rect::full(size.0, size.1);
                let modes: Vec<_> = { boundaries(0.125f32).to_vec() };
                for b in modes {
                    let k = IterateWeighted {
                        input: Accessor::new(&src).with_boundary(b),
                        window: window.clone(),
                        mask: m3.clone(),
                    };
                    let what = format!(
                        "iterate {}x{} {size:?} {b:?}",
                        window.width(),
                        window.height()
                    );
                    check(&what, &k, size, space);
                }
            }
        }
    }
}

#[test]
fn nine_wide_masks_of_the_types_size_match_the_evaluator() {
    let (c9, c93) = (coefficients(9, 9, 3), coefficients(9, 3, 4));
    let mask: Mask<f32, 9, 9> = Mask::fixed(std::array::from_fn(|r| {
        std::array::from_fn(|c| c9[r * 9 + c])
    }))
    .expect("mask");
    let wide: Mask<f32, 9, 3> = Mask::fixed(std::array::from_fn(|r| {
        std::array::from_fn(|c| c93[r * 9 + c])
    }))
    .expect("mask");
    for size in SIZES.iter().copied().chain([(67, 41)]) {
        let src = Image::from_fn(size.0, size.1, |x, y| value(x, y) as f32).expect("image");
        for b in boundaries(0.375f32) {
            let k = Weighted9 {
                input: Accessor::new(&src).with_boundary(b),
                mask: mask.clone(),
                wide: wide.clone(),
            };
            check(
                &format!("weighted 9x9 {size:?} {b:?}"),
                &k,
                size,
                Rect::full(size.0, size.1),
            );
        }
    }
}

/// Two such convolutions as a pipeline: computed strip by strip (the
/// intermediate's rows recomputed per strip) they give the bits of the
/// two launches, on every mode and odd sizes.
#[test]
fn pipelines_of_masks_that_do_not_separate_equal_their_launches() {
    let laplace = [[0.0, 1.0, 0.0], [1.0, -4.0, 1.0], [0.0, 1.0, 0.0]];
    let mixed = [[0.0, 1.0, 0.1], [-1.0, 1.0 / 3.0, 0.0], [0.7, -1.0, 0.0]];
    for size in [(1, 1), (3, 2), (67, 41), (130, 97)] {
        let src = Image::from_fn(size.0, size.1, |x, y| value(x, y) as f32).expect("image");
        for b in boundaries(0.375f32) {
            let (mid, out) = (
                Image::<f32>::new(size.0, size.1).expect("mid"),
                Image::<f32>::new(size.0, size.1).expect("out"),
            );
            let first = Conv3Scaled {
                input: Accessor::new(&src).with_boundary(b),
                mask: Mask::fixed(laplace).expect("mask"),
                scale: 0.5,
            };
            let second = Conv3Scaled {
                input: Accessor::new(&mid).with_boundary(b),
                mask: Mask::fixed(mixed).expect("mask"),
                scale: 1.5,
            };
            let (sm, so) = (IterationSpace::full(&mid), IterationSpace::full(&out));
            for device in [Device::cpu_serial_below(0), Device::cpu()] {
                out.write().expect("out").fill(f32::NAN);
                hipacc::pipeline::Pipeline::new()
                    .stage(&first, &sm)
                    .stage(&second, &so)
                    .execute(&device)
                    .expect("fused");
                let fused = bits(&out);
                first.execute(&device, &sm).expect("first");
                second.execute(&device, &so).expect("second");
                assert_eq!(
                    fused,
                    bits(&out),
                    "{size:?} {b:?}: fused and unfused differ"
                );
            }
        }
    }
}
