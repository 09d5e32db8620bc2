//! Pipelines on the CPU, fused per row strip.
//!
//! The last stage's rows are split into strips run in parallel. For each
//! strip, every stage fused into it computes just the rows of its output
//! that the strip needs into a scratch buffer of the worker (a few hundred
//! KiB, so it stays in cache), recomputing the halo rows that neighbouring
//! strips compute too, and its consumers read them from there through a
//! [`RowWindow`]: Halide's `compute_at` of every producer at the strip of
//! the output. A point-wise consumer so reads its producer's rows while
//! they are still in cache, as if folded into the producer's pass.
//!
//! The rows a strip needs of an intermediate are those its consumers' reads
//! land on after the consumers' boundary conditions: a read outside the
//! intermediate follows its accessor's mode (Mirror and Repeat at any
//! distance map it to a row inside, which is then computed; Constant reads
//! no row). Each row is computed by the code [`super::execute`] runs for
//! it, so the fused result equals the unfused one bit for bit.
//!
//! The strips are those of the output with the most rows. An output over
//! a space of another height computes its rows in proportion, and an
//! output that later stages read (the pipeline's result and their input)
//! is computed into scratch like an intermediate, with the rows its
//! readers need beyond the strip, and its strip's rows copied into its
//! image. Where a reader of an output cannot run per strip (it runs
//! whole, or reads rows no strip holds), the stages run one by one.
//! Several outputs take turns a few rows at a time within a strip, and
//! those computed pixel by pixel a chunk of columns at a time within each
//! row, so that the next output reads the images they share from L1.
//!
//! A separable convolution (see [`super::separable`]) is computed per strip
//! by its own two passes, as unfused; it reads its input directly, so that
//! input is not fused. A stage runs whole, before the strips ("root", as
//! unfused), when it cannot be fused: a separable convolution reads it, it
//! writes only part of its image, a consumer reads it at positions that
//! are not constant offsets (interpolation, computed offsets), or a root
//! stage reads it.

use super::{prepare, Prepared};
use crate::{Device, Error, Execute, Result};
use hipacc_core::image::WriteGuard;
use hipacc_core::row_window::{with_row_windows, RowWindow};
use hipacc_core::{BoundaryMode, IterationSpace, Kernel, Rect};
use rayon::prelude::*;
use std::any::Any;
use std::cell::RefCell;
use std::ops::Range;

/// A kernel with its iteration space, as a stage of a pipeline.
pub(crate) trait Stage: Sync {
    /// The kernel's name, for messages.
    fn name(&self) -> &'static str;
    /// Runs the stage whole on `device`, as [`Execute::execute`] does.
    fn execute(&self, device: &Device) -> Result<()>;
    /// The stage as one launch (IR, bindings, output and space), for the
    /// pipelines of GPU devices.
    fn launch(&self) -> Result<crate::folded::StageLaunch>;
    /// What the schedule needs to know of the stage, on a CPU device that
    /// runs launches of fewer than `serial_pixels` on one thread.
    fn info(&self, serial_pixels: usize) -> Result<StageInfo>;
    /// Computes rows `ys` of the stage's output into `scratch`, reading
    /// through `windows`, and returns the window onto them.
    fn rows_into(
        &self,
        info: &StageInfo,
        ys: Range<usize>,
        windows: &[RowWindow],
        scratch: &mut Option<Box<dyn Any + Send>>,
    ) -> Result<RowWindow>;
    /// Locks the stage's output for writing, as a pipeline output whose
    /// strips are computed in place.
    fn lock_output<'s>(&'s self, info: &'s StageInfo) -> Result<Box<dyn OutputRows + 's>>;
}

/// A pipeline output's image, locked for writing while its strips run.
pub(crate) trait OutputRows {
    /// The image rows `strips` (consecutive ranges that cover the stage's
    /// space, top first), each a task that computes its rows into the
    /// image.
    fn strips<'g>(&'g mut self, strips: &[Range<usize>]) -> Vec<Box<dyn StripTask + 'g>>;
}

