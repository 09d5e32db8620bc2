//! `x^y`, `2^t` and `e^t` in plain `f32` arithmetic (no calls into libm),
//! written so that the compiler can evaluate four lanes at once: the CPU
//! colour stage ([`super::cpu_colour`]) raises every pixel's red, green,
//! blue and luminance to a power, and libm's scalar `powf` was a tenth of
//! the whole tone mapping's time.
//!
//! `x^y = 2^(y · log2 x)`:
//! - `log2 x`: the exponent from the bits of `x`, the mantissa `m` brought
//!   to `[√½, √2)`, and `ln m = 2 atanh(s)`, `s = (m - 1) / (m + 1)`, from
//!   its odd series up to `s^9` (`|s| ≤ 0.172`, the first term left out is
//!   below `4e-10`). Subnormal `x` is scaled by `2^24` first.
//! - `2^t`: `t = n + f` with `n` the nearest integer and `|f| ≤ ½`, `2^n`
//!   built from its exponent bits and `2^f = e^(f ln 2)` from its Taylor
//!   polynomial of degree 6 (the first term left out is below `1.3e-7`).
//!
//! Accuracy, measured by the tests against `f64` powers: relative error
//! below `8e-6` for positive normal and subnormal `x` wherever the exact
//! result is a normal `f32`, and `e^t` below `4e-6`. Most of it is the
//! rounding of `log2 x` and `t = y log2 x` to `f32`, so it is largest for
//! the extreme `x` and `t` (subnormal `x`, `|t|` near 126) and a few `f32`
//! ulps for the moderate values of tone mapping (`powf` is within 1 ulp). A result below `2^-126` (subnormal) comes out as 0.
//! `x ≤ 0`, infinite or NaN `x`, and non-finite `y` are handed to `powf`,
//! so their results are the standard ones.

/// `ln 2`.
const LN_2: f32 = std::f32::consts::LN_2;
/// `1 / ln 2`.
const LOG2_E: f32 = std::f32::consts::LOG2_E;

/// `log2 x` for positive, finite `x` (normal or subnormal); other `x` give
/// meaningless values (see [`pow`]).
#[inline(always)]
fn log2_positive(x: f32) -> f32 {
    let subnormal = x < f32::MIN_POSITIVE;
    let x = if subnormal { x * 16_777_216.0 } else { x };
    let bits = x.to_bits();
    let mut e = ((bits >> 23) & 0xff) as i32 - 127 - if subnormal { 24 } else { 0 };
    let mut m = f32::from_bits((bits & 0x007f_ffff) | 0x3f80_0000);
    if m > std::f32::consts::SQRT_2 {
        m *= 0.5;
        e += 1;
    }
    let s = (m - 1.0) / (m + 1.0);
    let s2 = s * s;
    let series = 1.0 + s2 * (1.0 / 3.0 + s2 * (1.0 / 5.0 + s2 * (1.0 / 7.0 + s2 * (1.0 / 9.0))));
    e as f32 + 2.0 * s * series * LOG2_E
}

/// `2^t` for finite `t`: 0 below -126, infinity from 128 on.
#[inline(always)]
pub(crate) fn exp2(t: f32) -> f32 {
    let tc = t.clamp(-126.0, 128.0);
    // Round to nearest through the 1.5 · 2^23 shift (exact for |t| < 2^22).
    const SHIFT: f32 = 12_582_912.0;
    let n = (tc + SHIFT) - SHIFT;
    let f = (tc - n) * LN_2;
    let p = 1.0
        + f * (1.0
            + f * (0.5
                + f * (1.0 / 6.0 + f * (1.0 / 24.0 + f * (1.0 / 120.0 + f * (1.0 / 720.0))))));
    // n is in [-126, 128]; 2^128 is not an f32, so n = 128 is taken as
    // 2 · 2^127 (exponent fields 1..=254).
    let (n, p) = if n > 127.0 { (n - 1.0, p * 2.0) } else { (n, p) };
    let two_n = f32::from_bits(((n as i32 + 127) as u32) << 23);
    if t < -126.0 {
        0.0
    } else {
        p * two_n
    }
}

/// `e^t` for finite `t` (as [`exp2`] of `t / ln 2`).
#[inline(always)]
pub(crate) fn exp(t: f32) -> f32 {
    exp2(t * LOG2_E)
}

/// `x^y` (see the module docs for its accuracy).
#[inline(always)]
pub(crate) fn pow(x: f32, y: f32) -> f32 {
    if x > 0.0 && x < f32::INFINITY && y.is_finite() {
        exp2(y * log2_positive(x))
    } else {
        x.powf(y)
    }
}

