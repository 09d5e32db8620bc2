//! Primaries and white points: from a file's `chromaticities` to Rec.709.
//!
//! An OpenEXR file's RGB values are relative to the primaries and white
//! point of its `chromaticities` attribute (Rec.709 / sRGB when absent). The
//! tone mapper works in Rec.709, so other primaries are converted through
//! CIE XYZ: RGB -> XYZ from the file's primaries, scaled so that RGB
//! (1, 1, 1) is the file's white at luminance 1 (as OpenEXR's `RGBtoXYZ`),
//! then XYZ -> Rec.709 RGB. When the file's white point is not D65, XYZ is
//! first adapted to D65 with the Bradford transform (the von Kries-type
//! adaptation of ICC profiles and of OpenEXR's ACES interface), so the
//! file's white comes out as Rec.709 white. An XYZ file (primaries (1,0),
//! (0,1), (0,0), white (1/3,1/3)) is thus read as XYZ relative to
//! equal-energy white, adapted to D65.

use super::header::Chromaticities;

/// A 3x3 matrix, row-major, acting on column vectors.
pub type Matrix = [[f64; 3]; 3];

/// Rec.709 / sRGB primaries with the D65 white point.
pub const REC709: Chromaticities = Chromaticities {
    primaries: [[0.64, 0.33], [0.30, 0.60], [0.15, 0.06]],
    white: [0.3127, 0.3290],
};

/// The Bradford cone-response matrix (Lam 1985, as in ICC v4 Annex E).
const BRADFORD: Matrix = [
    [0.8951, 0.2664, -0.1614],
    [-0.7502, 1.7135, 0.0367],
    [0.0389, -0.0685, 1.0296],
];

/// Chromaticities closer than this to Rec.709 (in x and y) are Rec.709: a
/// file stores them as f32, and writers round them differently.
const SAME: f64 = 1e-4;

fn close(a: [f64; 2], b: [f64; 2]) -> bool {
    (a[0] - b[0]).abs() < SAME && (a[1] - b[1]).abs() < SAME
}

fn mul(a: &Matrix, b: &Matrix) -> Matrix {
    let mut m = [[0.0; 3]; 3];
    for (i, row) in m.iter_mut().enumerate() {
        for (j, v) in row.iter_mut().enumerate() {
            *v = (0..3).map(|k| a[i][k] * b[k][j]).sum();
        }
    }
    m
}

/// Applies `m` to `v`.
pub fn apply(m: &Matrix, v: [f64; 3]) -> [f64; 3] {
    [0, 1, 2].map(|i| m[i][0] * v[0] + m[i][1] * v[1] + m[i][2] * v[2])
}

/// The inverse of `m`, or `None` when it is (nearly) singular.
pub fn invert(m: &Matrix) -> Option<Matrix> {
    let c = |r: usize, s: usize| {
        let (r1, r2) = ((r + 1) % 3, (r + 2) % 3);
        let (s1, s2) = ((s + 1) % 3, (s + 2) % 3);
        m[r1][s1] * m[r2][s2] - m[r1][s2] * m[r2][s1]
    };
    let det = m[0][0] * c(0, 0) + m[0][1] * c(0, 1) + m[0][2] * c(0, 2);
    if !det.is_finite() || det.abs() < 1e-12 {
        return None;
    }
    // The inverse is the transposed cofactor matrix over the determinant.
    Some([0, 1, 2].map(|i| [0, 1, 2].map(|j| c(j, i) / det)))
}

/// XYZ of the white point `[x, y]` at luminance 1.
fn white_xyz(white: [f64; 2]) -> [f64; 3] {
    [
        white[0] / white[1],
        1.0,
        (1.0 - white[0] - white[1]) / white[1],
    ]
}