/// One strip of a pipeline output.
pub(crate) trait StripTask: Send {
    /// Computes rows `ys` of the strip into the output, reading through
    /// `windows`.
    fn compute(&mut self, ys: Range<usize>, windows: &[RowWindow]) -> Result<()>;
    /// Copies rows `ys` of the strip from `scratch`, the stage's scratch
    /// (see [`Stage::rows_into`]) holding its rows from `first`.
    fn copy(&mut self, ys: Range<usize>, scratch: &Option<Box<dyn Any + Send>>, first: usize);
    /// Rows `ys` of the strip, to be computed a chunk of columns at a time
    /// by the returned [`Chunks`], where the stage is
    /// [`StageInfo::chunked`].
    ///
    /// # Safety
    /// Call inside [`with_row_windows`] of the strip's windows, and use the
    /// result only there (its views read through them).
    unsafe fn chunks<'t>(&'t mut self, ys: Range<usize>) -> Result<Box<dyn Chunks + 't>>;
}

/// Some rows of a pipeline output, computed chunk by chunk.
pub(crate) trait Chunks {
    /// The number of rows.
    fn rows(&self) -> usize;
    /// Columns of the output's space.
    fn width(&self) -> usize;
    /// Computes the space's columns `cols` (counted from its first) of
    /// row `i` (counted from the first).
    fn run(&mut self, i: usize, cols: Range<usize>);
}

/// The tasks of one strip, per output: `(stage, task)`.
type OutputTasks<'g> = Vec<(usize, Box<dyn StripTask + 'g>)>;

/// A stage's output and reads.
pub(crate) struct StageInfo {
    /// The output image's id, size, and the iteration space.
    pub(crate) output: (u64, usize, usize),
    pub(crate) space: Rect,
    /// The images read, with the accessor's region, boundary mode and
    /// the rows read (`None`: not affine in the output row).
    pub(crate) reads: Vec<Read>,
    /// The planned launch.
    pub(crate) prepared: Prepared,
    /// The image read, where [`super::execute`] would try the stage as a
    /// separable convolution (which reads its input directly, so that
    /// input cannot be fused).
    pub(crate) separable_input: Option<u64>,
}

impl StageInfo {
    /// Whether the stage computes its pixels one by one, so that a strip
    /// may compute any chunk of its rows' columns on its own; not a stage
    /// that runs in passes over whole rows (separable, split).
    fn chunked(&self) -> bool {
        self.separable_input.is_none() && !self.prepared.splits()
    }
}

/// One accessor of a stage.
pub(crate) struct Read {
    image: u64,
    region: Rect,
    mode: BoundaryMode,
    /// `(scale, lo, hi)`: output row `p` of the space (counted from its
    /// first row) reads the region's rows `scale · p + [lo, hi]`; `scale`
    /// is 1 for constant offsets, 2 for a kernel that reads a grid twice
    /// its size at `2 y + j` (a restriction).
    rows: Option<(i64, i64, i64)>,
}

/// A worker's scratch: per stage, its buffer and the window onto it.
pub(crate) struct Workspace {
    scratch: Vec<Option<Box<dyn Any + Send>>>,
    windows: Vec<RowWindow>,
    /// The stages computed into scratch for the strip, with the first
    /// image row each holds.
    computed: Vec<(usize, usize)>,
}

thread_local! {
    /// The scratch of this thread's last finished workspace, for the next:
    /// a fresh buffer of a few hundred KiB is fresh pages from the kernel,
    /// zeroed on first touch (measured: 18% of a fused Harris run).
    static SPARE: RefCell<Vec<Option<Box<dyn Any + Send>>>> = const { RefCell::new(Vec::new()) };
}

impl Workspace {
    /// A workspace for `stages` stages, reusing this thread's spare scratch.
    fn new(stages: usize) -> Workspace {
        let mut scratch = SPARE.with(|s| std::mem::take(&mut *s.borrow_mut()));
        scratch.resize_with(stages, || None);
        Workspace {
            scratch,
            windows: Vec::new(),
            computed: Vec::new(),
        }
    }
}

