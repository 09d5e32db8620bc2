//! `exp` over a row of f32 lanes, in a form LLVM vectorises.
//!
//! The standard library's `f32::exp` is a call to the C library per value,
//! which no loop vectoriser crosses; a bilateral filter's range weight
//! spends most of its time there. [`exp_row`] computes each lane with
//! straight-line arithmetic instead: `exp(x) = 2^n · exp(r)` with
//! `n = round(x / ln 2)` (to nearest, by adding `1.5 · 2^23` in a fused
//! multiply-add) and `r = x - n ln 2` (two fused multiply-adds with `ln 2`
//! split in two), `|r| ≤ ln 2 / 2`, `exp(r)` from a degree-6 polynomial
//! (the Cephes `expf` coefficients).
//!
//! Two ways of scaling by `2^n` give the same bits wherever both apply:
//!
//! - for `|x| ≤ 86` ([`NORMAL`]), where `exp(x)` and `exp(r)` are normal,
//!   `n` is added to the exponent bits of `exp(r)`: exact, two integer
//!   instructions, and no clamp or test of the result;
//! - elsewhere `x` is clamped to where `exp` is finite and not below half
//!   the smallest subnormal, `2^n` is assembled from its exponent bits in
//!   two halves (so that results down to the subnormals keep their scale),
//!   and overflow, underflow and NaN are tested.
//!
//! Each row runs the first form over every lane, noting whether any lane
//! lies outside it, and only then, rarely, the second over the whole row:
//! a lane's value does not depend on its neighbours. The first form is
//! about 17 vector instructions per 8 lanes, the second about 35.
//!
//! Error: within 2 ulp of the correctly rounded result for normal results
//! (checked against `f64::exp` in the tests below); `+inf` above
//! `88.72`, `0` below `-103.98`, subnormal results within 2 ulp of the
//! smallest normal; NaN stays NaN. Against `f32::exp`, which the
//! evaluator calls, normal results are within 2 ulp too (tested on every
//! 997th f32 of both signs).

use super::simd::dispatch;

/// Above this, `exp` overflows f32.
const OVERFLOW: f32 = 88.722_84;
/// Below this, `exp` is below half the smallest subnormal.
const UNDERFLOW: f32 = -103.972_08;
/// Within `±NORMAL`, `n` lies in `-124..=124` and `exp(x)` is normal: its
/// exponent is that of `exp(r)` (`-1` or `0`) plus `n`.
const NORMAL: f32 = 86.0;

const LOG2E: f32 = std::f32::consts::LOG2_E;
// ln 2 split so that `n · LN2_HI` is exact for |n| < 2^10.
const LN2_HI: f32 = 0.693_359_4;
const LN2_LO: f32 = -2.121_944_4e-4;
// 1.5 · 2^23: adding it rounds a value of magnitude below 2^22 to an
// integer (to nearest), which then sits in the low mantissa bits. This
// keeps `n` in vector registers where `round` and `as i32` (saturating)
// went lane by lane.
const SHIFTER: f32 = 12_582_912.0;
/// The polynomial's coefficients, highest degree first.
const POLY: [f32; 6] = [
    1.987_569_1e-4,
    1.398_199_9e-3,
    8.333_452e-3,
    4.166_579_6e-2,
    1.666_666_5e-1,
    0.5,
];

/// `exp(r)` and `1.5 · 2^23 + n` (whose low mantissa bits hold `n`) for
/// `x = n ln 2 + r`.
#[inline(always)]
fn reduced(x: f32) -> (f32, f32) {
    let t = x.mul_add(LOG2E, SHIFTER);
    let n = t - SHIFTER;
    let r = (-n).mul_add(LN2_HI, x);
    let r = (-n).mul_add(LN2_LO, r);
    let p = POLY[1..].iter().fold(POLY[0], |p, &c| p.mul_add(r, c));
    ((p * r).mul_add(r, r) + 1.0, t)
}

/// [`exp_normal`] of eight lanes with AVX2 and FMA: the same operations
/// as instructions (each `mul_add` one fused multiply-add), so the same
/// bits, and a mask of the lanes within `±NORMAL`.
///
/// # Safety
/// The CPU must support AVX2 and FMA.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
#[inline]
pub(crate) unsafe fn exp_normal8(
    x: std::arch::x86_64::__m256,
) -> (std::arch::x86_64::__m256, std::arch::x86_64::__m256) {
    use std::arch::x86_64::*;
    let c = |v: f32| _mm256_set1_ps(v);
    let t = _mm256_fmadd_ps(x, c(LOG2E), c(SHIFTER));
    let n = _mm256_sub_ps(t, c(SHIFTER));
    // `(-n) · h + x` rounded once is `-(n · h) + x` rounded once.
    let r = _mm256_fnmadd_ps(n, c(LN2_HI), x);
    let r = _mm256_fnmadd_ps(n, c(LN2_LO), r);
    let p = POLY[1..]
        .iter()
        .fold(c(POLY[0]), |p, &k| _mm256_fmadd_ps(p, r, c(k)));
    let e = _mm256_add_ps(_mm256_fmadd_ps(_mm256_mul_ps(p, r), r, r), c(1.0));
    let v = _mm256_add_epi32(
        _mm256_castps_si256(e),
        _mm256_slli_epi32::<23>(_mm256_castps_si256(t)),
    );
    let abs = _mm256_andnot_ps(c(-0.0), x);
    let inside = _mm256_cmp_ps::<_CMP_LE_OQ>(abs, c(NORMAL));
    (_mm256_castsi256_ps(v), inside)
}

