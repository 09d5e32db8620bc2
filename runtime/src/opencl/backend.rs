//! The OpenCL driver as a [`Backend`]: each method is a call into the files
//! beside this one.

use super::buffer::ClMem;
use super::device::ClDevice;
use super::program::{self, ClEntry};
use crate::gpu::backend::{Backend, Enqueue, Facts};
use crate::{BackendKind, Result};
use hipacc_codegen::{KernelInfo, Language, Program};
use hipacc_core::image::ByteRect;
use opencl3::memory::Buffer;
use std::sync::Arc;
use std::time::Duration;

impl Backend for ClDevice {
    type Mem = ClMem;
    type Program = opencl3::program::Program;
    type Entry = ClEntry;
    /// A constant buffer per mask argument.
    type MaskCopy = Buffer<u8>;

    const KIND: BackendKind = BackendKind::OpenCl;
    const LANGUAGE: Language = Language::OpenCl;

    fn facts(&self) -> &Facts {
        &self.facts
    }
    fn allocate(&self, bytes: usize) -> Result<ClMem> {
        ClDevice::allocate(self, bytes)
    }
    fn upload(&self, mem: &ClMem, data: &[u8]) -> Result<()> {
        ClDevice::upload(self, mem, data)
    }
    fn download(&self, mem: &ClMem, dst: &mut [u8]) -> Result<()> {
        ClDevice::download(self, mem, dst)
    }
    fn download_rect(&self, mem: &ClMem, rect: ByteRect, dst: &mut [u8]) -> Result<()> {
        ClDevice::download_rect(self, mem, rect, dst)
    }
    fn upload_rect(&self, mem: &ClMem, rect: ByteRect, src: &[u8]) -> Result<()> {
        ClDevice::upload_rect(self, mem, rect, src)
    }
    fn written(&self, mem: &ClMem) {
        mem.touch();
    }
    fn build(&self, program: &Program) -> std::result::Result<Self::Program, String> {
        self.build_source(&program.source)
    }
    fn entry(
        &self,
        program: &Arc<Self::Program>,
        info: &KernelInfo,
    ) -> std::result::Result<ClEntry, String> {
        program::entry(program, &info.entry)
    }
    fn enqueue(&self, launch: Enqueue<'_, Self>) -> Result<()> {
        ClDevice::enqueue(self, launch)
    }
    fn synchronize(&self) -> Result<()> {
        self.finish()
    }
    fn last_launch_time(&self) -> Option<Duration> {
        ClDevice::last_launch_time(self)
    }
}