impl Drop for Workspace {
    fn drop(&mut self) {
        let scratch = std::mem::take(&mut self.scratch);
        SPARE.with(|s| *s.borrow_mut() = scratch);
    }
}

/// A kernel and its space.
pub(crate) struct KernelStage<'a, K: Kernel> {
    pub(crate) kernel: &'a K,
    pub(crate) space: &'a IterationSpace<K::Output>,
}

impl<K: Kernel> Stage for KernelStage<'_, K> {
    fn name(&self) -> &'static str {
        K::NAME
    }

    fn execute(&self, device: &Device) -> Result<()> {
        self.kernel.execute(device, self.space)
    }

    fn launch(&self) -> Result<crate::folded::StageLaunch> {
        Ok(crate::folded::StageLaunch {
            name: K::NAME.to_string(),
            ir: self.kernel.ir()?,
            bindings: self.kernel.bindings(),
            output: self.space.image().to_dyn(),
            rect: self.space.rect(),
        })
    }

    fn info(&self, serial_pixels: usize) -> Result<StageInfo> {
        let prepared = prepare(self.kernel, self.space)?;
        let rect = self.space.rect();
        let separable_input = prepared
            .separable_input(self.kernel)
            .filter(|_| rect.width * rect.height >= serial_pixels);
        let bindings = self.kernel.bindings();
        let reads = bindings
            .accessors
            .iter()
            .zip(prepared.plan.reaches.iter())
            .filter_map(|(a, reach)| {
                let rows = match reach {
                    Some(r) if r.x.lo > r.x.hi || r.y.lo > r.y.hi => return None,
                    // Offsets `c · y + [lo, hi]` at absolute row `y`: the
                    // region's row `(1 + c) p + c · y0 + [lo, hi]`.
                    Some(r) if r.y.coef >= 0.0 && r.y.coef.fract() == 0.0 => {
                        let c = r.y.coef as i64;
                        let shift = c * rect.y as i64;
                        Some((1 + c, r.y.lo as i64 + shift, r.y.hi as i64 + shift))
                    }
                    _ => None,
                };
                Some(Read {
                    image: a.image.id(),
                    region: a.region,
                    mode: a.slot.boundary,
                    rows,
                })
            })
            .collect();
        let img = self.space.image();
        Ok(StageInfo {
            output: (img.id(), img.width(), img.height()),
            space: self.space.rect(),
            reads,
            prepared,
            separable_input,
        })
    }

    fn rows_into(
        &self,
        info: &StageInfo,
        ys: Range<usize>,
        windows: &[RowWindow],
        scratch: &mut Option<Box<dyn Any + Send>>,
    ) -> Result<RowWindow> {
        let len = ys.len() * info.prepared.width;
        let buf = match scratch
            .as_mut()
            .and_then(|b| b.downcast_mut::<Vec<K::Output>>())
        {
            Some(buf) => buf,
            None => scratch
                .insert(Box::new(Vec::<K::Output>::new()))
                .downcast_mut()
                .unwrap_or_else(|| unreachable!("bug: a fresh scratch of another type")),
        };
        buf.resize(len, Default::default());
        self.compute(info, ys.clone(), windows, &mut buf[..len])?;
        Ok(RowWindow::new(self.space.image(), ys.start, &buf[..len]))
    }

    fn lock_output<'s>(&'s self, info: &'s StageInfo) -> Result<Box<dyn OutputRows + 's>> {
        Ok(Box::new(LockedOutput {
            stage: self,
            info,
            out: self.space.image().write()?,
        }))
    }
}

/// A kernel stage's output, locked for writing.
struct LockedOutput<'s, 'a, K: Kernel> {
    stage: &'s KernelStage<'a, K>,
    info: &'s StageInfo,
    out: WriteGuard<'s, K::Output>,
}

