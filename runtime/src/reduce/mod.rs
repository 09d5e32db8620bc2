//! Global operators: reductions of a whole image or region to one value,
//! and histograms.
//!
//! | operator | result | definition |
//! |---|---|---|
//! | [`sum`] | `f64` | the sum of the pixels, accumulated in `f64` |
//! | [`mean`] | `f64` | `sum / pixel count` |
//! | [`exact_sum`], [`exact_mean`] | `f64` | the same bits for any order of the pixels (each added exactly) |
//! | [`min`], [`max`] | the pixel type | with `f32`/`f64` NaN ignored unless every pixel is NaN (C's `fmin`/`fmax`) |
//! | [`argmin`], [`argmax`] | `(T, usize)` | the extreme pixel of a scalar image and the row-major index of its first occurrence (NaN ignored as by `min`/`max`) |
//! | [`histogram`] | `Vec<u64>` | counts of pixels in `bins` equal bins over `[lo, hi)` |
//!
//! Sums are exact to within `f64` rounding: each band of rows is summed in
//! `f64` and the band sums are combined pairwise by rayon's reduction tree,
//! so a 4096x4096 `f32` image sums with a relative error around 1e-15
//! (an `f32` accumulator would lose about 1e-3).
//!
//! When `device` is a GPU device (OpenCL, CUDA, or wgpu with the adapter's
//! `SHADER_F64` feature) and the image's current copy lives on it (a kernel
//! wrote it there), the operators run there: each block of 256
//! threads reduces its pixels in a tree in local memory to one partial per
//! lane (argmin and argmax: one value and its index), and the host
//! combines the partials (at most 1024) in order; histograms count in
//! per-block bins in local memory merged into the result with global
//! atomics, or with global atomics alone when the window has more than
//! 1024 bins. Device min, max, argmin, argmax and histograms equal the
//! host's exactly. Device sums
//! accumulate in `f64` in another order (per thread, then the block's
//! tree, then the partials): integer pixels sum exactly (below 2^53), and
//! float sums differ from the host's by at most `(n - 1) * 2^-53 * sum|p|`
//! for `n` pixels, as any two `f64` summation orders may.
//!
//! Otherwise the operators run on the host with rayon over bands of rows
//! (on a GPU device after reading the image back, as every host read of an
//! [`Image`] does; so also on a device without `f64` arithmetic, since the
//! device kernels sum and bin in `f64`).

mod arg;
mod by_value;
mod exact;
mod histogram;

#[cfg(feature = "distributed")]
pub(crate) use arg::best;
pub use arg::{argmax, argmin};
pub use exact::{exact_mean, exact_sum};
#[cfg(feature = "distributed")]
pub(crate) use exact::{exact_sum_parts, ExactSum};
pub use histogram::{histogram, histogram_window, MAX_BINS};

use crate::gpu::global::{Bins, GlobalRequest};
use crate::{Device, Result};
use hipacc_codegen::emit::GlobalOp;
use hipacc_core::image::as_bytes_mut;
use hipacc_core::{Image, Pixel, Rect, Reducible};
use rayon::prelude::*;

/// Rows per parallel task: small images stay on one thread.
const BAND_ROWS: usize = 16;

/// How [`with_rows`] groups rows into accumulators.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Grouping {
    /// One accumulator per band of [`BAND_ROWS`] rows, combined pairwise in
    /// a fixed tree: the same result on every run, as float sums need.
    PerBand,
    /// One accumulator per rayon task, combined in an order that depends
    /// on scheduling: only for a `combine` whose result does not depend on
    /// grouping (integer counts). A large accumulator (a histogram of many
    /// bins) then costs far less to allocate and merge.
    PerTask,
}

/// Folds the rows of `region` (or the whole image) of `image` into
/// accumulators (each starting at `identity()`, grouped as `grouping`
/// says) and combines those.
pub(crate) fn with_rows<T: Pixel, R: Send>(
    image: &Image<T>,
    region: Option<Rect>,
    grouping: Grouping,
    identity: impl Fn() -> R + Sync + Send,
    fold: impl Fn(R, &[T]) -> R + Sync,
    combine: impl Fn(R, R) -> R + Sync + Send,
) -> Result<R> {
    let r = region.unwrap_or(Rect::full(image.width(), image.height()));
    r.check_in(image.width(), image.height())?;
    let pixels = image.read()?;
    let w = image.width();
    let rows = &pixels[r.y * w..(r.y + r.height) * w];
    let cols = r.x..r.x + r.width;
    let fold_rows = |acc: R, chunk: &[T]| {
        chunk
            .chunks(w)
            .fold(acc, |acc, row| fold(acc, &row[cols.clone()]))
    };
    if r.width * r.height < 64 * 1024 {
        return Ok(fold_rows(identity(), rows));
    }
    let bands = rows.par_chunks(w * BAND_ROWS);
    Ok(match grouping {
        Grouping::PerBand => bands
            .map(|band| fold_rows(identity(), band))
            .reduce(&identity, &combine),
        Grouping::PerTask => bands.fold(&identity, fold_rows).reduce(&identity, &combine),
    })
}

