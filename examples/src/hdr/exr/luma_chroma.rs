//! Luminance/chroma pixels (`Y`, `RY`, `BY`) back to RGB, as OpenEXR's
//! `RgbaInputFile` reconstructs them.
//!
//! OpenEXR's RGBA interface (`WRITE_YC`) stores luminance `Y` at every pixel
//! and the chroma `RY = (R - Y) / Y`, `BY = (B - Y) / Y` at every second
//! column and row (the samples at even coordinates). Reading follows
//! `ImfRgbaFile.cpp` / `ImfRgbaYca.cpp`:
//!
//! 1. On even rows, the missing odd-column chroma is interpolated by
//!    OpenEXR's 27-tap half-band filter (14 non-zero taps on the stored
//!    samples at offsets ±1, ±3, …, ±13). Past the left edge the first
//!    sample is repeated, past the right edge the last stored one.
//! 2. Odd rows are interpolated from the even rows with the same filter,
//!    vertically; rows above the top repeat the first row, rows below the
//!    bottom the last even row.
//! 3. `r = (RY + 1) Y`, `b = (BY + 1) Y`, `g = (Y - r Yw.r - b Yw.b) / Yw.g`
//!    with the luminance weights `Yw` of the file's chromaticities; where
//!    both chroma values are 0 the pixel is grey (`r = g = b = Y`) exactly.
//! 4. Pixels more saturated than their four diagonal neighbours' mean are
//!    desaturated towards it, keeping their luminance (OpenEXR's
//!    `fixSaturation`, which hides chroma-filter overshoot at sharp colour
//!    edges).
//!
//! Two documented differences from OpenEXR: the computation stays in f32
//! where OpenEXR rounds every intermediate to half (so results differ by up
//! to about half's precision, 1e-3 relative), and at the top and bottom rows
//! step 4 uses the edge row itself as the missing neighbour row, where
//! OpenEXR re-filters clamped rows (a difference only in the first and last
//! row, and only at saturated edges). Chroma stored at full resolution
//! (sampling 1x1) is used as is.

use super::planes::Plane;

/// The half-band interpolation filter's taps for offsets 1, 3, …, 13.
const TAPS: [f32; 7] = [
    0.627123, -0.186077, 0.087929, -0.043159, 0.019597, -0.007540, 0.002128,
];

/// Interpolates the odd positions of `line` (length `n`, even positions
/// valid) in place; `n` is even.
fn fill_odd(line: &mut [f32]) {
    let n = line.len() as i64;
    let last_even = (n - 2).max(0);
    let at = |line: &[f32], i: i64| line[i.clamp(0, last_even) as usize];
    for i in (1..n).step_by(2) {
        let v: f32 = TAPS
            .iter()
            .enumerate()
            .map(|(k, t)| {
                let d = 2 * k as i64 + 1;
                t * (at(line, i - d) + at(line, i + d))
            })
            .sum();
        line[i as usize] = v;
    }
}

/// A chroma plane at full resolution `width` x `height`.
fn upsample(plane: &Plane, width: usize, height: usize) -> Result<Vec<f32>, String> {
    match (plane.x_sampling, plane.y_sampling) {
        (1, 1) => return Ok(plane.samples.clone()),
        (2, 2) => {}
        (xs, ys) => {
            return Err(format!(
                "chroma channel `{}` sampled {xs}x{ys} is not supported (only 1x1 and 2x2)",
                plane.name
            ))
        }
    }
    let mut full = vec![0f32; width * height];
    // Even rows: stored samples at even columns, then the odd columns.
    for y in (0..height).step_by(2) {
        let row = &mut full[y * width..][..width];
        let stored = &plane.samples[y / 2 * plane.width..][..plane.width];
        for (x, &v) in stored.iter().enumerate() {
            row[2 * x] = v;
        }
        fill_odd(row);
    }
    // Odd rows, column by column.
    let mut column = vec![0f32; height];
    for x in 0..width {
        for y in (0..height).step_by(2) {
            column[y] = full[y * width + x];
        }
        fill_odd(&mut column);
        for y in (1..height).step_by(2) {
            full[y * width + x] = column[y];
        }
    }
    Ok(full)
}