impl<K: Kernel> OutputRows for LockedOutput<'_, '_, K> {
    fn strips<'g>(&'g mut self, strips: &[Range<usize>]) -> Vec<Box<dyn StripTask + 'g>> {
        let (stage, info) = (self.stage, self.info);
        let (rect, width) = (info.prepared.rect, info.prepared.width);
        let mut rest = &mut self.out[rect.y * width..(rect.y + rect.height) * width];
        let mut tasks = Vec::with_capacity(strips.len());
        for ys in strips {
            let (rows, after) = std::mem::take(&mut rest).split_at_mut(ys.len() * width);
            rest = after;
            tasks.push(Box::new(KernelStrip {
                stage,
                info,
                ys: ys.clone(),
                rows,
            }) as Box<dyn StripTask + 'g>);
        }
        debug_assert!(rest.is_empty(), "bug: strips short of the space");
        tasks
    }
}

/// Rows `ys` of a kernel stage's output.
struct KernelStrip<'g, 'a, K: Kernel> {
    stage: &'g KernelStage<'a, K>,
    info: &'g StageInfo,
    ys: Range<usize>,
    rows: &'g mut [K::Output],
}

impl<K: Kernel> StripTask for KernelStrip<'_, '_, K> {
    fn copy(&mut self, ys: Range<usize>, scratch: &Option<Box<dyn Any + Send>>, first: usize) {
        if ys.is_empty() {
            return;
        }
        let width = self.info.prepared.width;
        let Some(from) = scratch
            .as_ref()
            .and_then(|b| b.downcast_ref::<Vec<K::Output>>())
        else {
            unreachable!("bug: a copied output without its scratch");
        };
        let at = (ys.start - self.ys.start) * width;
        let src = (ys.start - first) * width;
        let n = ys.len() * width;
        self.rows[at..at + n].copy_from_slice(&from[src..src + n]);
    }

    fn compute(&mut self, ys: Range<usize>, windows: &[RowWindow]) -> Result<()> {
        let width = self.info.prepared.width;
        let at = (ys.start - self.ys.start) * width;
        let rows = &mut self.rows[at..at + ys.len() * width];
        self.stage.compute(self.info, ys, windows, rows)
    }

    unsafe fn chunks<'t>(&'t mut self, ys: Range<usize>) -> Result<Box<dyn Chunks + 't>> {
        let width = self.info.prepared.width;
        let at = (ys.start - self.ys.start) * width;
        let kernel: &K = self.stage.kernel;
        Ok(Box::new(KernelChunks::<K> {
            views: kernel.cpu_views_in(self.info.prepared.rect)?,
            prepared: &self.info.prepared,
            rows: &mut self.rows[at..at + ys.len() * width],
            ys,
        }))
    }
}

/// Rows `ys` of a kernel stage's output, computed chunk by chunk on the
/// direct path.
struct KernelChunks<'t, 'k, K: Kernel + 'k> {
    views: K::CpuViews<'k>,
    prepared: &'t super::Prepared,
    ys: Range<usize>,
    rows: &'t mut [K::Output],
}

impl<'k, K: Kernel + 'k> Chunks for KernelChunks<'_, 'k, K> {
    fn rows(&self) -> usize {
        self.ys.len()
    }

    fn width(&self) -> usize {
        self.prepared.rect.width
    }

    fn run(&mut self, i: usize, cols: Range<usize>) {
        let (x, width) = (self.prepared.rect.x, self.prepared.width);
        let row = &mut self.rows[i * width..(i + 1) * width];
        let cols = x + cols.start..x + cols.end;
        self.prepared
            .run_cols::<K>(&self.views, self.ys.start + i, cols, row);
    }
}

impl<K: Kernel> KernelStage<'_, K> {
    /// Computes rows `ys` of the output into `rows`, reading through
    /// `windows`, as [`super::execute`] computes them.
    fn compute(
        &self,
        info: &StageInfo,
        ys: Range<usize>,
        windows: &[RowWindow],
        rows: &mut [K::Output],
    ) -> Result<()> {
        if info.separable_input.is_some()
            && info
                .prepared
                .separable_rows(self.kernel, ys.clone(), rows)?
        {
            return Ok(());
        }
        // SAFETY: the windows are the workspace's buffers of earlier
        // stages, which stay untouched while the views live (to the end of
        // the closure); `run` sized them to every row that the reads of
        // this strip land on. No stage reads the output (`schedule`
        // refuses that).
        unsafe {
            with_row_windows(windows, || -> Result<()> {
                if info.prepared.split_rows(self.kernel, ys.clone(), rows)? {
                    return Ok(());
                }
                let views = self.kernel.cpu_views_in(info.prepared.rect)?;
                info.prepared.run_rows::<K>(&views, ys, rows);
                Ok(())
            })
        }
    }
}

