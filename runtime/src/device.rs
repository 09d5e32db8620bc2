//! Devices: where kernels run.
//!
//! A [`Device`] is a cheap handle. GPU devices are opened once per process
//! and shared by every handle, so images stay resident and compiled kernels
//! stay cached across handles. [`Device::with_config`] and
//! [`Device::with_override`] return a handle that forces (part of) the
//! variant chosen for every kernel it runs.

use crate::gpu::Gpu;
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
    /// WGSL generated at run time, run through wgpu (Vulkan, Metal,
    /// DirectX 12); needs the crate's `wgpu` feature.
    Wgpu,
}

impl BackendKind {
    /// The name used on command lines and in `HIPACC_BACKEND`.
    pub fn name(self) -> &'static str {
        match self {
            BackendKind::Cpu => "cpu",
            BackendKind::OpenCl => "opencl",
            BackendKind::Cuda => "cuda",
            BackendKind::Wgpu => "wgpu",
        }
    }

    /// The name in messages: `CPU`, `OpenCL` or `CUDA`.
    ///
    /// ```
    /// assert_eq!(hipacc::BackendKind::OpenCl.title(), "OpenCL");
    /// ```
    pub fn title(self) -> &'static str {
        match self {
            BackendKind::Cpu => "CPU",
            BackendKind::OpenCl => "OpenCL",
            BackendKind::Cuda => "CUDA",
            BackendKind::Wgpu => "wgpu",
        }
    }
}

impl std::fmt::Display for BackendKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
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
    /// The GPU backend's device; `None` for the native CPU backend.
    gpu: Option<Arc<dyn Gpu>>,
    /// CPU launches of fewer output pixels than this run on the calling
    /// thread.
    serial_pixels: usize,
    overrides: Option<Arc<ConfigOverride>>,
}

impl Device {
    fn gpu_device(gpu: Arc<dyn Gpu>) -> Device {
        Device {
            gpu: Some(gpu),
            serial_pixels: 0,
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
        Device {
            gpu: None,
            serial_pixels: pixels,
            overrides: None,
        }
    }

    /// The OpenCL backend on the first OpenCL GPU, else on any OpenCL device
    /// (such as PoCL on the CPU). An error names what is missing when no
    /// OpenCL runtime or device is installed.
    pub fn opencl() -> Result<Device> {
        crate::opencl::shared().map(|d| Device::gpu_device(d))
    }

    /// The CUDA backend on device 0. An error names what is missing (the
    /// driver, NVRTC, a device) and how to install it.
    pub fn cuda() -> Result<Device> {
        crate::cuda::shared().map(|d| Device::gpu_device(d))
    }

    /// The wgpu backend (WGSL compute shaders) on the first
    /// high-performance Vulkan, Metal or DirectX 12 adapter, such as Mesa's
    /// lavapipe on the CPU. An error names what is missing; in a build
    /// without the crate's `wgpu` feature it says so.
    pub fn wgpu() -> Result<Device> {
        #[cfg(feature = "wgpu")]
        {
            crate::wgpu::shared().map(|d| Device::gpu_device(d))
        }
        #[cfg(not(feature = "wgpu"))]
        {
            Err(Error::BackendUnavailable {
                backend: BackendKind::Wgpu,
                reason: "this build of hipacc has no `wgpu` feature".into(),
            })
        }
    }

    /// The best backend present: CUDA, then an OpenCL GPU, then the native
    /// CPU (an OpenCL CPU device such as PoCL is not preferred over it).
    /// `HIPACC_BACKEND=cpu|opencl|cuda|wgpu` selects one explicitly.
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

    /// A device by backend name: `cpu`, `opencl`, `cuda`, `wgpu` or `auto`.
    pub fn from_name(name: &str) -> Result<Device> {
        match name.trim().to_ascii_lowercase().as_str() {
            "cpu" => Ok(Device::cpu()),
            "opencl" => Device::opencl(),
            "cuda" => Device::cuda(),
            "wgpu" => Device::wgpu(),
            "auto" => Device::auto(),
            _ => Err(Error::UnknownBackend(name.to_string())),
        }
    }

    /// The GPU device behind this one; `None` on the native CPU backend.
    pub(crate) fn gpu(&self) -> Option<&dyn Gpu> {
        self.gpu.as_deref()
    }

    /// The CPU backend's threshold below which a launch runs on the calling
    /// thread.
    pub(crate) fn serial_pixels(&self) -> usize {
        self.serial_pixels
    }

    /// The backend kind.
    pub fn kind(&self) -> BackendKind {
        self.gpu().map_or(BackendKind::Cpu, Gpu::kind)
    }

    /// A human-readable device name.
    pub fn name(&self) -> String {
        match self.gpu() {
            None => {
                let (threads, isa) = (rayon::current_num_threads(), crate::cpu::simd::isa());
                format!("native CPU ({threads} threads, {isa})")
            }
            Some(g) => format!(
                "{} {} ({})",
                g.kind().title(),
                g.facts().name,
                g.facts().driver
            ),
        }
    }

    /// True for GPU devices (CUDA, OpenCL GPUs).
    pub fn is_gpu(&self) -> bool {
        self.gpu().is_some_and(|g| g.facts().is_gpu)
    }

    /// The architecture-model target the device maps to (`None` for the
    /// native CPU backend, which generates no code at run time).
    pub fn target(&self) -> Option<&'static Target> {
        self.gpu().map(|g| g.facts().target)
    }

