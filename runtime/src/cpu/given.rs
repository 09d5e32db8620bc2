//! The expression around a body's window sums as native code.
//!
//! [`super::split`] computes a body's window sums a row at a time, in
//! passes of their own. The rest of the body (the sharpening of an unsharp
//! mask, a corner response) it could evaluate with its own row
//! interpreter, one pass per operation; where it can, the backend instead
//! runs the kernel's compiled body over the row in the [`Given`] window
//! shape, in which every `reduce` returns its precomputed sum at the
//! pixel. That is one vectorised loop per row, as the direct path's
//! interior, whatever the expression.

use super::split::Sums;
use super::{interior_loop, LoopShape, Unchecked};
use hipacc_core::cpu::{with_given, with_given_rows, Given, GivenRows};
use hipacc_core::KernelBody;

/// The expression around a [`super::split`] program's sums, computed by `K`'s
/// compiled body in the [`Given`] shape: each `reduce` returns its sum's
/// row at the pixel, every other read is at offset 0 inside its region
/// ([`super::split::Program::given`]), so the row runs unchecked and vectorises
/// as the interior of the direct path does. The body computes the same
/// f32 operations in the same order as the program's tape, so both give
/// the same bits.
pub(super) fn outer<'v, 'a, K: KernelBody>(
    views: &'v K::CpuViews<'a>,
    x0: usize,
) -> impl Fn(usize, Sums<'_>, &mut [f32]) + Sync + use<'v, 'a, K> {
    move |y, sums, row| {
        let Some(row) = from_f32::<K::Output>(row) else {
            unreachable!("bug: an f32 program for another output type");
        };
        let (xs, y) = (x0 as isize, y as isize);
        let plain = LoopShape::Plain;
        match sums {
            Sums::Values(v) => with_given(v, x0, || {
                interior_loop::<K, Given, Unchecked>(plain, views, xs, y, row);
            }),
            Sums::Rows(r) => with_given_rows(r, x0, || match r.first().map_or(0, |s| s.0.len()) {
                3 => interior_loop::<K, GivenRows<3>, Unchecked>(plain, views, xs, y, row),
                5 => interior_loop::<K, GivenRows<5>, Unchecked>(plain, views, xs, y, row),
                7 => interior_loop::<K, GivenRows<7>, Unchecked>(plain, views, xs, y, row),
                h => unreachable!("bug: given rows of height {h}"),
            }),
        }
    }
}

/// `rows` as pixels of type `T`, when `T` is f32.
fn from_f32<T: 'static>(rows: &mut [f32]) -> Option<&mut [T]> {
    if std::any::TypeId::of::<T>() != std::any::TypeId::of::<f32>() {
        return None;
    }
    // SAFETY: `T` is `f32`.
    Some(unsafe { std::slice::from_raw_parts_mut(rows.as_mut_ptr().cast::<T>(), rows.len()) })
}

#[cfg(test)]
mod tests {
    use super::super::{prepare, split};
    use crate::prelude::*;
    use hipacc_core::{Boundary, Rect};

    /// Two sums over other masks and accessors, and around them every
    /// operation the row interpreter runs: the compiled body must give its
    /// bits.
    #[derive(Kernel)]
    #[kernel(output = f32)]
    struct Mixed {
        a: Accessor<f32>,
        b: Accessor<f32>,
        wide: Mask<f32, 5, 3>,
        tall: Mask<f32, 3, 5>,
        s: f32,
    }

    #[kernel_body]
    impl Mixed {
        fn kernel(&self) -> f32 {
            let p = convolve(&self.wide, Sum, |dx, dy| {
                self.wide.at(dx, dy) * (self.a.at(dx, dy) * self.b.at(dx, dy))
            });
            let q = convolve(&self.tall, Sum, |dx, dy| {
                self.b.at(dx, dy) * self.tall.at(dx, dy)
            });
            let r = (p - q).abs().sqrt().max(self.a()) / (self.s + q.min(self.b()));
            r - (-p).mul_add(self.s, self.a() * 0.5)
        }
    }

    /// The same with two sums of one height (5): the body runs their
    /// vertical passes (`GivenRows`).
    #[derive(Kernel)]
    #[kernel(output = f32)]
    struct SameHeight {
        a: Accessor<f32>,
        b: Accessor<f32>,
        wide: Mask<f32, 5, 5>,
        tall: Mask<f32, 3, 5>,
        s: f32,
    }