/// The sum of the pixels of `region` (the whole image if `None`), in `f64`.
///
/// ```
/// use hipacc::{reduce, Device, Image};
/// let img = Image::from_fn(5, 3, |x, y| (x + 10 * y) as f32)?;
/// assert_eq!(reduce::sum(&Device::cpu(), &img, None)?, 3.0 * 10.0 + 150.0);
/// # Ok::<(), hipacc::Error>(())
/// ```
pub fn sum<T: Pixel + Into<f64>>(
    device: &Device,
    image: &Image<T>,
    region: Option<Rect>,
) -> Result<f64> {
    if let Some(bytes) = on_device(device, image, region, GlobalOp::Sum, None)? {
        return Ok(bytes
            .chunks_exact(8)
            .map(|b| f64::from_ne_bytes(b.try_into().unwrap_or_default()))
            .sum());
    }
    with_rows(
        image,
        region,
        Grouping::PerBand,
        || 0.0,
        |acc, row| acc + row.iter().map(|&p| p.into()).sum::<f64>(),
        |a, b| a + b,
    )
}

/// The mean of the pixels of `region` (the whole image if `None`).
pub fn mean<T: Pixel + Into<f64>>(
    device: &Device,
    image: &Image<T>,
    region: Option<Rect>,
) -> Result<f64> {
    let r = region.unwrap_or(Rect::full(image.width(), image.height()));
    Ok(sum(device, image, Some(r))? / (r.width * r.height) as f64)
}

/// The smallest pixel of `region` (lane-wise for vectors).
pub fn min<T: Pixel>(device: &Device, image: &Image<T>, region: Option<Rect>) -> Result<T> {
    if let Some(v) = extreme_on_device(device, image, region, GlobalOp::Min, T::r_min)? {
        return Ok(v);
    }
    extreme(image, region, Reducible::r_min)
}

/// The largest pixel of `region` (lane-wise for vectors).
pub fn max<T: Pixel>(device: &Device, image: &Image<T>, region: Option<Rect>) -> Result<T> {
    if let Some(v) = extreme_on_device(device, image, region, GlobalOp::Max, T::r_max)? {
        return Ok(v);
    }
    extreme(image, region, Reducible::r_max)
}

/// Runs `op` on the device when `device` is a GPU device holding the
/// image's current copy: the kernel's output bytes, or `None`.
pub(crate) fn on_device<T: Pixel>(
    device: &Device,
    image: &Image<T>,
    region: Option<Rect>,
    op: GlobalOp,
    bins: Option<Bins>,
) -> Result<Option<Vec<u8>>> {
    let Some(gpu) = device.gpu() else {
        return Ok(None);
    };
    let rect = region.unwrap_or(Rect::full(image.width(), image.height()));
    rect.check_in(image.width(), image.height())?;
    let req = GlobalRequest {
        op,
        pixel: T::TYPE,
        rect,
        bins,
    };
    gpu.global_op(&*image.to_dyn(), req)
}

/// Min or max on the device: the per-block partials combined with `op`.
fn extreme_on_device<T: Pixel>(
    device: &Device,
    image: &Image<T>,
    region: Option<Rect>,
    global: GlobalOp,
    op: impl Fn(T, T) -> T,
) -> Result<Option<T>> {
    let Some(bytes) = on_device(device, image, region, global, None)? else {
        return Ok(None);
    };
    let mut partials = vec![T::default(); bytes.len() / std::mem::size_of::<T>()];
    as_bytes_mut(&mut partials).copy_from_slice(&bytes);
    Ok(partials.into_iter().reduce(op))
}

fn merge<T>(a: Option<T>, b: Option<T>, op: impl Fn(T, T) -> T) -> Option<T> {
    match (a, b) {
        (Some(a), Some(b)) => Some(op(a, b)),
        (a, b) => a.or(b),
    }
}

fn extreme<T: Pixel>(
    image: &Image<T>,
    region: Option<Rect>,
    op: impl Fn(T, T) -> T + Sync + Send + Copy,
) -> Result<T> {
    let found = with_rows(
        image,
        region,
        Grouping::PerBand,
        || None,
        |acc, row| {
            let m = row.iter().copied().reduce(op);
            merge(acc, m, op)
        },
        move |a, b| merge(a, b, op),
    )?;
    match found {
        Some(v) => Ok(v),
        None => unreachable!("bug: a checked region has at least one pixel"),
    }
}
