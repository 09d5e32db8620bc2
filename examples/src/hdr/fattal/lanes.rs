//! `exp`, `ln` and positive powers of eight `f32` lanes in one AVX register
//! (x86-64 with AVX2 and FMA), from arithmetic and bit operations: the
//! `f32` methods call the C library one value at a time, and the compiler
//! does not turn scalar versions of these into vector code.
//!
//! Relative error is a few `1e-6` for normal inputs: three orders of
//! magnitude below an 8-bit quantisation step, and of the order of the
//! `f32` rounding of the values they feed. Every function requires AVX2
//! and FMA, which callers check for at run time; called from a function
//! compiled with those features they are inlined into it.

use std::arch::x86_64::*;

/// The lanes of one register.
pub(super) const LANES: usize = 8;

/// `ln 2` in two parts: the high part has few mantissa bits, so `n` times
/// it is exact for the `n` that [`exp`] uses.
const LN2_HI: f32 = 0.693_359_4;
const LN2_LO: f32 = -2.121_944_4e-4;

/// `exp(y)` per lane; `y` is clamped to `[-87, 88]`, so results stay normal
/// and finite (values that would underflow come out near `1.6e-38`).
#[inline]
#[target_feature(enable = "avx2,fma")]
pub(super) fn exp(y: __m256) -> __m256 {
    let y = _mm256_min_ps(
        _mm256_max_ps(y, _mm256_set1_ps(-87.0)),
        _mm256_set1_ps(88.0),
    );
    let n = _mm256_round_ps::<{ _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC }>(_mm256_mul_ps(
        y,
        _mm256_set1_ps(std::f32::consts::LOG2_E),
    ));
    // |f| <= ln(2) / 2: the Taylor series to f^7 / 7! leaves 2e-9.
    let f = _mm256_fnmadd_ps(n, _mm256_set1_ps(LN2_HI), y);
    let f = _mm256_fnmadd_ps(n, _mm256_set1_ps(LN2_LO), f);
    let mut p = _mm256_set1_ps(1.0 / 5040.0);
    for c in [
        1.0 / 720.0,
        1.0 / 120.0,
        1.0 / 24.0,
        1.0 / 6.0,
        0.5,
        1.0,
        1.0,
    ] {
        p = _mm256_fmadd_ps(p, f, _mm256_set1_ps(c));
    }
    let biased = _mm256_add_epi32(_mm256_cvtps_epi32(n), _mm256_set1_epi32(127));
    let scale = _mm256_castsi256_ps(_mm256_slli_epi32::<23>(biased));
    _mm256_mul_ps(p, scale)
}

/// `ln(x)` per lane for positive normal `x` (other inputs give finite
/// nonsense or NaN; [`pow`] masks them).
#[inline]
#[target_feature(enable = "avx2,fma")]
pub(super) fn ln(x: __m256) -> __m256 {
    let bits = _mm256_castps_si256(x);
    // x = m 2^k, m in [1, 2), then moved to [sqrt(1/2), sqrt(2)).
    let mantissa = _mm256_and_si256(bits, _mm256_set1_epi32(0x007f_ffff));
    let m = _mm256_castsi256_ps(_mm256_or_si256(mantissa, _mm256_set1_epi32(0x3f80_0000)));
    let k = _mm256_sub_epi32(_mm256_srli_epi32::<23>(bits), _mm256_set1_epi32(127));
    let k = _mm256_cvtepi32_ps(k);
    let high = _mm256_cmp_ps::<_CMP_GT_OQ>(m, _mm256_set1_ps(std::f32::consts::SQRT_2));
    let m = _mm256_blendv_ps(m, _mm256_mul_ps(m, _mm256_set1_ps(0.5)), high);
    let k = _mm256_add_ps(k, _mm256_and_ps(high, _mm256_set1_ps(1.0)));
    // ln m = 2 atanh(s), s = (m - 1) / (m + 1), |s| <= 0.1716: the series
    // to s^9 / 9 leaves 7e-10.
    let one = _mm256_set1_ps(1.0);
    let s = _mm256_div_ps(_mm256_sub_ps(m, one), _mm256_add_ps(m, one));
    let s2 = _mm256_mul_ps(s, s);
    let mut p = _mm256_set1_ps(1.0 / 9.0);
    for c in [1.0 / 7.0, 1.0 / 5.0, 1.0 / 3.0, 1.0] {
        p = _mm256_fmadd_ps(p, s2, _mm256_set1_ps(c));
    }
    let two_s = _mm256_add_ps(s, s);
    _mm256_fmadd_ps(
        k,
        _mm256_set1_ps(std::f32::consts::LN_2),
        _mm256_mul_ps(two_s, p),
    )
}