/// `exp(x)` for `|x| ≤ NORMAL`, and whether `x` is within it (false for
/// NaN); the value of other lanes is meaningless.
#[inline(always)]
fn exp_normal(x: f32) -> (f32, bool) {
    let (e, t) = reduced(x);
    // The low bits of `t` are `1.5 · 2^23`'s plus `n`; shifted into the
    // exponent field, the constant's bits leave it and `n` remains.
    let v = f32::from_bits(e.to_bits().wrapping_add(t.to_bits() << 23));
    (v, x.abs() <= NORMAL)
}

/// `exp(x)` of any lane; the bits of [`exp_normal`] within `±NORMAL`.
#[inline(always)]
pub(crate) fn exp_lane(x: f32) -> f32 {
    let (e, t) = reduced(x.clamp(UNDERFLOW, OVERFLOW));
    // 2^n as two factors, each a normal power of two for n in -150..=128
    // (wrapping: a NaN lane computes garbage here, replaced below).
    let n = (t.to_bits() as i32).wrapping_sub(12_582_912.0f32.to_bits() as i32);
    let half = n >> 1;
    let pow = |k: i32| f32::from_bits((k.wrapping_add(127) as u32) << 23);
    let v = e * pow(half) * pow(n.wrapping_sub(half));
    if x.is_nan() {
        x
    } else if x > OVERFLOW {
        f32::INFINITY
    } else if x < UNDERFLOW {
        0.0
    } else {
        v
    }
}

/// `out[i] = exp(xs[i]) · k` (over the shorter of the two): the first
/// form of the module documentation over every lane, then the second over
/// the row where any lane needs it. Inlined into the callers' vectorised
/// copies.
#[inline(always)]
pub(crate) fn exp_each<I>(xs: I, k: f32, out: &mut [f32])
where
    I: Iterator<Item = f32> + Clone,
{
    let mut outside = 0u32;
    for (o, x) in out.iter_mut().zip(xs.clone()) {
        let (v, inside) = exp_normal(x);
        *o = v * k;
        outside |= u32::from(!inside);
    }
    if outside != 0 {
        for (o, x) in out.iter_mut().zip(xs) {
            *o = exp_lane(x) * k;
        }
    }
}

dispatch! {
    /// `out[i] = exp(a[i])`, compiled for AVX2 where the CPU has it.
    pub(crate) fn exp_row<>(a: &[f32], out: &mut [f32]) {
        exp_each(a.iter().copied(), 1.0, out);
    }
}

