//! `iterate` bodies run across rows on the CPU where the direct path
//! would loop over taps per pixel: windows of run-time size it does not
//! write out, and bodies that call `exp` (a library call per tap there).
//! Checked against the IR evaluator on every boundary mode, odd sizes and
//! images smaller than the window, in parallel bands and on one thread.
//!
//! Without `exp` each pixel runs the same f32 operations in the same tap
//! order: the same bits. With `exp` (within 2 ulp of the correctly
//! rounded value on the row path) a bilateral weight is off by at most
//! about 3 ε relative, so the weighted mean moves by at most about
//! `6 ε max |v|`; the check allows `64 ε (1 + |reference|)`, far below
//! what a wrong tap or boundary changes (a tap's weight times a sample
//! difference of at least 1/1024).

use hipacc::core::ir::evaluate_kernel;
use hipacc::prelude::*;

mod cpu_support;
use cpu_support::{boundary, image};

/// A bilateral filter: spatial weights from a mask, range weights from
/// the difference to the centre pixel.
#[derive(Kernel)]
#[kernel(output = f32)]
struct Bilateral {
    input: Accessor<f32>,
    spatial: Mask<f32>,
    range_scale: f32,
}

#[kernel_body]
impl Bilateral {
    fn kernel(&self) -> f32 {
        let c = self.input();
        let mut num = 0.0f32;
        let mut den = 0.0f32;
        iterate(&self.spatial, |dx, dy| {
            let v = self.input.at(dx, dy);
            let d = v - c;
            let w = self.spatial.at(dx, dy) * (-(d * d) * self.range_scale).exp();
            num += w * v;
            den += w;
        });
        num / den
    }
}

/// An alternating sum of squares and a sum of products over a domain,
/// combined after: the variables on either side of their updates.
#[derive(Kernel)]
#[kernel(output = f32)]
struct Moments {
    a: Accessor<f32>,
    b: Accessor<f32>,
    window: Domain,
}

#[kernel_body]
impl Moments {
    fn kernel(&self) -> f32 {
        let mut saa = 0.0f32;
        let mut sab = self.b();
        iterate(&self.window, |dx, dy| {
            let a = self.a.at(dx, dy);
            saa = a * a - saa;
            sab += a * self.b.at(dx, dy);
        });
        sab / saa
    }
}

/// A product over a mask, returned as the variable the `iterate` assigns:
/// the result is a row the body writes, not a step after it.
#[derive(Kernel)]
#[kernel(output = f32)]
struct WeightedProduct {
    input: Accessor<f32>,
    weights: Mask<f32>,
}

#[kernel_body]
impl WeightedProduct {
    fn kernel(&self) -> f32 {
        let mut p = 1.0f32;
        iterate(&self.weights, |dx, dy| {
            p *= 1.0 + self.weights.at(dx, dy) * (self.input.at(dx, dy) - 1.0);
        });
        p
    }
}

/// Cauchy range weights `m / (1 + d²)`: a difference squared in one
/// pass and a weighted sum updated with its product in place.
#[derive(Kernel)]
#[kernel(output = f32)]
struct CauchyWeights {
    input: Accessor<f32>,
    spatial: Mask<f32>,
}

#[kernel_body]
impl CauchyWeights {
    fn kernel(&self) -> f32 {
        let c = self.input();
        let mut num = 0.0f32;
        let mut den = 0.0f32;
        iterate(&self.spatial, |dx, dy| {
            let v = self.input.at(dx, dy);
            let d = v - c;
            let w = self.spatial.at(dx, dy) / (1.0 + d * d);
            num += w * v;
            den += w;
        });
        num / den
    }
}

/// A product read by two updates, and by a product another update forms
/// in place: neither may drop the product's row.
#[derive(Kernel)]
#[kernel(output = f32)]
struct SharedProducts {
    a: Accessor<f32>,
    b: Accessor<f32>,
    window: Domain,
}

#[kernel_body]
impl SharedProducts {
    fn kernel(&self) -> f32 {
        let mut s = 0.0f32;
        let mut t = 1.0f32;
        let mut u = 0.5f32;
        iterate(&self.window, |dx, dy| {
            let p = self.a.at(dx, dy) * self.b.at(dx, dy);
            s += p * self.a.at(dx, dy);
            t -= p;
            u = p - u;
        });
        s * t + u
    }
}

