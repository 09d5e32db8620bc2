//! Running a kernel on distributed images.

use super::halo::{exchange, plan, ExchangeStats, InFlight};
use super::overlap;
use super::scaled::{self, stage, Span};
use super::{DistError, DistImage, DistResult, Grid};
use crate::Device;
use hipacc_core::ir::footprint::{affine_footprints, footprints};
use hipacc_core::ir::Footprint;
use hipacc_core::{Accessor, Boundary, Image, Kernel, Pixel, Rect};
use std::any::Any;
use std::collections::HashMap;

/// One distributed image a kernel reads, with its global boundary.
pub(super) trait Input {
    fn local_id(&self) -> u64;
    fn halo(&self) -> usize;
    fn set_halo(&self, halo: usize) -> DistResult<()>;
    fn same_boundary(&self, other: &dyn Input) -> bool;
    fn boundary_key(&self) -> String;
    fn exchange(&self, fp: Footprint) -> DistResult<ExchangeStats>;
    /// Plans the exchange of the halo `fp` (see [`plan`]).
    fn plan(&self, fp: Footprint) -> DistResult<Box<dyn InFlight>>;
    fn grid(&self) -> &Grid;
    /// Exchanges the halo `fp`, growing the halo to it first.
    fn prepare(&self, fp: Footprint) -> DistResult<ExchangeStats>;
    /// Stages the image for `spans` (see [`scaled`](super::scaled)), after
    /// [`prepare`](Self::prepare).
    fn stage(&self, spans: (Span, Span)) -> DistResult<Box<dyn Any>>;
}

struct Read<'a, T: Pixel> {
    image: &'a DistImage<T>,
    boundary: Boundary<T>,
}

impl<T: Pixel> Input for Read<'_, T> {
    fn local_id(&self) -> u64 {
        self.image.local().id()
    }
    fn halo(&self) -> usize {
        self.image.halo()
    }
    fn set_halo(&self, halo: usize) -> DistResult<()> {
        self.image.set_halo(halo)
    }
    fn same_boundary(&self, other: &dyn Input) -> bool {
        self.boundary_key() == other.boundary_key()
    }
    fn boundary_key(&self) -> String {
        format!("{:?}", self.boundary)
    }
    fn exchange(&self, fp: Footprint) -> DistResult<ExchangeStats> {
        exchange(self.image, fp, &self.boundary)
    }
    fn plan(&self, fp: Footprint) -> DistResult<Box<dyn InFlight>> {
        Ok(Box::new(plan(self.image, fp, &self.boundary)?))
    }
    fn grid(&self) -> &Grid {
        self.image.grid()
    }
    fn prepare(&self, fp: Footprint) -> DistResult<ExchangeStats> {
        let reach = [-fp.min_dx, fp.max_dx, -fp.min_dy, fp.max_dy]
            .into_iter()
            .max()
            .unwrap_or(0) as usize;
        if reach > self.image.halo() {
            self.image.set_halo(reach)?;
        }
        if fp == Footprint::ZERO {
            Ok(ExchangeStats::default())
        } else {
            self.exchange(fp)
        }
    }
    fn stage(&self, spans: (Span, Span)) -> DistResult<Box<dyn Any>> {
        Ok(Box::new(stage(self.image, spans)?))
    }
}

/// The distributed images a kernel reads: [`execute`]'s `build` closure
/// asks it for each accessor.
pub struct Reads<'a> {
    pub(super) inputs: Vec<Box<dyn Input + 'a>>,
    /// Staged copies of the inputs by their block's image id, read instead
    /// of the blocks (kernels reading other grids).
    staged: HashMap<u64, Box<dyn Any>>,
    /// Where accessors of the inputs by their block's image id start in
    /// the blocks (halo included), for kernels reading other grids from
    /// the blocks themselves (see [`scaled`](super::scaled)).
    offsets: HashMap<u64, (usize, usize)>,
    /// The global coordinates of the launch's pixel `(0, 0)`.
    origin: (i32, i32),
    /// The pixel of the blocks (halo included) where the launch starts:
    /// accessors read the blocks from there, as their position `(0, 0)`
    /// (see [`overlap`](super::overlap)).
    window: (usize, usize),
}

