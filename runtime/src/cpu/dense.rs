//! Convolutions whose mask does not separate: a kernel whose body is
//! `convolve(m, Sum, |dx, dy| m.at(dx, dy) * a.at(dx, dy))` (possibly
//! times a factor, as in [`super::separable`]) over a mask without rank-1
//! factors, such as a Laplacian, a Laplacian of Gaussian or an emboss.
//!
//! Written out per pixel, such a body multiplies every coefficient,
//! zeros included: nine loads, nine products and eight sums per pixel for
//! a 3x3 Laplacian, of which four taps are zero. Here each output row is
//! computed in blocks of [`BLOCK_BYTES`] of consecutive pixels whose accumulators
//! stay in registers while the taps with a non-zero weight run in the
//! inner loop, each one vector load and its product and sum per vector; a
//! weight of 1 or -1 (an exact product) is an addition or a subtraction.
//! The Laplacian is then four additions and one product and sum, as the
//! stencil written out by hand.
//!
//! Each source row is gathered once through the accessor's boundary
//! condition into a ring of the window's height (the columns inside the
//! region are one copy), so the taps read plain rows; the row the next
//! output row gathers is prefetched while this one is computed.
//!
//! The sum runs in the direct path's order (row-major from the first tap,
//! each product rounded, then added), so the result is the direct path's
//! bits wherever the skipped pixels are finite. Skipping a zero weight,
//! as OpenCV's `filter2D` does, differs from the direct sum only where a
//! skipped pixel is infinite or NaN (`0 · ∞` is NaN). Rows are computed
//! independently of the band they belong to, so a pipeline that computes
//! them strip by strip gets the same bits.

use super::separable::{as_float, Float, Source};
use hipacc_core::image::read_as;
use hipacc_core::kernel::AccessorBinding;
use hipacc_core::{Pixel, Rect};
use rayon::prelude::*;

/// Bytes of output whose accumulators the inner loop keeps: eight AVX2
/// vectors (64 f32 or 32 f64 pixels), enough independent chains of
/// additions to hide their latency, and each tap's row pointer, weight
/// and branch on a unit weight paid once per eight vector loads. Four
/// vectors paid them twice as often: a 5x5 mask times a factor took 1.20
/// to 1.23 times its taps written out, 1.09 to 1.12 with eight
/// (`local-ratios`, `conv5_scaled`).
const BLOCK_BYTES: usize = 256;

/// Output rows per band of the parallel launch.
const BAND_ROWS: usize = 32;

/// A mask's taps with a non-zero weight, row-major, and what the sum is
/// multiplied by.
pub(super) struct Dense<'a> {
    /// Row-major coefficients.
    pub(super) coefficients: &'a [f64],
    /// Width and height (odd).
    pub(super) size: (usize, usize),
    /// The factor, if any.
    pub(super) scale: Option<f64>,
}

/// The taps of a launch in the pixel type.
struct Taps<T> {
    /// `(window row, window column, weight)` of the non-zero weights.
    taps: Vec<(usize, usize, T)>,
    size: (usize, usize),
    scale: Option<T>,
}

impl Dense<'_> {
    fn taps<T: Float>(&self) -> Option<Taps<T>> {
        let (w, h) = self.size;
        if w % 2 == 0 || h % 2 == 0 || self.coefficients.len() != w * h {
            return None;
        }
        let taps: Vec<(usize, usize, T)> = (0..h)
            .flat_map(|j| (0..w).map(move |i| (j, i)))
            .filter_map(|(j, i)| {
                let k = self.coefficients[j * w + i];
                (k != 0.0).then(|| (j, i, T::from_f64(k)))
            })
            .collect();
        // An all-zero mask is left to the direct path.
        (!taps.is_empty()).then_some(Taps {
            taps,
            size: self.size,
            scale: self.scale.map(T::from_f64),
        })
    }
}

/// A tap of one output row: where its source row starts in the ring, its
/// weight, and whether the weight is `1` or `-1` (`Some(true)`,
/// `Some(false)`), whose products are exact: the sum then adds or
/// subtracts the pixel, as a stencil written out does, with the same bits.
#[derive(Clone, Copy)]
struct Tap<T> {
    offset: usize,
    k: T,
    unit: Option<bool>,
}

impl<T: Float> Tap<T> {
    fn new(offset: usize, k: T) -> Self {
        let unit = if k == T::from_f64(1.0) {
            Some(true)
        } else if k == T::from_f64(-1.0) {
            Some(false)
        } else {
            None
        };
        Tap { offset, k, unit }
    }

