//! The launch path of every GPU backend.
//!
//! 1. a refusal of an output image that an accessor reads
//!    ([`check_aliasing`]), and of an `f64` kernel on a device without
//!    `f64` arithmetic;
//! 2. the [`Config`] from the architecture model, a remembered tuning,
//!    `HIPACC_CONFIG` and the device's override ([`choose_launch_config`]),
//!    checked against the device's limits;
//! 3. the kernel from the program cache ([`super::program`]), refined by
//!    occupancy where the backend reports resources, and its generic
//!    companion when no block of this launch is interior;
//! 4. every image made current on the device ([`super::residency`]);
//! 5. the arguments in codegen's order ([`resolve_args`]) and the geometry
//!    from [`KernelInfo::launch`](hipacc_codegen::KernelInfo::launch),
//!    handed to the backend to bind and enqueue;
//! 6. the output's host copy marked stale: it downloads when the host reads.
//!
//! A thread that records ([`super::replay`]) keeps the prepared launch.

use super::args::{accessor_regions, check_aliasing, mask_bytes, resolve_args, ArgValue};
use super::backend::{Arg, Backend, Enqueue};
use super::config::{block_fixed, choose_launch_config, fixed_axes};
use super::device::GpuDevice;
use super::program::{self, generic_companion, Compiled};
use super::residency::{make_resident, mark_written, Use};
use crate::Result;
use hipacc_codegen::config::occupancy::refine_block;
use hipacc_codegen::{Config, ConfigOverride, Launch};
use hipacc_core::image::DynImage;
use hipacc_core::kernel::Bindings;
use hipacc_core::{ir, Rect};
use std::sync::{Arc, PoisonError};

/// One kernel launch as [`crate::Execute`] hands it over.
pub(crate) struct KernelLaunch<'a> {
    /// The kernel's name.
    pub(crate) name: &'a str,
    /// Its IR.
    pub(crate) ir: ir::Kernel,
    /// What its slots are bound to.
    pub(crate) bindings: Bindings,
    /// The output image.
    pub(crate) output: Arc<dyn DynImage>,
    /// The iteration space in the output.
    pub(crate) rect: Rect,
}

/// An image a launch uses, how, and the memory it was bound to.
pub(crate) type Bound<B> = (Arc<dyn DynImage>, Use, Arc<<B as Backend>::Mem>);

/// A launch with everything the host prepared: what a replay enqueues.
pub(crate) struct Prepared<B: Backend> {
    /// The kernel.
    pub(crate) kernel: Arc<Compiled<B>>,
    /// Grid, block and region starts.
    pub(crate) launch: Launch,
    /// The bound arguments.
    pub(crate) args: Vec<Arg<B>>,
    /// Every mask's coefficients.
    pub(crate) masks: Vec<Vec<u8>>,
    /// The images read, then the output, with how each is used.
    pub(crate) images: Vec<Bound<B>>,
}

impl<B: Backend> Prepared<B> {
    /// Hands the launch to the driver.
    pub(crate) fn enqueue(&self, backend: &B) -> Result<()> {
        backend.enqueue(Enqueue {
            entry: &self.kernel.entry,
            info: &self.kernel.info,
            launch: &self.launch,
            args: &self.args,
            masks: &self.masks,
            copies: &self.kernel.masks,
        })
    }
}