/// Range weights written in several forms: `exp` of a negation alone, of
/// a negated square times a parameter (on the left) times a coefficient,
/// and of a difference times a parameter.
#[derive(Kernel)]
#[kernel(output = f32)]
struct ExpForms {
    input: Accessor<f32>,
    spatial: Mask<f32>,
    k: f32,
}

#[kernel_body]
impl ExpForms {
    fn kernel(&self) -> f32 {
        let c = self.input();
        let mut num = 0.0f32;
        let mut den = 0.0f32;
        iterate(&self.spatial, |dx, dy| {
            let v = self.input.at(dx, dy);
            let d = v - c;
            let w1 = (-(d * d)).exp();
            let w2 = (self.k * -(d * d)).exp() * self.spatial.at(dx, dy);
            let w3 = (d * self.k).exp();
            num += w1 * v + w2 * v;
            den += w1 + w2 + w3;
        });
        num / den
    }
}

/// Range weights of other squares, each squared and weighted in one
/// pass: of a sum scaled by a parameter large enough that many weights
/// leave the normal range (down to subnormal and zero), and of a
/// product, negated and times the mask's coefficient.
#[derive(Kernel)]
#[kernel(output = f32)]
struct SquareForms {
    input: Accessor<f32>,
    spatial: Mask<f32>,
    k: f32,
}

#[kernel_body]
impl SquareForms {
    fn kernel(&self) -> f32 {
        let c = self.input();
        let mut num = 0.0f32;
        let mut den = 0.0f32;
        iterate(&self.spatial, |dx, dy| {
            let v = self.input.at(dx, dy);
            let s = v + c;
            let w1 = (s * s * self.k).exp();
            let q = v * c;
            let w2 = self.spatial.at(dx, dy) * (-(q * q)).exp();
            num += w1 * v + w2 * v;
            den += w1 + w2;
        });
        num / den
    }
}

/// A bilateral filter as the examples write it: over a domain, the
/// spatial weight from the offsets inside the `exp`, beside the range
/// term.
#[derive(Kernel)]
#[kernel(output = f32)]
struct SpatialInExp {
    input: Accessor<f32>,
    window: Domain,
    spatial: f32,
    range: f32,
}

#[kernel_body]
impl SpatialInExp {
    fn kernel(&self) -> f32 {
        let centre = self.input();
        let mut weighted: f32 = 0.0;
        let mut total: f32 = 0.0;
        iterate(&self.window, |dx, dy| {
            let q = self.input.at(dx, dy);
            let d = q - centre;
            let w = (-((dx * dx + dy * dy) as f32) * self.spatial - d * d * self.range).exp();
            weighted += w * q;
            total += w;
        });
        weighted / total
    }
}

/// Weights whose `exp` adds a value of the tap (offsets, a parameter,
/// the mask coefficient) to a row on either side of a sum or difference.
#[derive(Kernel)]
#[kernel(output = f32)]
struct ExpTerms {
    input: Accessor<f32>,
    spatial: Mask<f32>,
    k: f32,
}

#[kernel_body]
impl ExpTerms {
    fn kernel(&self) -> f32 {
        let c = self.input();
        let mut num = 0.0f32;
        let mut den = 0.0f32;
        iterate(&self.spatial, |dx, dy| {
            let v = self.input.at(dx, dy);
            let d = v - c;
            let w1 = (((dx * dx) as f32) * self.k - d * d).exp();
            let w2 = (d * self.k + (dy as f32)).exp();
            let w3 = (self.spatial.at(dx, dy) * 2.0 - d).exp();
            num += (w1 + w2) * v;
            den += w1 + w2 + w3;
        });
        num / den
    }
}

/// Sums weighted by values of the tap alone (no `exp`): moments of the
/// offsets over a domain.
#[derive(Kernel)]
#[kernel(output = f32)]
struct OffsetMoments {
    a: Accessor<f32>,
    window: Domain,
    half: f32,
}

#[kernel_body]
impl OffsetMoments {
    fn kernel(&self) -> f32 {
        let mut s = 0.0f32;
        let mut t = 0.0f32;
        iterate(&self.window, |dx, dy| {
            let v = self.a.at(dx, dy);
            s += v * (dx as f32);
            t += v * ((dx * dy - 1) as f32 * self.half).abs();
        });
        s - t
    }
}

