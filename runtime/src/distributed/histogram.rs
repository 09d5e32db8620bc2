//! Histograms of distributed images: each rank bins its block, and the
//! counts are summed over all ranks (integers, so exactly).

use super::{DistImage, DistResult};
use crate::Device;
use hipacc_core::Pixel;
use mpi::collective::SystemOperation;
use mpi::traits::*;
use std::ops::Range;

/// The histogram of the whole distributed image, as
/// [`reduce::histogram`](crate::reduce::histogram) computes it on the
/// global image: `bins` equal bins over `[lo, hi)`. Collective; every rank
/// gets the counts, identical to the single-process ones for any rank
/// count (the per-rank counts are summed with an MPI all-reduce of `u64`).
///
/// ```no_run
/// use hipacc::distributed::{self, DistImage, Grid};
/// use hipacc::Device;
/// use std::rc::Rc;
///
/// let universe = distributed::initialize()?;
/// let grid = Rc::new(Grid::new(&universe.world(), 640, 480)?);
/// let image = DistImage::from_fn(&grid, |x, y| ((x ^ y) & 255) as u8)?;
/// let counts = distributed::histogram(&Device::cpu(), &image, 16, 0.0, 256.0)?;
/// assert_eq!(counts.iter().sum::<u64>(), 640 * 480);
/// # Ok::<(), distributed::DistError>(())
/// ```
pub fn histogram<T: Pixel + Into<f64>>(
    device: &Device,
    image: &DistImage<T>,
    bins: usize,
    lo: f64,
    hi: f64,
) -> DistResult<Vec<u64>> {
    histogram_window(device, image, bins, lo, hi, 0..bins)
}

/// The bins `window` of [`histogram`], as
/// [`reduce::histogram_window`](crate::reduce::histogram_window) gives
/// them. Collective. Every rank must pass the same arguments; invalid ones
/// are refused on every rank alike before any message is sent.
pub fn histogram_window<T: Pixel + Into<f64>>(
    device: &Device,
    image: &DistImage<T>,
    bins: usize,
    lo: f64,
    hi: f64,
    window: Range<usize>,
) -> DistResult<Vec<u64>> {
    let local = crate::reduce::histogram_window(
        device,
        &image.local(),
        Some(image.interior()),
        bins,
        lo,
        hi,
        window,
    )?;
    let mut total = vec![0u64; local.len()];
    image
        .grid()
        .comm()
        .all_reduce_into(&local[..], &mut total[..], SystemOperation::sum());
    Ok(total)
}
