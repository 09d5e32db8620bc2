//! Every boundary mode x image size x footprint, per pixel type.
//!
//! The footprint is a mask's size read by the weighted window kernel. Every
//! mode meets every size and every footprint; small images meet all
//! footprints (including those wider than the image), the larger ones a
//! few, and only `512x300` (the one size large enough for the parallel
//! banded path of the CPU backend) is limited to `3x3`. With `Undefined`
//! only reads inside the image are allowed, which needs non-negative
//! offsets (see [`inside`]): there the window is shifted by `(7, 7)`.

use super::harness::{input, inside, Run};
use super::kernels::TypeKernels;
use super::pixel::{boundary, pixel_hash};
use hipacc_core::{Accessor, BoundaryMode, Mask, Rect};

/// A width and height.
type Size = (usize, usize);

/// Mask sizes (width, height).
pub(crate) const FOOTPRINTS: [(usize, usize); 6] =
    [(1, 1), (3, 3), (5, 5), (1, 9), (9, 1), (15, 15)];

/// Sizes checked with every footprint.
const SMALL: [(usize, usize); 4] = [(1, 1), (1, 7), (2, 3), (5, 17)];

/// Larger sizes with the footprints they are checked with.
const MEDIUM: [(Size, &[Size]); 2] = [
    ((64, 64), &[(3, 3), (15, 15)]),
    ((127, 33), &[(5, 5), (1, 9), (9, 1)]),
];

/// The size that runs in parallel bands, with its footprint.
const LARGE: ((usize, usize), (usize, usize)) = ((512, 300), (3, 3));

/// A mask of `width x height` small positive coefficients, different at
/// every position so that a read at a wrong offset is weighted wrongly.
pub(crate) fn mask<C: super::pixel::TestPixel>(
    width: usize,
    height: usize,
    salt: u32,
) -> Mask<C::Coef> {
    let coefficients = (0..width * height)
        .map(|i| C::coef(pixel_hash(i, 0, salt)))
        .collect();
    match Mask::from_vec(width, height, coefficients) {
        Ok(m) => m,
        Err(e) => unreachable!("bug: the suite made an invalid {width}x{height} mask: {e}"),
    }
}

/// The weighted window of `footprint` over a `size` image in `mode`, over
/// the whole image. `Undefined` allows only spaces whose reads all stay
/// inside: the centred window qualifies only as `1x1`; larger footprints use
/// the window shifted to non-negative offsets, over the largest such space
/// (none for images too small).
pub(crate) fn window_case<T: TypeKernels>(
    run: &mut Run<'_>,
    mode: BoundaryMode,
    size: (usize, usize),
    footprint: (usize, usize),
) {
    let (w, h) = size;
    let (mw, mh) = footprint;
    let salt = (w * 131 + h * 7 + mw * 3 + mh) as u32;
    let acc = Accessor::new(&input::<T>(w, h, salt)).with_boundary(boundary::<T>(mode));
    let full = Rect::full(w, h);
    let what = format!("{mode:?}, footprint {mw}x{mh}");
    let (rx, ry) = ((mw / 2) as i32, (mh / 2) as i32);
    if mode != BoundaryMode::Undefined {
        run.check(
            &what,
            &T::window(acc, mask::<T>(mw, mh, salt)),
            size,
            full,
            mw * mh,
        );
    } else if let Some(r) = inside(full, size, (-rx, rx), (-ry, ry)) {
        run.check(
            &what,
            &T::window(acc, mask::<T>(mw, mh, salt)),
            size,
            r,
            mw * mh,
        );
    } else if let Some(r) = inside(full, size, (7 - rx, 7 + rx), (7 - ry, 7 + ry)) {
        let kernel = T::shifted_window(acc, mask::<T>(mw, mh, salt));
        run.check(&what, &kernel, size, r, mw * mh);
    }
}

/// The whole matrix for pixel type `T`; `large` adds the `512x300` cases.
pub(crate) fn matrix<T: TypeKernels>(run: &mut Run<'_>, large: bool) {
    for mode in BoundaryMode::ALL {
        for size in SMALL {
            for footprint in FOOTPRINTS {
                window_case::<T>(run, mode, size, footprint);
            }
        }
        for (size, footprints) in MEDIUM {
            for &footprint in footprints {
                window_case::<T>(run, mode, size, footprint);
            }
        }
        if large {
            window_case::<T>(run, mode, LARGE.0, LARGE.1);
        }
    }
}
