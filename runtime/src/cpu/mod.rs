//! The native CPU backend.
//!
//! `#[kernel_body]` compiles each kernel body as ordinary Rust
//! ([`KernelBody::cpu_pixel`]), generic over a [`ReadMode`]: with
//! [`Interior`] accessor reads are unchecked, with [`Border`] every read
//! applies the accessor's boundary condition, and `LeftRight`/`TopBottom`
//! check one axis only. A launch:
//!
//! 1. refuses an output image that an accessor reads (the bands below write
//!    it while other threads read the inputs);
//! 2. takes each accessor's footprint from the IR (cached per kernel type and
//!    slots, see [`plan`]) and computes the [`interior`]: the rectangle of
//!    output pixels whose reads all stay inside every accessor's region;
//! 3. runs a kernel whose body is one convolution with a rank-1 mask, or
//!    one sum, minimum or maximum over a whole domain (a box, an erosion, a
//!    dilation), possibly times a factor, as two
//!    one-dimensional passes ([`separable`]) and returns, unless the launch
//!    is small; a body whose weighted window sums all have rank-1 masks
//!    (and whose other reads are at offset 0) runs its sums in two passes
//!    and the rest of the body row by row ([`split`]; the compiled body
//!    around sums it is given, [`given`]), as it does with
//!    reductions over windows that step 5 cannot write out, tap by tap
//!    across each row ([`taps`]); `iterate`s run tap by tap across blocks
//!    of a row where the direct path would loop over their taps per pixel
//!    or call `exp` per tap ([`split`], [`exp`]);
//! 4. splits the output rows into bands run in parallel by rayon (small
//!    launches stay on the calling thread). A row whose reads leave the
//!    image vertically runs `Border` on its corners and `TopBottom` between
//!    them; any other row runs `LeftRight` on its left and right strips and
//!    `Interior` over the middle slice, in the loop shape the plan chose for
//!    the body ([`plan::LoopShape`]), which LLVM vectorises where the body
//!    allows;
//! 5. for a kernel with windows whose size is not in their type (a
//!    `Domain`, a `Mask<T>`), runs the body instantiated for the window
//!    shape the launch proves (every window 3x3, 5x5 or 7x7, domains full,
//!    see [`window_shape`]), so that `reduce`, `convolve` and `iterate` get
//!    their positions written out as for a mask of fixed size;
//! 6. for a body whose `min`/`max` operands all come from reads by
//!    order-keeping operations ([`plain_extremes`]), runs each interior row
//!    whose source rows hold neither NaN nor negative zero ([`row_scan`])
//!    in [`InteriorPlain`]: `min` and `max` are then one `minps`/`maxps`,
//!    with the same bits as Rust's NaN-aware forms;
//! 7. for a kernel with an interpolating accessor, whose reads map output
//!    pixels to other positions, bounds the interior by the other
//!    accessors' reads and runs it one pixel at a time in
//!    [`InteriorInterpolating`]: the interpolating reads check their taps
//!    inline there, the others read unchecked; and where every tap of
//!    every interpolating read lies inside ([`taps_inside`]), in
//!    [`hipacc_core::cpu::InteriorTapsInside`], which checks nothing.

mod dense;
mod exp;
pub(crate) mod fused;
mod given;
mod interior;
#[cfg(test)]
mod interpolating_tests;
mod plain_extremes;
mod plan;
pub(crate) mod replay;
mod row_scan;
mod separable;
pub(crate) mod simd;
mod split;
mod taps;
mod taps_inside;

use crate::Result;
use hipacc_core::cpu::{
    AnyShape, Border, FullShape, Interior as Unchecked, InteriorInterpolating, InteriorPlain,
    LeftRight, ReadMode, Rolled, TopBottom, WindowShape,
};
use hipacc_core::{Bindings, Interpolation, IterationSpace, Kernel, KernelBody};
use interior::Interior;
use plan::LoopShape;
use rayon::prelude::*;

/// How many output rows ahead a launch that scans its rows for NaN and
/// negative zero ([`row_scan`]) prefetches the rows the scan reads. One
/// row ahead left the scan waiting on memory (a fifth of a 3x3 median's
/// samples); two to four were level with each other. Alternating runs
/// of `suite-ratios --only median3 --rounds 3 --runs 15` (2048², 2
/// threads), four of each: 1.73 to 2.06 ms one row ahead, 1.65 to 1.80 two
/// rows ahead, 1.70 to 1.76 three, 1.72 to 1.75 four.
const SCAN_AHEAD: usize = 2;

