//! Compiling generated CUDA C with NVRTC, loading modules, caching kernels.
//!
//! With `HIPACC_CACHE_DIR` set, the PTX of each program is also kept on disk
//! and reused by later runs (keyed like the in-memory cache).

use super::device::CudaDevice;
use super::nvrtc::compile_program;
use crate::cache::CacheKey;
use crate::gpu::codegen_error;
use crate::{Error, Result};
use cudarc::driver::{CudaFunction, CudaModule};
use cudarc::nvrtc::Ptx;
use hipacc_codegen::{generate_batch, Config, KernelInfo, Language};
use hipacc_core::ir;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

/// A loaded kernel.
pub(crate) struct CuKernel {
    /// Entry point, arguments, constant symbols, launch geometry.
    pub(crate) info: KernelInfo,
    pub(crate) function: CudaFunction,
    pub(crate) module: Arc<CudaModule>,
    /// Held from filling constant symbols until the launch is queued.
    launch: Mutex<()>,
}

impl CuKernel {
    /// Serialises launches of this kernel (constant memory is per module).
    pub(crate) fn lock(&self) -> MutexGuard<'_, ()> {
        self.launch.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

fn key(dev: &CudaDevice, ir_hash: u64, config: &Config) -> CacheKey {
    CacheKey::new(ir_hash, config, dev.target.name, &dev.name, &dev.driver)
}

/// The kernel for `config` of `kernel`, from the cache or compiled.
pub(crate) fn kernel(
    dev: &CudaDevice,
    kernel: &ir::Kernel,
    config: &Config,
) -> Result<Arc<CuKernel>> {
    if let Some(k) = dev.kernels.get(&key(dev, kernel.stable_hash(), config)) {
        return Ok(k);
    }
    match build(dev, &[(kernel, config)])?.pop() {
        Some(k) => Ok(k),
        None => unreachable!("bug: build returns one kernel per item"),
    }
}

/// Compiles every `(kernel, config)` not yet cached as one module and caches
/// each kernel; returns them in item order.
pub(crate) fn build(
    dev: &CudaDevice,
    items: &[(&ir::Kernel, &Config)],
) -> Result<Vec<Arc<CuKernel>>> {
    let hashes: Vec<u64> = items.iter().map(|(k, _)| k.stable_hash()).collect();
    let missing: Vec<(&ir::Kernel, &Config)> = items
        .iter()
        .zip(&hashes)
        .filter(|((_, c), h)| dev.kernels.get(&key(dev, **h, c)).is_none())
        .map(|(item, _)| *item)
        .collect();
    if !missing.is_empty() {
        build_module(dev, &missing)?;
    }
    items
        .iter()
        .zip(&hashes)
        .map(|((k, c), h)| {
            dev.kernels.get(&key(dev, *h, c)).ok_or_else(|| {
                Error::Config(format!(
                    "bug: kernel `{}` ({}) missing after its build",
                    k.name,
                    c.key()
                ))
            })
        })
        .collect()
}

fn build_module(dev: &CudaDevice, items: &[(&ir::Kernel, &Config)]) -> Result<()> {
    let generated = generate_batch(items, dev.target, Language::Cuda).map_err(codegen_error)?;
    for info in &generated.kernels {
        dev.check_limits(&info.config, info.shared_bytes)?;
    }
    let disk = generated
        .kernels
        .first()
        .and_then(|i| key(dev, i.ir_hash, &i.config).disk_path("ptx"))
        .filter(|_| generated.kernels.len() == 1);
    let cached = disk.as_ref().and_then(|p| std::fs::read_to_string(p).ok());
    let ptx = match cached {
        Some(ptx) => ptx,
        None => {
            let ptx = compile_program(&generated, &dev.arch)?;
            if let Some(path) = &disk {
                if let Some(dir) = path.parent() {
                    let _ = std::fs::create_dir_all(dir);
                }
                let _ = std::fs::write(path, &ptx);
            }
            ptx
        }
    };
    let fail = |what: String| Error::Compile {
        kernel: crate::gpu::dump::kernel_names(&generated),
        device: dev.name.clone(),
        source_path: crate::gpu::dump::save_failed(&generated),
        log: what,
    };
    let module = dev
        .ctx
        .load_module(Ptx::from_src(ptx))
        .map_err(|e| fail(format!("cuModuleLoadData: {e:?}")))?;
    for info in generated.kernels.clone() {
        let function = module
            .load_function(&info.entry)
            .map_err(|e| fail(format!("cuModuleGetFunction `{}`: {e:?}", info.entry)))?;
        let k = key(dev, info.ir_hash, &info.config);
        dev.kernels.insert(
            k,
            Arc::new(CuKernel {
                info,
                function,
                module: Arc::clone(&module),
                launch: Mutex::new(()),
            }),
        );
    }
    Ok(())
}
