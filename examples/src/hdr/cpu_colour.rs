//! The colour stage on the CPU backend in native code: the same formula as
//! the [`Colour`] kernel (see its docs), pixels in parallel (rayon), with
//! the powers and the exponential of [`super::fastpow`] instead of libm's
//! scalar ones (four powers per pixel evaluated as one four-lane power).
//! The results differ from the kernel's by the relative error stated there
//! (below `4e-6` of the powers' values before the
//! black level is subtracted): 8-bit output differs by at most one level, and only
//! where a value lies within that error of a rounding boundary (tested).
//!
//! The output image is built by collecting the pixels in parallel, so its
//! memory is first touched by the threads that compute it.

use super::fastpow::{exp, pow4};
use super::kernels::Colour;
use hipacc::prelude::*;
use hipacc::Result;
use rayon::prelude::*;

/// Runs `k`'s colour stage (its scalar parameters; its accessors are
/// ignored) on `rgb`, `y` and `u`, all of one size.
pub(crate) fn colour(
    k: &Colour,
    rgb: &Image<Rgba<f32>>,
    y: &Image<f32>,
    u: &Image<f32>,
) -> Result<Image<Rgba<f32>>> {
    let (w, h) = (rgb.width(), rgb.height());
    let (rgb_px, y_px, u_px) = (rgb.read()?, y.read()?, u.read()?);
    let n = w * h;
    let pixels: Vec<Rgba<f32>> = rgb_px[..n]
        .par_iter()
        .zip(&y_px[..n])
        .zip(&u_px[..n])
        .with_min_len(4096)
        .map(|((c, &yin), &u)| pixel(k, *c, yin, u))
        .collect();
    Ok(Image::from_vec(w, h, pixels)?)
}