/// Output pixels per band: enough to amortise the task, few enough that a
/// band's input rows stay in cache (32 rows of a 2048-wide image).
const BAND_PIXELS: usize = 64 * 1024;

/// Interior pixels per step of [`LoopShape::Lanes`]: two SSE vectors of f32.
const LANES: usize = 8;

/// Runs `kernel` over `space` on the CPU, on the calling thread when it has
/// fewer than `serial_pixels` pixels.
pub(crate) fn execute<K: Kernel>(
    kernel: &K,
    space: &IterationSpace<K::Output>,
    serial_pixels: usize,
) -> Result<()> {
    replay::borrowed(K::NAME);
    Ready::new(kernel, space, serial_pixels)?.run(kernel, space)
}

/// A launch with the host's work done: the bindings checked, the plan
/// looked up, the interior and the paths' set-up computed. A recording
/// ([`replay`]) keeps it and runs it again.
pub(crate) struct Ready {
    prepared: Prepared,
    bindings: Bindings,
    serial: bool,
    /// Rows per band.
    band: usize,
    /// Whether the launch tries the separable path (not for launches small
    /// enough to run on one thread: two passes over a few rows gain nothing).
    separable: bool,
    /// The two-pass program of the window sums, when it runs.
    split: Option<(std::sync::Arc<split::Program>, split::Setup)>,
}

impl Ready {
    /// The host's work for `kernel` over `space` (see [`execute`]).
    pub(crate) fn new<K: Kernel>(
        kernel: &K,
        space: &IterationSpace<K::Output>,
        serial_pixels: usize,
    ) -> Result<Ready> {
        let prepared = prepare(kernel, space)?;
        let bindings = kernel.bindings();
        let rect = prepared.rect;
        let serial = rect.width * rect.height < serial_pixels;
        // Small convolutions run directly on this thread: two passes over a
        // few rows gain nothing.
        let separable = prepared.plan.convolution.is_some() && !serial;
        let band = if serial {
            rect.height.max(1)
        } else {
            band_rows(rect.width, rect.height)
        };
        let split = prepared.split(kernel);
        Ok(Ready {
            prepared,
            bindings,
            serial,
            band,
            separable,
            split,
        })
    }

