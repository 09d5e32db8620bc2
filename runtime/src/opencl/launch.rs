//! Launching a kernel on an OpenCL device.

use super::buffer::{ClMem, ClResidency};
use super::device::ClDevice;
use super::program::{self, ClKernel};
use crate::gpu::residency::{make_resident, mark_written, Use};
use crate::gpu::{self, ArgValue, Scalar};
use crate::{Error, Result};
use hipacc_codegen::{ConfigOverride, Language};
use hipacc_core::image::DynImage;
use hipacc_core::kernel::Bindings;
use hipacc_core::{IterationSpace, Kernel, Rect};
use opencl3::memory::{Buffer, ClMem as _, CL_MEM_COPY_HOST_PTR, CL_MEM_READ_ONLY};
use opencl3::types::cl_mem;
use std::sync::{Arc, PoisonError};

/// Runs `kernel` over `space` on `dev` with the config the architecture
/// model picks (after `overrides`).
pub(crate) fn execute<K: Kernel>(
    dev: &Arc<ClDevice>,
    overrides: Option<&ConfigOverride>,
    kernel: &K,
    space: &IterationSpace<K::Output>,
) -> Result<()> {
    let ir = kernel.ir()?;
    let bindings = kernel.bindings();
    let output = space.image().to_dyn();
    gpu::check_aliasing(K::NAME, &bindings, output.id())?;
    let tune = crate::explore::device_key(crate::BackendKind::OpenCl, &dev.name);
    let (config, _) = gpu::choose_launch_config(
        &ir,
        dev.target,
        Language::OpenCl,
        overrides,
        &tune,
        space.rect(),
    )?;
    dev.check_limits(&config, 0)?;
    let k = program::kernel(dev, &ir, &config)?;
    run(dev, &k, &bindings, &*output, space.rect())
}

fn launch_err(k: &ClKernel, what: &str, e: impl std::fmt::Display) -> Error {
    Error::Launch {
        backend: "opencl".into(),
        kernel: k.info.entry.clone(),
        message: format!("{what}: {e}"),
    }
}

/// Launches a built kernel over `rect` of `output`.
pub(crate) fn run(
    dev: &Arc<ClDevice>,
    k: &ClKernel,
    bindings: &Bindings,
    output: &dyn DynImage,
    rect: Rect,
) -> Result<()> {
    let launch = k
        .info
        .launch(rect, &gpu::accessor_regions(bindings))
        .map_err(gpu::codegen_error)?;
    let args = gpu::resolve_args(&k.info, bindings, output.width(), rect, &launch)?;
    let res = ClResidency(dev);
    let mut inputs: Vec<Option<Arc<ClMem>>> = vec![None; bindings.accessors.len()];
    for arg in &args {
        if let ArgValue::AccessorBuffer(i) | ArgValue::AccessorImage(i) = *arg {
            if inputs[i].is_none() {
                let image = &*bindings.accessors[i].image;
                inputs[i] = Some(make_resident(&res, image, Use::Read)?);
            }
        }
    }
    let whole = rect == Rect::full(output.width(), output.height());
    let out = make_resident(&res, output, Use::Write { whole })?;
    // Handles that must outlive the enqueue: mask buffers, and the inputs.
    let mut masks: Vec<Buffer<u8>> = Vec::new();
    let mut handles: Vec<cl_mem> = Vec::with_capacity(args.len());
    for arg in &args {
        let mem = match *arg {
            ArgValue::Output => out.raw(),
            ArgValue::AccessorBuffer(i) => input(&inputs, i).raw(),
            ArgValue::AccessorImage(i) => {
                let a = &bindings.accessors[i];
                let (w, h) = (a.image.width(), a.image.height());
                input(&inputs, i).as_image(dev, w, h, a.slot.pixel)?
            }
            ArgValue::MaskBuffer(i) => {
                let m = &bindings.masks[i];
                let mut bytes = gpu::mask_bytes(&m.values, m.slot.ty.scalar)?;
                // SAFETY: the host pointer is read during the call only
                // (COPY_HOST_PTR), and `bytes` holds exactly `len` bytes.
                let buffer = unsafe {
                    Buffer::<u8>::create(
                        &dev.context,
                        CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR,
                        bytes.len(),
                        bytes.as_mut_ptr().cast(),
                    )
                }
                .map_err(|e| launch_err(k, "mask buffer", e))?;
                let raw = buffer.get();
                masks.push(buffer);
                raw
            }
            ArgValue::Scalar(_) => std::ptr::null_mut(),
        };
        handles.push(mem);
    }
    let kernel = k.lock();
    for (index, (arg, mem)) in args.iter().zip(&handles).enumerate() {
        let index = index as u32;
        // SAFETY: each value has the size of the C type codegen declared for
        // the parameter: `int` geometry as i32, parameters with their own
        // scalar type, buffers and images as `cl_mem` handles that stay alive
        // until the enqueue below (OpenCL retains them for the command).
        let set = unsafe {
            match *arg {
                ArgValue::Scalar(s) => match s {
                    Scalar::U8(v) => kernel.set_arg(index, &v),
                    Scalar::U16(v) => kernel.set_arg(index, &v),
                    Scalar::I32(v) => kernel.set_arg(index, &v),
                    Scalar::U32(v) => kernel.set_arg(index, &v),
                    Scalar::F32(v) => kernel.set_arg(index, &v),
                    Scalar::F64(v) => kernel.set_arg(index, &v),
                },
                _ => kernel.set_arg(index, mem),
            }
        };
        set.map_err(|e| {
            launch_err(
                k,
                &format!("argument {index} ({:?})", k.info.args[index as usize].kind),
                e,
            )
        })?;
    }
    let global = launch.global;
    let local = [launch.block[0] as usize, launch.block[1] as usize];
    // SAFETY: every argument is set; global is a multiple of local in each
    // dimension (codegen's launch geometry).
    let event = unsafe {
        dev.queue.enqueue_nd_range_kernel(
            kernel.get(),
            2,
            std::ptr::null(),
            global.as_ptr(),
            local.as_ptr(),
            &[],
        )
    }
    .map_err(|e| launch_err(k, "clEnqueueNDRangeKernel", e))?;
    drop(kernel);
    out.touch();
    mark_written(output)?;
    *dev.last_launch
        .lock()
        .unwrap_or_else(PoisonError::into_inner) = Some(event);
    *dev.last_config
        .lock()
        .unwrap_or_else(PoisonError::into_inner) = Some(k.info.config.clone());
    drop(masks);
    Ok(())
}

fn input(inputs: &[Option<Arc<ClMem>>], i: usize) -> &ClMem {
    match inputs.get(i).and_then(Option::as_deref) {
        Some(m) => m,
        None => unreachable!("bug: accessor {i} was not made resident"),
    }
}