    /// `acc + k · v`, as the direct sum rounds it.
    #[inline(always)]
    fn add(&self, acc: T, v: T) -> T {
        match self.unit {
            Some(true) => acc + v,
            Some(false) => acc - v,
            None => acc + self.k * v,
        }
    }
}

/// Computes the convolution of `acc` with `mask` into the `space`
/// rectangle of `out` (the output image's rows, `out_width` wide), in
/// parallel bands. `Ok(false)`, computing nothing, where it does not run
/// (pixel types other than f32 and f64, an even or empty mask).
pub(super) fn run<T: Pixel>(
    acc: &AccessorBinding,
    mask: &Dense<'_>,
    out: &mut [T],
    out_width: usize,
    space: Rect,
) -> crate::Result<bool> {
    let rows = &mut out[space.y * out_width..(space.y + space.height) * out_width];
    if let Some(rows) = as_float::<T, f32>(rows) {
        return typed::<f32>(acc, mask, rows, out_width, space, None);
    }
    if let Some(rows) = as_float::<T, f64>(rows) {
        return typed::<f64>(acc, mask, rows, out_width, space, None);
    }
    Ok(false)
}

/// [`run`] for the output rows `ys` of `space` only, into `rows` (whole
/// rows of `out_width` from row `ys.start`), on this thread, each row as
/// [`run`] computes it.
pub(super) fn run_rows<T: Pixel>(
    acc: &AccessorBinding,
    mask: &Dense<'_>,
    rows: &mut [T],
    out_width: usize,
    space: Rect,
    ys: std::ops::Range<usize>,
) -> crate::Result<bool> {
    let first = Some(ys.start - space.y);
    let rows = &mut rows[..ys.len() * out_width];
    if let Some(rows) = as_float::<T, f32>(rows) {
        return typed::<f32>(acc, mask, rows, out_width, space, first);
    }
    if let Some(rows) = as_float::<T, f64>(rows) {
        return typed::<f64>(acc, mask, rows, out_width, space, first);
    }
    Ok(false)
}

/// The launch in pixel type `T`: all of the space's `rows` in parallel
/// bands, or (`first`) the rows from space row `first` on this thread.
fn typed<T: Float>(
    acc: &AccessorBinding,
    mask: &Dense<'_>,
    rows: &mut [T],
    out_width: usize,
    space: Rect,
    first: Option<usize>,
) -> crate::Result<bool> {
    let Some(taps) = mask.taps::<T>() else {
        return Ok(false);
    };
    acc.region.check_in(acc.image.width(), acc.image.height())?;
    let Some(src) = read_as::<T>(&*acc.image) else {
        return Ok(false);
    };
    let src = src?;
    let src = Source {
        pixels: &src,
        stride: acc.image.width(),
        region: acc.region,
        mode: acc.slot.boundary,
        constant: match acc.slot.constant.first() {
            Some(lit) => T::from_f64(lit.as_f64()),
            None => T::default(),
        },
    };
    if space.width == 0 || rows.is_empty() {
        return Ok(true);
    }
    let band = |first: usize, band: &mut [T]| {
        T::with_scratch(|ring| rows_pass(&src, &taps, space, first, band, out_width, ring));
    };
    match first {
        Some(first) => band(first, rows),
        None => rows
            .par_chunks_mut(out_width * BAND_ROWS)
            .enumerate()
            .for_each(|(b, rows)| band(b * BAND_ROWS, rows)),
    }
    Ok(true)
}