    /// Runs the launch: `kernel` and `space` are those it was made for.
    pub(crate) fn run<K: Kernel>(
        &self,
        kernel: &K,
        space: &IterationSpace<K::Output>,
    ) -> Result<()> {
        let (prepared, bindings) = (&self.prepared, &self.bindings);
        let (rect, width, band, serial) = (prepared.rect, prepared.width, self.band, self.serial);
        if let Some(conv) = prepared.plan.convolution.filter(|_| self.separable) {
            let mut out = space.image().write()?;
            if separable::run(conv, bindings, &mut out, width, rect)? {
                return Ok(());
            }
        }
        if let Some((program, setup)) = &self.split {
            let views = match program.given(bindings, rect) {
                true => Some(kernel.cpu_views_in(rect)?),
                false => None,
            };
            let given = views.as_ref().map(|v| given::outer::<K>(v, rect.x));
            let outer = given.as_ref().map(|g| g as split::Outer<'_>);
            let mut out = space.image().write()?;
            let Some(rows) = as_f32(&mut out[rect.y * width..(rect.y + rect.height) * width])
            else {
                unreachable!("bug: an f32 program for another output type");
            };
            let run = |(i, chunk): (usize, &mut [f32])| {
                let y0 = rect.y + i * band;
                let ys = y0..y0 + chunk.len() / width;
                split::run_rows(program, setup, bindings, rect, width, ys, chunk, outer)
            };
            return if serial {
                rows.chunks_mut(band * width).enumerate().try_for_each(run)
            } else {
                rows.par_chunks_mut(band * width)
                    .enumerate()
                    .try_for_each(run)
            };
        }
        let views = kernel.cpu_views_in(rect)?;
        let scan = match (&prepared.plan.plain_extremes, K::EXTREMES) {
            (Some(checked), true) if checked.params_allow(&bindings.params) => {
                row_scan::RowScan::new(bindings, &checked.accessors, &prepared.plan.reaches, rect)
            }
            _ => None,
        };
        let mut out = space.image().write()?;
        let rows = &mut out[rect.y * width..(rect.y + rect.height) * width];
        let launch = Launch {
            scan: scan.as_ref(),
            ..prepared.launch(rect.y, band, serial)
        };
        launch.run_in_shape::<K>(prepared.window, &views, rows);
        Ok(())
    }
}

/// What every launch of a kernel over a space needs, worked out once: the
/// plan, the interior and the window shape.
pub(crate) struct Prepared {
    plan: plan::Plan,
    inner: Interior,
    /// Where every interpolating read's taps lie inside (see
    /// [`taps_inside`]); empty without interpolating accessors.
    taps: Interior,
    /// See [`window_shape`]; `None` also for kernels without run-time
    /// sized windows.
    window: Option<(u32, u32)>,
    /// The kernel has run-time sized windows that the direct path does not
    /// write out (see [`Launch::run_in_shape`]): its window reductions run
    /// tap by tap across rows where [`split`] can run the body.
    per_tap: bool,
    /// The iteration space.
    pub(crate) rect: hipacc_core::Rect,
    /// Row stride of the output image.
    pub(crate) width: usize,
}

/// Checks `kernel`'s bindings against the output of `space` and plans the
/// launch.
pub(crate) fn prepare<K: Kernel>(
    kernel: &K,
    space: &IterationSpace<K::Output>,
) -> Result<Prepared> {
    let bindings = kernel.bindings();
    check_aliasing::<K>(&bindings, space.image().id())?;
    let plan = plan::plan(kernel, &bindings)?;
    let rect = space.rect();
    // Interpolating accessors check their own reads in the interior
    // ([`InteriorInterpolating`]): the others' reads bound it.
    let inner = interior::interior(
        rect,
        bindings
            .accessors
            .iter()
            .zip(plan.reaches.iter().copied())
            .filter(|(a, _)| a.slot.interpolation == Interpolation::None)
            .map(|(a, reach)| (a.region, reach)),
    );
    let taps = taps_inside::taps_inside(
        rect,
        bindings
            .accessors
            .iter()
            .zip(plan.interpolated.iter().copied())
            .map(|(a, reach)| (a.slot.interpolation, a.region, reach)),
    );
    let window = if K::RUNTIME_WINDOWS {
        window_shape(&bindings)
    } else {
        None
    };
    Ok(Prepared {
        plan,
        inner,
        taps,
        window,
        per_tap: K::RUNTIME_WINDOWS && !written_out(window),
        rect,
        width: space.image().width(),
    })
}

impl Prepared {
    /// Computes rows `ys` into `rows` as [`execute`] does when it runs
    /// the kernel as a separable convolution ;
    /// `Ok(false)`, computing nothing, where [`execute`] would not.
    pub(crate) fn separable_rows<K: Kernel>(
        &self,
        kernel: &K,
        ys: std::ops::Range<usize>,
        rows: &mut [K::Output],
    ) -> Result<bool> {
        let Some(conv) = self.plan.convolution else {
            return Ok(false);
        };
        let bindings = kernel.bindings();
        separable::run_rows(conv, &bindings, rows, self.width, self.rect, ys)
    }

    /// The program and launch values when the kernel's window sums run in
    /// two passes ([`split`]): its masks separate.
    pub(crate) fn split<K: Kernel>(
        &self,
        kernel: &K,
    ) -> Option<(std::sync::Arc<split::Program>, split::Setup)> {
        let program = self.plan.split.clone()?;
        let setup = split::setup(&program, &kernel.bindings(), self.per_tap)?;
        Some((program, setup))
    }

