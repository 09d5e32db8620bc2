//! Devices: where kernels run.
//!
//! A [`Device`] is a cheap handle. GPU devices are opened once per process
//! and shared by every handle, so images stay resident and compiled kernels
//! stay cached across handles. [`Device::with_config`] and
//! [`Device::with_override`] return a handle that forces (part of) the
//! variant chosen for every kernel it runs.

use crate::{Error, Result};
use hipacc_codegen::{Config, ConfigOverride, Language, Target};
use hipacc_core::ir;
use std::sync::Arc;
use std::time::Duration;

/// The environment variable that selects the backend of [`Device::auto`].
pub const BACKEND_ENV: &str = "HIPACC_BACKEND";

/// The kind of backend a [`Device`] uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BackendKind {
    /// Native, multi-threaded CPU code compiled by rustc.
    Cpu,
    /// OpenCL C generated at run time.
    OpenCl,
    /// CUDA C generated at run time, compiled with NVRTC.
    Cuda,
}

impl BackendKind {
    /// The name used on command lines and in `HIPACC_BACKEND`.
    pub fn name(self) -> &'static str {
        match self {
            BackendKind::Cpu => "cpu",
            BackendKind::OpenCl => "opencl",
            BackendKind::Cuda => "cuda",
        }
    }
}

/// A device kernels execute on.
///
/// ```
/// use hipacc::Device;
/// let dev = Device::cpu();
/// assert_eq!(dev.kind().name(), "cpu");
/// assert!(Device::from_name("vulkan").is_err());
/// ```
#[derive(Clone, Debug)]
pub struct Device {
    inner: DeviceInner,
    overrides: Option<Arc<ConfigOverride>>,
}

#[derive(Clone, Debug)]
pub(crate) enum DeviceInner {
    /// Launches of fewer output pixels than this run on the calling thread.
    Cpu {
        serial_pixels: usize,
    },
    OpenCl(Arc<crate::opencl::ClDevice>),
    Cuda(Arc<crate::cuda::CudaDevice>),
}

impl Device {
    fn new(inner: DeviceInner) -> Device {
        Device {
            inner,
            overrides: None,
        }
    }

    /// Launches with fewer output pixels than this run on the calling thread
    /// on [`Device::cpu`]: below it, rayon's fork-join costs about as much as
    /// the pixels (the coarse levels of a pyramid or a multigrid cycle).
    pub const CPU_SERIAL_PIXELS: usize = 8 * 1024;

    /// The native CPU backend; always available.
    pub fn cpu() -> Device {
        Device::cpu_serial_below(Device::CPU_SERIAL_PIXELS)
    }

    /// The native CPU backend, running launches of fewer than `pixels`
    /// output pixels on the calling thread and larger ones in parallel;
    /// `0` runs every launch in parallel. For measuring the threshold.
    ///
    /// ```
    /// use hipacc::Device;
    /// let everything_parallel = Device::cpu_serial_below(0);
    /// assert_eq!(everything_parallel.kind().name(), "cpu");
    /// ```
    pub fn cpu_serial_below(pixels: usize) -> Device {
        Device::new(DeviceInner::Cpu {
            serial_pixels: pixels,
        })
    }

    /// The OpenCL backend on the first OpenCL GPU, else on any OpenCL device
    /// (such as PoCL on the CPU). An error names what is missing when no
    /// OpenCL runtime or device is installed.
    pub fn opencl() -> Result<Device> {
        crate::opencl::shared().map(|d| Device::new(DeviceInner::OpenCl(d)))
    }

    /// The CUDA backend on device 0. An error names what is missing (the
    /// driver, NVRTC, a device) and how to install it.
    pub fn cuda() -> Result<Device> {
        crate::cuda::shared().map(|d| Device::new(DeviceInner::Cuda(d)))
    }

    /// The best backend present: CUDA, then an OpenCL GPU, then the native
    /// CPU (an OpenCL CPU device such as PoCL is not preferred over it).
    /// `HIPACC_BACKEND=cpu|opencl|cuda` selects one explicitly.
    pub fn auto() -> Result<Device> {
        if let Ok(name) = std::env::var(BACKEND_ENV) {
            let name = name.trim();
            if !name.is_empty() && name != "auto" {
                return Device::from_name(name);
            }
        }
        if crate::cuda::present() {
            return Device::cuda();
        }
        if crate::opencl::gpu_present() {
            if let Ok(d) = Device::opencl() {
                if d.is_gpu() {
                    return Ok(d);
                }
            }
        }
        Ok(Device::cpu())
    }

    /// A device by backend name: `cpu`, `opencl`, `cuda` or `auto`.
    pub fn from_name(name: &str) -> Result<Device> {
        match name.trim().to_ascii_lowercase().as_str() {
            "cpu" => Ok(Device::cpu()),
            "opencl" => Device::opencl(),
            "cuda" => Device::cuda(),
            "auto" => Device::auto(),
            _ => Err(Error::UnknownBackend(name.to_string())),
        }
    }

    /// The CUDA device behind this one, if it is one.
    pub(crate) fn cuda_device(&self) -> Option<&Arc<crate::cuda::CudaDevice>> {
        match &self.inner {
            DeviceInner::Cuda(d) => Some(d),
            _ => None,
        }
    }

    /// The backend kind.
    pub fn kind(&self) -> BackendKind {
        match self.inner {
            DeviceInner::Cpu { .. } => BackendKind::Cpu,
            DeviceInner::OpenCl(_) => BackendKind::OpenCl,
            DeviceInner::Cuda(_) => BackendKind::Cuda,
        }
    }

