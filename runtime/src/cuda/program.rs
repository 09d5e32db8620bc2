//! Compiling generated CUDA C with NVRTC and loading the module.
//!
//! With `HIPACC_CACHE_DIR` set, the PTX of each program is also kept on disk
//! and reused by later runs ([`crate::cache::on_disk`]).

use super::device::CudaDevice;
use super::nvrtc::compile_program;
use cudarc::driver::{CudaFunction, CudaModule};
use cudarc::nvrtc::Ptx;
use hipacc_codegen::Program;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

/// A kernel of a loaded module.
pub(crate) struct CuEntry {
    pub(crate) function: CudaFunction,
    pub(crate) module: Arc<CudaModule>,
    /// Held from filling constant symbols until the launch is queued.
    launch: Mutex<()>,
}

impl CuEntry {
    /// Serialises launches of this kernel (constant memory is per module).
    pub(crate) fn lock(&self) -> MutexGuard<'_, ()> {
        self.launch.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl CudaDevice {
    /// Compiles `program` to PTX (or finds it on disk) and loads it.
    pub(crate) fn load(&self, program: &Program) -> Result<Arc<CudaModule>, String> {
        let compiler = format!("{} {} {}", self.facts.name, self.arch, self.facts.driver);
        let ptx = crate::cache::on_disk(&program.source, &compiler, "ptx", || {
            compile_program(program, &self.arch).map_err(|e| e.to_string())
        })?;
        self.ctx
            .load_module(Ptx::from_src(ptx))
            .map_err(|e| format!("cuModuleLoadData: {e:?}"))
    }
}

/// The kernel `entry` of a loaded module.
pub(crate) fn entry(module: &Arc<CudaModule>, entry: &str) -> Result<CuEntry, String> {
    let function = module
        .load_function(entry)
        .map_err(|e| format!("cuModuleGetFunction `{entry}`: {e:?}"))?;
    Ok(CuEntry {
        function,
        module: Arc::clone(module),
        launch: Mutex::new(()),
    })
}