    /// Computes rows `ys` into `rows` as [`execute`] does when the kernel's
    /// window sums run in two passes; `Ok(false)`, computing nothing, where
    /// [`execute`] would not. Reads through the row windows registered on
    /// this thread.
    pub(crate) fn split_rows<K: Kernel>(
        &self,
        kernel: &K,
        ys: std::ops::Range<usize>,
        rows: &mut [K::Output],
    ) -> Result<bool> {
        let Some((program, setup)) = self.split(kernel) else {
            return Ok(false);
        };
        let Some(rows) = as_f32(rows) else {
            return Ok(false);
        };
        let bindings = kernel.bindings();
        let views = match program.given(&bindings, self.rect) {
            true => Some(kernel.cpu_views_in(self.rect)?),
            false => None,
        };
        let given = views.as_ref().map(|v| given::outer::<K>(v, self.rect.x));
        let outer = given.as_ref().map(|g| g as split::Outer<'_>);
        let (rect, width) = (self.rect, self.width);
        split::run_rows(&program, &setup, &bindings, rect, width, ys, rows, outer)?;
        Ok(true)
    }

    /// The image a separable convolution reads, when the kernel may run as one.
    pub(crate) fn separable_input<K: Kernel>(&self, kernel: &K) -> Option<u64> {
        let conv = self.plan.convolution?;
        Some(kernel.bindings().accessors[conv.acc].image.id())
    }

    /// Whether rows of the launch may run as two passes ([`split`]), not
    /// pixel by pixel.
    pub(crate) fn splits(&self) -> bool {
        self.plan.split.is_some()
    }

    /// Computes columns `cols` of row `y` into `row` (the whole output row),
    /// on this thread, exactly as [`Prepared::run_rows`] computes them.
    pub(crate) fn run_cols<K: KernelBody>(
        &self,
        views: &K::CpuViews<'_>,
        y: usize,
        cols: std::ops::Range<usize>,
        row: &mut [K::Output],
    ) {
        debug_assert!(
            self.rect.x <= cols.start
                && cols.end <= self.rect.x + self.rect.width
                && row.len() == self.width,
            "bug: columns {cols:?} of a space at columns {}..{}",
            self.rect.x,
            self.rect.x + self.rect.width
        );
        if cols.is_empty() {
            return;
        }
        let launch = Launch {
            cols,
            ..self.launch(y, 1, true)
        };
        launch.run_in_shape::<K>(self.window, views, row);
    }

    /// A launch from row `y0` in bands of `band` rows.
    fn launch(&self, y0: usize, band: usize, serial: bool) -> Launch<'_> {
        Launch {
            inner: &self.inner,
            taps: &self.taps,
            shape: self.plan.shape,
            interpolating: self.plan.interpolating,
            cols: self.rect.x..self.rect.x + self.rect.width,
            y0,
            width: self.width,
            band,
            serial,
            scan: None,
        }
    }

    /// Computes rows `ys` of the space, on this thread, into `rows` (whole
    /// rows of the output's width from row `ys.start`), exactly as
    /// [`execute`] computes them on its direct path.
    pub(crate) fn run_rows<K: KernelBody>(
        &self,
        views: &K::CpuViews<'_>,
        ys: std::ops::Range<usize>,
        rows: &mut [K::Output],
    ) {
        debug_assert!(
            self.rect.y <= ys.start
                && ys.end <= self.rect.y + self.rect.height
                && rows.len() == ys.len() * self.width,
            "bug: rows {ys:?} of a space at rows {}..{}",
            self.rect.y,
            self.rect.y + self.rect.height
        );
        if ys.is_empty() {
            return;
        }
        self.launch(ys.start, ys.len(), true)
            .run_in_shape::<K>(self.window, views, rows);
    }
}

/// `rows` as f32 pixels, when they are.
fn as_f32<T: 'static>(rows: &mut [T]) -> Option<&mut [f32]> {
    (std::any::TypeId::of::<T>() == std::any::TypeId::of::<f32>()).then(|| {
        // SAFETY: `T` is `f32` (same type id): the slice as itself.
        unsafe { std::slice::from_raw_parts_mut(rows.as_mut_ptr().cast::<f32>(), rows.len()) }
    })
}

/// `Some((w, h))` when every mask of the launch is `w x h` and every domain
/// is `w x h` with all positions enabled: the promise a
/// [`FullShape`] makes to the kernel body. A mask whose size is in its type
/// is included: its type then agrees.
fn window_shape(bindings: &Bindings) -> Option<(u32, u32)> {
    let masks = bindings.masks.iter().map(|m| (m.slot.width, m.slot.height));
    let domains = bindings
        .domains
        .iter()
        .map(|d| d.enabled.iter().all(|&e| e).then_some((d.width, d.height)));
    let mut sizes = masks.map(Some).chain(domains);
    let first = sizes.next()??;
    sizes.all(|s| s == Some(first)).then_some(first)
}

/// Whether [`Launch::run_in_shape`] runs the window shape `window` with
/// its positions written out.
fn written_out(window: Option<(u32, u32)>) -> bool {
    matches!(window, Some((3, 3) | (5, 5) | (7, 7)))
}

