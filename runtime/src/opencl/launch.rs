//! Binding arguments and enqueueing a kernel on an OpenCL device.

use super::device::ClDevice;
use crate::gpu::args::Scalar;
use crate::gpu::backend::{Arg, Enqueue};
use crate::{BackendKind, Error, Result};
use opencl3::memory::{Buffer, ClMem as _, CL_MEM_COPY_HOST_PTR, CL_MEM_READ_ONLY};
use opencl3::types::cl_mem;
use std::sync::PoisonError;

fn launch_err(entry: &str, what: &str, e: impl std::fmt::Display) -> Error {
    Error::Launch {
        backend: BackendKind::OpenCl,
        kernel: entry.to_string(),
        message: format!("{what}: {e}"),
    }
}

impl ClDevice {
    /// Sets every argument of `l` on its kernel and enqueues it.
    pub(crate) fn enqueue(&self, l: Enqueue<'_, ClDevice>) -> Result<()> {
        let name = &l.info.entry;
        // Handles that must outlive the enqueue: mask buffers.
        let mut masks: Vec<Buffer<u8>> = Vec::new();
        let mut handles: Vec<cl_mem> = Vec::with_capacity(l.args.len());
        for arg in l.args {
            handles.push(match arg {
                Arg::Buffer(mem) => mem.raw(),
                Arg::Image {
                    mem,
                    width,
                    height,
                    pixel,
                } => mem.as_image(self, *width, *height, *pixel)?,
                Arg::Mask(i) => {
                    let mut bytes = l.masks[*i].clone();
                    // SAFETY: the host pointer is read during the call only
                    // (COPY_HOST_PTR), and `bytes` holds exactly `len` bytes.
                    let buffer = unsafe {
                        Buffer::<u8>::create(
                            &self.context,
                            CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR,
                            bytes.len(),
                            bytes.as_mut_ptr().cast(),
                        )
                    }
                    .map_err(|e| launch_err(name, "mask buffer", e))?;
                    let raw = buffer.get();
                    masks.push(buffer);
                    raw
                }
                Arg::Scalar(_) => std::ptr::null_mut(),
            });
        }
        let kernel = l.entry.lock();
        for (index, (arg, mem)) in l.args.iter().zip(&handles).enumerate() {
            // SAFETY: each value has the size of the C type codegen declared
            // for the parameter: `int` geometry as i32, parameters with their
            // own scalar type, buffers and images as `cl_mem` handles that
            // stay alive until the enqueue below (OpenCL retains them).
            let set = unsafe {
                match *arg {
                    Arg::Scalar(s) => match s {
                        Scalar::U8(v) => kernel.set_arg(index as u32, &v),
                        Scalar::U16(v) => kernel.set_arg(index as u32, &v),
                        Scalar::I32(v) => kernel.set_arg(index as u32, &v),
                        Scalar::U32(v) => kernel.set_arg(index as u32, &v),
                        Scalar::F32(v) => kernel.set_arg(index as u32, &v),
                        Scalar::F64(v) => kernel.set_arg(index as u32, &v),
                    },
                    _ => kernel.set_arg(index as u32, mem),
                }
            };
            set.map_err(|e| {
                let kind = &l.info.args[index].kind;
                launch_err(name, &format!("argument {index} ({kind:?})"), e)
            })?;
        }
        let local = [l.launch.block[0] as usize, l.launch.block[1] as usize];
        // SAFETY: every argument is set; global is a multiple of local in
        // each dimension (codegen's launch geometry).
        let event = unsafe {
            self.queue.enqueue_nd_range_kernel(
                kernel.get(),
                2,
                std::ptr::null(),
                l.launch.global.as_ptr(),
                local.as_ptr(),
                &[],
            )
        }
        .map_err(|e| launch_err(name, "clEnqueueNDRangeKernel", e))?;
        drop(kernel);
        *self
            .last_launch
            .lock()
            .unwrap_or_else(PoisonError::into_inner) = Some(event);
        drop(masks);
        Ok(())
    }
}
