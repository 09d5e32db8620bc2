//! Argmin and argmax: the extreme pixel of a region and where it first
//! occurs.

use super::on_device;
use crate::{Device, Result};
use hipacc_codegen::emit::GlobalOp;
use hipacc_core::image::as_bytes_mut;
use hipacc_core::{Image, Pixel, Rect};

/// The smallest pixel of `region` (the whole image if `None`) and the
/// row-major index within the region of its first occurrence: `(v, i)`
/// with the pixel at `(region.x + i % region.width, region.y + i /
/// region.width)`. `f32`/`f64` NaN is ignored unless every pixel is NaN
/// (then the first NaN), as [`super::min`] ignores it.
///
/// ```
/// use hipacc::{reduce, Device, Image};
/// let img = Image::from_vec(3, 2, vec![4u8, 1, 7, 9, 1, 2])?;
/// assert_eq!(reduce::argmin(&Device::cpu(), &img, None)?, (1, 1));
/// # Ok::<(), hipacc::Error>(())
/// ```
pub fn argmin<T: Pixel + PartialOrd>(
    device: &Device,
    image: &Image<T>,
    region: Option<Rect>,
) -> Result<(T, usize)> {
    arg_extreme(device, image, region, false)
}

/// The largest pixel of `region` and the row-major index of its first
/// occurrence, as [`argmin`] gives the smallest.
///
/// ```
/// use hipacc::{reduce, Device, Image};
/// let img = Image::from_vec(3, 2, vec![4u8, 9, 7, 9, 1, 2])?;
/// assert_eq!(reduce::argmax(&Device::cpu(), &img, None)?, (9, 1));
/// # Ok::<(), hipacc::Error>(())
/// ```
pub fn argmax<T: Pixel + PartialOrd>(
    device: &Device,
    image: &Image<T>,
    region: Option<Rect>,
) -> Result<(T, usize)> {
    arg_extreme(device, image, region, true)
}

/// True when `v` at index `i` replaces the best `b` at `j`: a smaller
/// (`max`: larger) value, or an equal one at a lower index; NaN loses to
/// any number, and among NaNs the lower index wins. The device kernels
/// use the same rule.
fn better<T: PartialOrd + Copy>(max: bool, (v, i): (T, usize), (b, j): (T, usize)) -> bool {
    let (v_nan, b_nan) = (v.partial_cmp(&v).is_none(), b.partial_cmp(&b).is_none());
    let beats = if max { v > b } else { v < b };
    beats || (!v_nan && b_nan) || ((v == b || (v_nan && b_nan)) && i < j)
}

fn arg_extreme<T: Pixel + PartialOrd>(
    device: &Device,
    image: &Image<T>,
    region: Option<Rect>,
    max: bool,
) -> Result<(T, usize)> {
    let op = if max {
        GlobalOp::ArgMax
    } else {
        GlobalOp::ArgMin
    };
    if let Some(bytes) = on_device(device, image, region, op, None)? {
        return Ok(best(max, partials::<T>(&bytes)));
    }
    let r = region.unwrap_or(Rect::full(image.width(), image.height()));
    r.check_in(image.width(), image.height())?;
    let pixels = image.read()?;
    let w = image.width();
    let rows = (r.y..r.y + r.height).map(|y| &pixels[y * w + r.x..y * w + r.x + r.width]);
    Ok(best(max, rows.flatten().copied().zip(0..)))
}

/// The best of `pairs` by [`better`] (also how the distributed argmin and
/// argmax combine the ranks' results).
pub(crate) fn best<T: PartialOrd + Copy>(
    max: bool,
    pairs: impl IntoIterator<Item = (T, usize)>,
) -> (T, usize) {
    match pairs
        .into_iter()
        .reduce(|b, p| if better(max, p, b) { p } else { b })
    {
        Some(best) => best,
        None => unreachable!("bug: a checked region has at least one pixel"),
    }
}

/// The device's per-block pairs: the values, then their `i32` indices.
fn partials<T: Pixel>(bytes: &[u8]) -> Vec<(T, usize)> {
    let blocks = bytes.len() / (std::mem::size_of::<T>() + 4);
    let mut values = vec![T::default(); blocks];
    let (value_bytes, index_bytes) = bytes.split_at(blocks * std::mem::size_of::<T>());
    as_bytes_mut(&mut values).copy_from_slice(value_bytes);
    let indices = index_bytes
        .chunks_exact(4)
        .map(|b| i32::from_ne_bytes([b[0], b[1], b[2], b[3]]) as usize);
    values.into_iter().zip(indices).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ties_go_to_the_lowest_index_and_nan_loses() {
        assert!(better(false, (1.0, 3), (2.0, 0)));
        assert!(!better(false, (1.0, 3), (1.0, 2)));
        assert!(better(false, (1.0, 1), (1.0, 2)));
        assert!(better(true, (5.0, 9), (f64::NAN, 0)));
        assert!(!better(true, (f64::NAN, 0), (5.0, 9)));
        assert!(better(true, (f64::NAN, 0), (f64::NAN, 4)));
    }
}