    #[kernel_body]
    impl SameHeight {
        fn kernel(&self) -> f32 {
            let p = convolve(&self.wide, Sum, |dx, dy| {
                self.wide.at(dx, dy) * (self.a.at(dx, dy) * self.b.at(dx, dy))
            });
            let q = convolve(&self.tall, Sum, |dx, dy| {
                self.b.at(dx, dy) * self.tall.at(dx, dy)
            });
            (p - q).abs().sqrt().max(self.a()) / (self.s + q.min(self.b())) - p * self.s
        }
    }

    fn rank1<const W: usize, const H: usize>(kx: [f32; W], ky: [f32; H]) -> Mask<f32, W, H> {
        Mask::fixed(std::array::from_fn(|r| {
            std::array::from_fn(|c| ky[r] * kx[c])
        }))
        .unwrap()
    }

    fn image(w: usize, h: usize, seed: u32) -> Image<f32> {
        let px = (0..w * h)
            .map(|i| {
                let v = (i as u32).wrapping_mul(2_654_435_761).wrapping_add(seed) >> 8;
                0.25 + (v % 1000) as f32 / 500.0
            })
            .collect();
        Image::from_vec(w, h, px).unwrap()
    }

    /// Runs `k` over `space` with the tape and with the compiled body
    /// around its sums, and compares bit for bit.
    fn same_bits<K: Kernel<Output = f32>>(what: &str, k: &K, space: &IterationSpace<f32>) {
        let prepared = prepare(k, space).unwrap();
        let (program, setup) = prepared.split(k).expect("a split program");
        let bindings = k.bindings();
        let rect = space.rect();
        assert!(program.given(&bindings, rect), "{what}: not given");
        let views = k.cpu_views_in(rect).unwrap();
        let given = super::outer::<K>(&views, rect.x);
        let w = space.image().width();
        let len = w * space.image().height();
        let mut rows = [vec![f32::NAN; len], vec![f32::NAN; len]];
        for (rows, outer) in rows.iter_mut().zip([None, Some(&given as split::Outer)]) {
            let ys = rect.y..rect.y + rect.height;
            let rows = &mut rows[rect.y * w..(rect.y + rect.height) * w];
            split::run_rows(&program, &setup, &bindings, rect, w, ys, rows, outer).unwrap();
        }
        let [tape, body] = rows;
        for (i, (t, g)) in tape.iter().zip(&body).enumerate() {
            assert!(
                t.to_bits() == g.to_bits(),
                "{what} at {i}: the tape gives {t}, the body {g}"
            );
        }
    }

    /// The compiled body around the sums gives the bits of the row
    /// interpreter's tape, given the sums' values (sums of two heights)
    /// or their rows (one height), on every boundary mode and sizes from
    /// one pixel, over whole images and a space inside them.
    #[test]
    fn the_compiled_body_gives_the_bits_of_the_tape() {
        let modes = [
            Boundary::Clamp,
            Boundary::Repeat,
            Boundary::Mirror,
            Boundary::MirrorInterior,
            Boundary::Constant(0.75),
        ];
        for (w, h) in [(1, 1), (3, 2), (7, 9), (67, 33)] {
            let (a, b) = (image(w, h, 1), image(w, h, 2));
            let out = Image::<f32>::new(w, h).unwrap();
            let inner = Rect::new(w / 3, h / 3, w - w / 3, h - h / 3);
            for mode in modes {
                let (a, b) = (
                    Accessor::new(&a).with_boundary(mode),
                    Accessor::new(&b).with_boundary(mode),
                );
                let mixed = Mixed {
                    a: a.clone(),
                    b: b.clone(),
                    wide: rank1([0.5, 1.0, 2.0, 1.0, 0.5], [0.25, 0.5, 0.25]),
                    tall: rank1([1.0, -2.0, 1.0], [0.1, 0.2, 0.4, 0.2, 0.1]),
                    s: 1.5,
                };
                let same = SameHeight {
                    a,
                    b,
                    wide: rank1([0.5, 1.0, 2.0, 1.0, 0.5], [0.3, 0.1, 0.25, 0.7, 0.2]),
                    tall: rank1([1.0, -2.0, 1.0], [0.1, 0.2, 0.4, 0.2, 0.1]),
                    s: 1.5,
                };
                for space in [
                    IterationSpace::full(&out),
                    IterationSpace::region(&out, inner).unwrap(),
                ] {
                    let what = format!("{w}x{h} {mode:?} {:?}", space.rect());
                    same_bits(&format!("values {what}"), &mixed, &space);
                    same_bits(&format!("rows {what}"), &same, &space);
                }
            }
        }
    }
}