/// Runs `l` on `dev` with the variant the architecture model picks (after
/// `overrides`).
pub(crate) fn execute<B: Backend>(
    dev: &GpuDevice<B>,
    l: KernelLaunch<'_>,
    overrides: Option<&ConfigOverride>,
) -> Result<()> {
    check_aliasing(l.name, &l.bindings, l.output.id())?;
    let (config, tuned) = variant(dev, &l.ir, l.rect, overrides)?;
    // Hashing the IR is most of a launch's host time: once per launch.
    let ir_hash = l.ir.stable_hash();
    // A remembered (measured) block is kept as it is.
    let k = refined_kernel(
        dev,
        &l.ir,
        ir_hash,
        config,
        block_fixed(overrides)? || tuned,
    )?;
    let regions = accessor_regions(&l.bindings);
    let mut launch = k.info.launch(l.rect, &regions)?;
    let mut k = k;
    // A remembered config was measured as it is; one the heuristics chose
    // trades its regions and rows per thread for the small companion where
    // they cannot pay, unless the user fixed one of them. A small launch
    // with interior blocks keeps a fixed rows-per-thread's regions.
    let fixed = fixed_axes(overrides)?;
    let small = (l.rect.width as u64) * (l.rect.height as u64) < SMALL_LAUNCH_PIXELS;
    let wanted = !has_interior(&launch) || (small && !fixed.pixels_per_thread);
    if wanted && !tuned && !fixed.boundary {
        if let Some(c) = generic_companion(&k.info.config) {
            if !fixed.pixels_per_thread || c.pixels_per_thread == k.info.config.pixels_per_thread {
                k = program::kernel(dev, &l.ir, ir_hash, &c)?;
                launch = k.info.launch(l.rect, &regions)?;
            }
        }
    }
    let prepared = prepare(dev, k, launch, &l.bindings, &l.output, l.rect)?;
    run(dev, &prepared)?;
    dev.recordings.keep(prepared);
    Ok(())
}

/// The variant a launch of `ir` over `rect` on `dev` runs, before the
/// small-launch companion and occupancy refinement, and whether it was
/// remembered from a measurement ([`choose_launch_config`]); refused where
/// the device lacks a type the kernel computes in or the variant exceeds
/// the device's limits.
fn variant<B: Backend>(
    dev: &GpuDevice<B>,
    ir: &ir::Kernel,
    rect: Rect,
    overrides: Option<&ConfigOverride>,
) -> Result<(Config, bool)> {
    let facts = dev.backend.facts();
    // Before the variant: the architecture model's target may lack `f64`
    // too, and the refusal names the device (free where it has `f64`).
    facts.check_types(B::KIND, ir)?;
    let tune = crate::explore::device_key(B::KIND, &facts.name);
    let chosen = choose_launch_config(ir, facts.target, B::LANGUAGE, overrides, &tune, rect)?;
    facts.check_limits(&chosen.0, 0)?;
    Ok(chosen)
}

#[cfg(feature = "conformance")]
/// Kernels per program when [`precompile`] builds ahead: each program
/// is one driver build, whose fixed cost (PoCL runs its OpenCL C front end
/// and header once per program, NVRTC its whole compiler) is paid once
/// per chunk; a chunk that does not build costs only its own kernels a
/// second try.
const PRECOMPILE_CHUNK: usize = 64;

#[cfg(feature = "conformance")]
/// Builds the kernels that launches of each `(ir, rect)` on `dev` would
/// build, in programs of [`PRECOMPILE_CHUNK`] kernels instead of one
/// program per launch: the variant [`execute`] chooses (with `overrides`)
/// and its generic companion, cached under the keys the launches look up.
/// Later launches then compile nothing.
///
/// Only a saving: a launch whose variant cannot be chosen here, or whose
/// chunk does not build, builds its kernel itself as before and reports
/// its own error, against its own kernel. Occupancy refinement (CUDA) may
/// still build a refined block at launch.
pub(crate) fn precompile<B: Backend>(
    dev: &GpuDevice<B>,
    launches: &[(&ir::Kernel, Rect)],
    overrides: Option<&ConfigOverride>,
) {
    let chosen: Vec<(&ir::Kernel, Config)> = launches
        .iter()
        .filter_map(|&(ir, rect)| Some((ir, variant(dev, ir, rect, overrides).ok()?.0)))
        .collect();
    for chunk in chosen.chunks(PRECOMPILE_CHUNK) {
        let items: Vec<(&ir::Kernel, &Config)> = chunk.iter().map(|(k, c)| (*k, c)).collect();
        // The launches report a failure, kernel by kernel (see above).
        let _ = program::build(dev, &items);
    }
}

/// Launches of fewer pixels run the small companion (see
/// [`super::program`]): at 256x256 and below a launch takes microseconds
/// on any device, while a region-specialised, row-unrolled body can take
/// the driver tens of seconds to compile.
const SMALL_LAUNCH_PIXELS: u64 = 1 << 16;

/// True when some block of `launch` needs no boundary check.
fn has_interior(launch: &Launch) -> bool {
    let s = launch.region_starts;
    s.left < s.right && s.top < s.bottom
}

