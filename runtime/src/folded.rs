//! Pipelines on GPU devices: point-wise consumers folded into their
//! producers.
//!
//! A stage whose output only one later stage reads, and only at its own
//! pixel (`self.blurred()`), over the same iteration space, is not launched:
//! its body is folded into the reader's ([`hipacc_core::ir::fold`]), so the
//! intermediate image is neither written nor read back. That pays on every
//! device (a write and a read per pixel saved, no work added), so no model
//! decides it. Chains fold transitively (a point-wise chain of any length
//! becomes one launch). A stage read through a window, at an offset, by
//! several stages, or over another space runs as its own launch, in the
//! pipeline's order, and writes its image.
//!
//! Results equal running the stages one after the other, bit for bit: the
//! folded producer's value becomes a local of the intermediate's pixel type,
//! so no arithmetic is merged across the fold (tested on OpenCL on every
//! boundary mode and odd sizes).

use crate::gpu::KernelLaunch;
use crate::{Device, Result};
use hipacc_core::image::DynImage;
use hipacc_core::ir::{self, fold};
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

/// Runs `stages` (in an order `check_order` accepted) on the GPU `device`,
/// folding point-wise consumers into their producers.
pub(crate) fn run(stages: Vec<StageLaunch>, device: &Device) -> Result<()> {
    let reader = sole_readers(&stages);
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
