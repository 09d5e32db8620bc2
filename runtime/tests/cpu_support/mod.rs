//! Inputs shared by the CPU backend's tests against the evaluator.

#![allow(dead_code)]

use hipacc::prelude::*;

/// Boundary mode number `mode` (0 to 4: every mode, `Constant` last).
pub(crate) fn boundary(mode: usize) -> Boundary<f32> {
    match mode {
        0 => Boundary::Clamp,
        1 => Boundary::Repeat,
        2 => Boundary::Mirror,
        3 => Boundary::MirrorInterior,
        _ => Boundary::Constant(0.75),
    }
}

/// A `w x h` image of hashed values in `[0.5, 1.5)`, different per `seed`.
pub(crate) fn image(w: usize, h: usize, seed: u64) -> Image<f32> {
    Image::from_fn(w, h, |x, y| {
        let mut v = (x as u64 + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15)
            ^ (y as u64 + seed).wrapping_mul(0xC2B2_AE3D_27D4_EB4F);
        v ^= v >> 29;
        0.5 + (v % 1024) as f32 / 1024.0
    })
    .expect("sizes are at least 1")
}
