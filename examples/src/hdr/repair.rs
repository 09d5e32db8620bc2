//! Repairing pixels that are not finite, non-negative radiance.
//!
//! Real HDR files hold NaN, infinities and negative values (from
//! reconstruction filters, failed merges or arithmetic on invalid data); the
//! logarithms of tone mapping would spread them over the whole image. Each
//! red, green or blue channel value is checked on its own; a value is
//! *valid* when it is finite and `>= 0`. Invalid values are replaced, each
//! channel from the same channel, using the valid values of the input only
//! (so the result does not depend on the order of repair):
//!
//! - `+inf` becomes the largest valid value of that channel in the image (a
//!   saturated highlight stays the brightest thing in the picture);
//! - NaN, `-inf` and negative values become the mean of the valid values of
//!   the same channel in the 3x3 neighbourhood, or if none is valid there the
//!   5x5, then 7x7, up to [`MAX_RADIUS`] (a 17x17 window);
//! - if no valid value is found that way (or, for `+inf`, in the whole
//!   channel), the smallest positive valid value of the channel, or 0 if the
//!   channel has none.
//!
//! Zero is valid and stays zero (tone mapping handles zero luminance); alpha
//! is not examined. [`repair`] reports the counts, so that a caller can print
//! one warning line ([`RepairReport`]'s `Display`).

use anyhow::{anyhow, Result};
use hipacc::core::{Image, Rgba};
use std::fmt;

/// The largest neighbourhood radius searched for valid values (17x17).
pub const MAX_RADIUS: usize = 8;

/// How many channel values [`repair`] replaced, by kind.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RepairReport {
    /// Pixels with at least one replaced channel.
    pub pixels: usize,
    /// NaN channel values.
    pub nan: usize,
    /// `+inf` channel values.
    pub positive_infinite: usize,
    /// `-inf` channel values.
    pub negative_infinite: usize,
    /// Finite negative channel values.
    pub negative: usize,
}

impl RepairReport {
    /// Whether nothing was replaced.
    pub fn is_clean(&self) -> bool {
        self.pixels == 0
    }
}

impl fmt::Display for RepairReport {
    /// One line for a warning, e.g. `repaired 3 pixels (2 NaN, 1 negative
    /// channel values) from their neighbourhood`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let kinds: Vec<String> = [
            (self.nan, "NaN"),
            (self.positive_infinite, "+inf"),
            (self.negative_infinite, "-inf"),
            (self.negative, "negative"),
        ]
        .iter()
        .filter(|(n, _)| *n > 0)
        .map(|(n, what)| format!("{n} {what}"))
        .collect();
        let plural = if self.pixels == 1 { "" } else { "s" };
        write!(
            f,
            "repaired {} pixel{plural} ({} channel values): NaN, -inf and negative values \
             replaced by the mean of valid neighbours, +inf by the channel's largest finite value",
            self.pixels,
            kinds.join(", ")
        )
    }
}

/// Repairs `img` in place (see the module docs) and reports what changed.
pub fn repair(img: &Image<Rgba<f32>>) -> Result<RepairReport> {
    let (w, h) = (img.width(), img.height());
    let mut pixels = img
        .write()
        .map_err(|e| anyhow!("cannot repair the image: {e}"))?;
    let mut report = RepairReport::default();
    if all_finite_and_positive(&pixels) {
        return Ok(report);
    }
    let mut bad = Vec::new();
    for (i, p) in pixels.iter().enumerate() {
        let mut any = false;
        for v in [p.r, p.g, p.b] {
            if v.is_nan() {
                report.nan += 1;
            } else if v == f32::INFINITY {
                report.positive_infinite += 1;
            } else if v == f32::NEG_INFINITY {
                report.negative_infinite += 1;
            } else if v < 0.0 {
                report.negative += 1;
            } else {
                continue;
            }
            any = true;
        }
        if any {
            bad.push(i);
        }
    }
    report.pixels = bad.len();
    if bad.is_empty() {
        return Ok(report);
    }
    let stats: [ChannelStats; 3] = std::array::from_fn(|c| ChannelStats::of(&pixels, c));
    let replacements: Vec<(usize, [Option<f32>; 3])> = bad
        .iter()
        .map(|&i| {
            let p = pixels[i];
            let fix = |c: usize, v: f32| {
                if valid(v) {
                    None
                } else if v == f32::INFINITY {
                    Some(stats[c].largest.unwrap_or(stats[c].fallback()))
                } else {
                    Some(neighbour_mean(&pixels, w, h, i, c).unwrap_or(stats[c].fallback()))
                }
            };
            (i, [fix(0, p.r), fix(1, p.g), fix(2, p.b)])
        })
        .collect();
    for (i, [r, g, b]) in replacements {
        let p = &mut pixels[i];
        p.r = r.unwrap_or(p.r);
        p.g = g.unwrap_or(p.g);
        p.b = b.unwrap_or(p.b);
    }
    Ok(report)
}

