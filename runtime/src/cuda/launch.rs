//! Launching a kernel on a CUDA device.

use super::buffer::{CuMem, CuResidency};
use super::device::CudaDevice;
use super::graph::{self, Input, Launched, Param};
use super::program::{self, CuKernel};
use crate::gpu::residency::{make_resident, mark_written, Use};
use crate::gpu::{self, ArgValue};
use crate::{Error, Result};
use cudarc::driver::{result, sys};
use hipacc_codegen::arch::occupancy::{refine_block, ResourceUsage};
use hipacc_codegen::{Config, ConfigOverride, Language};
use hipacc_core::image::DynImage;
use hipacc_core::kernel::Bindings;
use hipacc_core::{ir, IterationSpace, Kernel, Rect};
use std::ffi::c_void;
use std::sync::{Arc, PoisonError};

/// Runs `kernel` over `space` on `dev`.
pub(crate) fn execute<K: Kernel>(
    dev: &Arc<CudaDevice>,
    overrides: Option<&ConfigOverride>,
    kernel: &K,
    space: &IterationSpace<K::Output>,
) -> Result<()> {
    let ir = kernel.ir()?;
    let bindings = kernel.bindings();
    let output = space.image().to_dyn();
    gpu::check_aliasing(K::NAME, &bindings, output.id())?;
    let tune = crate::explore::device_key(crate::BackendKind::Cuda, &dev.name);
    let (config, tuned) = gpu::choose_launch_config(
        &ir,
        dev.target,
        Language::Cuda,
        overrides,
        &tune,
        space.rect(),
    )?;
    dev.check_limits(&config, 0)?;
    // A remembered (measured) block is kept as it is.
    let block_fixed = gpu::block_fixed(overrides)? || tuned;
    let k = refined_kernel(dev, &ir, config, block_fixed)?;
    run(dev, &k, &bindings, &output, space.rect())
}

/// The kernel for `config`, after the occupancy check: the registers and
/// shared memory the compiled kernel uses refine the block size unless the
/// user fixed it.
fn refined_kernel(
    dev: &CudaDevice,
    ir: &ir::Kernel,
    config: Config,
    block_fixed: bool,
) -> Result<Arc<CuKernel>> {
    let first = program::kernel(dev, ir, &config)?;
    if block_fixed {
        return Ok(first);
    }
    let memo = (ir.stable_hash(), config.key());
    let refined = match dev.refined.get(&memo) {
        Some(c) => c,
        None => {
            let usage = ResourceUsage {
                registers_per_thread: first.function.num_regs().unwrap_or(0).max(0) as u32,
                shared_bytes_per_block: first.function.shared_size_bytes().unwrap_or(0).max(0)
                    as u32,
            };
            let c = refine_block(dev.target, &config, usage);
            let c = if c.validate_for(ir, dev.target).is_ok() && dev.check_limits(&c, 0).is_ok() {
                c
            } else {
                config.clone()
            };
            dev.refined.insert(memo, c)
        }
    };
    if refined == config {
        Ok(first)
    } else {
        program::kernel(dev, ir, &refined)
    }
}

fn launch_err(k: &CuKernel, what: &str, e: impl std::fmt::Debug) -> Error {
    Error::Launch {
        backend: "cuda".into(),
        kernel: k.info.entry.clone(),
        message: format!("{what}: {e:?}"),
    }
}

