//! Interpolating reads: the one definition of where an interpolating
//! accessor reads and how it weighs the pixels it reads.
//!
//! The evaluator calls [`sample`]; the CPU backend's reads do the same
//! `f64` operations in the same order on the pixel type's lanes, with the
//! taps of [`taps`] tabulated per output index, so the two agree bit for
//! bit; GPU code generators print the same formulas.
//!
//! # Coordinate mapping (cell-centred)
//!
//! An accessor whose region is `aw x ah` pixels, read by an iteration space
//! of `sw x sh` pixels with origin `(sx, sy)`, reads for output pixel
//! `(x, y)` at offset `(dx, dy)` the continuous position
//!
//! ```text
//! px = (x - sx + 0.5) * aw / sw - 0.5 + dx
//! py = (y - sy + 0.5) * ah / sh - 0.5 + dy
//! ```
//!
//! in accessor pixels (pixel `i`'s centre is at `i`), computed in `f64`. The
//! output pixel's centre maps to the same relative place of the accessor's
//! region, so a space twice as large reads a coarser image (upsampling) and
//! one half as large reads a finer one (downsampling); offsets are in
//! accessor pixels. With `aw == sw` the mapping is the identity.
//!
//! # Kernels
//!
//! With `i0 = floor(p)` and `f = p - i0`:
//!
//! | mode | taps | weights |
//! |---|---|---|
//! | `Nearest` | `floor(p + 0.5)` | 1 |
//! | `Linear` | `i0, i0+1` | `1-f, f` |
//! | `Cubic` | `i0-1 ..= i0+2` | Keys with `a = -0.5` at distances `1+f, f, 1-f, 2-f` |
//! | `Lanczos3` | `i0-2 ..= i0+3` | `sinc(t) sinc(t/3)` at `t = f+2 .. f-3`, normalised to sum 1 |
//!
//! The two axes are separable: the value is
//! `sum_j wy[j] * sum_i wx[i] * pixel(ix + i, iy + j)`, accumulated in `f64`
//! lane by lane in that order, then rounded to the pixel type (integers
//! round to nearest and saturate). Taps of weight exactly 0 are not read, so
//! a `Linear` read exactly on the last pixel does not touch the pixel beyond.
//! Every tap read goes through the accessor's boundary condition.

use crate::ir::{Scalar4, Value};
use crate::Interpolation;

/// The most taps per axis (Lanczos-3).
pub const MAX_TAPS: usize = 6;

/// The pixels one axis of an interpolating read touches.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Taps {
    /// Index of the first tap.
    pub start: i64,
    /// Weights of taps `start ..`, `len` of them used.
    pub weights: [f64; MAX_TAPS],
    /// Number of taps.
    pub len: usize,
}

/// The continuous accessor position read by output index `rel` (relative to
/// the space origin) at offset `d`, for a space extent `space` and an
/// accessor extent `acc` (see the module docs).
#[inline]
pub fn source_position(rel: i64, space: usize, acc: usize, d: i64) -> f64 {
    (rel as f64 + 0.5) * acc as f64 / space as f64 - 0.5 + d as f64
}

/// The taps of mode `mode` at position `p`. `Interpolation::None` reads the
/// pixel at `floor(p + 0.5)` like `Nearest`.
#[inline]
pub fn taps(mode: Interpolation, p: f64) -> Taps {
    let mut weights = [0.0; MAX_TAPS];
    match mode {
        Interpolation::None | Interpolation::Nearest => {
            weights[0] = 1.0;
            Taps {
                start: (p + 0.5).floor() as i64,
                weights,
                len: 1,
            }
        }
        Interpolation::Linear => {
            let i0 = p.floor();
            let f = p - i0;
            weights[0] = 1.0 - f;
            weights[1] = f;
            Taps {
                start: i0 as i64,
                weights,
                len: 2,
            }
        }
        Interpolation::Cubic => {
            let i0 = p.floor();
            let f = p - i0;
            for (k, w) in weights.iter_mut().take(4).enumerate() {
                *w = keys(f - (k as f64 - 1.0));
            }
            Taps {
                start: i0 as i64 - 1,
                weights,
                len: 4,
            }
        }
        Interpolation::Lanczos3 => {
            let i0 = p.floor();
            let f = p - i0;
            for (k, w) in weights.iter_mut().enumerate() {
                *w = lanczos3(f - (k as f64 - 2.0));
            }
            let sum: f64 = weights.iter().sum();
            for w in &mut weights {
                *w /= sum;
            }
            Taps {
                start: i0 as i64 - 2,
                weights,
                len: 6,
            }
        }
    }
}