/// How a pipeline runs: which stages run whole first, which per strip.
struct Schedule {
    /// Per stage: run per strip (else whole, first).
    fused: Vec<bool>,
    /// Per stage: the `(consumer, read)` pairs that read its output.
    readers: Vec<Vec<(usize, usize)>>,
    /// The outputs, in order.
    outputs: Vec<usize>,
    /// Per stage: an output that later stages read, computed per strip
    /// into scratch (with the rows its readers need beyond the strip) and
    /// its strip's rows copied into its image.
    copied: Vec<bool>,
    /// Run the stages one by one instead: an output is read where a strip
    /// cannot hold it (by a stage run whole, or not at rows that are
    /// affine in the reader's row).
    one_by_one: bool,
}

/// An error naming the pipeline's rule that `stages` break.
fn refuse(what: String) -> Error {
    Error::Config(format!("pipeline: {what}"))
}

/// For each stage, the `(consumer, read)` pairs that read its output, from
/// the image each stage writes (`writes`) and the images its reads read
/// (`reads`, in order). Refuses two stages that write one image and a
/// stage that reads its own output or a later stage's.
pub(crate) fn readers(
    names: &[&str],
    writes: &[u64],
    reads: &[Vec<u64>],
) -> Result<Vec<Vec<(usize, usize)>>> {
    let writer = |image: u64| writes.iter().position(|&w| w == image);
    let mut readers = vec![Vec::new(); writes.len()];
    for (s, (&write, reads)) in writes.iter().zip(reads).enumerate() {
        if let Some(t) = writes[..s].iter().position(|&w| w == write) {
            return Err(refuse(format!(
                "stages {t} (`{}`) and {s} (`{}`) write the same image",
                names[t], names[s]
            )));
        }
        for (r, &read) in reads.iter().enumerate() {
            match writer(read) {
                Some(p) if p >= s => {
                    return Err(refuse(format!(
                        "stage {s} (`{}`) reads the output of stage {p} (`{}`): list each \
                         producer before the stages that read it",
                        names[s], names[p]
                    )))
                }
                Some(p) => readers[p].push((s, r)),
                None => {}
            }
        }
    }
    Ok(readers)
}