fn valid(v: f32) -> bool {
    v.is_finite() && v >= 0.0
}

/// Whether every red, green and blue value is finite with its sign bit
/// clear: [`valid`] for all of them, except that `-0.0` fails here. The
/// common case, checked first in one pass the compiler vectorises (an
/// unsigned maximum of the bits, below those of `+inf`); the counting
/// loop, branching per value, runs only when this fails.
fn all_finite_and_positive(pixels: &[Rgba<f32>]) -> bool {
    let largest = pixels.iter().fold(0u32, |m, p| {
        m.max(p.r.to_bits()).max(p.g.to_bits()).max(p.b.to_bits())
    });
    largest < f32::INFINITY.to_bits()
}

fn channel(p: &Rgba<f32>, c: usize) -> f32 {
    match c {
        0 => p.r,
        1 => p.g,
        _ => p.b,
    }
}

/// The extreme valid values of one channel.
struct ChannelStats {
    largest: Option<f32>,
    smallest_positive: Option<f32>,
}

impl ChannelStats {
    fn of(pixels: &[Rgba<f32>], c: usize) -> ChannelStats {
        let values = || pixels.iter().map(|p| channel(p, c)).filter(|&v| valid(v));
        ChannelStats {
            largest: values().reduce(f32::max),
            smallest_positive: values().filter(|&v| v > 0.0).reduce(f32::min),
        }
    }

    fn fallback(&self) -> f32 {
        self.smallest_positive.unwrap_or(0.0)
    }
}