/// How a launch splits its output rows, and what each row needs.
struct Launch<'p> {
    inner: &'p Interior,
    /// Where the interpolating reads' taps lie inside.
    taps: &'p Interior,
    shape: LoopShape,
    /// The interior reads in [`InteriorInterpolating`].
    interpolating: bool,
    /// The output columns.
    cols: std::ops::Range<usize>,
    /// The first output row.
    y0: usize,
    /// Row stride of the output image.
    width: usize,
    /// Rows per band.
    band: usize,
    /// Run on the calling thread.
    serial: bool,
    /// Where the body's `min` and `max` may be the plain compare-and-select:
    /// which interior rows read neither NaN nor negative zero.
    scan: Option<&'p row_scan::RowScan<'p>>,
}

impl Launch<'_> {
    /// Runs [`Launch::run`] in the window shape `window` (see
    /// [`window_shape`]): windows whose size is not in their type get the
    /// loops of a known size where the launch proves one.
    fn run_in_shape<K: KernelBody>(
        &self,
        window: Option<(u32, u32)>,
        views: &K::CpuViews<'_>,
        rows: &mut [K::Output],
    ) {
        // Instantiated only for kernels that have such windows.
        if !K::RUNTIME_WINDOWS {
            return self.run::<K, AnyShape>(views, rows);
        }
        match window {
            Some((3, 3)) => self.run::<K, FullShape<3, 3>>(views, rows),
            Some((5, 5)) => self.run::<K, FullShape<5, 5>>(views, rows),
            Some((7, 7)) => self.run::<K, FullShape<7, 7>>(views, rows),
            _ => self.run::<K, AnyShape>(views, rows),
        }
    }

    /// Computes the output `rows` (whole image rows from `y0`) with the
    /// window shape `S`, which the caller has checked (see
    /// [`window_shape`]).
    fn run<K: KernelBody, S: WindowShape>(&self, views: &K::CpuViews<'_>, rows: &mut [K::Output]) {
        let band = |b: usize, chunk: &mut [K::Output]| {
            let rows = chunk.len().div_ceil(self.width);
            for (i, row) in chunk.chunks_mut(self.width).enumerate() {
                let y = self.y0 + b * self.band + i;
                let row = &mut row[self.cols.clone()];
                let plain = K::EXTREMES
                    && self.inner.rows.contains(&y)
                    && self.scan.is_some_and(|s| s.clean(y));
                if let Some(scan) = self.scan.filter(|_| K::EXTREMES && i + SCAN_AHEAD < rows) {
                    scan.prefetch(y + SCAN_AHEAD);
                }
                #[cfg(test)]
                plain_extremes::PLAIN_ROWS.with(|n| n.set(n.get() + usize::from(plain)));
                if self.interpolating {
                    run_row::<K, S, InteriorInterpolating>(
                        views,
                        self.inner,
                        self.taps,
                        self.shape,
                        self.cols.start,
                        y,
                        row,
                    );
                } else if plain {
                    run_row::<K, S, InteriorPlain>(
                        views,
                        self.inner,
                        self.taps,
                        self.shape,
                        self.cols.start,
                        y,
                        row,
                    );
                } else {
                    run_row::<K, S, Unchecked>(
                        views,
                        self.inner,
                        self.taps,
                        self.shape,
                        self.cols.start,
                        y,
                        row,
                    );
                }
            }
        };
        if self.serial {
            band(0, rows);
            return;
        }
        rows.par_chunks_mut(self.width * self.band)
            .enumerate()
            .for_each(|(b, chunk)| band(b, chunk));
    }
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