/// One output pixel (the [`Colour`] kernel's body).
#[inline(always)]
fn pixel(k: &Colour, c: Rgba<f32>, yin: f32, u: f32) -> Rgba<f32> {
    let mut l = 1.0f32;
    if k.inv_range > 0.0 {
        l = ((exp(k.gamma * u) - k.lo) * k.inv_range).max(0.0);
    }
    if !(yin > 0.0) {
        return Rgba::new(0.0, 0.0, 0.0, 1.0);
    }
    let inv_y = 1.0 / yin;
    let ratio = [
        c.r * k.scale * inv_y,
        c.g * k.scale * inv_y,
        c.b * k.scale * inv_y,
    ];
    let s = k.saturation;
    if k.encode == 0 {
        let [r, g, b, _] = pow4([ratio[0], ratio[1], ratio[2], 1.0], [s, s, s, 1.0]);
        Rgba::new(r * l, g * l, b * l, 1.0)
    } else if k.srgb == 1 {
        let [r, g, b, _] = pow4([ratio[0], ratio[1], ratio[2], 1.0], [s, s, s, 1.0]);
        let v = [(r * l).min(1.0), (g * l).min(1.0), (b * l).min(1.0)];
        let e = 0.416_666_67;
        let p = pow4([v[0], v[1], v[2], 1.0], [e, e, e, 1.0]);
        let enc = |i: usize| {
            if v[i] <= 0.003_130_8 {
                12.92 * v[i]
            } else {
                1.055 * p[i] - 0.055
            }
        };
        Rgba::new(enc(0), enc(1), enc(2), 1.0)
    } else {
        let e = s * k.inv_display_gamma;
        let [r, g, b, le] = pow4(
            [ratio[0], ratio[1], ratio[2], l],
            [e, e, e, k.inv_display_gamma],
        );
        Rgba::new((r * le).min(1.0), (g * le).min(1.0), (b * le).min(1.0), 1.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A deterministic pseudo-random image of `n` pixels over 12 decades,
    /// with some zero channels and black pixels, its luminance and a
    /// solution `u` spanning the normalised range.
    fn inputs(w: usize, h: usize) -> (Image<Rgba<f32>>, Image<f32>, Image<f32>) {
        let mut state = 0x2545_f491_4f6c_dd1du64;
        let mut next = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state >> 40) as f32 / (1u64 << 24) as f32
        };
        let mut rgb = Vec::new();
        for i in 0..w * h {
            let base = 10f32.powf(next() * 12.0 - 6.0);
            let mut c = [0.0f32; 3].map(|_| base * (0.05 + 2.0 * next()));
            if i % 17 == 0 {
                c[i % 3] = 0.0;
            }
            if i % 101 == 0 {
                c = [0.0; 3];
            }
            rgb.push(Rgba::new(c[0], c[1], c[2], 1.0));
        }
        let y: Vec<f32> = rgb
            .iter()
            .map(|p| 0.2126 * p.r + 0.7152 * p.g + 0.0722 * p.b)
            .collect();
        let u: Vec<f32> = (0..w * h).map(|_| next() * 6.0 - 3.0).collect();
        (
            Image::from_vec(w, h, rgb).unwrap(),
            Image::from_vec(w, h, y).unwrap(),
            Image::from_vec(w, h, u).unwrap(),
        )
    }

    fn to_u8(v: f32) -> i32 {
        (v.clamp(0.0, 1.0) * 255.0).round() as i32
    }

    #[test]
    fn native_colour_matches_the_kernel() {
        let dev = Device::cpu();
        let (w, h) = (331, 217);
        let (rgb, y, u) = inputs(w, h);
        // (encode, srgb, 1 / display gamma)
        for (encode, srgb, idg) in [(1, 0, 1.0 / 2.2), (1, 1, 1.0), (0, 0, 1.0)] {
            let k = || Colour {
                rgb: Accessor::new(&rgb),
                y: Accessor::new(&y),
                u: Accessor::new(&u),
                gamma: 0.8,
                lo: 0.3,
                inv_range: 1.0 / (9.0 - 0.3),
                saturation: 0.8,
                inv_display_gamma: idg,
                encode,
                srgb,
                scale: 0.5,
            };
            let want = Image::<Rgba<f32>>::new(w, h).unwrap();
            k().execute(&dev, &IterationSpace::full(&want)).unwrap();
            let want = want.to_vec().unwrap();
            let got = colour(&k(), &rgb, &y, &u).unwrap().to_vec().unwrap();
            let (mut same, mut total) = (0, 0);
            let (c, yv, uv) = (rgb.to_vec().unwrap(), y.to_vec().unwrap(), u.to_vec().unwrap());
            for (i, (g, e)) in got.iter().zip(&want).enumerate() {
                assert_eq!(g.a, 1.0);
                // The scale of the values before `lo` is subtracted.
                let lum = (0.8 * uv[i]).exp() / (9.0 - 0.3);
                let ratio = |v: f32| (v * 0.5 / yv[i]).powf(0.8);
                let pre = if yv[i] > 0.0 {
                    [ratio(c[i].r), ratio(c[i].g), ratio(c[i].b)].map(|r| r * lum)
                } else {
                    [0.0; 3]
                };
                for (ch, (a, b)) in [(g.r, e.r), (g.g, e.g), (g.b, e.b)].into_iter().enumerate() {
                    total += 1;
                    if encode == 0 {
                        let tol = 8e-6 * (b.abs() + pre[ch]) + f32::MIN_POSITIVE;
                        assert!((a - b).abs() <= tol, "linear {a} vs {b}");
                        same += usize::from(a == b);
                    } else {
                        let d = (to_u8(a) - to_u8(b)).abs();
                        assert!(d <= 1, "8-bit {a} vs {b} ({encode}, {srgb})");
                        assert!((a - b).abs() < 1e-5, "{a} vs {b}");
                        same += usize::from(d == 0);
                    }
                }
            }
            // Off-by-one levels only at rounding boundaries.
            if encode == 1 {
                assert!(same * 1000 >= total * 999, "{same} of {total} equal");
            }
        }
    }
}
