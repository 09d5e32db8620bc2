//! Filling constant memory and launching a kernel on a CUDA device.

use super::device::CudaDevice;
use crate::gpu::args::Scalar;
use crate::gpu::backend::{Arg, Enqueue};
use crate::{Error, Result};
use cudarc::driver::{result, sys};
use std::ffi::c_void;
use std::sync::PoisonError;

fn launch_err(entry: &str, what: &str, e: impl std::fmt::Debug) -> Error {
    Error::Launch {
        backend: "cuda".into(),
        kernel: entry.to_string(),
        message: format!("{what}: {e:?}"),
    }
}

/// One kernel parameter's value, as `cuLaunchKernel` takes it by pointer.
#[derive(Clone, Copy)]
enum Param {
    Scalar(Scalar),
    Handle(u64),
}

impl Param {
    fn ptr(&mut self) -> *mut c_void {
        match self {
            Param::Scalar(Scalar::U8(v)) => (v as *mut u8).cast(),
            Param::Scalar(Scalar::U16(v)) => (v as *mut u16).cast(),
            Param::Scalar(Scalar::I32(v)) => (v as *mut i32).cast(),
            Param::Scalar(Scalar::U32(v)) => (v as *mut u32).cast(),
            Param::Scalar(Scalar::F32(v)) => (v as *mut f32).cast(),
            Param::Scalar(Scalar::F64(v)) => (v as *mut f64).cast(),
            Param::Handle(v) => (v as *mut u64).cast(),
        }
    }
}

impl CudaDevice {
    /// Fills the kernel's constant symbols and launches it.
    pub(crate) fn enqueue(&self, l: Enqueue<'_, CudaDevice>) -> Result<()> {
        let name = &l.info.entry;
        let mut params = Vec::with_capacity(l.args.len());
        for arg in l.args {
            params.push(match arg {
                Arg::Scalar(s) => Param::Scalar(*s),
                Arg::Buffer(mem) => Param::Handle(mem.ptr),
                Arg::Image { mem, pixel, .. } => Param::Handle(mem.texture(*pixel)?),
                Arg::Mask(i) => {
                    return Err(launch_err(name, "masks are constant symbols in CUDA", i))
                }
            });
        }
        let mut pointers: Vec<*mut c_void> = params.iter_mut().map(Param::ptr).collect();
        let guard = l.entry.lock();
        for sym in &l.info.constant_symbols {
            let bytes = l
                .masks
                .get(sym.mask)
                .ok_or_else(|| launch_err(name, "constant symbol of a missing mask", sym.mask))?;
            let mut view = l
                .entry
                .module
                .get_global(&sym.name, &self.stream)
                .map_err(|e| launch_err(name, &format!("symbol `{}`", sym.name), e))?;
            if view.len() < bytes.len() {
                return Err(launch_err(name, "constant symbol too small", sym.bytes));
            }
            self.stream
                .memcpy_htod(bytes, &mut view)
                .map_err(|e| launch_err(name, "filling constant memory", e))?;
        }
        let timing = Some(sys::CUevent_flags::CU_EVENT_DEFAULT);
        let event = |s: &Self| s.stream.record_event(timing).map_err(|e| launch_err(name, "event", e));
        let start = event(self)?;
        let (grid, block) = (l.launch.grid, l.launch.block);
        // SAFETY: `pointers` holds one pointer per kernel parameter, in
        // order, to a value of the parameter's C type (`int` geometry,
        // scalars of their own type, device pointers and texture objects as
        // 64-bit handles); the memory they name is held by the caller's
        // arguments until the launch is queued, and freeing it later waits
        // for the launch.
        unsafe {
            result::launch_kernel(
                l.entry.function.cu_function(),
                (grid[0], grid[1], 1),
                (block[0], block[1], 1),
                0,
                self.stream.cu_stream(),
                &mut pointers,
            )
        }
        .map_err(|e| launch_err(name, "cuLaunchKernel", e))?;
        let end = event(self)?;
        drop(guard);
        *self
            .last_launch
            .lock()
            .unwrap_or_else(PoisonError::into_inner) = Some((start, end));
        Ok(())
    }
}