/// Computes one output row, or a chunk of one: columns `x0..x0 + row.len()`
/// of row `y`, each part in the read mode of its region (see
/// [`hipacc_core::cpu`]): rows whose reads stay inside vertically run
/// `LeftRight` strips around the unchecked interior, other rows `Border`
/// corners around a `TopBottom` middle. The
/// interior reads in mode `I`: [`Unchecked`], or [`InteriorPlain`] where
/// the launch proved that the body's `min` and `max` see neither NaN nor
/// negative zero there, or [`InteriorInterpolating`] where an accessor
/// interpolates.
fn run_row<K: KernelBody, S: WindowShape, I: ReadMode>(
    views: &K::CpuViews<'_>,
    inner: &Interior,
    taps: &Interior,
    shape: LoopShape,
    x0: usize,
    y: usize,
    row: &mut [K::Output],
) {
    let row_inside = inner.rows.contains(&y);
    if inner.cols.is_empty() {
        if row_inside {
            edge_loop::<K, LeftRight>(views, x0, y, row);
        } else {
            edge_loop::<K, Border>(views, x0, y, row);
        }
        return;
    }
    // The interior columns of the row's part.
    let x1 = x0 + row.len();
    let a = inner.cols.start.clamp(x0, x1);
    let b = inner.cols.end.clamp(a, x1);
    let (left, rest) = row.split_at_mut(a - x0);
    let (middle, right) = rest.split_at_mut(b - a);
    if !row_inside {
        edge_loop::<K, Border>(views, x0, y, left);
        edge_loop::<K, TopBottom>(views, a, y, middle);
        edge_loop::<K, Border>(views, b, y, right);
        return;
    }
    edge_loop::<K, LeftRight>(views, x0, y, left);
    let (xs, yi) = (a as isize, y as isize);
    if I::INTERPOLATING {
        // One pixel at a time, windows as loops: each interpolating read
        // is inlined once per read of the body, not once per window
        // position and loop. The columns whose taps all lie inside read
        // them unchecked.
        let (fa, fb) = match taps.rows.contains(&y) {
            true => {
                let fa = taps.cols.start.clamp(a, b);
                (fa, taps.cols.end.clamp(fa, b))
            }
            false => (b, b),
        };
        let (checked, rest) = middle.split_at_mut(fa - a);
        let (inside, after) = rest.split_at_mut(fb - fa);
        #[cfg(test)]
        interpolating_tests::PIXELS.with(|n| n.set(n.get() + (b - a)));
        #[cfg(test)]
        interpolating_tests::TAPS_INSIDE.with(|n| n.set(n.get() + inside.len()));
        // One instance of the checked loop for both ends.
        for (x, part) in [(a, checked), (fb, after)] {
            plain_loop::<K, Rolled, I>(views, x as isize, yi, part);
        }
        plain_loop::<K, Rolled, I::TapsInside>(views, fa as isize, yi, inside);
        edge_loop::<K, LeftRight>(views, b, y, right);
        return;
    }
    // The first few pixels run alone: the vector loops then start at a
    // 32-byte aligned output address, so that no vector store (AVX2 at
    // most) splits a cache line, and the pairs at an even column.
    let head = match shape {
        LoopShape::Pairs => a % 2,
        _ => middle.as_ptr().align_offset(32),
    };
    let (first, rest) = middle.split_at_mut(head.min(middle.len()));
    interior_loop::<K, S, I>(LoopShape::Plain, views, xs, yi, first);
    let xs = xs + first.len() as isize;
    interior_loop::<K, S, I>(shape, views, xs, yi, rest);
    edge_loop::<K, LeftRight>(views, b, y, right);
}

/// Computes `row` (columns from `x0`) with the boundary condition applied
/// on the axes `M` checks, its window loops [`Rolled`]: each read through
/// the boundary condition is then inlined once instead of called per
/// position. Measured (`local-ratios`, 2048² f32): a 5x5 domain sum went
/// from 1.28x to 1.03x the time of its 25 taps written out, the border
/// strips having cost a quarter of its time.
fn edge_loop<K: KernelBody, M: ReadMode>(
    views: &K::CpuViews<'_>,
    x0: usize,
    y: usize,
    row: &mut [K::Output],
) {
    for (i, out) in row.iter_mut().enumerate() {
        // SAFETY: every mode but `Interior` checks its reads, so `cpu_pixel`
        // has no precondition in `M`; `run_row` picks `M` so that the axes
        // it leaves unchecked read inside.
        *out = unsafe { K::cpu_pixel_in::<M, Rolled>(views, (x0 + i) as isize, y as isize) };
    }
}

simd::dispatch! {
    /// Computes the interior pixels `row` (columns from `xs`) in the loop
    /// `shape`, compiled for AVX2 where the CPU has it ([`simd`]).
    fn interior_loop<K: KernelBody, S: WindowShape, I: ReadMode>(
        shape: LoopShape,
        views: &K::CpuViews<'_>,
        xs: isize,
        y: isize,
        row: &mut [K::Output],
    ) {
        match shape {
            LoopShape::Plain => plain_loop::<K, S, I>(views, xs, y, row),
            LoopShape::Lanes => lanes_loop::<K, S, I>(views, xs, y, row),
            LoopShape::Pairs => pairs_loop::<K, S, I>(views, xs, y, row),
        }
    }
}