/// `x^y` lane by lane, for four values at once: the special cases are
/// looked for after the common path has run on all four.
#[inline(always)]
pub(crate) fn pow4(x: [f32; 4], y: [f32; 4]) -> [f32; 4] {
    let mut out = [0.0f32; 4];
    for i in 0..4 {
        // Lanes outside the fast path get a harmless argument here and
        // are redone below.
        let xi = if x[i] > 0.0 && x[i] < f32::INFINITY {
            x[i]
        } else {
            1.0
        };
        let yi = if y[i].is_finite() { y[i] } else { 0.0 };
        out[i] = exp2(yi * log2_positive(xi));
    }
    for i in 0..4 {
        if !(x[i] > 0.0 && x[i] < f32::INFINITY && y[i].is_finite()) {
            out[i] = x[i].powf(y[i]);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Relative error of `got` against the exact `want` (computed in f64).
    fn rel(got: f32, want: f64) -> f64 {
        ((f64::from(got) - want) / want).abs()
    }

    /// x from 1e-44 (subnormal) to 3e38, densely and log-spaced, plus the
    /// neighbours of powers of two and of √2 (the mantissa split).
    fn xs() -> Vec<f32> {
        let mut v = Vec::new();
        let mut x = 1e-44f64;
        while x < 3e38 {
            v.push(x as f32);
            x *= 1.000_73;
        }
        for k in -149..128 {
            let p = 2f32.powi(k);
            for f in [1.0f32, std::f32::consts::SQRT_2] {
                let c = p * f;
                v.extend([c, f32::from_bits(c.to_bits() + 1)]);
                if c.to_bits() > 1 {
                    v.push(f32::from_bits(c.to_bits() - 1));
                }
            }
        }
        v
    }

    #[test]
    fn pow_is_within_8e_6_of_the_exact_power() {
        let mut worst = 0.0f64;
        let mut checked = 0;
        for &y in &[0.8f32, 0.363_636_37, 0.454_545_45, 0.416_666_67, 0.1, 1.0, 2.5, -0.1] {
            for &x in &xs() {
                let want = f64::from(x).powf(f64::from(y));
                // Only where the exact result is a normal f32.
                if !(f64::from(f32::MIN_POSITIVE)..f64::from(f32::MAX)).contains(&want) {
                    continue;
                }
                let e = rel(pow(x, y), want);
                assert!(e < 8e-6, "pow({x:e}, {y}) = {} vs {want:e}", pow(x, y));
                let lanes = pow4([x, 1.0, x, 0.5], [y, y, 0.5, y]);
                assert_eq!(lanes[0], pow(x, y), "pow4 lane 0 at {x:e}");
                worst = worst.max(e);
                checked += 1;
            }
        }
        assert!(checked > 500_000, "{checked}");
        // The bound is not loose by orders of magnitude either.
        assert!(worst > 1e-7, "{worst}");
        eprintln!("worst relative error {worst:e}");
    }

    #[test]
    fn exp_matches_the_exact_exponential() {
        let mut t = -87.0f32;
        while t < 88.0 {
            let want = f64::from(t).exp();
            assert!(rel(exp(t), want) < 4e-6, "exp({t}) = {} vs {want}", exp(t));
            t += 0.0173;
        }
        assert_eq!(exp2(-200.0), 0.0);
        assert_eq!(exp2(500.0), f32::INFINITY);
        assert_eq!(exp2(3.0), 8.0);
    }

    #[test]
    fn special_cases_are_the_standard_ones() {
        let specials = [0.0f32, -0.0, -1.5, f32::INFINITY, f32::NEG_INFINITY, f32::NAN];
        for &x in &specials {
            for &y in &[0.8f32, 0.0, -0.3, 2.0, f32::INFINITY, f32::NAN] {
                let want = x.powf(y);
                let got = pow(x, y);
                assert!(
                    got.to_bits() == want.to_bits() || (got.is_nan() && want.is_nan()),
                    "pow({x}, {y}) = {got} vs {want}"
                );
                let lanes = pow4([2.0, x, 3.0, x], [0.5, y, 0.5, y]);
                assert!(lanes[1].to_bits() == want.to_bits() || (lanes[1].is_nan() && want.is_nan()));
                assert!(rel(lanes[0], 2f64.sqrt()) < 2e-6);
            }
        }
        assert_eq!(pow(2.0, f32::NAN).is_nan(), 2f32.powf(f32::NAN).is_nan());
    }
}
