//! The native CPU backend.
//!
//! `#[kernel_body]` compiles each kernel body as ordinary Rust
//! ([`KernelBody::cpu_pixel`]), generic over a [`ReadMode`]: with
//! [`Interior`] accessor reads are unchecked, with [`Border`] every read
//! applies the accessor's boundary condition. A launch:
//!
//! 1. refuses an output image that an accessor reads (the bands below write
//!    it while other threads read the inputs);
//! 2. takes each accessor's footprint from the IR (cached per kernel type and
//!    slots, see [`plan`]) and computes the [`interior`]: the rectangle of
//!    output pixels whose reads all stay inside every accessor's region;
//! 3. splits the output rows into bands run in parallel by rayon (small
//!    launches stay on the calling thread). Each row outside the interior
//!    runs `Border` throughout; an interior row runs `Border` on its left and
//!    right strips and `Interior` in a plain loop over the middle slice,
//!    which LLVM vectorises where the body allows.

mod interior;
mod plan;

use crate::Result;
use hipacc_core::cpu::{Border, Interior as Unchecked};
use hipacc_core::{Bindings, IterationSpace, Kernel, KernelBody};
use interior::Interior;
use rayon::prelude::*;

/// Launches with fewer output pixels run on the calling thread: below this,
/// rayon's fork-join costs about as much as the pixels.
const SERIAL_PIXELS: usize = 8 * 1024;

/// Output pixels per band: enough to amortise the task, few enough that a
/// band's input rows stay in cache (32 rows of a 2048-wide image).
const BAND_PIXELS: usize = 64 * 1024;

/// Interior pixels computed per step: two SSE vectors of f32.
const LANES: usize = 8;

/// Runs `kernel` over `space` on the CPU.
pub(crate) fn execute<K: Kernel>(kernel: &K, space: &IterationSpace<K::Output>) -> Result<()> {
    let bindings = kernel.bindings();
    check_aliasing::<K>(&bindings, space.image().id())?;
    let reaches = plan::reaches(kernel, &bindings)?;
    let rect = space.rect();
    let inner = interior::interior(
        rect,
        bindings
            .accessors
            .iter()
            .map(|a| a.region)
            .zip(reaches.iter().copied()),
    );
    let views = kernel.cpu_views_in(rect)?;
    let width = space.image().width();
    let mut out = space.image().write()?;
    let rows = &mut out[rect.y * width..(rect.y + rect.height) * width];
    let cols = rect.x..rect.x + rect.width;
    if rect.width * rect.height < SERIAL_PIXELS {
        for (i, row) in rows.chunks_mut(width).enumerate() {
            run_row::<K>(&views, &inner, rect.x, rect.y + i, &mut row[cols.clone()]);
        }
        return Ok(());
    }
    let band = band_rows(rect.width, rect.height);
    rows.par_chunks_mut(width * band)
        .enumerate()
        .for_each(|(b, chunk)| {
            for (i, row) in chunk.chunks_mut(width).enumerate() {
                let y = rect.y + b * band + i;
                run_row::<K>(&views, &inner, rect.x, y, &mut row[cols.clone()]);
            }
        });
    Ok(())
}

/// `Error::Aliasing` when an accessor reads the output image.
fn check_aliasing<K: Kernel>(bindings: &Bindings, output: u64) -> Result<()> {
    match bindings.accessors.iter().find(|a| a.image.id() == output) {
        Some(a) => Err(hipacc_core::Error::Aliasing {
            kernel: K::NAME.to_string(),
            accessor: a.slot.name.clone(),
            image: output,
        }
        .into()),
        None => Ok(()),
    }
}

/// Rows per band: about [`BAND_PIXELS`] pixels, but at least four bands per
/// thread when the image is tall enough, so both threads stay busy.
fn band_rows(width: usize, height: usize) -> usize {
    let by_size = BAND_PIXELS.div_ceil(width);
    let by_balance = height.div_ceil(4 * rayon::current_num_threads());
    by_size.min(by_balance).max(1)
}

/// Computes one output row: columns `x0..x0 + row.len()` of row `y`.
fn run_row<K: KernelBody>(
    views: &K::CpuViews<'_>,
    inner: &Interior,
    x0: usize,
    y: usize,
    row: &mut [K::Output],
) {
    if inner.is_empty() || !inner.rows.contains(&y) {
        run_border::<K>(views, x0, y, row);
        return;
    }
    let (left, rest) = row.split_at_mut(inner.cols.start - x0);
    let (middle, right) = rest.split_at_mut(inner.cols.len());
    run_border::<K>(views, x0, y, left);
    interior_loop::<K>(views, inner.cols.start as isize, y as isize, middle);
    run_border::<K>(views, inner.cols.end, y, right);
}

/// Computes `row` (columns from `x0`) with boundary handling on every read.
fn run_border<K: KernelBody>(views: &K::CpuViews<'_>, x0: usize, y: usize, row: &mut [K::Output]) {
    for (i, out) in row.iter_mut().enumerate() {
        // SAFETY: `Border` applies the boundary condition to every read, so
        // `cpu_pixel` has no precondition in this mode.
        *out = unsafe { K::cpu_pixel::<Border>(views, (x0 + i) as isize, y as isize) };
    }
}

/// The interior loop. Eight pixels per step into a local array: eight copies
/// of the body with consecutive loads, which LLVM's SLP vectoriser turns into
/// vector code even where the loop vectoriser gives up (an unrolled 5x5 mask).
#[inline(always)]
fn interior_loop<K: KernelBody>(
    views: &K::CpuViews<'_>,
    xs: isize,
    y: isize,
    row: &mut [K::Output],
) {
    let done = row.len() / LANES * LANES;
    let mut lanes = row.chunks_exact_mut(LANES);
    for (c, chunk) in lanes.by_ref().enumerate() {
        let x = xs + (c * LANES) as isize;
        // SAFETY: the caller passes pixels of the interior, computed by
        // `interior::interior` as the pixels at which every offset of every
        // accessor's footprint reads inside that accessor's region; the views
        // were made from the same bindings and space origin.
        let values: [K::Output; LANES] =
            std::array::from_fn(|k| unsafe { K::cpu_pixel::<Unchecked>(views, x + k as isize, y) });
        chunk.copy_from_slice(&values);
    }
    for (i, out) in lanes.into_remainder().iter_mut().enumerate() {
        // SAFETY: as above.
        *out = unsafe { K::cpu_pixel::<Unchecked>(views, xs + (done + i) as isize, y) };
    }
}