impl<'a> Reads<'a> {
    /// Reads that bind the staged copies in `staged` for a local output
    /// whose pixel `(0, 0)` is the global pixel `origin`.
    pub(super) fn staged(staged: HashMap<u64, Box<dyn Any>>, origin: (i64, i64)) -> Reads<'a> {
        Reads {
            inputs: Vec::new(),
            staged,
            offsets: HashMap::new(),
            origin: (origin.0 as i32, origin.1 as i32),
            window: (0, 0),
        }
    }

    /// Reads whose accessor of the input with block id `i` starts at the
    /// block's pixel `offsets[i]`, for a local output whose pixel `(0, 0)`
    /// is the global pixel `origin`.
    pub(super) fn offset(offsets: HashMap<u64, (usize, usize)>, origin: (i64, i64)) -> Reads<'a> {
        Reads {
            offsets,
            ..Reads::staged(HashMap::new(), origin)
        }
    }

    /// Reads for a launch that starts at the blocks' pixel `window` (halo
    /// included) and whose `(x(), y()) = (0, 0)` is the global `origin`.
    pub(super) fn windowed(origin: (i64, i64), window: (usize, usize)) -> Reads<'a> {
        Reads {
            window,
            ..Reads::staged(HashMap::new(), origin)
        }
    }

    /// The global coordinates of the pixel this rank's launch calls
    /// `(x(), y()) = (0, 0)`: a kernel that needs global coordinates (an
    /// edge test, a red-black colour) takes it as parameters and adds it,
    /// `x() + self.x0` (passing `(0, 0)` in a single-process run). It may
    /// be negative (the launch computes a discarded ring around the block),
    /// and is even when the kernel reads another grid, so `(x() + x0) / 2`
    /// is the global coarse coordinate. Offsets must stay relative to
    /// `x()`/`y()` (an offset computed from a parameter is unbounded).
    ///
    /// ```no_run
    /// use hipacc::distributed::{self, DistImage, Grid};
    /// use hipacc::prelude::*;
    /// use std::rc::Rc;
    ///
    /// /// Zero on the global image's left column, the input elsewhere.
    /// #[derive(Kernel)]
    /// #[kernel(output = f32)]
    /// struct LeftEdge { input: Accessor<f32>, x0: i32 }
    ///
    /// #[kernel_body]
    /// impl LeftEdge {
    ///     fn kernel(&self) -> f32 {
    ///         if x() + self.x0 == 0 { 0.0 } else { self.input() }
    ///     }
    /// }
    ///
    /// let universe = distributed::initialize()?;
    /// let grid = Rc::new(Grid::new(&universe.world(), 64, 64)?);
    /// let input = DistImage::from_fn(&grid, |x, y| (x + y) as f32)?;
    /// let output = DistImage::<f32>::new(&grid)?;
    /// distributed::execute(&Device::cpu(), &output, |reads| LeftEdge {
    ///     input: reads.accessor(&input, Boundary::Clamp),
    ///     x0: reads.origin().0,
    /// })?;
    /// # Ok::<(), distributed::DistError>(())
    /// ```
    pub fn origin(&self) -> (i32, i32) {
        self.origin
    }

    /// The accessor reading `image` with `boundary` at the global image's
    /// edges: bind it to the kernel as in a single-process run.
    ///
    /// It reads this rank's block, whose halo the exchange fills from the
    /// neighbours and, at the global edges, by `boundary` on the global
    /// extent. (The accessor itself carries `boundary` too, or `Clamp` for
    /// `Undefined`; it only answers reads of the discarded ring of outputs
    /// around the block.)
    pub fn accessor<T: Pixel>(
        &mut self,
        image: &'a DistImage<T>,
        boundary: Boundary<T>,
    ) -> Accessor<T> {
        let local_boundary = match boundary {
            Boundary::Undefined => Boundary::Clamp,
            b => b,
        };
        let local = image.local();
        self.inputs.push(Box::new(Read { image, boundary }));
        match self
            .staged
            .get(&local.id())
            .and_then(|s| s.downcast_ref::<Image<T>>())
        {
            Some(staged) => Accessor::new(staged).with_boundary(local_boundary),
            None if self.window == (0, 0) && !self.offsets.contains_key(&local.id()) => {
                Accessor::new(&local).with_boundary(local_boundary)
            }
            None => {
                let (x, y) = self
                    .offsets
                    .get(&local.id())
                    .copied()
                    .unwrap_or(self.window);
                let rest = Rect::new(x, y, local.width() - x, local.height() - y);
                Accessor::new(&local)
                    .with_boundary(local_boundary)
                    .with_region(rest)
            }
        }
    }
}

/// What one distributed launch did on this rank.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct LaunchStats {
    /// The halo exchanges before the launch.
    pub exchange: ExchangeStats,
    /// Wall time of the kernel itself, in seconds.
    pub compute_seconds: f64,
}

