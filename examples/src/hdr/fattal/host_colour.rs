//! The colour stage of gamma-encoded output on the CPU backend, eight
//! pixels at a time with vectorised `exp` and powers ([`super::lanes`]).
//!
//! The [`Colour`] kernel takes four powers and one exponential per pixel;
//! through the C library's scalar `powf` they were the largest single cost
//! of a whole `hdr-compress` run on the CPU. Here they run as AVX2/FMA
//! vectors where the processor has them (detected at run time, as the
//! binary is built for baseline x86-64), as plain loops elsewhere. The
//! result differs from the kernel's by a few `1e-6` relative, far inside
//! one 8-bit level. The sRGB curve and linear output keep the kernel.

use super::lanes::{self, LANES};
use crate::hdr::kernels::Colour;
use hipacc::prelude::*;
use hipacc::Result;
use rayon::prelude::*;
use std::arch::x86_64::*;

/// Pixels per parallel task: a few rows of a typical photograph.
const CHUNK: usize = 1 << 12;

/// Whether [`colour`] computes what `k` does on this processor: AVX2 and
/// FMA present, gamma encoding with positive exponents (`x^0` is 1 at
/// `x = 0`, which the lanes do not reproduce).
fn applies(k: &Colour) -> bool {
    is_x86_feature_detected!("avx2")
        && is_x86_feature_detected!("fma")
        && k.encode == 1
        && k.srgb == 0
        && k.saturation > 0.0
        && k.inv_display_gamma > 0.0
}

/// The output of kernel `k` on the input colours `rgb`, their luminance
/// `y` and the solution `u`; `None` where the processor or the encoding is
/// not one this handles (the kernel is run then).
pub(super) fn colour(
    k: &Colour,
    rgb: &Image<Rgba<f32>>,
    y: &Image<f32>,
    u: &Image<f32>,
) -> Result<Option<Image<Rgba<f32>>>> {
    if !applies(k) {
        return Ok(None);
    }
    let out = Image::<Rgba<f32>>::new(rgb.width(), rgb.height())?;
    {
        let (rgb, y, u) = (rgb.read()?, y.read()?, u.read()?);
        let mut dst = out.write()?;
        dst.par_chunks_mut(CHUNK)
            .zip(rgb.par_chunks(CHUNK))
            .zip(y.par_chunks(CHUNK).zip(u.par_chunks(CHUNK)))
            // SAFETY: `applies` checked that AVX2 and FMA are present.
            .for_each(|((dst, rgb), (y, u))| unsafe { chunk(k, dst, rgb, y, u) });
    }
    Ok(Some(out))
}

/// A chunk in groups of [`LANES`] pixels, the last one padded.
#[target_feature(enable = "avx2,fma")]
fn chunk(k: &Colour, dst: &mut [Rgba<f32>], rgb: &[Rgba<f32>], y: &[f32], u: &[f32]) {
    for (((dst, rgb), y), u) in dst
        .chunks_mut(LANES)
        .zip(rgb.chunks(LANES))
        .zip(y.chunks(LANES))
        .zip(u.chunks(LANES))
    {
        let mut lanes = [[0.0f32; LANES]; 5];
        for (i, (p, (&y, &u))) in rgb.iter().zip(y.iter().zip(u)).enumerate() {
            for (lane, v) in lanes.iter_mut().zip([p.r, p.g, p.b, y, u]) {
                lane[i] = v;
            }
        }
        // SAFETY: each array holds eight f32.
        let [r, g, b, y, u] = lanes.map(|l| unsafe { _mm256_loadu_ps(l.as_ptr()) });
        let mut out = [[0.0f32; LANES]; 3];
        for (o, c) in out.iter_mut().zip(group(k, [r, g, b], y, u)) {
            // SAFETY: each array holds eight f32.
            unsafe { _mm256_storeu_ps(o.as_mut_ptr(), c) };
        }
        for (i, d) in dst.iter_mut().enumerate() {
            *d = Rgba::new(out[0][i], out[1][i], out[2][i], 1.0);
        }
    }
}

/// The kernel's arithmetic on eight pixels: `L = max(0, (exp(γ u) - lo) /
/// (hi - lo))` (1 when the range is empty), then per channel
/// `min(1, (s C / Y)^(sat / g) · L^(1 / g))`, 0 where `Y` is not positive.
#[inline]
#[target_feature(enable = "avx2,fma")]
fn group(k: &Colour, rgb: [__m256; 3], y: __m256, u: __m256) -> [__m256; 3] {
    let lum = lanes::exp(_mm256_mul_ps(_mm256_set1_ps(k.gamma), u));
    let l = if k.inv_range > 0.0 {
        let l = _mm256_mul_ps(
            _mm256_sub_ps(lum, _mm256_set1_ps(k.lo)),
            _mm256_set1_ps(k.inv_range),
        );
        _mm256_max_ps(l, _mm256_setzero_ps())
    } else {
        _mm256_set1_ps(1.0)
    };
    let le = lanes::pow(l, k.inv_display_gamma);
    let e = k.saturation * k.inv_display_gamma;
    let inv_y = _mm256_div_ps(_mm256_set1_ps(1.0), y);
    let lit = _mm256_cmp_ps::<_CMP_GT_OQ>(y, _mm256_setzero_ps());
    let [r, g, b] = rgb;
    [r, g, b].map(|c| {
        let ratio = _mm256_mul_ps(_mm256_mul_ps(c, _mm256_set1_ps(k.scale)), inv_y);
        let v = _mm256_min_ps(_mm256_mul_ps(lanes::pow(ratio, e), le), _mm256_set1_ps(1.0));
        _mm256_and_ps(v, lit)
    })
}
