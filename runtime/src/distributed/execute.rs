//! Running a kernel on distributed images.

use super::halo::{exchange, ExchangeStats};
use super::{DistError, DistImage, DistResult};
use crate::{Device, Execute};
use hipacc_core::ir::footprint::footprints;
use hipacc_core::ir::Footprint;
use hipacc_core::{Accessor, Boundary, IterationSpace, Kernel, Pixel, Rect};

/// One distributed image a kernel reads, with its global boundary.
trait Input {
    fn local_id(&self) -> u64;
    fn halo(&self) -> usize;
    fn set_halo(&self, halo: usize) -> DistResult<()>;
    fn same_boundary(&self, other: &dyn Input) -> bool;
    fn boundary_key(&self) -> String;
    fn exchange(&self, fp: Footprint) -> DistResult<ExchangeStats>;
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
}

/// The distributed images a kernel reads: [`execute`]'s `build` closure
/// asks it for each accessor.
pub struct Reads<'a> {
    inputs: Vec<Box<dyn Input + 'a>>,
}

impl<'a> Reads<'a> {
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
        self.inputs.push(Box::new(Read { image, boundary }));
        Accessor::new(&image.local()).with_boundary(local_boundary)
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
pub fn execute<'a, K: Kernel>(
    device: &Device,
    output: &'a DistImage<K::Output>,
    build: impl Fn(&mut Reads<'a>) -> K,
) -> DistResult<LaunchStats> {
    let mut reads = Reads { inputs: Vec::new() };
    let kernel = build(&mut reads);
    let ir = kernel.ir()?;
    let fps = footprints(&ir);
    let bindings = kernel.bindings();
    let out_id = output.local().id();
    let mut needs: Vec<Option<Footprint>> = vec![None; reads.inputs.len()];
    for (binding, fp) in bindings.accessors.iter().zip(&fps) {
        let id = binding.image.id();
        if id == out_id {
            return Err(DistError::Usage("a kernel cannot read the image it writes"));
        }
        let Some(i) = reads.inputs.iter().position(|r| r.local_id() == id) else {
            return Err(DistError::Usage(
                "every accessor must come from Reads::accessor",
            ));
        };
        let fp = fp.ok_or_else(|| DistError::UnboundedFootprint {
            kernel: K::NAME,
            accessor: binding.slot.name.clone(),
        })?;
        needs[i] = Some(needs[i].map_or(fp, |n| n.union(fp)));
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
        let mut again = Reads { inputs: Vec::new() };
        let k = build(&mut again);
        (k, again)
    } else {
        (kernel, reads)
    };

    let mut stats = LaunchStats::default();
    let mut done: Vec<u64> = Vec::new();
    for (r, fp) in reads.inputs.iter().zip(&needs) {
        if let Some(fp) = fp.filter(|fp| *fp != Footprint::ZERO) {
            if !done.contains(&r.local_id()) {
                stats.exchange += r.exchange(fp)?;
                done.push(r.local_id());
            }
        }
    }
    let start = std::time::Instant::now();
    let local = output.local();
    let b = output.grid().my_block();
    let space = IterationSpace::region(&local, Rect::new(0, 0, halo + b.width, halo + b.height))?;
    kernel.execute(device, &space)?;
    stats.compute_seconds = start.elapsed().as_secs_f64();
    Ok(stats)
}