/// RGB from `Y` and optional chroma planes (a missing chroma pair means a
/// grey image), with the luminance weights `yw` (see the module docs).
pub fn to_rgb(
    y: &Plane,
    chroma: Option<(&Plane, &Plane)>,
    yw: [f32; 3],
) -> Result<Vec<[f32; 3]>, String> {
    let (w, h) = (y.width, y.height);
    let Some((ry, by)) = chroma else {
        return Ok(y.samples.iter().map(|&v| [v, v, v]).collect());
    };
    let (ry, by) = (upsample(ry, w, h)?, upsample(by, w, h)?);
    let rgb: Vec<[f32; 3]> = (0..w * h)
        .map(|i| {
            let luma = y.samples[i];
            if ry[i] == 0.0 && by[i] == 0.0 {
                return [luma, luma, luma];
            }
            let r = (ry[i] + 1.0) * luma;
            let b = (by[i] + 1.0) * luma;
            [r, (luma - r * yw[0] - b * yw[2]) / yw[1], b]
        })
        .collect();
    Ok(fix_saturation(&rgb, w, h, yw))
}

fn saturation(p: [f32; 3]) -> f32 {
    let max = p[0].max(p[1]).max(p[2]);
    let min = p[0].min(p[1]).min(p[2]);
    if max > 0.0 {
        1.0 - min / max
    } else {
        0.0
    }
}

fn desaturate(p: [f32; 3], f: f32, yw: [f32; 3]) -> [f32; 3] {
    let max = p[0].max(p[1]).max(p[2]);
    let out = p.map(|v| (max - (max - v) * f).max(0.0));
    let luma = |q: [f32; 3]| q[0] * yw[0] + q[1] * yw[1] + q[2] * yw[2];
    let (y_in, y_out) = (luma(p), luma(out));
    if y_out > 0.0 {
        out.map(|v| v * (y_in / y_out))
    } else {
        out
    }
}

/// OpenEXR's `fixSaturation` over the whole image (edge rows and columns
/// repeated as neighbours).
fn fix_saturation(rgb: &[[f32; 3]], w: usize, h: usize, yw: [f32; 3]) -> Vec<[f32; 3]> {
    let sat: Vec<f32> = rgb.iter().map(|&p| saturation(p)).collect();
    let s = |x: usize, y: usize| sat[y * w + x];
    let mut out = rgb.to_vec();
    for y in 0..h {
        let (above, below) = (y.saturating_sub(1), (y + 1).min(h - 1));
        for x in 0..w {
            let (left, right) = (x.saturating_sub(1), (x + 1).min(w - 1));
            let mean = (0.25
                * (s(left, above) + s(right, above) + s(left, below) + s(right, below)))
            .min(1.0);
            let here = s(x, y);
            if here > mean {
                let most = (1.0 - (1.0 - mean) * 0.25).min(1.0);
                if here > most {
                    out[y * w + x] = desaturate(rgb[y * w + x], most / here, yw);
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_filter_keeps_constants_and_stored_samples() {
        let mut line = vec![0.0; 40];
        for (i, v) in line.iter_mut().enumerate().step_by(2) {
            *v = if i < 20 { 2.0 } else { 3.0 };
        }
        fill_odd(&mut line);
        assert!((line[5] - 2.0).abs() < 1e-5, "{}", line[5]);
        assert!((line[39] - 3.0).abs() < 1e-5, "{}", line[39]);
        assert_eq!(line[20], 3.0);
        // Between the steps, the interpolated value lies in between.
        assert!(line[19] > 2.0 && line[19] < 3.0, "{}", line[19]);
    }
}
