//! Histograms (binning): how many pixels fall into each of equal bins.

use super::{with_rows, Grouping};
use crate::gpu::global::Bins;
use crate::{Device, Error, Result};
use hipacc_codegen::emit::GlobalOp;
use hipacc_core::{Image, Pixel, Rect};
use std::ops::Range;

/// The most bins accepted (a larger count is almost surely a mistake).
pub const MAX_BINS: usize = 1 << 24;

/// Counts the pixels of `region` (the whole image if `None`) in `bins`
/// equal bins over `[lo, hi)`: pixel `v` goes to bin
/// `floor((v - lo) / (hi - lo) * bins)` (computed in `f64`). Pixels outside
/// `[lo, hi)` and NaN are not counted.
///
/// ```
/// use hipacc::{reduce, Device, Image};
/// let img = Image::from_vec(4, 1, vec![0u8, 10, 200, 255])?;
/// let h = reduce::histogram(&Device::cpu(), &img, None, 4, 0.0, 256.0)?;
/// assert_eq!(h, [2, 0, 0, 2]);
/// # Ok::<(), hipacc::Error>(())
/// ```
pub fn histogram<T: Pixel + Into<f64>>(
    device: &Device,
    image: &Image<T>,
    region: Option<Rect>,
    bins: usize,
    lo: f64,
    hi: f64,
) -> Result<Vec<u64>> {
    histogram_window(device, image, region, bins, lo, hi, 0..bins)
}

/// The counts of the bins `window` of [`histogram`]`(…, bins, lo, hi)`:
/// element `i` counts bin `window.start + i`, computed with the same
/// formula, so windows of one histogram equal its slices exactly. Runs on
/// the device when the image lives on a GPU device.
///
/// ```
/// use hipacc::{reduce, Device, Image};
/// let img = Image::from_vec(4, 1, vec![0u8, 10, 200, 255])?;
/// let h = reduce::histogram_window(&Device::cpu(), &img, None, 4, 0.0, 256.0, 2..4)?;
/// assert_eq!(h, [0, 2]);
/// # Ok::<(), hipacc::Error>(())
/// ```
pub fn histogram_window<T: Pixel + Into<f64>>(
    device: &Device,
    image: &Image<T>,
    region: Option<Rect>,
    bins: usize,
    lo: f64,
    hi: f64,
    window: Range<usize>,
) -> Result<Vec<u64>> {
    if bins == 0 || bins > MAX_BINS {
        return Err(Error::Config(format!(
            "a histogram needs 1 to {MAX_BINS} bins, not {bins}"
        )));
    }
    if !(lo.is_finite() && hi.is_finite() && lo < hi) {
        return Err(Error::Config(format!(
            "a histogram's range must be finite with lo < hi, not [{lo}, {hi})"
        )));
    }
    if window.start >= window.end || window.end > bins {
        return Err(Error::Config(format!(
            "a histogram window must be a non-empty range of 0..{bins}, not {window:?}"
        )));
    }
    let scale = bins as f64 / (hi - lo);
    let wanted = Bins {
        bins,
        lo,
        hi,
        scale,
        first: window.start,
        count: window.len(),
    };
    if let Some(bytes) = super::on_device(device, image, region, GlobalOp::Histogram, Some(wanted))?
    {
        return Ok(bytes
            .chunks_exact(4)
            .map(|b| u64::from(u32::from_ne_bytes(b.try_into().unwrap_or_default())))
            .collect());
    }
    // `v < hi` can still round up to `bins` for the last bin.
    let bin_of = |v: f64| (v >= lo && v < hi).then(|| (((v - lo) * scale) as usize).min(bins - 1));
    if let Some(counts) = super::by_value::histogram(image, region, bin_of, &window)? {
        return Ok(counts);
    }
    // Counts are integers: any grouping gives the same histogram.
    with_rows(
        image,
        region,
        Grouping::PerTask,
        || vec![0u64; window.len()],
        |mut counts, row| {
            for &p in row {
                if let Some(b) = bin_of(p.into()).filter(|b| window.contains(b)) {
                    counts[b - window.start] += 1;
                }
            }
            counts
        },
        |mut a, b| {
            for (x, y) in a.iter_mut().zip(&b) {
                *x += y;
            }
            a
        },
    )
}
