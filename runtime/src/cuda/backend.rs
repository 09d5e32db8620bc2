//! The CUDA driver as a [`Backend`]: each method is a call into the files
//! beside this one.

use super::buffer::CuMem;
use super::device::CudaDevice;
use super::program::{self, CuEntry};
use crate::gpu::backend::{Backend, Enqueue, Facts};
use crate::{BackendKind, Result};
use cudarc::driver::CudaModule;
use hipacc_codegen::arch::occupancy::ResourceUsage;
use hipacc_codegen::{Config, KernelInfo, Language, Program};
use std::sync::Arc;
use std::time::Duration;

impl Backend for CudaDevice {
    type Mem = CuMem;
    type Program = Arc<CudaModule>;
    type Entry = CuEntry;

    const KIND: BackendKind = BackendKind::Cuda;
    const LANGUAGE: Language = Language::Cuda;

    fn facts(&self) -> &Facts {
        &self.facts
    }
    fn check_limits(&self, config: &Config, shared_bytes: u32) -> Result<()> {
        CudaDevice::check_limits(self, config, shared_bytes)
    }
    fn allocate(&self, bytes: usize) -> Result<CuMem> {
        CudaDevice::allocate(self, bytes)
    }
    fn upload(&self, mem: &CuMem, data: &[u8]) -> Result<()> {
        CudaDevice::upload(self, mem, data)
    }
    fn download(&self, mem: &CuMem, dst: &mut [u8]) -> Result<()> {
        CudaDevice::download(self, mem, dst)
    }
    fn build(&self, program: &Program) -> std::result::Result<Self::Program, String> {
        self.load(program)
    }
    fn entry(
        &self,
        program: &Arc<Self::Program>,
        info: &KernelInfo,
    ) -> std::result::Result<CuEntry, String> {
        program::entry(program, &info.entry)
    }
    fn resources(&self, entry: &CuEntry) -> Option<ResourceUsage> {
        let f = &entry.function;
        Some(ResourceUsage {
            registers_per_thread: f.num_regs().unwrap_or(0).max(0) as u32,
            shared_bytes_per_block: f.shared_size_bytes().unwrap_or(0).max(0) as u32,
        })
    }
    fn enqueue(&self, launch: Enqueue<'_, Self>) -> Result<()> {
        CudaDevice::enqueue(self, launch)
    }
    fn synchronize(&self) -> Result<()> {
        self.finish()
    }
    fn last_launch_time(&self) -> Option<Duration> {
        CudaDevice::last_launch_time(self)
    }
}