dispatch! {
    /// `out[i] = exp(a[i] · s + t) · k`, compiled for AVX2 where the CPU
    /// has it: the product, the sum (each rounded), [`exp_row`]'s value of
    /// it and the product with `k` in one pass (the same bits as four
    /// passes). Without a term, `t = 0` gives the bits of `exp(a[i] · s) ·
    /// k`: adding `+0` changes only `-0` (to `+0`), and `exp(±0)` is 1.
    pub(crate) fn exp_scaled_row<>(a: &[f32], s: f32, t: f32, k: f32, out: &mut [f32]) {
        exp_each(a.iter().map(|&x| x * s + t), k, out);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scaled_rows_give_the_bits_of_the_separate_steps() {
        let xs: Vec<f32> = (0u32..0x7f80_0000)
            .step_by(99_991)
            .map(f32::from_bits)
            .flat_map(|x| [x, -x])
            .chain([f32::INFINITY, f32::NEG_INFINITY, 0.0, -0.0])
            .collect();
        let cases = [
            (1.0, 0.0, 1.0),
            (-50.0, 0.0, 0.25),
            (0.5, 0.0, -3.0),
            (-1.0, 0.0, 1.0e-30),
            (-2.0, -4.5, 1.0),
            (0.25, 60.0, 0.5),
        ];
        for (s, t, k) in cases {
            let mut got = vec![0.0; xs.len()];
            exp_scaled_row(&xs, s, t, k, &mut got);
            // Without a term, the product alone (no `+ 0`).
            let scaled: Vec<f32> = xs
                .iter()
                .map(|x| if t == 0.0 { x * s } else { x * s + t })
                .collect();
            let mut want = vec![0.0; xs.len()];
            exp_row(&scaled, &mut want);
            for ((x, g), w) in xs.iter().zip(&got).zip(&want) {
                assert_eq!(g.to_bits(), (w * k).to_bits(), "exp({x} * {s} + {t}) * {k}");
            }
        }
    }

    /// A lane's value does not depend on the other lanes of its row: rows
    /// of in-range values, alone and with one lane that needs the
    /// clamped form, give the same bits in the common lanes.
    #[test]
    fn lanes_outside_the_normal_range_leave_the_others_alone() {
        let xs: Vec<f32> = (0..300).map(|i| (i as f32 * 0.731).sin() * 85.9).collect();
        let mut alone = vec![0.0; xs.len()];
        exp_row(&xs, &mut alone);
        for odd in [-90.0, 88.0, 89.0, -200.0, f32::NAN, f32::INFINITY] {
            let mut mixed = xs.clone();
            mixed[123] = odd;
            let mut got = vec![0.0; xs.len()];
            exp_row(&mixed, &mut got);
            for (i, (g, w)) in got.iter().zip(&alone).enumerate() {
                if i != 123 {
                    assert_eq!(g.to_bits(), w.to_bits(), "lane {i} with {odd} in lane 123");
                }
            }
            let mut one = [0.0];
            exp_row(&[odd], &mut one);
            assert_eq!(got[123].to_bits(), one[0].to_bits(), "exp({odd})");
        }
    }

    /// Distance in ulp between `got` and the f32 nearest `want`.
    fn ulps(got: f32, want: f64) -> u32 {
        let w = want as f32;
        (got.to_bits() as i64 - w.to_bits() as i64).unsigned_abs() as u32
    }

    #[test]
    fn within_two_ulp_of_f64_exp_on_normal_results() {
        // Every 9973rd f32 of [-87.3, 88.7], both signs of small values.
        let xs: Vec<f32> = (0u32..0x7f80_0000)
            .step_by(9973)
            .map(f32::from_bits)
            .filter(|x| *x <= 88.7)
            .flat_map(|x| [x, -x])
            .filter(|x| *x >= -87.3)
            .collect();
        let mut out = vec![0.0; xs.len()];
        exp_row(&xs, &mut out);
        let worst = xs
            .iter()
            .zip(&out)
            .map(|(&x, &e)| (ulps(e, f64::from(x).exp()), x))
            .max_by_key(|&(u, _)| u)
            .unwrap();
        assert!(worst.0 <= 2, "{} ulp at {}", worst.0, worst.1);
    }

    /// Against `f32::exp`, which the evaluator calls: every 997th f32 of
    /// both signs, overflow and underflow included. Normal results are
    /// within 2 ulp of it, smaller ones within 2 ulp of the smallest
    /// normal, and both agree on infinities, zeros and NaN.
    #[test]
    fn within_two_ulp_of_the_evaluators_exp_over_the_whole_range() {
        let xs: Vec<f32> = (0u32..0x7f80_0000)
            .step_by(997)
            .map(f32::from_bits)
            .flat_map(|x| [x, -x])
            .chain([f32::INFINITY, f32::NEG_INFINITY, f32::NAN])
            .collect();
        let mut out = vec![0.0; xs.len()];
        exp_row(&xs, &mut out);
        for (&x, &got) in xs.iter().zip(&out) {
            let want = x.exp();
            let ok = if want.is_nan() {
                got.is_nan()
            } else if want.is_infinite() || want == 0.0 {
                got == want || (got - want).abs() <= 2.0 * f32::MIN_POSITIVE
            } else if want < f32::MIN_POSITIVE {
                (got - want).abs() <= 2.0 * f32::MIN_POSITIVE
            } else {
                (got.to_bits() as i64 - want.to_bits() as i64).abs() <= 2
            };
            assert!(ok, "exp({x}) = {got}, f32::exp gives {want}");
        }
    }

    #[test]
    fn edges_overflow_underflow_and_nan() {
        let xs = [
            89.0,
            f32::INFINITY,
            -104.0,
            f32::NEG_INFINITY,
            f32::NAN,
            0.0,
            -90.0,
        ];
        let mut out = [1.0; 7];
        exp_row(&xs, &mut out);
        assert_eq!(out[..4], [f32::INFINITY, f32::INFINITY, 0.0, 0.0]);
        assert!(out[4].is_nan());
        assert_eq!(out[5], 1.0);
        // A subnormal result keeps its scale.
        let want = (-90.0f64).exp();
        assert!((f64::from(out[6]) - want).abs() <= 2.0 * f64::from(f32::from_bits(1)));
        assert!(out[6] > 0.0);
    }
}