    /// The language of generated code (`None` for the native CPU backend).
    pub fn language(&self) -> Option<Language> {
        self.gpu().map(Gpu::language)
    }

    /// This device with `overrides` fixing axes of the variant chosen for
    /// every kernel (on top of `HIPACC_CONFIG`). Ignored by the CPU backend.
    pub fn with_override(&self, overrides: ConfigOverride) -> Device {
        Device {
            overrides: Some(Arc::new(overrides)),
            ..self.clone()
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
        self.gpu().map_or(Ok(()), |g| g.precompile(items))
    }

    #[cfg(feature = "conformance")]
    /// Builds what launches of each `(kernel, space)` on this device would
    /// build, in a few programs instead of one per launch, so that the
    /// launches compile nothing: for many small launches of different
    /// kernels (a test matrix), where each program's fixed build cost
    /// would dominate. Only a saving: a variant that cannot be chosen or
    /// built here is left to its launch, which builds and reports as it
    /// always does. Does nothing on the CPU backend; see
    /// [`Device::batched_builds_pay`] for where it saves time.
    pub(crate) fn precompile_launches(&self, launches: &[(&ir::Kernel, hipacc_core::Rect)]) {
        if let Some(g) = self.gpu() {
            g.precompile_launches(launches, self.overrides());
        }
    }

    #[cfg(feature = "conformance")]
    /// Whether [`Device::precompile_launches`] saves build time on this
    /// device: on OpenCL and CUDA, where a program is one compiler run;
    /// not on the CPU backend, nor on wgpu, which compiles each kernel's
    /// pipeline on its own from the whole module.
    pub(crate) fn batched_builds_pay(&self) -> bool {
        self.gpu().is_some_and(|g| g.batched_builds_pay())
    }

    /// The device time of the last kernel launched on this device (waits
    /// for it to finish); `None` on the CPU backend or before any launch.
    pub fn last_launch_time(&self) -> Option<Duration> {
        self.gpu()?.last_launch_time()
    }

    /// The variant of the last kernel launched on this device (after any
    /// tuning-cache entry, override and occupancy refinement); `None` on the
    /// CPU backend or before any launch.
    pub fn last_launch_config(&self) -> Option<Config> {
        self.gpu()?.last_launch_config()
    }

    /// Waits until every queued launch and transfer has finished.
    pub fn synchronize(&self) -> Result<()> {
        self.gpu().map_or(Ok(()), Gpu::synchronize)
    }

    /// `(hits, misses)` of the device's compiled-kernel cache.
    pub fn kernel_cache_stats(&self) -> (u64, u64) {
        self.gpu().map_or((0, 0), Gpu::kernel_cache_stats)
    }

    /// True when `config` fits the device's own limits (block size, local
    /// memory, images); always false on the CPU backend.
    pub(crate) fn fits(&self, config: &Config) -> bool {
        self.gpu().is_some_and(|g| g.fits(config))
    }

    /// Starts recording this thread's launches on this device for replay
    /// ([`crate::gpu::replay`], [`crate::cpu::replay`]); `true` when the
    /// device records.
    pub(crate) fn begin_recording(&self) -> Result<bool> {
        match self.gpu() {
            Some(g) => g.begin_recording().map(|()| true),
            None => crate::cpu::replay::begin().map(|()| true),
        }
    }

    /// Ends this thread's recording: `None` when it recorded no launch.
    pub(crate) fn end_recording(&self) -> Result<Option<Box<dyn crate::gpu::Replay>>> {
        self.gpu()
            .map_or_else(crate::cpu::replay::end, Gpu::end_recording)
    }

    /// Drops this thread's recording, if any.
    pub(crate) fn abort_recording(&self) {
        match self.gpu() {
            Some(g) => g.abort_recording(),
            None => crate::cpu::replay::abort(),
        }
    }

    /// The device part of the explore mode's tuning keys (`None` on CPU).
    pub(crate) fn tune_name(&self) -> Option<String> {
        let g = self.gpu()?;
        Some(crate::explore::device_key(g.kind(), &g.facts().name))
    }
}