/// The mean of the valid values of channel `c` in the smallest square
/// neighbourhood of pixel `i` (radius 1 to [`MAX_RADIUS`]) that has any.
fn neighbour_mean(pixels: &[Rgba<f32>], w: usize, h: usize, i: usize, c: usize) -> Option<f32> {
    let (x, y) = (i % w, i / w);
    (1..=MAX_RADIUS).find_map(|r| {
        let (x0, x1) = (x.saturating_sub(r), (x + r).min(w - 1));
        let (y0, y1) = (y.saturating_sub(r), (y + r).min(h - 1));
        let (mut sum, mut n) = (0.0f64, 0u32);
        for row in pixels[y0 * w..(y1 + 1) * w].chunks_exact(w) {
            for p in &row[x0..=x1] {
                let v = channel(p, c);
                if valid(v) {
                    sum += f64::from(v);
                    n += 1;
                }
            }
        }
        (n > 0).then(|| (sum / f64::from(n)) as f32)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn gray(v: f32) -> Rgba<f32> {
        Rgba::new(v, v, v, 1.0)
    }

    fn image(w: usize, h: usize, values: &[f32]) -> Image<Rgba<f32>> {
        Image::from_vec(w, h, values.iter().map(|&v| gray(v)).collect()).unwrap()
    }

    #[test]
    fn the_quick_check_passes_exactly_the_valid_values_with_a_clear_sign() {
        let specials = [
            0.0,
            -0.0,
            1e-45,
            1.0,
            f32::MAX,
            -1.0,
            f32::INFINITY,
            f32::NEG_INFINITY,
            f32::NAN,
            -f32::NAN,
        ];
        for v in specials {
            let want = valid(v) && v.is_sign_positive();
            assert_eq!(all_finite_and_positive(&[gray(1.0), gray(v)]), want, "{v}");
            // One bad channel is enough.
            let p = Rgba::new(1.0, 1.0, v, 1.0);
            assert_eq!(all_finite_and_positive(&[p]), want, "blue {v}");
        }
        // -0.0 fails the quick check but needs no repair.
        let img = image(2, 1, &[-0.0, 1.0]);
        assert_eq!(repair(&img).unwrap().pixels, 0);
    }

    #[test]
    fn clean_images_are_untouched() {
        let img = image(3, 2, &[0.0, 1.0, 2.0, 3.0, 0.0, 1e30]);
        let before = img.to_vec().unwrap();
        let report = repair(&img).unwrap();
        assert!(report.is_clean());
        assert_eq!(img.to_vec().unwrap(), before);
    }

    #[test]
    fn nan_and_negatives_take_the_neighbour_mean() {
        #[rustfmt::skip]
        let img = image(3, 3, &[
            1.0, 2.0, 3.0,
            4.0, f32::NAN, 6.0,
            7.0, 8.0, -9.0,
        ]);
        let report = repair(&img).unwrap();
        assert_eq!(report.pixels, 2);
        assert_eq!((report.nan, report.negative), (3, 3));
        let out = img.to_vec().unwrap();
        // Centre: mean of the 7 valid neighbours (the -9 corner is invalid).
        assert_eq!(
            out[4],
            gray((1.0 + 2.0 + 3.0 + 4.0 + 6.0 + 7.0 + 8.0) / 7.0)
        );
        // Corner: neighbours 5 (NaN, invalid), 6 and 8.
        assert_eq!(out[8], gray(7.0));
    }

    #[test]
    fn channels_are_repaired_separately() {
        let img = Image::from_vec(
            2,
            1,
            vec![
                Rgba::new(1.0, 2.0, 3.0, 1.0),
                Rgba::new(5.0, f32::NAN, -0.5, 0.5),
            ],
        )
        .unwrap();
        let report = repair(&img).unwrap();
        assert_eq!((report.pixels, report.nan, report.negative), (1, 1, 1));
        assert_eq!(img.get(1, 0).unwrap(), Rgba::new(5.0, 2.0, 3.0, 0.5));
    }

    #[test]
    fn infinities() {
        let img = image(4, 1, &[1.0, f32::INFINITY, 50.0, f32::NEG_INFINITY]);
        let report = repair(&img).unwrap();
        assert_eq!((report.positive_infinite, report.negative_infinite), (3, 3));
        assert_eq!(
            img.to_vec().unwrap(),
            vec![gray(1.0), gray(50.0), gray(50.0), gray(50.0)]
        );
    }

    #[test]
    fn search_widens_then_falls_back() {
        // A 5x5 block of NaN in 7x7: the centre finds valid values at radius 3.
        let mut values = vec![2.0f32; 49];
        for y in 1..6 {
            for x in 1..6 {
                values[y * 7 + x] = f32::NAN;
            }
        }
        let img = image(7, 7, &values);
        repair(&img).unwrap();
        assert!(img.to_vec().unwrap().iter().all(|&p| p == gray(2.0)));
        // Far from any valid value: the channel's smallest positive value.
        let n = 2 * MAX_RADIUS + 3;
        let mut values = vec![f32::NAN; n * n];
        values[0] = 0.0;
        values[n * n - 1] = 0.25;
        values[n - 1] = 4.0;
        let img = image(n, n, &values);
        repair(&img).unwrap();
        let out = img.to_vec().unwrap();
        let centre = out[(n / 2) * n + n / 2];
        assert_eq!(centre, gray(0.25));
        assert_eq!(out[0], gray(0.0), "zero stays zero");
    }

    #[test]
    fn all_invalid_becomes_zero() {
        let img = image(2, 2, &[f32::NAN, f32::INFINITY, -1.0, f32::NEG_INFINITY]);
        let report = repair(&img).unwrap();
        assert_eq!(report.pixels, 4);
        assert!(img.to_vec().unwrap().iter().all(|&p| p == gray(0.0)));
    }

    #[test]
    fn one_line_warning() {
        let img = image(3, 1, &[f32::NAN, 1.0, -2.0]);
        let line = repair(&img).unwrap().to_string();
        assert!(!line.contains('\n'));
        assert!(
            line.starts_with("repaired 2 pixels (3 NaN, 3 negative channel values)"),
            "{line}"
        );
        let one = RepairReport {
            pixels: 1,
            positive_infinite: 1,
            ..Default::default()
        };
        assert!(one
            .to_string()
            .starts_with("repaired 1 pixel (1 +inf channel values)"));
    }
}
