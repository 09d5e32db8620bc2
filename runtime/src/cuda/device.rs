//! One CUDA device: its primary context, the legacy default stream (so
//! synchronous copies order with launches), limits and the target of the
//! architecture model.

use super::probe;
use crate::gpu::backend::Facts;
use crate::gpu::GpuDevice;
use crate::{Error, Result};
use cudarc::driver::sys::CUdevice_attribute as Attr;
use cudarc::driver::{CudaContext, CudaEvent, CudaStream};
use hipacc_codegen::{Config, DeviceDescription, Target};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock, PoisonError};
use std::time::Duration;

static NEXT_KEY: AtomicU64 = AtomicU64::new(0xc0da_0000_0000_0001);

/// A CUDA device ready for launches. One per process (see [`shared`]).
pub(crate) struct CudaDevice {
    pub(crate) facts: Facts,
    pub(crate) ctx: Arc<CudaContext>,
    pub(crate) stream: Arc<CudaStream>,
    /// NVRTC's virtual architecture, e.g. `compute_90`.
    pub(crate) arch: String,
    pub(crate) max_threads: u32,
    pub(crate) max_block: [u32; 2],
    pub(crate) max_shared: u32,
    pub(crate) last_launch: Mutex<Option<(CudaEvent, CudaEvent)>>,
}

fn unavailable(reason: String) -> Error {
    Error::BackendUnavailable {
        backend: "cuda".into(),
        reason,
    }
}

/// The process-wide CUDA device (ordinal 0), opened once.
pub(crate) fn shared() -> Result<Arc<GpuDevice<CudaDevice>>> {
    probe::driver()?;
    probe::nvrtc()?;
    static DEVICE: OnceLock<std::result::Result<Arc<GpuDevice<CudaDevice>>, String>> =
        OnceLock::new();
    DEVICE
        .get_or_init(|| {
            CudaDevice::open()
                .map(|d| Arc::new(GpuDevice::new(d)))
                .map_err(|e| e.to_string())
        })
        .clone()
        .map_err(|reason| {
            unavailable(
                reason
                    .strip_prefix("cuda backend unavailable: ")
                    .unwrap_or(&reason)
                    .to_string(),
            )
        })
}

/// True when a CUDA device can be opened (for `Device::auto`).
pub(crate) fn present() -> bool {
    shared().is_ok()
}

impl CudaDevice {
    fn open() -> Result<CudaDevice> {
        let count = CudaContext::device_count()
            .map_err(|e| unavailable(format!("cuInit / cuDeviceGetCount failed: {e:?}")))?;
        if count < 1 {
            return Err(unavailable("the CUDA driver reports no device".into()));
        }
        let ctx = CudaContext::new(0).map_err(|e| unavailable(format!("cuCtxCreate: {e:?}")))?;
        let name = ctx.name().unwrap_or_else(|_| "CUDA device 0".into());
        let (major, minor) = ctx
            .compute_capability()
            .map_err(|e| unavailable(format!("compute capability: {e:?}")))?;
        let attr = |a: Attr| ctx.attribute(a).map(|v| v.max(0) as u32).unwrap_or(0);
        let mut version = 0;
        // SAFETY: the driver is loaded (probed) and the pointer is valid.
        unsafe { cudarc::driver::sys::cuDriverGetVersion(&mut version) };
        let driver = format!("driver {version}, NVRTC {}", probe::nvrtc_version()?);
        let target = Target::nearest(&DeviceDescription {
            vendor: "NVIDIA".into(),
            name: name.clone(),
            compute_capability: Some((major as u32, minor as u32)),
            is_cpu: false,
        });
        Ok(CudaDevice {
            facts: Facts {
                key: NEXT_KEY.fetch_add(1, Ordering::Relaxed),
                name,
                driver,
                is_gpu: true,
                target,
            },
            stream: ctx.default_stream(),
            arch: format!("compute_{major}{minor}"),
            max_threads: attr(Attr::CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK),
            max_block: [
                attr(Attr::CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X),
                attr(Attr::CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y),
            ],
            max_shared: attr(Attr::CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK),
            ctx,
            last_launch: Mutex::new(None),
        })
    }

    /// Checks `config` against the device's own limits.
    pub(crate) fn check_limits(&self, config: &Config, shared_bytes: u32) -> Result<()> {
        let b = config.block;
        if b.x > self.max_block[0] || b.y > self.max_block[1] || b.threads() > self.max_threads {
            return Err(Error::Config(format!(
                "block {}x{} exceeds the limits of {}: at most {} threads per block, {}x{} per dimension",
                b.x, b.y, self.facts.name, self.max_threads, self.max_block[0], self.max_block[1]
            )));
        }
        if shared_bytes > self.max_shared {
            return Err(Error::Config(format!(
                "config `{config}` needs {shared_bytes} bytes of shared memory; {} allows {}",
                self.facts.name, self.max_shared
            )));
        }
        Ok(())
    }

    /// The last launch's duration, from its events (waits for it).
    pub(crate) fn last_launch_time(&self) -> Option<Duration> {
        let guard = self
            .last_launch
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        let (start, end) = guard.as_ref()?;
        let ms = start.elapsed_ms(end).ok()?;
        Some(Duration::from_secs_f64(f64::from(ms) / 1e3))
    }

    /// Waits for all work on the device.
    pub(crate) fn finish(&self) -> Result<()> {
        self.stream.synchronize().map_err(|e| Error::Launch {
            backend: "cuda".into(),
            kernel: String::new(),
            message: format!("synchronize: {e:?}"),
        })
    }
}