    /// A human-readable device name.
    pub fn name(&self) -> String {
        match &self.inner {
            DeviceInner::Cpu { .. } => {
                let (threads, isa) = (rayon::current_num_threads(), crate::cpu::simd::isa());
                format!("native CPU ({threads} threads, {isa})")
            }
            DeviceInner::OpenCl(d) => format!("OpenCL {} ({})", d.name, d.driver),
            DeviceInner::Cuda(d) => format!("CUDA {} ({})", d.name, d.driver),
        }
    }

    /// True for GPU devices (CUDA, OpenCL GPUs).
    pub fn is_gpu(&self) -> bool {
        match &self.inner {
            DeviceInner::Cpu { .. } => false,
            DeviceInner::OpenCl(d) => d.is_gpu,
            DeviceInner::Cuda(_) => true,
        }
    }

    /// The architecture-model target the device maps to (`None` for the
    /// native CPU backend, which generates no code at run time).
    pub fn target(&self) -> Option<&'static Target> {
        match &self.inner {
            DeviceInner::Cpu { .. } => None,
            DeviceInner::OpenCl(d) => Some(d.target),
            DeviceInner::Cuda(d) => Some(d.target),
        }
    }

    /// The language of generated code (`None` for the native CPU backend).
    pub fn language(&self) -> Option<Language> {
        match &self.inner {
            DeviceInner::Cpu { .. } => None,
            DeviceInner::OpenCl(_) => Some(Language::OpenCl),
            DeviceInner::Cuda(_) => Some(Language::Cuda),
        }
    }

    /// This device with `overrides` fixing axes of the variant chosen for
    /// every kernel (on top of `HIPACC_CONFIG`). Ignored by the CPU backend.
    pub fn with_override(&self, overrides: ConfigOverride) -> Device {
        Device {
            inner: self.inner.clone(),
            overrides: Some(Arc::new(overrides)),
        }
    }

    /// This device running every kernel with exactly `config` (which must
    /// fit each kernel's accessors and the device's limits).
    pub fn with_config(&self, config: &Config) -> Device {
        self.with_override(crate::gpu::pin(config))
    }

    /// The override in force, if any.
    pub fn overrides(&self) -> Option<&ConfigOverride> {
        self.overrides.as_deref()
    }

    /// The variant this device would run `kernel` with: the architecture
    /// model's choice for its target after `HIPACC_CONFIG` and the device's
    /// override. An error when the device generates no code (CPU) or the
    /// override violates the target's limits.
    pub fn config_for(&self, kernel: &ir::Kernel) -> Result<Config> {
        let (target, language) = self
            .target()
            .zip(self.language())
            .ok_or_else(|| Error::Config("the native CPU backend has no variant configs".into()))?;
        crate::gpu::choose_config(kernel, target, language, self.overrides())
    }

    /// Builds every `(kernel, config)` at once (one driver build for all) and
    /// caches them, so later launches with those configs compile nothing.
    /// Does nothing on the CPU backend.
    pub fn precompile(&self, items: &[(&ir::Kernel, &Config)]) -> Result<()> {
        match &self.inner {
            DeviceInner::Cpu { .. } => Ok(()),
            DeviceInner::OpenCl(d) => crate::opencl::build(d, items).map(|_| ()),
            DeviceInner::Cuda(d) => crate::cuda::build(d, items).map(|_| ()),
        }
    }

    /// The device time of the last kernel launched on this device (waits
    /// for it to finish); `None` on the CPU backend or before any launch.
    pub fn last_launch_time(&self) -> Option<Duration> {
        match &self.inner {
            DeviceInner::Cpu { .. } => None,
            DeviceInner::OpenCl(d) => d.last_launch_time(),
            DeviceInner::Cuda(d) => d.last_launch_time(),
        }
    }

    /// The variant of the last kernel launched on this device (after any
    /// tuning-cache entry, override and occupancy refinement); `None` on the
    /// CPU backend or before any launch.
    pub fn last_launch_config(&self) -> Option<Config> {
        let slot = match &self.inner {
            DeviceInner::Cpu { .. } => return None,
            DeviceInner::OpenCl(d) => &d.last_config,
            DeviceInner::Cuda(d) => &d.last_config,
        };
        slot.lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone()
    }

    /// Waits until every queued launch and transfer has finished.
    pub fn synchronize(&self) -> Result<()> {
        match &self.inner {
            DeviceInner::Cpu { .. } => Ok(()),
            DeviceInner::OpenCl(d) => d.finish(),
            DeviceInner::Cuda(d) => d.finish(),
        }
    }

    /// `(hits, misses)` of the device's compiled-kernel cache.
    pub fn kernel_cache_stats(&self) -> (u64, u64) {
        match &self.inner {
            DeviceInner::Cpu { .. } => (0, 0),
            DeviceInner::OpenCl(d) => d.kernels.stats(),
            DeviceInner::Cuda(d) => d.kernels.stats(),
        }
    }

    /// True when `config` fits the device's own limits (block size, local
    /// memory, images); always false on the CPU backend.
    pub(crate) fn fits(&self, config: &Config) -> bool {
        match &self.inner {
            DeviceInner::Cpu { .. } => false,
            DeviceInner::OpenCl(d) => d.check_limits(config, 0).is_ok(),
            DeviceInner::Cuda(d) => d.check_limits(config, 0).is_ok(),
        }
    }

    /// The device part of the explore mode's tuning keys (`None` on CPU).
    pub(crate) fn tune_name(&self) -> Option<String> {
        match &self.inner {
            DeviceInner::Cpu { .. } => None,
            DeviceInner::OpenCl(d) => Some(crate::explore::device_key(self.kind(), &d.name)),
            DeviceInner::Cuda(d) => Some(crate::explore::device_key(self.kind(), &d.name)),
        }
    }

    pub(crate) fn inner(&self) -> &DeviceInner {
        &self.inner
    }
}
