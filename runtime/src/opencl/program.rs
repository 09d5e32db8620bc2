//! Building generated OpenCL C and caching the kernels.
//!
//! Several kernels (or variants) can be built as one program, so a driver
//! pays its per-build cost once ([`build`]); each kernel enters the device's
//! cache under its own key. A failed build reports the driver's log and the
//! path of the saved source.

use super::device::ClDevice;
use crate::cache::CacheKey;
use crate::gpu::{codegen_error, dump};
use crate::{Error, Result};
use hipacc_codegen::{generate_batch, Config, KernelInfo, Language};
use hipacc_core::ir;
use opencl3::kernel::Kernel;
use opencl3::program::Program;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

/// A built kernel: what codegen says about it and the driver's object.
pub(crate) struct ClKernel {
    /// Entry point, arguments, launch geometry.
    pub(crate) info: KernelInfo,
    /// Arguments are state of the `cl_kernel`: one launch sets them at a time.
    kernel: Mutex<Kernel>,
    _program: Arc<Program>,
}

impl ClKernel {
    /// The kernel object, locked for setting arguments and enqueueing.
    pub(crate) fn lock(&self) -> MutexGuard<'_, Kernel> {
        self.kernel.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// The cache key of `config` of `kernel` on `dev`.
fn key(dev: &ClDevice, ir_hash: u64, config: &Config) -> CacheKey {
    CacheKey::new(ir_hash, config, dev.target.name, &dev.name, &dev.driver)
}

/// The kernel for `config` of `kernel`, from the cache or built.
pub(crate) fn kernel(
    dev: &ClDevice,
    kernel: &ir::Kernel,
    config: &Config,
) -> Result<Arc<ClKernel>> {
    if let Some(k) = dev.kernels.get(&key(dev, kernel.stable_hash(), config)) {
        return Ok(k);
    }
    match build(dev, &[(kernel, config)])?.pop() {
        Some(k) => Ok(k),
        None => unreachable!("bug: build returns one kernel per item"),
    }
}

/// Builds every `(kernel, config)` not yet cached as one program and caches
/// each kernel; returns them in item order.
pub(crate) fn build(
    dev: &ClDevice,
    items: &[(&ir::Kernel, &Config)],
) -> Result<Vec<Arc<ClKernel>>> {
    let hashes: Vec<u64> = items.iter().map(|(k, _)| k.stable_hash()).collect();
    let missing: Vec<(&ir::Kernel, &Config)> = items
        .iter()
        .zip(&hashes)
        .filter(|((_, c), h)| dev.kernels.get(&key(dev, **h, c)).is_none())
        .map(|(item, _)| *item)
        .collect();
    if !missing.is_empty() {
        build_program(dev, &missing)?;
    }
    items
        .iter()
        .zip(&hashes)
        .map(|((k, c), h)| {
            dev.kernels.get(&key(dev, *h, c)).ok_or_else(|| {
                Error::Config(format!(
                    "bug: kernel `{}` ({}) missing after its program was built",
                    k.name,
                    c.key()
                ))
            })
        })
        .collect()
}

fn build_program(dev: &ClDevice, items: &[(&ir::Kernel, &Config)]) -> Result<()> {
    let generated = generate_batch(items, dev.target, Language::OpenCl).map_err(codegen_error)?;
    for info in &generated.kernels {
        dev.check_limits(&info.config, info.shared_bytes)?;
    }
    dump::dump_if_requested(&generated);
    let fail = |log: String| Error::Compile {
        kernel: dump::kernel_names(&generated),
        device: dev.name.clone(),
        source_path: dump::save_failed(&generated),
        log,
    };
    let mut program = Program::create_from_source(&dev.context, &generated.source)
        .map_err(|e| fail(format!("clCreateProgramWithSource: {e}")))?;
    if let Err(e) = program.build(&[dev.device.id()], &dev.build_options) {
        let log = program.get_build_log(dev.device.id()).unwrap_or_default();
        return Err(fail(format!("clBuildProgram: {e}\n{log}")));
    }
    let program = Arc::new(program);
    for info in generated.kernels.clone() {
        let kernel = Kernel::create(&program, &info.entry)
            .map_err(|e| fail(format!("clCreateKernel `{}`: {e}", info.entry)))?;
        let k = key(dev, info.ir_hash, &info.config);
        dev.kernels.insert(
            k,
            Arc::new(ClKernel {
                info,
                kernel: Mutex::new(kernel),
                _program: Arc::clone(&program),
            }),
        );
    }
    Ok(())
}