/// Keys' cubic convolution kernel with `a = -0.5`.
fn keys(t: f64) -> f64 {
    const A: f64 = -0.5;
    let t = t.abs();
    if t <= 1.0 {
        ((A + 2.0) * t - (A + 3.0)) * t * t + 1.0
    } else if t < 2.0 {
        ((A * t - 5.0 * A) * t + 8.0 * A) * t - 4.0 * A
    } else {
        0.0
    }
}

/// The Lanczos kernel with 3 lobes: `sinc(t) sinc(t / 3)` for `|t| < 3`.
fn lanczos3(t: f64) -> f64 {
    if t == 0.0 {
        return 1.0;
    }
    if t.abs() >= 3.0 {
        return 0.0;
    }
    let pt = std::f64::consts::PI * t;
    3.0 * pt.sin() * (pt / 3.0).sin() / (pt * pt)
}

/// Interpolates at continuous position `(px, py)` with mode `mode`, reading
/// pixel `(ix, iy)` through `fetch` (which applies the boundary condition).
///
/// `like` is any value of the pixel type: the result has its type.
pub fn sample<E>(
    mode: Interpolation,
    px: f64,
    py: f64,
    like: Value,
    mut fetch: impl FnMut(i64, i64) -> Result<Value, E>,
) -> Result<Value, E> {
    let (tx, ty) = (taps(mode, px), taps(mode, py));
    let mut acc = [0.0f64; 4];
    for j in 0..ty.len {
        let wy = ty.weights[j];
        if wy == 0.0 {
            continue;
        }
        let mut row = [0.0f64; 4];
        for i in 0..tx.len {
            let wx = tx.weights[i];
            if wx == 0.0 {
                continue;
            }
            let v = fetch(tx.start + i as i64, ty.start + j as i64)?;
            for (r, l) in row.iter_mut().zip(lanes(v)) {
                *r += wx * l;
            }
        }
        for (a, r) in acc.iter_mut().zip(row) {
            *a += wy * r;
        }
    }
    Ok(round_like(like, acc))
}

/// A value's lanes as `f64` (a scalar fills lane 0).
fn lanes(v: Value) -> [f64; 4] {
    match v {
        Value::Vec4(l) => l.map(|s| s.to_value().as_f64()),
        v => [v.as_f64(), 0.0, 0.0, 0.0],
    }
}

/// `lanes` rounded to the type of `like`.
fn round_like(like: Value, lanes: [f64; 4]) -> Value {
    match like {
        Value::Vec4(l) => {
            let mut out = l;
            for (o, v) in out.iter_mut().zip(lanes) {
                *o = round_lane(*o, v);
            }
            Value::Vec4(out)
        }
        v => match Scalar4::from_value(v) {
            Some(s) => round_lane(s, lanes[0]).to_value(),
            None => v,
        },
    }
}

