//! The CUDA driver as a [`Backend`]: memory copies, NVRTC and module
//! loading, constant memory for masks, and `cuLaunchKernel`.
//!
//! The PTX of each program is also kept on disk and reused by later runs
//! ([`crate::cache::on_disk`]; `HIPACC_CACHE_DIR` says where).

use super::buffer::{bind, copy_rect, CuMem, Side};
use super::device::CudaDevice;
use super::nvrtc::compile_program;
use crate::gpu::args::Packed;
use crate::gpu::backend::{Arg, Backend, Enqueue, Facts, Graph};
use crate::gpu::errors::{check_copy, check_rect, launch, transfer};
use crate::{BackendKind, Result};
use cudarc::driver::{result, sys, CudaFunction, CudaModule};
use cudarc::nvrtc::Ptx;
use hipacc_codegen::config::occupancy::ResourceUsage;
use hipacc_codegen::{KernelInfo, Language, Program};
use hipacc_core::image::ByteRect;
use std::ffi::c_void;
use std::sync::Arc;
use std::time::Duration;

/// A kernel of a loaded module.
pub(crate) struct CuEntry {
    function: CudaFunction,
    module: Arc<CudaModule>,
}

impl Backend for CudaDevice {
    type Mem = CuMem;
    type Program = Arc<CudaModule>;
    type Entry = CuEntry;
    /// Constant symbols are the kernel's own (named after its entry).
    type MaskCopy = ();

    const KIND: BackendKind = BackendKind::Cuda;
    const LANGUAGE: Language = Language::Cuda;

    fn facts(&self) -> &Facts {
        &self.facts
    }

    fn allocate(&self, bytes: usize) -> Result<CuMem> {
        bind(&self.ctx)?;
        // SAFETY: a plain allocation of `bytes` (> 0) bytes in the bound context.
        let ptr = unsafe { result::malloc_sync(bytes) }
            .map_err(|e| transfer::<Self>(&format!("allocating {bytes} bytes"), e))?;
        Ok(CuMem::new(ptr, bytes, Arc::clone(&self.ctx)))
    }

    fn upload(&self, mem: &CuMem, data: &[u8]) -> Result<()> {
        check_copy::<Self>("upload", data.len(), mem.bytes)?;
        bind(&self.ctx)?;
        // SAFETY: a synchronous copy of exactly the allocation's size.
        unsafe { result::memcpy_htod_sync(mem.ptr, data) }
            .map_err(|e| transfer::<Self>("upload", e))
    }

    fn download(&self, mem: &CuMem, dst: &mut [u8]) -> Result<()> {
        check_copy::<Self>("download", dst.len(), mem.bytes)?;
        bind(&self.ctx)?;
        // SAFETY: a synchronous copy of exactly the allocation's size on the
        // legacy default stream, after all launches that wrote it.
        unsafe { result::memcpy_dtoh_sync(dst, mem.ptr) }
            .map_err(|e| transfer::<Self>("download", e))
    }

    fn download_rect(&self, mem: &CuMem, rect: ByteRect, dst: &mut [u8]) -> Result<()> {
        check_rect::<Self>("rectangle download", rect, dst.len(), mem.bytes)?;
        bind(&self.ctx)?;
        // SAFETY: the rectangle lies inside both the memory and `dst`
        // (checked above); a synchronous copy on the legacy default stream.
        unsafe {
            copy_rect(
                rect,
                Side::Device(mem.ptr),
                Side::Host(dst.as_mut_ptr().cast()),
            )
        }
        .map_err(|e| transfer::<Self>("rectangle download", e))
    }

    fn upload_rect(&self, mem: &CuMem, rect: ByteRect, src: &[u8]) -> Result<()> {
        check_rect::<Self>("rectangle upload", rect, src.len(), mem.bytes)?;
        bind(&self.ctx)?;
        // SAFETY: as in `download_rect`, from `src` to the memory.
        unsafe {
            copy_rect(
                rect,
                Side::Host(src.as_ptr() as *mut _),
                Side::Device(mem.ptr),
            )
        }
        .map_err(|e| transfer::<Self>("rectangle upload", e))
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
        let (mut params, mut symbols) = l.pack(|arg, _| match arg {
            Arg::Buffer(mem) => Ok(mem.ptr),
            Arg::Image { mem, pixel, .. } => mem.texture(*pixel),
            _ => unreachable!("bug: CUDA masks are constant symbols, not arguments"),
        })?;
        let name = &l.info.entry;
        let stream = self.launch_stream();
        let mut pointers: Vec<*mut c_void> = params.iter_mut().map(Packed::ptr).collect();
        for (i, sym) in l.info.constant_symbols.iter().enumerate() {
            let bytes = l.mask(sym.mask)?;
            symbols.refresh(i, bytes, |_| {
                let mut view = l
                    .entry
                    .module
                    .get_global(&sym.name, &stream)
                    .map_err(|e| launch::<Self>(name, &format!("symbol `{}`", sym.name), e))?;
                if view.len() < bytes.len() {
                    return Err(launch::<Self>(name, "constant symbol too small", sym.bytes));
                }
                stream
                    .memcpy_htod(bytes, &mut view)
                    .map_err(|e| launch::<Self>(name, "filling constant memory", e))
            })?;
        }
        let timing = Some(sys::CUevent_flags::CU_EVENT_DEFAULT);
        let event = || {
            stream
                .record_event(timing)
                .map_err(|e| launch::<Self>(name, "event", e))
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
                stream.cu_stream(),
                &mut pointers,
            )
        }
        .map_err(|e| launch::<Self>(name, "cuLaunchKernel", e))?;
        let end = event()?;
        drop(symbols);
        self.last_launch.set((start, end));
        Ok(())
    }

    fn synchronize(&self) -> Result<()> {
        self.stream
            .synchronize()
            .map_err(|e| launch::<Self>("", "synchronize", e))
    }

    fn capture(&self, enqueue_all: &mut dyn FnMut() -> Result<()>) -> Option<Box<dyn Graph>> {
        super::graph::capture(self, enqueue_all)
    }

    fn last_launch_time(&self) -> Option<Duration> {
        self.last_launch.duration(|(start, end)| {
            let ms = start.elapsed_ms(end).ok()?;
            Some(Duration::from_secs_f64(f64::from(ms) / 1e3))
        })
    }
}
