//! Regions of interest: of the iteration space (pixels outside it must keep
//! their old value), of an accessor (the region acts as the image: the
//! boundary applies at its edges, not the image's), and two accessors with
//! different regions and boundaries in one kernel.

use super::boundaries::mask;
use super::harness::{input, inside, Run};
use super::kernels::{Jacobi, TypeKernels};
use super::pixel::boundary;
use hipacc_core::{Accessor, BoundaryMode, Rect};

/// Input image, accessor region, output image and iteration spaces: equal
/// to the region's size, larger than it (reads past its far edges), small,
/// and at the output's corner.
const INPUT: (usize, usize) = (40, 30);
const REGION: Rect = Rect::new(5, 3, 20, 15);
const OUTPUT: (usize, usize) = (30, 25);
const SPACES: [Rect; 4] = [
    Rect::new(4, 6, 20, 15),
    Rect::new(2, 1, 26, 22),
    Rect::new(10, 10, 3, 2),
    Rect::new(0, 0, 1, 25),
];
const FOOTPRINTS: [(usize, usize); 3] = [(5, 5), (1, 9), (15, 15)];

/// The weighted window with an accessor region and a region iteration
/// space, every mode (`Undefined`: the window shifted to non-negative
/// offsets, as in the boundary matrix).
pub(crate) fn regions<T: TypeKernels>(run: &mut Run<'_>) {
    for mode in BoundaryMode::ALL {
        for (s, space) in SPACES.into_iter().enumerate() {
            for (mw, mh) in FOOTPRINTS {
                let salt = 300 + s as u32;
                let img = input::<T>(INPUT.0, INPUT.1, salt);
                let region_acc = Accessor::new(&img)
                    .with_region(REGION)
                    .with_boundary(boundary::<T>(mode));
                let full_acc = Accessor::new(&input::<T>(OUTPUT.0, OUTPUT.1, salt))
                    .with_boundary(boundary::<T>(mode));
                let (rx, ry) = ((mw / 2) as i32, (mh / 2) as i32);
                let region_size = (REGION.width, REGION.height);
                let cases = [
                    ("accessor region", region_acc, region_size),
                    ("whole accessor", full_acc, OUTPUT),
                ];
                for (name, acc, readable) in cases {
                    let what = format!("{mode:?}, {name}, footprint {mw}x{mh}");
                    let coefficients = mask::<T>(mw, mh, salt);
                    if mode != BoundaryMode::Undefined {
                        run.check(&what, &T::window(acc, coefficients), OUTPUT, space, mw * mh);
                    } else if let Some(r) =
                        inside(space, readable, (7 - rx, 7 + rx), (7 - ry, 7 + ry))
                    {
                        let kernel = T::shifted_window(acc, coefficients);
                        run.check(&what, &kernel, OUTPUT, r, mw * mh);
                    }
                }
            }
        }
    }
}

/// Jacobi with two accessors: `sol` over the whole image and `rhs` over a
/// region, with every pair of boundary modes drawn from a rotation.
pub(crate) fn two_accessors(run: &mut Run<'_>) {
    let modes = BoundaryMode::ALL;
    for (i, size) in [(1, 1), (2, 3), (5, 17), (64, 64), (127, 33)]
        .into_iter()
        .enumerate()
    {
        for (m, &sol_mode) in modes.iter().enumerate() {
            let rhs_mode = modes[(m + i + 1) % modes.len()];
            let (w, h) = size;
            let sol =
                Accessor::new(&input::<f32>(w, h, 11 + i as u32)).with_boundary(boundary(sol_mode));
            let rhs_img = input::<f32>(w + 3, h + 2, 12 + i as u32);
            let rhs = Accessor::new(&rhs_img)
                .with_region(Rect::new(2, 1, w, h))
                .with_boundary(boundary(rhs_mode));
            let mut rect = Some(Rect::full(w, h));
            if sol_mode == BoundaryMode::Undefined {
                rect = rect.and_then(|r| inside(r, size, (-1, 1), (-1, 1)));
            }
            if rhs_mode == BoundaryMode::Undefined {
                rect = rect.and_then(|r| inside(r, size, (0, 0), (1, 1)));
            }
            let Some(rect) = rect else { continue };
            let kernel = Jacobi {
                sol,
                rhs,
                omega: 0.75,
            };
            let what = format!("sol {sol_mode:?}, rhs {rhs_mode:?}");
            run.check(&what, &kernel, size, rect, 8);
        }
    }
}