/// Checks the order of the stages (`outputs[s]`: stage `s` is an output;
/// the last stage always is), and picks the fused stages.
fn schedule(names: &[&'static str], infos: &[StageInfo], outputs: &[bool]) -> Result<Schedule> {
    let n = infos.len();
    let output = |s: usize| s == n - 1 || outputs.get(s).copied().unwrap_or(false);
    let writes: Vec<u64> = infos.iter().map(|i| i.output.0).collect();
    let reads: Vec<Vec<u64>> = infos
        .iter()
        .map(|i| i.reads.iter().map(|r| r.image).collect())
        .collect();
    let readers = readers(names, &writes, &reads)?;
    let writer = |image: u64| writes.iter().position(|&w| w == image);
    // A separable convolution reads its input directly: that input is
    // computed whole.
    let mut pinned = vec![false; n];
    for p in infos
        .iter()
        .filter_map(|i| i.separable_input.and_then(writer))
    {
        pinned[p] = true;
    }
    let whole = |s: usize| {
        let (_, w, h) = infos[s].output;
        infos[s].space == Rect::full(w, h)
    };
    let mut fused = vec![false; n];
    for s in (0..n).rev() {
        fused[s] = output(s);
        fused[s] |= !pinned[s]
            && whole(s)
            && !readers[s].is_empty()
            && readers[s]
                .iter()
                .all(|&(c, r)| fused[c] && infos[c].reads[r].rows.is_some());
        debug_assert_eq!(writer(infos[s].output.0), Some(s));
    }
    let copied: Vec<bool> = (0..n)
        .map(|s| output(s) && !readers[s].is_empty())
        .collect();
    let one_by_one = (0..n).any(|s| {
        copied[s]
            && (pinned[s]
                || !whole(s)
                || readers[s]
                    .iter()
                    .any(|&(c, r)| !fused[c] || infos[c].reads[r].rows.is_none()))
    });
    Ok(Schedule {
        fused,
        readers,
        outputs: (0..n).filter(|&s| output(s)).collect(),
        copied,
        one_by_one,
    })
}

/// The image rows that the reads `read` from the output rows `ys` of a
/// stage with space `space` land on, as a range holding them all.
fn rows_read(read: &Read, space: Rect, ys: &Range<usize>) -> Range<usize> {
    let (scale, lo, hi) = read
        .rows
        .unwrap_or_else(|| unreachable!("bug: unbounded read fused"));
    if ys.is_empty() || lo > hi {
        return 0..0;
    }
    let n = read.region.height as i64;
    // The unfused read clamps an Undefined row in release builds.
    let mode = match read.mode {
        BoundaryMode::Undefined => BoundaryMode::Clamp,
        m => m,
    };
    let first = scale * (ys.start as i64 - space.y as i64) + lo;
    let last = scale * (ys.end as i64 - 1 - space.y as i64) + hi;
    let (mut a, mut b) = (i64::MAX, i64::MIN);
    // Inside the region the rows are the identity: one step covers them.
    let inside = first.max(0)..(last + 1).min(n);
    if !inside.is_empty() {
        a = inside.start;
        b = inside.end - 1;
    }
    // Outside, each row through the boundary condition.
    let below = first..(last + 1).min(0);
    let above = first.max(n)..last + 1;
    for rel in below.chain(above) {
        if let Some(r) = mode.remap(rel, n) {
            a = a.min(r);
            b = b.max(r);
        }
    }
    if a > b {
        return 0..0;
    }
    let top = read.region.y as i64;
    (top + a) as usize..(top + b + 1) as usize
}

/// Output rows per strip: the scratch of a stage's strip (with its halo)
/// stays near 256 KiB of f32, and every thread gets at least four strips.
fn strip_rows(width: usize, height: usize) -> usize {
    let by_size = (64 * 1024 / width.max(1)).clamp(8, 64);
    let by_balance = height.div_ceil(4 * rayon::current_num_threads());
    by_size.min(by_balance).max(1)
}

/// Runs `stages` on the native CPU, launches of fewer than
/// `serial_pixels` on one thread (also for a CPU-type OpenCL device, whose
/// pipelines run as the native CPU's): whole stages first, in order, then
/// the fused ones per strip of the outputs (`outputs[s]`: stage `s` is one;
/// the last stage always is). Each strip computes the rows its outputs
/// read of the fused producers once, then every output's rows in turn, so
/// the images the outputs share are read while the strip is in cache.
///
/// The strips are those of the output with the most rows; an output over
/// a space of another height takes the rows in proportion (`r · h_o / h`
/// of each strip bound `r`: half the rows for an output on a grid of half
/// the height).
pub(crate) fn run(stages: &[&dyn Stage], outputs: &[bool], serial_pixels: usize) -> Result<()> {
    let device = &Device::cpu_serial_below(serial_pixels);
    let names: Vec<&'static str> = stages.iter().map(|s| s.name()).collect();
    let infos = stages
        .iter()
        .map(|s| s.info(serial_pixels))
        .collect::<Result<Vec<_>>>()?;
    let plan = schedule(&names, &infos, outputs)?;
    if plan.one_by_one {
        return stages.iter().try_for_each(|s| s.execute(device));
    }
    for (s, stage) in stages.iter().enumerate() {
        if !plan.fused[s] {
            stage.execute(device)?;
        }
    }
    // The strips are those of the output with the most rows (the last
    // of them): a restriction's coarse grid takes half a strip's rows.
    let Some(&main) = plan
        .outputs
        .iter()
        .max_by_key(|&&s| (infos[s].space.height, s))
    else {
        unreachable!("bug: a pipeline without outputs")
    };
    let space = infos[main].space;
    let empty = |s: usize| infos[s].space.width == 0 || infos[s].space.height == 0;
    if plan.outputs.iter().all(|&s| empty(s)) {
        return Ok(());
    }
    // Rows `part` of the main output's space (counted from its first row)
    // as image rows of output `s`.
    let rows_of = |s: usize, part: &Range<usize>| {
        let own = infos[s].space;
        let at = |r: usize| own.y + r * own.height / space.height;
        at(part.start)..at(part.end)
    };
    let is_output = |s: usize| plan.outputs.contains(&s);
    // Stages computed into scratch per strip, in order.
    let producers =
        || (0..stages.len()).filter(|&s| plan.fused[s] && (!is_output(s) || plan.copied[s]));
    let produce = |part: &Range<usize>, work: &mut Workspace| -> Result<()> {
        // The rows each fused stage computes for this strip, last first.
        let mut need: Vec<Range<usize>> = vec![0..0; stages.len()];
        for &s in &plan.outputs {
            need[s] = rows_of(s, part);
        }
        for s in producers().rev() {
            let (lo, hi) = plan.readers[s]
                .iter()
                .map(|&(c, r)| rows_read(&infos[c].reads[r], infos[c].space, &need[c]))
                .chain(std::iter::once(need[s].clone()))
                .filter(|r| !r.is_empty())
                .fold((usize::MAX, 0), |(a, b), r| (a.min(r.start), b.max(r.end)));
            need[s] = if lo < hi { lo..hi } else { 0..0 };
        }
        work.windows.clear();
        work.computed.clear();
        for s in producers() {
            let window = stages[s].rows_into(
                &infos[s],
                need[s].clone(),
                &work.windows,
                &mut work.scratch[s],
            )?;
            work.windows.push(window);
            work.computed.push((s, need[s].start));
        }
        Ok(())
    };
    let strip = strip_rows(space.width, space.height);
    let parts: Vec<Range<usize>> = (0..space.height)
        .step_by(strip)
        .map(|r| r..(r + strip).min(space.height))
        .collect();
    let mut locked = plan
        .outputs
        .iter()
        .map(|&s| {
            let rows: Vec<Range<usize>> = parts.iter().map(|p| rows_of(s, p)).collect();
            Ok((s, stages[s].lock_output(&infos[s])?, rows))
        })
        .collect::<Result<Vec<_>>>()?;
    let mut per_output: Vec<_> = locked
        .iter_mut()
        .map(|(s, out, rows)| (*s, out.strips(rows).into_iter()))
        .collect();
    // Strip by strip, the tasks of every output.
    let strips: Vec<(Range<usize>, OutputTasks<'_>)> = parts
        .iter()
        .map(|part| {
            let tasks = per_output
                .iter_mut()
                .map(|(s, it)| {
                    (
                        *s,
                        it.next()
                            .unwrap_or_else(|| unreachable!("bug: a strip short")),
                    )
                })
                .collect();
            (part.clone(), tasks)
        })
        .collect();
    // Several outputs take turns a few rows at a time, so that the rows
    // of the images they share stay in the inner caches between them.
    // Those computed pixel by pixel take turns within the rows too, a
    // chunk of columns each ([`interleaved`]).
    let chunked: Vec<usize> = plan
        .outputs
        .iter()
        .copied()
        .filter(|&s| !plan.copied[s] && infos[s].chunked())
        .collect();
    let columns = (chunked.len() > 1).then(|| chunk_columns(&chunked, &infos));
    let turn = match plan.outputs.len() {
        1 => strip,
        _ => turn_rows(space.width, &plan.outputs, &infos).min(strip),
    };
    strips.into_par_iter().try_for_each_init(
        || Workspace::new(stages.len()),
        |work, (part, mut tasks)| {
            produce(&part, work)?;
            let chunked: Vec<bool> = tasks.iter().map(|(s, _)| chunked.contains(s)).collect();
            for r0 in part.clone().step_by(turn) {
                let turn_part = r0..(r0 + turn).min(part.end);
                for (k, (s, task)) in tasks.iter_mut().enumerate() {
                    let ys = rows_of(*s, &turn_part);
                    if plan.copied[*s] {
                        let Some(&(_, first)) = work.computed.iter().find(|c| c.0 == *s) else {
                            unreachable!("bug: a copied output not computed");
                        };
                        task.copy(ys, &work.scratch[*s], first);
                    } else if columns.is_none() || !chunked[k] {
                        task.compute(ys, &work.windows)?;
                    }
                }
                if let Some(columns) = columns {
                    let tasks = tasks
                        .iter_mut()
                        .zip(&chunked)
                        .filter(|(_, &c)| c)
                        .map(|((s, task), _)| (rows_of(*s, &turn_part), task));
                    // SAFETY: the windows are the workspace's buffers of
                    // the strip's producers, untouched while the chunks
                    // live (to the end of the closure), sized by `produce`
                    // to every row the strip's reads land on.
                    unsafe {
                        with_row_windows(&work.windows, || -> Result<()> {
                            let mut chunks = tasks
                                .map(|(ys, task)| task.chunks(ys))
                                .collect::<Result<Vec<_>>>()?;
                            interleaved(&mut chunks, columns);
                            Ok(())
                        })?;
                    }
                }
            }
            Ok(())
        },
    )
}

/// Computes every row of `chunks`, row by row, and within a row
/// `columns` columns of each in turn.
fn interleaved(chunks: &mut [Box<dyn Chunks + '_>], columns: usize) {
    let rows = chunks.iter().map(|c| c.rows()).max().unwrap_or(0);
    let width = chunks.iter().map(|c| c.width()).max().unwrap_or(0);
    for i in 0..rows {
        for x in (0..width).step_by(columns) {
            for c in chunks.iter_mut().filter(|c| i < c.rows() && x < c.width()) {
                let end = (x + columns).min(c.width());
                c.run(i, x..end);
            }
        }
    }
}

/// Columns per chunk of outputs that take turns within rows (`chunked`):
/// the rows that a chunk reads of the images they read (counted as 4-byte
/// pixels) stay near 36 KiB, three quarters of a core's 48 KiB L1, so that
/// the next output finds them there; at least 256 columns, as each chunk
/// costs a call through the row loop. The Horn-Schunck pair reads nine
/// rows of five images, and gets 1024 columns: at 2048 columns, eight
/// alternating `suite-ratios --only hornschunck --rounds 1 --runs 15`
/// took 6.70 ms (median) in chunks of 1024 columns, 7.29 ms in chunks of
/// 512, 7.65 ms with whole rows, and 7.56 ms with turns of whole rows
/// only; chunks of 128 columns or fewer were slower than whole rows.
fn chunk_columns(chunked: &[usize], infos: &[StageInfo]) -> usize {
    let mut rows: Vec<(u64, i64)> = chunked
        .iter()
        .flat_map(|&s| infos[s].reads.iter())
        .flat_map(|r| {
            let (lo, hi) = r.rows.map_or((0, 0), |(_, lo, hi)| (lo, hi));
            (lo..=hi).map(move |row| (r.image, row))
        })
        .collect();
    rows.sort_unstable();
    rows.dedup();
    // A multiple of 64 columns, so that chunks start at aligned vectors.
    (36 * 1024 / (4 * rows.len()).max(1) / 64 * 64).max(256)
}

/// Output rows per turn of each of several outputs: the rows that the
/// turn reads of the images the outputs read (counted as 4-byte pixels)
/// stay near 256 KiB, well inside a core's L2.
fn turn_rows(width: usize, outputs: &[usize], infos: &[StageInfo]) -> usize {
    let mut images: Vec<u64> = outputs
        .iter()
        .flat_map(|&s| infos[s].reads.iter().map(|r| r.image))
        .collect();
    images.sort_unstable();
    images.dedup();
    (256 * 1024 / (4 * width * images.len()).max(1)).max(1)
}
