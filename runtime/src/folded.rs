//! Pipelines on GPU devices: consumers folded into their producers.
//!
//! A stage whose output only one later stage reads, over the same
//! iteration space, is not launched: its body is folded into the reader's,
//! so the intermediate image is neither written nor read back.
//!
//! - Read only at the reader's own pixel (`self.blurred()`), the producer's
//!   body runs once per pixel in the reader ([`hipacc_core::ir::fold`]).
//!   That pays on every device (a write and a read per pixel saved, no
//!   work added), so no model decides it.
//! - Read through a window or at offsets (a gradient of a point-wise stage,
//!   a blur of a colour conversion), the producer is recomputed at every
//!   position read ([`hipacc_core::ir::fold_window`]), where the reading
//!   accessor's boundary condition puts it. That adds work: the producer's
//!   reads once more per extra position. The architecture model weighs it
//!   ([`Target::recompute_reads_per_access`](hipacc_codegen::arch::Target::recompute_reads_per_access)):
//!   the stage folds when the reads added per pixel stay within that many
//!   per intermediate access saved. A producer that does not cover its
//!   whole image, or a read through an `Undefined` accessor, is not
//!   recomputed (a read could land on a pixel the producer never wrote).
//!
//! Chains fold transitively (a chain of cheap stages becomes one launch),
//! each fold weighed on the merged kernel. A stage read by several stages,
//! or over another space, or whose recomputation costs more than the model
//! allows, runs as its own launch, in the pipeline's order, and writes its
//! image.
//!
//! Results equal running the stages one after the other, bit for bit: each
//! folded producer's value becomes a local of the intermediate's pixel
//! type, so no arithmetic is merged across the fold (tested on OpenCL on
//! every boundary mode and odd sizes).

use crate::cpu::fused;
use crate::gpu::KernelLaunch;
use crate::{Device, Result};
use hipacc_core::image::DynImage;
use hipacc_core::ir::{self, fold, fold_window, recompute_reads};
use hipacc_core::{Bindings, Rect};
use std::sync::Arc;

/// A stage of a pipeline as one launch.
pub(crate) struct StageLaunch {
    /// The kernel's name.
    pub(crate) name: String,
    /// Its IR.
    pub(crate) ir: ir::Kernel,
    /// What its slots are bound to.
    pub(crate) bindings: Bindings,
    /// The output image.
    pub(crate) output: Arc<dyn DynImage>,
    /// The iteration space in the output.
    pub(crate) rect: Rect,
}

/// Runs `stages` (named `names`) on the GPU `device`, folding point-wise
/// consumers into their producers; stages marked in `outputs` are the
/// pipeline's outputs, always launched (their images are the result even
/// where a later stage reads them). Refuses the orders the CPU refuses
/// ([`fused::readers`]), checked on the bindings alone: a GPU pipeline
/// builds no CPU plan.
pub(crate) fn run(
    names: &[&str],
    stages: Vec<StageLaunch>,
    outputs: &[bool],
    device: &Device,
) -> Result<()> {
    let writes: Vec<u64> = stages.iter().map(|s| s.output.id()).collect();
    let reads: Vec<Vec<u64>> = stages
        .iter()
        .map(|s| s.bindings.accessors.iter().map(|a| a.image.id()).collect())
        .collect();
    fused::readers(names, &writes, &reads)?;
    let mut reader = sole_readers(&stages);
    for (r, _) in reader.iter_mut().zip(outputs).filter(|(_, &o)| o) {
        *r = None;
    }
    let mut pending: Vec<Option<StageLaunch>> = (0..stages.len()).map(|_| None).collect();
    for (i, mut stage) in stages.into_iter().enumerate() {
        for j in 0..i {
            if reader[j] != Some(i) {
                continue;
            }
            let Some(producer) = pending[j].take() else {
                continue;
            };
            let id = producer.output.id();
            let acc = stage
                .bindings
                .accessors
                .iter()
                .position(|a| a.image.id() == id);
            let folded = acc.and_then(|a| {
                fold(
                    &producer.ir,
                    &producer.bindings,
                    &stage.ir,
                    &stage.bindings,
                    a,
                )
                .or_else(|| recompute(&producer, &stage, a, device))
            });
            match folded {
                Some((ir, bindings)) => {
                    stage.name = format!("{}+{}", producer.name, stage.name);
                    stage.ir = ir;
                    stage.bindings = bindings;
                }
                None => launch(producer, device)?,
            }
        }
        if reader[i].is_some() {
            pending[i] = Some(stage);
        } else {
            launch(stage, device)?;
        }
    }
    Ok(())
}

/// `stage` with `producer` recomputed at each of its reads of accessor
/// `acc`, where the producer covers its whole image and the architecture
/// model says the added reads cost less than the intermediate's round trip.
fn recompute(
    producer: &StageLaunch,
    stage: &StageLaunch,
    acc: usize,
    device: &Device,
) -> Option<(ir::Kernel, Bindings)> {
    let size = (producer.output.width(), producer.output.height());
    let target = device.target()?;
    let (added, saved) = recompute_reads(&producer.ir, &stage.ir, acc);
    let pays = added <= saved.saturating_mul(target.recompute_reads_per_access as u64);
    if producer.rect != Rect::full(size.0, size.1) || !pays {
        return None;
    }
    fold_window(
        &producer.ir,
        &producer.bindings,
        &stage.ir,
        &stage.bindings,
        acc,
        size,
    )
}

/// For each stage, the one later stage that may fold it: the only stage
/// reading its output, through one accessor that reads the whole image,
/// over the same iteration space in an image of the same size. (Whether
/// the reads are at the reader's own pixel is the IR's question, asked
/// when folding.)
fn sole_readers(stages: &[StageLaunch]) -> Vec<Option<usize>> {
    stages
        .iter()
        .enumerate()
        .map(|(j, producer)| {
            let id = producer.output.id();
            let size = (producer.output.width(), producer.output.height());
            let mut readers = stages.iter().enumerate().skip(j + 1).flat_map(|(i, s)| {
                s.bindings
                    .accessors
                    .iter()
                    .filter(move |a| a.image.id() == id)
                    .map(move |a| (i, s, a))
            });
            let (i, s, a) = readers.next()?;
            let whole = a.region == Rect::full(size.0, size.1);
            let same = s.rect == producer.rect && (s.output.width(), s.output.height()) == size;
            (readers.next().is_none() && whole && same).then_some(i)
        })
        .collect()
}

fn launch(stage: StageLaunch, device: &Device) -> Result<()> {
    let Some(gpu) = device.gpu() else {
        unreachable!("bug: a GPU pipeline on a CPU device");
    };
    let StageLaunch {
        name,
        ir,
        bindings,
        output,
        rect,
    } = stage;
    crate::trace::launch(&name, device.kind().name(), || {
        gpu.execute(
            KernelLaunch {
                name: &name,
                ir,
                bindings,
                output,
                rect,
            },
            device.overrides(),
        )
    })
}