/// The kernel for `config`, after the occupancy check: the registers and
/// shared memory the compiled kernel uses refine the block size unless the
/// user fixed it or the backend reports no resources.
fn refined_kernel<B: Backend>(
    dev: &GpuDevice<B>,
    ir: &ir::Kernel,
    ir_hash: u64,
    config: Config,
    block_fixed: bool,
) -> Result<Arc<Compiled<B>>> {
    let first = program::kernel(dev, ir, ir_hash, &config)?;
    if block_fixed {
        return Ok(first);
    }
    let Some(usage) = dev.backend.resources(&first.entry) else {
        return Ok(first);
    };
    let memo = (ir_hash, config.key());
    let refined = match dev.refined.get(&memo) {
        Some(c) => c,
        None => {
            let target = dev.backend.facts().target;
            let c = refine_block(target, &config, usage);
            let fits = c.validate_for(ir, target).is_ok()
                && dev.backend.facts().check_limits(&c, 0).is_ok();
            dev.refined
                .insert(memo, if fits { c } else { config.clone() })
        }
    };
    if refined == config {
        Ok(first)
    } else {
        program::kernel(dev, ir, ir_hash, &refined)
    }
}

/// Makes the images resident and binds the arguments of kernel `k` for a
/// launch over `rect` of `output`.
fn prepare<B: Backend>(
    dev: &GpuDevice<B>,
    kernel: Arc<Compiled<B>>,
    launch: Launch,
    bindings: &Bindings,
    output: &Arc<dyn DynImage>,
    rect: Rect,
) -> Result<Prepared<B>> {
    let values = resolve_args(&kernel.info, bindings, output.width(), rect, &launch)?;
    let mut images = Vec::new();
    let mut inputs: Vec<Option<Arc<B::Mem>>> = vec![None; bindings.accessors.len()];
    for v in &values {
        if let ArgValue::AccessorBuffer(i) | ArgValue::AccessorImage(i) = *v {
            if inputs[i].is_none() {
                let image = &bindings.accessors[i].image;
                let mem = make_resident(&dev.backend, &**image, Use::Read)?;
                images.push((Arc::clone(image), Use::Read, Arc::clone(&mem)));
                inputs[i] = Some(mem);
            }
        }
    }
    let whole = rect == Rect::full(output.width(), output.height());
    let usage = Use::Write { whole };
    let out = make_resident(&dev.backend, &**output, usage)?;
    images.push((Arc::clone(output), usage, Arc::clone(&out)));
    let input = |i: usize| match &inputs[i] {
        Some(m) => Arc::clone(m),
        None => unreachable!("bug: accessor {i} was not made resident"),
    };
    let args = values
        .iter()
        .map(|v| match *v {
            ArgValue::Scalar(s) => Arg::Scalar(s),
            ArgValue::Output => Arg::Buffer(Arc::clone(&out)),
            ArgValue::AccessorBuffer(i) => Arg::Buffer(input(i)),
            ArgValue::AccessorImage(i) => {
                let a = &bindings.accessors[i];
                Arg::Image {
                    mem: input(i),
                    width: a.image.width(),
                    height: a.image.height(),
                    pixel: a.slot.pixel,
                }
            }
            ArgValue::MaskBuffer(i) => Arg::Mask(i),
        })
        .collect();
    let masks = bindings
        .masks
        .iter()
        .map(|m| mask_bytes(&m.values, m.slot.ty.scalar))
        .collect::<Result<_>>()?;
    Ok(Prepared {
        kernel,
        launch,
        args,
        masks,
        images,
    })
}

/// Enqueues a prepared launch and does the bookkeeping after it: the
/// output's device copy is current, its host copy stale.
pub(crate) fn run<B: Backend>(dev: &GpuDevice<B>, p: &Prepared<B>) -> Result<()> {
    p.enqueue(&dev.backend)?;
    written(&*dev.backend, p)?;
    *dev.last_config
        .lock()
        .unwrap_or_else(PoisonError::into_inner) = Some(p.kernel.info.config.clone());
    Ok(())
}

/// Marks what launch `p` wrote.
pub(crate) fn written<B: Backend>(backend: &B, p: &Prepared<B>) -> Result<()> {
    for (image, usage, mem) in &p.images {
        if matches!(usage, Use::Write { .. }) {
            backend.written(mem);
            mark_written(&**image)?;
        }
    }
    Ok(())
}