/// `v` as a lane of the same type as `like`: floats round, integers round to
/// nearest and saturate (Rust's float-to-int `as` saturates).
fn round_lane(like: Scalar4, v: f64) -> Scalar4 {
    match like {
        Scalar4::U8(_) => Scalar4::U8(v.round() as u8),
        Scalar4::U16(_) => Scalar4::U16(v.round() as u16),
        Scalar4::I32(_) => Scalar4::I32(v.round() as i32),
        Scalar4::U32(_) => Scalar4::U32(v.round() as u32),
        Scalar4::F32(_) => Scalar4::F32(v as f32),
        Scalar4::F64(_) => Scalar4::F64(v),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn weights_sum_to_one_and_reproduce_pixels_at_centres() {
        for mode in [
            Interpolation::Nearest,
            Interpolation::Linear,
            Interpolation::Cubic,
            Interpolation::Lanczos3,
        ] {
            for k in 0..40 {
                let p = -3.0 + k as f64 * 0.173;
                let t = taps(mode, p);
                let sum: f64 = t.weights[..t.len].iter().sum();
                assert!((sum - 1.0).abs() < 1e-12, "{mode:?} p={p} sum={sum}");
            }
            // At a pixel centre every mode returns that pixel.
            let v = sample::<()>(mode, 3.0, 2.0, Value::F64(0.0), |x, y| {
                Ok(Value::F64((x * 10 + y) as f64))
            });
            assert_eq!(v, Ok(Value::F64(32.0)), "{mode:?}");
        }
    }

    #[test]
    fn linear_is_exact_on_ramps_and_cubic_on_quadratics() {
        let ramp = |x: i64, y: i64| Ok::<_, ()>(Value::F64((2 * x + 3 * y) as f64));
        let v = sample(Interpolation::Linear, 1.25, 4.5, Value::F64(0.0), ramp);
        assert_eq!(v, Ok(Value::F64(2.0 * 1.25 + 3.0 * 4.5)));
        let quad = |x: i64, _y: i64| Ok::<_, ()>(Value::F64((x * x) as f64));
        let Ok(Value::F64(c)) = sample(Interpolation::Cubic, 2.5, 0.0, Value::F64(0.0), quad)
        else {
            panic!("not an f64");
        };
        // Keys' kernel with a = -0.5 reproduces quadratics.
        assert!((c - 6.25).abs() < 1e-12, "{c}");
    }

    #[test]
    fn cell_centred_mapping() {
        // Downsampling by 2: coarse pixel x covers fine pixels 2x and 2x+1.
        assert_eq!(source_position(3, 4, 8, 0), 6.5);
        // Upsampling by 2: fine pixel 2x+1 lies a quarter past coarse pixel x.
        assert_eq!(source_position(5, 8, 4, 0), 2.25);
        assert_eq!(source_position(5, 8, 8, -1), 4.0);
        // Nearest on an upsampling by 2 repeats each pixel twice.
        let idx: Vec<i64> = (0..8)
            .map(|x| taps(Interpolation::Nearest, source_position(x, 8, 4, 0)).start)
            .collect();
        assert_eq!(idx, [0, 0, 1, 1, 2, 2, 3, 3]);
    }

    #[test]
    fn integers_round_and_saturate_vectors_per_lane() {
        let v = sample::<()>(Interpolation::Linear, 0.5, 0.0, Value::U8(0), |x, _| {
            Ok(Value::U8(if x == 0 { 10 } else { 13 }))
        });
        assert_eq!(v, Ok(Value::U8(12)));
        // Cubic overshoot above 255 saturates.
        let v = sample::<()>(Interpolation::Cubic, 1.5, 0.0, Value::U8(0), |x, _| {
            Ok(Value::U8(if x <= 1 { 0 } else { 255 }))
        });
        assert!(matches!(v, Ok(Value::U8(_))));
        let like = Value::Vec4([Scalar4::F32(0.0); 4]);
        let v = sample::<()>(Interpolation::Linear, 0.5, 0.0, like, |x, _| {
            let s = x as f32;
            Ok(Value::Vec4([
                Scalar4::F32(s),
                Scalar4::F32(2.0 * s),
                Scalar4::F32(-s),
                Scalar4::F32(1.0),
            ]))
        });
        assert_eq!(
            v,
            Ok(Value::Vec4([
                Scalar4::F32(0.5),
                Scalar4::F32(1.0),
                Scalar4::F32(-0.5),
                Scalar4::F32(1.0)
            ]))
        );
    }
}