/// Refuses a kernel that reads its output, binds an accessor not made by
/// [`Reads::accessor`], or reads one image with two boundary conditions.
fn check_inputs<K: Kernel>(
    kernel: &K,
    output: &DistImage<K::Output>,
    reads: &Reads<'_>,
) -> DistResult<()> {
    let out_id = output.local().id();
    for binding in &kernel.bindings().accessors {
        let id = binding.image.id();
        if id == out_id {
            return Err(DistError::Usage("a kernel cannot read the image it writes"));
        }
        if !reads.inputs.iter().any(|r| r.local_id() == id) {
            return Err(DistError::Usage(
                "every accessor must come from Reads::accessor",
            ));
        }
    }
    for (i, a) in reads.inputs.iter().enumerate() {
        for b in &reads.inputs[..i] {
            if a.local_id() == b.local_id() && !a.same_boundary(b.as_ref()) {
                return Err(DistError::Usage(
                    "one image read with two boundary conditions in one kernel",
                ));
            }
        }
    }
    Ok(())
}

/// Computes every pixel of the distributed `output` with the kernel
/// `build` returns. Collective: every rank calls it with the same kernel.
///
/// `build` binds the kernel's accessors through [`Reads::accessor`] (masks,
/// domains and parameters as usual). The halo each input needs is the
/// kernel's footprint from its IR, so the footprint must be bounded; the
/// halos (of inputs and output alike, which share one layout) grow to it,
/// and only the pixels the footprint reads are exchanged. Each rank then
/// runs the kernel on `device` over its block and a ring of the halo as
/// wide as the halo (the ring's pixels are discarded: the output's halo is
/// only defined after an exchange). The result is bit-identical to the
/// single-process run of the same kernel on the global images.
///
/// Inputs may also live on the next finer or coarser grid than the output
/// (see [`Grid::coarser`](super::Grid::coarser)), read through offsets
/// affine in `x()`/`y()`: the halo then comes from the kernel's affine
/// footprint, and each rank runs the kernel on staged copies of its
/// inputs (see the [module docs](super)).
pub fn execute<'a, K: Kernel>(
    device: &Device,
    output: &'a DistImage<K::Output>,
    build: impl Fn(&mut Reads<'a>) -> K,
) -> DistResult<LaunchStats> {
    let origin = |halo: usize| {
        let b = output.grid().my_block();
        (b.x as i64 - halo as i64, b.y as i64 - halo as i64)
    };
    let mut reads = Reads::staged(HashMap::new(), origin(output.halo()));
    let kernel = build(&mut reads);
    let ir = kernel.ir()?;
    check_inputs(&kernel, output, &reads)?;
    let affine = affine_footprints(&ir);
    if affine.iter().flatten().any(|a| a.constant().is_none()) {
        return scaled::execute(device, output, build, kernel, reads, affine);
    }
    let fps = footprints(&ir);
    let mut needs: Vec<Option<Footprint>> = vec![None; reads.inputs.len()];
    for (binding, fp) in kernel.bindings().accessors.iter().zip(&fps) {
        let id = binding.image.id();
        let i = reads
            .inputs
            .iter()
            .position(|r| r.local_id() == id)
            .unwrap_or_default();
        let fp = fp.ok_or_else(|| DistError::UnboundedFootprint {
            kernel: K::NAME,
            accessor: binding.slot.name.clone(),
        })?;
        needs[i] = Some(needs[i].map_or(fp, |n| n.union(fp)));
    }
    let reach = needs
        .iter()
        .flatten()
        .map(|f| {
            f.min_dx
                .min(f.min_dy)
                .unsigned_abs()
                .max(f.max_dx.max(f.max_dy).max(0) as u32)
        })
        .max()
        .unwrap_or(0) as usize;
    let halo = reads
        .inputs
        .iter()
        .map(|r| r.halo())
        .chain([reach, output.halo()])
        .max()
        .unwrap_or(0);
    let regrow = output.halo() != halo || reads.inputs.iter().any(|r| r.halo() != halo);
    let (kernel, reads) = if regrow {
        drop(kernel);
        output.set_halo(halo)?;
        for r in &reads.inputs {
            r.set_halo(halo)?;
        }
        let mut again = Reads::staged(HashMap::new(), origin(halo));
        let k = build(&mut again);
        (k, again)
    } else {
        (kernel, reads)
    };

    let mut pending: Vec<Box<dyn InFlight>> = Vec::new();
    let mut done: Vec<u64> = Vec::new();
    let mut read = Footprint::ZERO;
    for (r, fp) in reads.inputs.iter().zip(&needs) {
        if let Some(fp) = fp.filter(|fp| *fp != Footprint::ZERO) {
            if !done.contains(&r.local_id()) {
                pending.push(r.plan(fp)?);
                done.push(r.local_id());
            }
            read = read.union(fp);
        }
    }
    drop((kernel, reads));
    overlap::launch(device, output, build, read, pending)
}
