//! The CUDA driver as a [`Backend`]: memory copies, NVRTC and module
//! loading, constant memory for masks, and `cuLaunchKernel`.
//!
//! The PTX of each program is also kept on disk and reused by later runs
//! ([`crate::cache::on_disk`]; `HIPACC_CACHE_DIR` says where).

use super::buffer::{transfer_err, CuMem};
use super::device::CudaDevice;
use super::nvrtc::compile_program;
use crate::gpu::args::Scalar;
use crate::gpu::backend::{Arg, Backend, Enqueue, Facts};
use crate::{BackendKind, Error, Result};
use cudarc::driver::{result, sys, CudaFunction, CudaModule};
use cudarc::nvrtc::Ptx;
use hipacc_codegen::config::occupancy::ResourceUsage;
use hipacc_codegen::{KernelInfo, Language, Program};
use std::ffi::c_void;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

/// A kernel of a loaded module.
pub(crate) struct CuEntry {
    function: CudaFunction,
    module: Arc<CudaModule>,
    /// The bytes last copied into each of the kernel's constant symbols
    /// (in `KernelInfo::constant_symbols` order), held from filling them
    /// until the launch is queued. A copy from pageable host memory waits
    /// for the stream's earlier work, so unchanged masks are not copied
    /// again: a pipeline's launches then queue without stalling the host.
    /// Symbol names contain the entry's name, so no other kernel writes them.
    launch: Mutex<Vec<Option<Vec<u8>>>>,
}

fn launch_err(entry: &str, what: &str, e: impl std::fmt::Debug) -> Error {
    Error::Launch {
        backend: BackendKind::Cuda,
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

impl Backend for CudaDevice {
    type Mem = CuMem;
    type Program = Arc<CudaModule>;
    type Entry = CuEntry;

    const KIND: BackendKind = BackendKind::Cuda;
    const LANGUAGE: Language = Language::Cuda;

    fn facts(&self) -> &Facts {
        &self.facts
    }

    fn allocate(&self, bytes: usize) -> Result<CuMem> {
        self.ctx
            .bind_to_thread()
            .map_err(|e| transfer_err("bind context", e))?;
        // SAFETY: a plain allocation of `bytes` (> 0) bytes in the bound context.
        let ptr = unsafe { result::malloc_sync(bytes) }
            .map_err(|e| transfer_err(&format!("allocating {bytes} bytes"), e))?;
        Ok(CuMem::new(ptr, bytes, Arc::clone(&self.ctx)))
    }

    fn upload(&self, mem: &CuMem, data: &[u8]) -> Result<()> {
        if data.len() != mem.bytes {
            return Err(transfer_err("upload", (data.len(), mem.bytes)));
        }
        self.ctx
            .bind_to_thread()
            .map_err(|e| transfer_err("bind context", e))?;
        // SAFETY: a synchronous copy of exactly the allocation's size.
        unsafe { result::memcpy_htod_sync(mem.ptr, data) }.map_err(|e| transfer_err("upload", e))
    }

    fn download(&self, mem: &CuMem, dst: &mut [u8]) -> Result<()> {
        if dst.len() != mem.bytes {
            return Err(transfer_err("download", (mem.bytes, dst.len())));
        }
        self.ctx
            .bind_to_thread()
            .map_err(|e| transfer_err("bind context", e))?;
        // SAFETY: a synchronous copy of exactly the allocation's size on the
        // legacy default stream, after all launches that wrote it.
        unsafe { result::memcpy_dtoh_sync(dst, mem.ptr) }.map_err(|e| transfer_err("download", e))
    }

    fn build(&self, program: &Program) -> std::result::Result<Arc<CudaModule>, String> {
        let compiler = format!("{} {} {}", self.facts.name, self.arch, self.facts.driver);
        let ptx = crate::cache::on_disk(&program.source, &compiler, "ptx", || {
            compile_program(program, &self.arch).map_err(|e| e.to_string())
        })?;
        self.ctx
            .load_module(Ptx::from_src(ptx))
            .map_err(|e| format!("cuModuleLoadData: {e:?}"))
    }

    fn entry(
        &self,
        module: &Arc<Arc<CudaModule>>,
        info: &KernelInfo,
    ) -> std::result::Result<CuEntry, String> {
        let function = module
            .load_function(&info.entry)
            .map_err(|e| format!("cuModuleGetFunction `{}`: {e:?}", info.entry))?;
        Ok(CuEntry {
            function,
            module: Arc::clone(module),
            launch: Mutex::new(vec![None; info.constant_symbols.len()]),
        })
    }

    fn resources(&self, entry: &CuEntry) -> Option<ResourceUsage> {
        let f = &entry.function;
        Some(ResourceUsage {
            registers_per_thread: f.num_regs().unwrap_or(0).max(0) as u32,
            shared_bytes_per_block: f.shared_size_bytes().unwrap_or(0).max(0) as u32,
        })
    }

    fn enqueue(&self, l: Enqueue<'_, Self>) -> Result<()> {
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
        let mut guard = l
            .entry
            .launch
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        for (sym, filled) in l.info.constant_symbols.iter().zip(guard.iter_mut()) {
            let bytes = l
                .masks
                .get(sym.mask)
                .ok_or_else(|| launch_err(name, "constant symbol of a missing mask", sym.mask))?;
            if filled.as_deref() == Some(bytes.as_slice()) {
                continue;
            }
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
            *filled = Some(bytes.clone());
        }
        let timing = Some(sys::CUevent_flags::CU_EVENT_DEFAULT);
        let event = || {
            self.stream
                .record_event(timing)
                .map_err(|e| launch_err(name, "event", e))
        };
        let start = event()?;
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
        let end = event()?;
        drop(guard);
        *self
            .last_launch
            .lock()
            .unwrap_or_else(PoisonError::into_inner) = Some((start, end));
        Ok(())
    }

    fn synchronize(&self) -> Result<()> {
        self.stream
            .synchronize()
            .map_err(|e| launch_err("", "synchronize", e))
    }

    fn last_launch_time(&self) -> Option<Duration> {
        let guard = self
            .last_launch
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        let (start, end) = guard.as_ref()?;
        let ms = start.elapsed_ms(end).ok()?;
        Some(Duration::from_secs_f64(f64::from(ms) / 1e3))
    }
}
