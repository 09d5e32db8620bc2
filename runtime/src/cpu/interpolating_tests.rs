//! Kernels with an interpolating accessor beside plain ones, on the direct
//! path: the interior, bounded by the plain accessors' windows, runs in
//! [`hipacc_core::cpu::InteriorInterpolating`], the part of it where every
//! tap lies inside in [`hipacc_core::cpu::InteriorTapsInside`], and every
//! pixel has the evaluator's bits.

use crate::prelude::*;
use hipacc_core::interpolate::{source_position, taps};
use hipacc_core::ir::evaluate_kernel;
use hipacc_core::{Boundary, Kernel};

thread_local! {
    /// Pixels run in the interpolating interior on this thread.
    pub(super) static PIXELS: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
    /// Of those, the pixels run in [`hipacc_core::cpu::InteriorTapsInside`].
    pub(super) static TAPS_INSIDE: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

/// An interpolating read at three offsets (one beyond the tap tables)
/// and a 3x3 window of a plain accessor of the space's size.
#[derive(Kernel)]
#[kernel(output = f32)]
struct Mixed {
    coarse: Accessor<f32>,
    fine: Accessor<f32>,
}

#[kernel_body]
impl Mixed {
    fn kernel(&self) -> f32 {
        let sampled = self.coarse() + 0.5 * self.coarse.at(1, -1) - 0.25 * self.coarse.at(-2, 6);
        let window = self.fine.at(-1, -1) + 0.5 * self.fine.at(1, 1) - self.fine.at(0, 1);
        sampled * 0.75 + window
    }
}

/// Interpolating reads at offsets the tap tables reach, beside the same
/// plain window.
#[derive(Kernel)]
#[kernel(output = f32)]
struct Near {
    coarse: Accessor<f32>,
    fine: Accessor<f32>,
}

/// [`Near`]'s interpolating offsets.
const NEAR: [(i32, i32); 3] = [(0, 0), (1, -1), (-2, 3)];

#[kernel_body]
impl Near {
    fn kernel(&self) -> f32 {
        let sampled = self.coarse() + 0.5 * self.coarse.at(1, -1) - 0.25 * self.coarse.at(-2, 3);
        let window = self.fine.at(-1, -1) + 0.5 * self.fine.at(1, 1) - self.fine.at(0, 1);
        sampled * 0.75 + window
    }
}

/// The output pixels of a `w x h` space, with a 3x3 plain window, whose
/// taps of [`NEAR`]'s reads of a `cw x ch` accessor all lie inside, from
/// the evaluator's definitions of the taps.
fn taps_inside(mode: Interpolation, (cw, ch): (usize, usize), (w, h): (usize, usize)) -> usize {
    let inside = |p: usize, space: usize, acc: usize, d: i32| {
        let t = taps(mode, source_position(p as i64, space, acc, d.into()));
        t.start >= 0 && t.start + t.len as i64 <= acc as i64
    };
    let cols = (1..w - 1)
        .filter(|&x| NEAR.iter().all(|&(dx, _)| inside(x, w, cw, dx)))
        .count();
    let rows = (1..h - 1)
        .filter(|&y| NEAR.iter().all(|&(_, dy)| inside(y, h, ch, dy)))
        .count();
    cols * rows
}

/// The boundary conditions that read outside.
fn boundaries() -> [Boundary<f32>; 5] {
    [
        Boundary::Clamp,
        Boundary::Repeat,
        Boundary::Mirror,
        Boundary::MirrorInterior,
        Boundary::Constant(2.5),
    ]
}

/// `k` over a `w x h` space on the calling thread, against the evaluator
/// bit for bit (NaN as NaN); the pixels run in the interpolating interior.
fn exact_run<K: Kernel<Output = f32>>(k: &K, w: usize, h: usize, at: &str) -> (usize, usize) {
    let out = Image::<f32>::new(w, h).unwrap();
    let want = Image::<f32>::new(w, h).unwrap();
    let before = (PIXELS.with(|n| n.get()), TAPS_INSIDE.with(|n| n.get()));
    crate::cpu::execute(k, &IterationSpace::full(&out), usize::MAX).unwrap();
    let interior = (
        PIXELS.with(|n| n.get()) - before.0,
        TAPS_INSIDE.with(|n| n.get()) - before.1,
    );
    evaluate_kernel(k, &IterationSpace::full(&want)).unwrap();
    let (got, want) = (out.to_vec().unwrap(), want.to_vec().unwrap());
    for (i, (g, e)) in got.iter().zip(&want).enumerate() {
        let same = g.to_bits() == e.to_bits() || (g.is_nan() && e.is_nan());
        assert!(same, "{at} ({}, {}): {g} against {e}", i % w, i / w);
    }
    interior
}

/// Every interpolation mode and boundary condition of the interpolating
/// accessor, with the plain window through Mirror and Constant, upsampling,
/// downsampling and one-to-one at odd sizes; the coarse image holds an
/// infinity, which a tap of weight 0 (one-to-one `Linear`) must skip. The
/// interior holds exactly the pixels whose plain window stays inside, and
/// of those the unchecked part exactly the pixels whose taps all lie
/// inside (none when a read is beyond the tap tables).
#[test]
fn interpolating_interior_matches_the_evaluator() {
    let modes = [
        Interpolation::Nearest,
        Interpolation::Linear,
        Interpolation::Cubic,
        Interpolation::Lanczos3,
    ];
    let mut unchecked = 0;
    for ((cw, ch), (w, h)) in [
        ((9, 7), (19, 15)),
        ((23, 17), (11, 9)),
        ((13, 11), (13, 11)),
    ] {
        let coarse = Image::from_fn(cw, ch, |x, y| {
            if (x, y) == (cw / 2, 3) {
                f32::INFINITY
            } else {
                ((x * 7 + y * 13) % 11) as f32 * 0.37 - 1.0
            }
        })
        .unwrap();
        let fine = Image::from_fn(w, h, |x, y| ((x * 5 + y * 3) % 7) as f32 - 2.0).unwrap();
        for mode in modes {
            for b in boundaries() {
                for fb in [Boundary::Mirror, Boundary::Constant(-1.0)] {
                    let k = Mixed {
                        coarse: Accessor::new(&coarse)
                            .with_boundary(b)
                            .with_interpolation(mode),
                        fine: Accessor::new(&fine).with_boundary(fb),
                    };
                    let at = format!("{mode:?} {b:?} {fb:?} {cw}x{ch} -> {w}x{h}");
                    // A read beyond the tables: every read checks its taps.
                    assert_eq!(exact_run(&k, w, h, &at), ((w - 2) * (h - 2), 0), "{at}");
                    let k = Near {
                        coarse: k.coarse,
                        fine: k.fine,
                    };
                    let inside = taps_inside(mode, (cw, ch), (w, h));
                    unchecked += inside;
                    let at = format!("near {at}");
                    assert_eq!(
                        exact_run(&k, w, h, &at),
                        ((w - 2) * (h - 2), inside),
                        "{at}"
                    );
                }
            }
        }
    }
    assert!(
        unchecked > 1000,
        "{unchecked} pixels read their taps unchecked"
    );
}