/// A `w x h` mask of positive spatial weights, largest at the centre.
fn spatial(w: usize, h: usize) -> Mask<f32> {
    let values = (0..w * h)
        .map(|k| {
            let (i, j) = (
                (k % w) as f32 - (w / 2) as f32,
                (k / w) as f32 - (h / 2) as f32,
            );
            1.0 / (1.0 + 0.25 * (i * i + j * j))
        })
        .collect();
    Mask::from_vec(w, h, values).expect("odd sizes")
}

/// Runs `kernel` on the CPU over the whole of a `w x h` output and checks
/// it against the evaluator: within `ulps · ε (1 + |reference|)` per
/// pixel (0: the same bits).
fn check<K: Kernel<Output = f32>>(what: &str, kernel: &K, w: usize, h: usize, ulps: f32) {
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
            let ok = if ulps == 0.0 {
                g.to_bits() == r.to_bits()
            } else if g.is_nan() || r.is_nan() {
                g.is_nan() && r.is_nan()
            } else {
                (g - r).abs() <= ulps * f32::EPSILON * (1.0 + r.abs())
            };
            assert!(
                ok,
                "{what} {w}x{h}: pixel ({}, {}) is {g}, the evaluator gives {r}",
                i % w,
                i / w
            );
        }
    }
}

const SIZES: [(usize, usize); 6] = [(1, 1), (2, 3), (4, 9), (13, 5), (67, 45), (131, 71)];

#[test]
fn bilateral_filters_match_the_evaluator_on_every_mode() {
    for (w, h) in SIZES {
        let input = image(w, h, 11);
        for mode in 0..5 {
            for (mw, mh) in [(5, 5), (9, 9), (13, 13), (7, 3)] {
                let k = Bilateral {
                    input: Accessor::new(&input).with_boundary(boundary(mode)),
                    spatial: spatial(mw, mh),
                    range_scale: 50.0,
                };
                check(&format!("{mw}x{mh} bilateral, mode {mode}"), &k, w, h, 64.0);
            }
        }
    }
}

/// A bilateral filter over pixels that are NaN, infinite, zero of either
/// sign or subnormal among ordinary ones: windows over a NaN or an
/// infinity give NaN as in the evaluator (a zero weight times an infinite
/// sample), the others its weighted mean, on the columns that run in
/// blocks with the sums in registers and on those after them.
#[test]
fn bilateral_filters_over_non_finite_and_subnormal_pixels_match_the_evaluator() {
    let specials = [
        f32::NAN,
        f32::INFINITY,
        f32::NEG_INFINITY,
        -0.0,
        1.0e-40,
        -2.0e-39,
    ];
    for (w, h) in [(67, 45), (35, 9), (16, 16)] {
        let mut values = image(w, h, 23).to_vec().unwrap();
        for t in 0..12 {
            values[(t * 211 + 17) % (w * h)] = specials[t % specials.len()];
        }
        let input = Image::from_vec(w, h, values).unwrap();
        for mode in 0..5 {
            for (mw, mh) in [(5, 5), (13, 13), (3, 7)] {
                let k = Bilateral {
                    input: Accessor::new(&input).with_boundary(boundary(mode)),
                    spatial: spatial(mw, mh),
                    range_scale: 50.0,
                };
                check(&format!("{mw}x{mh} bilateral, mode {mode}"), &k, w, h, 64.0);
            }
        }
    }
}

#[test]
fn iterate_sums_without_exp_give_the_evaluator_bits() {
    for (w, h) in SIZES {
        let (a, b) = (image(w, h, 12), image(w, h, 13));
        for mode in 0..5 {
            for n in [9, 11] {
                let k = Moments {
                    a: Accessor::new(&a).with_boundary(boundary(mode)),
                    b: Accessor::new(&b).with_boundary(boundary(4 - mode)),
                    window: Domain::new(n, n).unwrap(),
                };
                check(&format!("{n}x{n} moments, mode {mode}"), &k, w, h, 0.0);
            }
        }
    }
}

#[test]
fn iterate_results_that_name_the_carried_variable_give_the_evaluator_bits() {
    for (w, h) in SIZES {
        let input = image(w, h, 14);
        for mode in 0..5 {
            for (mw, mh) in [(3, 3), (9, 9), (11, 5)] {
                let k = WeightedProduct {
                    input: Accessor::new(&input).with_boundary(boundary(mode)),
                    weights: spatial(mw, mh),
                };
                check(&format!("{mw}x{mh} product, mode {mode}"), &k, w, h, 0.0);
            }
        }
    }
}

