//! A GPU device: a backend with the state the generic layers keep for it
//! (compiled kernels, occupancy refinements, the last launch's variant,
//! recordings), and [`Gpu`], the object-safe face [`crate::Device`] holds.

use super::backend::{Backend, Facts};
use super::launch::{self, KernelLaunch};
use super::program::{self, Compiled};
use super::replay::Recordings;
use crate::cache::{CacheKey, KernelCache};
use crate::{BackendKind, Error, Result};
use hipacc_codegen::{Config, ConfigOverride, Language};
use hipacc_core::image::DynImage;
use hipacc_core::ir;
use std::sync::{Arc, Mutex, OnceLock, PoisonError};
use std::time::Duration;

/// A backend and the generic state kept for it. One per opened device.
pub(crate) struct GpuDevice<B: Backend> {
    /// The driver.
    pub(crate) backend: Arc<B>,
    /// Built kernels by IR, variant, target, device and driver.
    pub(crate) kernels: KernelCache<CacheKey, Arc<Compiled<B>>>,
    /// `(IR hash, heuristic config key)` -> config after the occupancy check.
    pub(crate) refined: KernelCache<(u64, String), Config>,
    /// The variant of the last kernel launched.
    pub(crate) last_config: Mutex<Option<Config>>,
    /// Launch sequences being recorded, one per thread.
    pub(crate) recordings: Recordings<B>,
}

impl<B: Backend> GpuDevice<B> {
    /// The device state around a freshly opened backend.
    pub(crate) fn new(backend: B) -> GpuDevice<B> {
        GpuDevice {
            backend: Arc::new(backend),
            kernels: KernelCache::new(),
            refined: KernelCache::new(),
            last_config: Mutex::new(None),
            recordings: Recordings::default(),
        }
    }
}

/// Where a backend keeps its process-wide device, or why it could not open.
pub(crate) type Shared<B> = OnceLock<std::result::Result<Arc<GpuDevice<B>>, String>>;

/// The process-wide device of `B` in `cell`, opened by `open` on first use;
/// later calls share its context, buffers and kernel cache, and each gets
/// the reason when it could not be opened.
pub(crate) fn shared<B: Backend>(
    cell: &Shared<B>,
    open: impl FnOnce() -> Result<B>,
) -> Result<Arc<GpuDevice<B>>> {
    cell.get_or_init(|| match open() {
        Ok(backend) => Ok(Arc::new(GpuDevice::new(backend))),
        Err(Error::BackendUnavailable { reason, .. }) => Err(reason),
        Err(e) => Err(e.to_string()),
    })
    .clone()
    .map_err(|reason| Error::BackendUnavailable {
        backend: B::KIND,
        reason,
    })
}

impl<B: Backend> std::fmt::Debug for GpuDevice<B> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let facts = self.backend.facts();
        write!(
            f,
            "{:?} {} ({}, target {})",
            B::KIND,
            facts.name,
            facts.driver,
            facts.target.name
        )
    }
}

/// What [`crate::Device`] asks of a GPU device, whatever its backend.
pub(crate) trait Gpu: Send + Sync + std::fmt::Debug {
    /// The backend kind.
    fn kind(&self) -> BackendKind;
    /// The dialect of its generated code.
    fn language(&self) -> Language;
    /// The device's facts.
    fn facts(&self) -> &Facts;
    /// Runs one kernel launch.
    fn execute(&self, launch: KernelLaunch<'_>, overrides: Option<&ConfigOverride>) -> Result<()>;
    /// Builds every `(kernel, config)` not cached yet, in one program.
    fn precompile(&self, items: &[(&ir::Kernel, &Config)]) -> Result<()>;
    #[cfg(feature = "conformance")]
    /// Whether [`Gpu::precompile_launches`] saves build time here
    /// ([`Backend::BATCHED_BUILDS_PAY`]).
    fn batched_builds_pay(&self) -> bool;
    #[cfg(feature = "conformance")]
    /// Builds, a few programs in all, what launches of each `(kernel,
    /// space)` with `overrides` would build one program each (see
    /// [`launch::precompile`]).
    fn precompile_launches(
        &self,
        launches: &[(&ir::Kernel, hipacc_core::Rect)],
        overrides: Option<&ConfigOverride>,
    );
    /// The device time of the last launch.
    fn last_launch_time(&self) -> Option<Duration>;
    /// The variant of the last launch.
    fn last_launch_config(&self) -> Option<Config>;
    /// Waits for every queued launch and transfer.
    fn synchronize(&self) -> Result<()>;
    /// `(hits, misses)` of the kernel cache.
    fn kernel_cache_stats(&self) -> (u64, u64);
    /// True when `config` fits the device's own limits.
    fn fits(&self, config: &Config) -> bool;
    /// Starts recording this thread's launches (see [`super::replay`]).
    fn begin_recording(&self) -> Result<()>;
    /// Ends this thread's recording; `None` when it cannot be replayed.
    fn end_recording(&self) -> Result<Option<Box<dyn super::replay::Replay>>>;
    /// Drops this thread's recording, if any.
    fn abort_recording(&self);
    /// Runs a global operator on the device when `image` lives there (see
    /// [`super::global`]); `None`: compute on the host.
    fn global_op(
        &self,
        image: &dyn DynImage,
        req: super::global::GlobalRequest,
    ) -> Result<Option<Vec<u8>>>;
}

impl<B: Backend> Gpu for GpuDevice<B> {
    fn kind(&self) -> BackendKind {
        B::KIND
    }
    fn language(&self) -> Language {
        B::LANGUAGE
    }
    fn facts(&self) -> &Facts {
        self.backend.facts()
    }
    fn execute(&self, launch: KernelLaunch<'_>, overrides: Option<&ConfigOverride>) -> Result<()> {
        launch::execute(self, launch, overrides)
    }
    fn precompile(&self, items: &[(&ir::Kernel, &Config)]) -> Result<()> {
        program::build(self, items).map(|_| ())
    }
    #[cfg(feature = "conformance")]
    fn batched_builds_pay(&self) -> bool {
        B::BATCHED_BUILDS_PAY
    }
    #[cfg(feature = "conformance")]
    fn precompile_launches(
        &self,
        launches: &[(&ir::Kernel, hipacc_core::Rect)],
        overrides: Option<&ConfigOverride>,
    ) {
        launch::precompile(self, launches, overrides);
    }
    fn last_launch_time(&self) -> Option<Duration> {
        self.backend.last_launch_time()
    }
    fn last_launch_config(&self) -> Option<Config> {
        self.last_config
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }
    fn synchronize(&self) -> Result<()> {
        self.backend.synchronize()
    }
    fn kernel_cache_stats(&self) -> (u64, u64) {
        self.kernels.stats()
    }
    fn fits(&self, config: &Config) -> bool {
        self.backend.facts().check_limits(config, 0).is_ok()
    }
    fn begin_recording(&self) -> Result<()> {
        self.recordings.begin()
    }
    fn end_recording(&self) -> Result<Option<Box<dyn super::replay::Replay>>> {
        self.recordings.end(&self.backend)
    }
    fn abort_recording(&self) {
        self.recordings.abort();
    }
    fn global_op(
        &self,
        image: &dyn DynImage,
        req: super::global::GlobalRequest,
    ) -> Result<Option<Vec<u8>>> {
        super::global::run(self, image, req)
    }
}
