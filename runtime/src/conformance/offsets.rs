//! Offsets: computed from parameters (any distance, also beyond the image),
//! constant and asymmetric together with the coordinates `x()`, `y()`, and
//! the vector (RGBA) lane operations.

use super::harness::{input, inside, Run};
use super::kernels::{rgba_kernels::Swizzle, TypeKernels};
use super::pixel::boundary;
use hipacc_core::{Accessor, BoundaryMode, Rect, Rgba};

/// Offsets given as parameters: near, across and far beyond the image.
const SHIFTS: [(i32, i32); 7] = [
    (0, 0),
    (-1, 2),
    (5, -3),
    (-9, -9),
    (17, 1),
    (-40, 0),
    (2, 70),
];

/// Sizes of the offset cases.
const SIZES: [(usize, usize); 5] = [(1, 1), (1, 7), (2, 3), (5, 17), (64, 64)];

/// Reads at parameter offsets, every mode (`Undefined`: where every read is
/// inside, which needs non-negative offsets).
pub(crate) fn computed_offsets<T: TypeKernels>(run: &mut Run<'_>) {
    for mode in BoundaryMode::ALL {
        for (s, size) in SIZES.into_iter().enumerate() {
            for (dx, dy) in SHIFTS {
                let full = Rect::full(size.0, size.1);
                let rect = match mode {
                    BoundaryMode::Undefined => match inside(full, size, (dx, dx), (dy, dy)) {
                        Some(r) => r,
                        None => continue,
                    },
                    _ => full,
                };
                let acc = Accessor::new(&input::<T>(size.0, size.1, 500 + s as u32))
                    .with_boundary(boundary::<T>(mode));
                run.check(
                    &format!("{mode:?}, offset ({dx}, {dy})"),
                    &T::shift(acc, dx, dy),
                    size,
                    rect,
                    1,
                );
            }
        }
    }
}

/// Constant asymmetric offsets (x in `-1..=3`, y in `-2..=1`) plus the
/// coordinates, every mode and size, over the whole image and over a region
/// of interest of the output.
pub(crate) fn stencil<T: TypeKernels>(run: &mut Run<'_>) {
    let sizes = [(1, 1), (1, 7), (2, 3), (5, 17), (64, 64), (127, 33)];
    for mode in BoundaryMode::ALL {
        for (s, size) in sizes.into_iter().enumerate() {
            let full = Rect::full(size.0, size.1);
            let roi = Rect::new(
                size.0 / 3,
                size.1 / 4,
                size.0 - size.0 / 3,
                size.1 - size.1 / 4,
            );
            for (name, space) in [("whole", full), ("region of interest", roi)] {
                if mode == BoundaryMode::Undefined {
                    // The stencil reads left of and above the centre.
                    continue;
                }
                let acc = Accessor::new(&input::<T>(size.0, size.1, 600 + s as u32))
                    .with_boundary(boundary::<T>(mode));
                run.check(
                    &format!("{mode:?}, {name}"),
                    &T::stencil(acc),
                    size,
                    space,
                    5,
                );
            }
        }
    }
}

/// Lane access and `Rgba::new` on `Rgba<f32>`, every mode.
pub(crate) fn vectors(run: &mut Run<'_>) {
    for mode in BoundaryMode::ALL {
        for (s, size) in [(1, 1), (2, 3), (5, 17), (64, 64)].into_iter().enumerate() {
            let full = Rect::full(size.0, size.1);
            let rect = match mode {
                BoundaryMode::Undefined => match inside(full, size, (0, 1), (0, 2)) {
                    Some(r) => r,
                    None => continue,
                },
                _ => full,
            };
            let input = Accessor::new(&input::<Rgba<f32>>(size.0, size.1, 700 + s as u32))
                .with_boundary(boundary(mode));
            let kernel = Swizzle { input, gain: 1.5 };
            run.check(&format!("{mode:?}"), &kernel, size, rect, 4);
        }
    }
}