super::simd::dispatch! {
    /// Output rows `first..` of the space (space-relative) into `band`
    /// (whole output-image rows), compiled for AVX2 where the CPU has it
    /// ([`super::simd`]).
    fn rows_pass<T: Float>(
        src: &Source<'_, T>,
        taps: &Taps<T>,
        space: Rect,
        first: usize,
        band: &mut [T],
        out_width: usize,
        ring: &mut Vec<T>,
    ) {
        let (kw, kh) = taps.size;
        let (cx, cy) = ((kw / 2) as i64, (kh / 2) as i64);
        let sw = space.width;
        let n = sw + kw - 1;
        if ring.len() < kh * n {
            ring.resize(kh * n, T::default());
        }
        let mut offsets: Vec<Tap<T>> = Vec::with_capacity(taps.taps.len());
        let rows = band.len() / out_width;
        for (r, orow) in band.chunks_exact_mut(out_width).enumerate() {
            // Output row `py` reads region rows `py - cy ..= py + cy`.
            let py = (first + r) as i64;
            let fresh = if r == 0 { py - cy } else { py + cy };
            for sy in fresh..=py + cy {
                let slot = sy.rem_euclid(kh as i64) as usize;
                gather(src, sy, -cx, &mut ring[slot * n..(slot + 1) * n]);
            }
            // The row the next output row gathers: from memory while this
            // one is computed (see `split`).
            if let Some(next) = src.row(py + cy + 1).filter(|_| r + 1 < rows) {
                for line in next.chunks(64 / std::mem::size_of::<T>()) {
                    super::simd::prefetch(line.as_ptr());
                }
            }
            offsets.clear();
            for &(j, i, k) in &taps.taps {
                let slot = (py - cy + j as i64).rem_euclid(kh as i64) as usize;
                offsets.push(Tap::new(slot * n + i, k));
            }
            let out = &mut orow[space.x..space.x + sw];
            let ring = &ring[..kh * n];
            let lanes = BLOCK_BYTES / std::mem::size_of::<T>();
            let mut blocks = out.chunks_exact_mut(lanes);
            // Offsets are below `(kh - 1) · n + kw`, and the blocks end by
            // column `sw`: each block's reads end within the ring.
            assert!(offsets.iter().all(|t| t.offset + sw <= ring.len()));
            for (b, o) in blocks.by_ref().enumerate() {
                let x = b * lanes;
                // SAFETY: asserted above, `x + lanes <= sw`.
                match lanes {
                    64 => unsafe { block::<T, 64>(ring, &offsets, x, taps.scale, o) },
                    32 => unsafe { block::<T, 32>(ring, &offsets, x, taps.scale, o) },
                    _ => unreachable!("bug: {lanes} lanes per block"),
                }
            }
            let tail = blocks.into_remainder();
            let x0 = sw - tail.len();
            for (l, o) in tail.iter_mut().enumerate() {
                let first = offsets[0];
                let mut acc = first.k * ring[first.offset + x0 + l];
                for t in &offsets[1..] {
                    acc = t.add(acc, ring[t.offset + x0 + l]);
                }
                *o = match taps.scale {
                    Some(s) => acc * s,
                    None => acc,
                };
            }
        }
    }
}

/// `N` outputs from column `x` (space-relative) with their
/// accumulators in registers: the first tap's product, then per tap
/// `acc + k · row[x + i ..]`.
///
/// # Safety
/// Every offset plus `x + N` is within `ring`, and `out` holds `N`
/// values.
#[inline(always)]
unsafe fn block<T: Float, const N: usize>(
    ring: &[T],
    taps: &[Tap<T>],
    x: usize,
    scale: Option<T>,
    out: &mut [T],
) {
    debug_assert!(taps.iter().all(|t| t.offset + x + N <= ring.len()));
    let mut acc = [T::default(); N];
    let first = taps[0];
    // SAFETY: the caller's contract.
    let row = unsafe { &*ring.as_ptr().add(first.offset + x).cast::<[T; N]>() };
    for (a, &v) in acc.iter_mut().zip(row) {
        *a = first.k * v;
    }
    for t in &taps[1..] {
        // SAFETY: the caller's contract.
        let row = unsafe { &*ring.as_ptr().add(t.offset + x).cast::<[T; N]>() };
        match t.unit {
            Some(true) => {
                for (a, &v) in acc.iter_mut().zip(row) {
                    *a = *a + v;
                }
            }
            Some(false) => {
                for (a, &v) in acc.iter_mut().zip(row) {
                    *a = *a - v;
                }
            }
            None => {
                for (a, &v) in acc.iter_mut().zip(row) {
                    *a = *a + t.k * v;
                }
            }
        }
    }
    if let Some(s) = scale {
        for a in &mut acc {
            *a = *a * s;
        }
    }
    out.copy_from_slice(&acc);
}

/// Region row `sy`, columns `q0 ..` `q0 + out.len()`, through the boundary
/// condition into `out`.
#[inline(always)]
fn gather<T: Float>(src: &Source<'_, T>, sy: i64, q0: i64, out: &mut [T]) {
    let Some(row) = src.row(sy) else {
        out.fill(src.constant);
        return;
    };
    let w = row.len() as i64;
    let lo = (-q0).clamp(0, out.len() as i64) as usize;
    let hi = (w - q0).clamp(lo as i64, out.len() as i64) as usize;
    if lo < hi {
        let q = (q0 + lo as i64) as usize;
        out[lo..hi].copy_from_slice(&row[q..q + hi - lo]);
    }
    for i in (0..lo).chain(hi..out.len()) {
        out[i] = src.at(row, q0 + i as i64);
    }
}