/// Launches a loaded kernel over `rect` of `output`.
pub(crate) fn run(
    dev: &Arc<CudaDevice>,
    k: &Arc<CuKernel>,
    bindings: &Bindings,
    output: &Arc<dyn DynImage>,
    rect: Rect,
) -> Result<()> {
    let launch = k
        .info
        .launch(rect, &gpu::accessor_regions(bindings))
        .map_err(gpu::codegen_error)?;
    let args = gpu::resolve_args(&k.info, bindings, output.width(), rect, &launch)?;
    let res = CuResidency(dev);
    let mut inputs: Vec<Option<Arc<CuMem>>> = vec![None; bindings.accessors.len()];
    for arg in &args {
        if let ArgValue::AccessorBuffer(i) | ArgValue::AccessorImage(i) = *arg {
            if inputs[i].is_none() {
                let image = &*bindings.accessors[i].image;
                inputs[i] = Some(make_resident(&res, image, Use::Read)?);
            }
        }
    }
    let whole = rect == Rect::full(output.width(), output.height());
    let out_use = Use::Write { whole };
    let out = make_resident(&res, &**output, out_use)?;
    let mut params: Vec<Param> = Vec::with_capacity(args.len());
    for arg in &args {
        params.push(match *arg {
            ArgValue::Scalar(s) => Param::Scalar(s),
            ArgValue::Output => Param::Handle(out.ptr),
            ArgValue::AccessorBuffer(i) => Param::Handle(input(&inputs, i).ptr),
            ArgValue::AccessorImage(i) => {
                Param::Handle(input(&inputs, i).texture(bindings.accessors[i].slot.pixel)?)
            }
            ArgValue::MaskBuffer(i) => {
                return Err(launch_err(
                    k,
                    "CUDA kernels take masks as constant symbols",
                    i,
                ))
            }
        });
    }
    let recorded = params.clone();
    let mut pointers: Vec<*mut c_void> = params.iter_mut().map(Param::ptr).collect();
    let guard = k.lock();
    for sym in &k.info.constant_symbols {
        let m = bindings
            .masks
            .get(sym.mask)
            .ok_or_else(|| launch_err(k, "constant symbol of a missing mask", sym.mask))?;
        let bytes = gpu::mask_bytes(&m.values, m.slot.ty.scalar)?;
        let mut view = k
            .module
            .get_global(&sym.name, &dev.stream)
            .map_err(|e| launch_err(k, &format!("symbol `{}`", sym.name), e))?;
        if view.len() < bytes.len() {
            return Err(launch_err(
                k,
                "constant symbol too small",
                (view.len(), bytes.len()),
            ));
        }
        dev.stream
            .memcpy_htod(&bytes, &mut view)
            .map_err(|e| launch_err(k, "filling constant memory", e))?;
    }
    let timing = Some(sys::CUevent_flags::CU_EVENT_DEFAULT);
    let start = dev
        .stream
        .record_event(timing)
        .map_err(|e| launch_err(k, "event", e))?;
    // SAFETY: `pointers` holds one pointer per kernel parameter, in order, to
    // a value of the parameter's C type (`int` geometry, scalars of their own
    // type, device pointers and texture objects as 64-bit handles); the
    // memory they name stays alive (`inputs`, `out`) until the launch is
    // queued, and freeing it later waits for the launch.
    unsafe {
        result::launch_kernel(
            k.function.cu_function(),
            (launch.grid[0], launch.grid[1], 1),
            (launch.block[0], launch.block[1], 1),
            0,
            dev.stream.cu_stream(),
            &mut pointers,
        )
    }
    .map_err(|e| launch_err(k, "cuLaunchKernel", e))?;
    let end = dev
        .stream
        .record_event(timing)
        .map_err(|e| launch_err(k, "event", e))?;
    drop(guard);
    mark_written(&**output)?;
    if graph::recording_here(dev) {
        graph::record(
            dev,
            Launched {
                kernel: k,
                grid: [launch.grid[0], launch.grid[1]],
                block: [launch.block[0], launch.block[1]],
                params: &recorded,
                inputs: bound_inputs(bindings, &args, &inputs)?,
                output: (output.clone(), out, out_use),
            },
        );
    }
    *dev.last_launch
        .lock()
        .unwrap_or_else(PoisonError::into_inner) = Some((start, end));
    *dev.last_config
        .lock()
        .unwrap_or_else(PoisonError::into_inner) = Some(k.info.config.clone());
    Ok(())
}

/// Each accessor image a launch read, its memory and the texture object it
/// was read through, for a recording.
fn bound_inputs(
    bindings: &Bindings,
    args: &[ArgValue],
    inputs: &[Option<Arc<CuMem>>],
) -> Result<Vec<Input>> {
    let mut out = Vec::new();
    for arg in args {
        let (i, texture) = match *arg {
            ArgValue::AccessorBuffer(i) => (i, None),
            ArgValue::AccessorImage(i) => {
                let pixel = bindings.accessors[i].slot.pixel;
                (i, Some((pixel, input(inputs, i).texture(pixel)?)))
            }
            _ => continue,
        };
        let Some(mem) = inputs.get(i).cloned().flatten() else {
            unreachable!("bug: accessor {i} was not made resident")
        };
        out.push(Input {
            image: bindings.accessors[i].image.clone(),
            mem,
            texture,
        });
    }
    Ok(out)
}

fn input(inputs: &[Option<Arc<CuMem>>], i: usize) -> &CuMem {
    match inputs.get(i).and_then(Option::as_deref) {
        Some(m) => m,
        None => unreachable!("bug: accessor {i} was not made resident"),
    }
}