/// The [`LoopShape::Plain`] interior loop: one pixel per iteration. The
/// interior loops read in mode `I`, [`Unchecked`] or [`InteriorPlain`].
#[inline(always)]
fn plain_loop<K: KernelBody, S: WindowShape, I: ReadMode>(
    views: &K::CpuViews<'_>,
    xs: isize,
    y: isize,
    row: &mut [K::Output],
) {
    for (i, out) in row.iter_mut().enumerate() {
        // SAFETY: the caller passes pixels of the interior, computed by
        // `interior::interior` as the pixels at which every offset of every
        // accessor's footprint reads inside that accessor's region; the views
        // were made from the same bindings and space origin.
        *out = unsafe { K::cpu_pixel_in::<I, S>(views, xs + i as isize, y) };
    }
}

/// The [`LoopShape::Lanes`] interior loop: [`LANES`] pixels per step into a
/// local array, eight copies of the body with consecutive loads, which
/// LLVM's SLP vectoriser turns into vector code where the loop vectoriser
/// gives up (an unrolled 5x5 mask).
#[inline(always)]
fn lanes_loop<K: KernelBody, S: WindowShape, I: ReadMode>(
    views: &K::CpuViews<'_>,
    xs: isize,
    y: isize,
    row: &mut [K::Output],
) {
    let done = row.len() / LANES * LANES;
    let mut lanes = row.chunks_exact_mut(LANES);
    for (c, chunk) in lanes.by_ref().enumerate() {
        let x = xs + (c * LANES) as isize;
        // Written out: `array::from_fn` goes through a function that LLVM
        // does not inline for a large body, and then nothing vectorises.
        macro_rules! lanes {
            ($($k:literal)*) => {
                // SAFETY: as in `plain_loop`.
                [$(unsafe { K::cpu_pixel_in::<I, S>(views, x + $k, y) }),*]
            };
        }
        let values: [K::Output; LANES] = lanes!(0 1 2 3 4 5 6 7);
        chunk.copy_from_slice(&values);
    }
    for (i, out) in lanes.into_remainder().iter_mut().enumerate() {
        // SAFETY: as in `plain_loop`.
        *out = unsafe { K::cpu_pixel_in::<I, S>(views, xs + (done + i) as isize, y) };
    }
}

/// The [`LoopShape::Pairs`] interior loop, from an even column `xs`: two
/// pixels per step, at columns `2h` and `2h + 1`, so that LLVM knows the
/// parity of each: `x() % 2` folds to a constant, and a body that branches
/// on it (upsampling, red-black colours) keeps only the work of each phase.
///
/// `h` counts in `i32` and the columns are formed without wrapping (the
/// interior lies within [`interior::I32_SPAN`] of the origin), as the body
/// sees them through `x()`: `x() / 2` then folds back to `h`, and reads of
/// the coarser grid at `x() / 2` or of this one at `x()` are affine in
/// `h`, so they vectorise as plain or interleaved loads instead of one
/// load per lane.
#[inline(always)]
fn pairs_loop<K: KernelBody, S: WindowShape, I: ReadMode>(
    views: &K::CpuViews<'_>,
    xs: isize,
    y: isize,
    row: &mut [K::Output],
) {
    debug_assert!(xs >= 0 && xs % 2 == 0, "bug: pairs start at column {xs}");
    debug_assert!(
        xs as usize + row.len() <= interior::I32_SPAN,
        "bug: pairs past the i32 span at column {xs}"
    );
    let done = row.len() - row.len() % 2;
    let h0 = (xs / 2) as i32;
    let mut pairs = row.chunks_exact_mut(2);
    for (h, pair) in (h0..h0 + (done / 2) as i32).zip(pairs.by_ref()) {
        // SAFETY: `2h + 1` is a column of the interior, below `I32_SPAN`.
        let x = unsafe { h.unchecked_mul(2) };
        // SAFETY: as in `plain_loop`.
        pair[0] = unsafe { K::cpu_pixel_in::<I, S>(views, x as isize, y) };
        // SAFETY: as in `plain_loop`; `x + 1` is as above.
        pair[1] = unsafe { K::cpu_pixel_in::<I, S>(views, x.unchecked_add(1) as isize, y) };
    }
    for (i, out) in pairs.into_remainder().iter_mut().enumerate() {
        // SAFETY: as in `plain_loop`.
        *out = unsafe { K::cpu_pixel_in::<I, S>(views, xs + (done + i) as isize, y) };
    }
}