/// `x^e` per lane for `e > 0`: 0 where `x` is 0 or negative, as `powf`
/// gives for `x = 0`.
#[inline]
#[target_feature(enable = "avx2,fma")]
pub(super) fn pow(x: __m256, e: f32) -> __m256 {
    let r = exp(_mm256_mul_ps(_mm256_set1_ps(e), ln(x)));
    let positive = _mm256_cmp_ps::<_CMP_GT_OQ>(x, _mm256_setzero_ps());
    _mm256_and_ps(r, positive)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Whether the processor running the tests has what the module needs.
    fn supported() -> bool {
        is_x86_feature_detected!("avx2") && is_x86_feature_detected!("fma")
    }

    /// `f` over `xs`, eight at a time (the last group padded with ones).
    fn per_lane(xs: &[f32], f: impl Fn(__m256) -> __m256) -> Vec<f32> {
        let mut out = Vec::with_capacity(xs.len());
        for chunk in xs.chunks(LANES) {
            let mut x = [1.0f32; LANES];
            x[..chunk.len()].copy_from_slice(chunk);
            let mut y = [0.0f32; LANES];
            // SAFETY: the arrays hold eight f32 each.
            unsafe { _mm256_storeu_ps(y.as_mut_ptr(), f(_mm256_loadu_ps(x.as_ptr()))) };
            out.extend_from_slice(&y[..chunk.len()]);
        }
        out
    }

    /// Values spread over many binades.
    fn samples() -> Vec<f32> {
        (0..20_000)
            .map(|i| 2f32.powf(-30.0 + i as f32 * 0.003_1))
            .collect()
    }

    /// `pow` takes `exp` of `e ln x`, whose `f32` rounding grows with
    /// `|ln x|`: 5e-6 covers exponents to 2 over `2^±32`.
    fn check(name: &str, got: f32, want: f64, x: f32) {
        let rel = ((f64::from(got) - want) / want).abs();
        assert!(rel < 5e-6, "{name}({x}) = {got}, want {want} (rel {rel:e})");
    }

    #[test]
    fn exp_matches_the_library_across_its_range() {
        if !supported() {
            return;
        }
        let ys: Vec<f32> = (0..16_000).map(|i| -80.0 + i as f32 * 0.01).collect();
        // SAFETY: AVX2 and FMA are present.
        let got = per_lane(&ys, |y| unsafe { exp(y) });
        for (&got, &y) in got.iter().zip(&ys) {
            check("exp", got, f64::from(y).exp(), y);
        }
    }

    #[test]
    fn ln_matches_the_library() {
        if !supported() {
            return;
        }
        let xs = samples();
        // SAFETY: AVX2 and FMA are present.
        let got = per_lane(&xs, |x| unsafe { ln(x) });
        for (&got, &x) in got.iter().zip(&xs) {
            let want = f64::from(x).ln();
            // Near x = 1, ln is near 0: compare absolutely there.
            let err = (f64::from(got) - want).abs();
            assert!(
                err < 2e-6 * want.abs().max(1.0),
                "ln({x}) = {got}, want {want}"
            );
        }
    }

    #[test]
    fn pow_matches_the_library_and_maps_zero_to_zero() {
        if !supported() {
            return;
        }
        let xs = samples();
        for e in [0.363_636_37f32, 0.454_545_45, 0.8, 1.7] {
            // SAFETY: AVX2 and FMA are present.
            let got = per_lane(&xs, |x| unsafe { pow(x, e) });
            for (&got, &x) in got.iter().zip(&xs) {
                check("pow", got, f64::from(x).powf(f64::from(e)), x);
            }
        }
        // SAFETY: AVX2 and FMA are present.
        let zeros = per_lane(&[0.0, -1.0, 0.0], |x| unsafe { pow(x, 0.5) });
        assert_eq!(zeros, [0.0; 3]);
    }
}