/// The RGB -> XYZ matrix of `c`: its columns are the primaries' xyz scaled
/// so that RGB (1, 1, 1) maps to the white point at Y = 1. `None` when the
/// chromaticities are degenerate (collinear primaries, white with y = 0).
pub fn rgb_to_xyz(c: &Chromaticities) -> Option<Matrix> {
    // Also refuses a NaN white point.
    if c.white[1].abs().partial_cmp(&1e-9) != Some(std::cmp::Ordering::Greater) {
        return None;
    }
    let p = c.primaries;
    let xyz = |i: usize| [p[i][0], p[i][1], 1.0 - p[i][0] - p[i][1]];
    let (r, g, b) = (xyz(0), xyz(1), xyz(2));
    let columns: Matrix = [0, 1, 2].map(|k| [r[k], g[k], b[k]]);
    let scale = apply(&invert(&columns)?, white_xyz(c.white));
    let m = [0, 1, 2].map(|k| [0, 1, 2].map(|j| columns[k][j] * scale[j]));
    m.iter().flatten().all(|v| v.is_finite()).then_some(m)
}

/// The Bradford adaptation of XYZ from white `from` to white `to`.
fn bradford(from: [f64; 2], to: [f64; 2]) -> Option<Matrix> {
    let inverse = invert(&BRADFORD)?;
    let (s, d) = (
        apply(&BRADFORD, white_xyz(from)),
        apply(&BRADFORD, white_xyz(to)),
    );
    let gain: Matrix = [
        [d[0] / s[0], 0.0, 0.0],
        [0.0, d[1] / s[1], 0.0],
        [0.0, 0.0, d[2] / s[2]],
    ];
    Some(mul(&inverse, &mul(&gain, &BRADFORD)))
}

/// The matrix taking the file's RGB to Rec.709 RGB, or `None` when the
/// file is already Rec.709 (no conversion at all, so values stay exact).
/// An error when the chromaticities cannot describe a colour space.
pub fn to_rec709(c: &Chromaticities) -> Result<Option<Matrix>, String> {
    let same_primaries = (0..3).all(|i| close(c.primaries[i], REC709.primaries[i]));
    if same_primaries && close(c.white, REC709.white) {
        return Ok(None);
    }
    let bad = || {
        format!(
            "the chromaticities attribute does not describe a colour space (red {:?}, green \
             {:?}, blue {:?}, white {:?})",
            c.primaries[0], c.primaries[1], c.primaries[2], c.white
        )
    };
    let to_xyz = rgb_to_xyz(c).ok_or_else(bad)?;
    let from_xyz = invert(&rgb_to_xyz(&REC709).ok_or_else(bad)?).ok_or_else(bad)?;
    let adapted = if close(c.white, REC709.white) {
        to_xyz
    } else {
        mul(&bradford(c.white, REC709.white).ok_or_else(bad)?, &to_xyz)
    };
    Ok(Some(mul(&from_xyz, &adapted)))
}

/// The luminance weights (Yw.r, Yw.g, Yw.b) of `c`: the Y row of its
/// RGB -> XYZ matrix, normalised to sum 1 (OpenEXR's `computeYw`).
pub fn luminance_weights(c: &Chromaticities) -> Option<[f64; 3]> {
    let y = rgb_to_xyz(c)?[1];
    let sum = y[0] + y[1] + y[2];
    (sum.abs() > 1e-12 && y[1].abs() > 1e-12).then(|| y.map(|v| v / sum))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rec709_luminance_weights_are_the_published_ones() {
        let w = luminance_weights(&REC709).unwrap();
        for (got, want) in w.iter().zip([0.2126, 0.7152, 0.0722]) {
            assert!((got - want).abs() < 2e-4, "{w:?}");
        }
        assert_eq!(to_rec709(&REC709).unwrap(), None);
    }

    #[test]
    fn white_maps_to_white_for_any_white_point() {
        let xyz = Chromaticities {
            primaries: [[1.0, 0.0], [0.0, 1.0], [0.0, 0.0]],
            white: [1.0 / 3.0, 1.0 / 3.0],
        };
        let m = to_rec709(&xyz).unwrap().unwrap();
        for v in apply(&m, [1.0, 1.0, 1.0]) {
            assert!((v - 1.0).abs() < 1e-9, "{v}");
        }
    }

    #[test]
    fn degenerate_chromaticities_are_refused() {
        let flat = Chromaticities {
            primaries: [[0.3, 0.3]; 3],
            white: [0.3, 0.3],
        };
        assert!(to_rec709(&flat).unwrap_err().contains("does not describe"));
    }
}