#[test]
fn squared_differences_and_products_updated_in_place_give_the_evaluator_bits() {
    for (w, h) in SIZES {
        let input = image(w, h, 15);
        for mode in 0..5 {
            for (mw, mh) in [(9, 9), (11, 5), (3, 13)] {
                let k = CauchyWeights {
                    input: Accessor::new(&input).with_boundary(boundary(mode)),
                    spatial: spatial(mw, mh),
                };
                check(&format!("{mw}x{mh} cauchy, mode {mode}"), &k, w, h, 0.0);
            }
        }
    }
}

#[test]
fn products_read_twice_give_the_evaluator_bits() {
    for (w, h) in SIZES {
        let (a, b) = (image(w, h, 16), image(w, h, 17));
        for mode in 0..5 {
            for (n, m) in [(9, 9), (3, 11)] {
                let k = SharedProducts {
                    a: Accessor::new(&a).with_boundary(boundary(mode)),
                    b: Accessor::new(&b).with_boundary(boundary(4 - mode)),
                    window: Domain::new(n, m).unwrap(),
                };
                check(
                    &format!("{n}x{m} shared products, mode {mode}"),
                    &k,
                    w,
                    h,
                    0.0,
                );
            }
        }
    }
}

#[test]
fn every_form_of_a_range_weight_matches_the_evaluator() {
    for (w, h) in SIZES {
        let input = image(w, h, 18);
        for mode in 0..5 {
            for (mw, mh) in [(5, 5), (9, 7)] {
                let k = ExpForms {
                    input: Accessor::new(&input).with_boundary(boundary(mode)),
                    spatial: spatial(mw, mh),
                    k: -20.0,
                };
                check(&format!("{mw}x{mh} exp forms, mode {mode}"), &k, w, h, 64.0);
            }
        }
    }
}

#[test]
fn range_weights_of_squared_sums_and_products_match_the_evaluator() {
    for (w, h) in SIZES {
        let input = image(w, h, 19);
        for mode in 0..5 {
            for (mw, mh) in [(5, 5), (3, 9), (13, 13)] {
                let k = SquareForms {
                    input: Accessor::new(&input).with_boundary(boundary(mode)),
                    spatial: spatial(mw, mh),
                    k: -40.0,
                };
                check(&format!("{mw}x{mh} squares, mode {mode}"), &k, w, h, 64.0);
            }
        }
    }
}

#[test]
fn bilateral_filters_with_the_spatial_weight_inside_the_exp_match_the_evaluator() {
    for (w, h) in SIZES {
        let input = image(w, h, 20);
        for mode in 0..5 {
            for (n, m) in [(5, 5), (9, 9), (3, 7)] {
                let k = SpatialInExp {
                    input: Accessor::new(&input).with_boundary(boundary(mode)),
                    window: Domain::new(n, m).unwrap(),
                    spatial: 0.125,
                    range: 50.0,
                };
                check(
                    &format!("{n}x{m} spatial in exp, mode {mode}"),
                    &k,
                    w,
                    h,
                    64.0,
                );
            }
        }
    }
}

#[test]
fn exp_of_a_row_plus_or_minus_a_value_of_the_tap_matches_the_evaluator() {
    for (w, h) in SIZES {
        let input = image(w, h, 21);
        for mode in 0..5 {
            for (mw, mh) in [(5, 5), (3, 9)] {
                let k = ExpTerms {
                    input: Accessor::new(&input).with_boundary(boundary(mode)),
                    spatial: spatial(mw, mh),
                    k: -0.75,
                };
                check(&format!("{mw}x{mh} exp terms, mode {mode}"), &k, w, h, 64.0);
            }
        }
    }
}

#[test]
fn sums_weighted_by_values_of_the_offsets_give_the_evaluator_bits() {
    for (w, h) in SIZES {
        let a = image(w, h, 22);
        for mode in 0..5 {
            for (n, m) in [(9, 9), (3, 11)] {
                let k = OffsetMoments {
                    a: Accessor::new(&a).with_boundary(boundary(mode)),
                    window: Domain::new(n, m).unwrap(),
                    half: 0.5,
                };
                check(
                    &format!("{n}x{m} offset moments, mode {mode}"),
                    &k,
                    w,
                    h,
                    0.0,
                );
            }
        }
    }
}
