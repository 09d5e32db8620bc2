//! Binding arguments and enqueueing a kernel on an OpenCL device.

use super::device::ClDevice;
use crate::gpu::backend::{Arg, Enqueue};
use crate::gpu::errors::launch;
use crate::gpu::masks::MaskGuard;
use crate::Result;
use opencl3::kernel::set_kernel_arg;
use opencl3::memory::{Buffer, ClMem as _, CL_MEM_COPY_HOST_PTR, CL_MEM_READ_ONLY};
use opencl3::types::cl_mem;

/// A `cl_mem` as a kernel argument: a 64-bit handle on the hosts built for.
fn handle(mem: cl_mem) -> u64 {
    const _: () = assert!(std::mem::size_of::<cl_mem>() == 8);
    mem as u64
}

impl ClDevice {
    /// The `cl_mem` of a memory argument: the buffer, its image copy, or
    /// the mask's constant buffer (made anew when the coefficients change).
    fn handle(
        &self,
        arg: &Arg<ClDevice>,
        l: &Enqueue<'_, ClDevice>,
        copies: &mut MaskGuard<'_, Buffer<u8>>,
    ) -> Result<u64> {
        Ok(match arg {
            Arg::Buffer(mem) => handle(mem.raw()),
            Arg::Image {
                mem,
                width,
                height,
                pixel,
            } => handle(mem.as_image(self, *width, *height, *pixel)?),
            Arg::Mask(i) => {
                let bytes = l.mask(*i)?;
                let buffer = copies.refresh(*i, bytes, |_| {
                    // SAFETY: the host pointer is only read during the call
                    // (COPY_HOST_PTR), and `bytes` holds exactly `len` bytes.
                    unsafe {
                        Buffer::<u8>::create(
                            &self.context,
                            CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR,
                            bytes.len(),
                            bytes.as_ptr().cast_mut().cast(),
                        )
                    }
                    .map_err(|e| launch::<ClDevice>(&l.info.entry, "mask buffer", e))
                })?;
                handle(buffer.get())
            }
            Arg::Scalar(_) => unreachable!("bug: scalars are packed by value"),
        })
    }

    /// Sets every argument of `l` on its kernel and enqueues it.
    pub(crate) fn enqueue(&self, l: Enqueue<'_, ClDevice>) -> Result<()> {
        let name = &l.info.entry;
        let (mut params, copies) = l.pack(|arg, copies| self.handle(arg, &l, copies))?;
        let kernel = l.entry.lock();
        for (index, arg) in params.iter_mut().enumerate() {
            // SAFETY: each value has the size of the C type codegen declared
            // for the parameter: `int` geometry as i32, parameters with their
            // own scalar type, buffers and images as `cl_mem` handles that
            // stay alive until the enqueue below (OpenCL retains them).
            unsafe { set_kernel_arg(kernel.get(), index as u32, arg.len(), arg.ptr()) }.map_err(
                |e| {
                    let kind = &l.info.args[index].kind;
                    let e = opencl3::error_codes::ClError(e);
                    launch::<ClDevice>(name, &format!("argument {index} ({kind:?})"), e)
                },
            )?;
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
        .map_err(|e| launch::<ClDevice>(name, "clEnqueueNDRangeKernel", e))?;
        drop((kernel, copies));
        self.last_launch.set(event);
        Ok(())
    }
}
