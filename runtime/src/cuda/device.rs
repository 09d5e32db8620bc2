//! One CUDA device: its primary context, the legacy default stream (so
//! synchronous copies order with launches), limits and the target of the
//! architecture model.

use super::nvrtc;
use super::probe::{self, unavailable};
use crate::gpu::backend::Facts;
use crate::gpu::device::{self, Shared};
use crate::gpu::limits::Limits;
use crate::gpu::timing::LastLaunch;
use crate::gpu::GpuDevice;
use crate::Result;
use cudarc::driver::sys::CUdevice_attribute as Attr;
use cudarc::driver::{CudaContext, CudaEvent, CudaStream};
use hipacc_codegen::DeviceDescription;
use std::sync::{Arc, Mutex};
use std::thread::ThreadId;

/// A CUDA device ready for launches. One per process (see [`shared`]).
pub(crate) struct CudaDevice {
    pub(crate) facts: Facts,
    pub(crate) ctx: Arc<CudaContext>,
    pub(crate) stream: Arc<CudaStream>,
    /// NVRTC's virtual architecture, e.g. `compute_90`.
    pub(crate) arch: String,
    /// Events around the last launch, for its duration.
    pub(crate) last_launch: LastLaunch<(CudaEvent, CudaEvent)>,
    /// The threads capturing a graph, each with the stream it captures on
    /// ([`super::graph`]). Only a capturing thread's launches go to its
    /// stream: other threads sharing the device launch as usual meanwhile.
    pub(crate) capturing: Mutex<Vec<(ThreadId, Arc<CudaStream>)>>,
}

/// The process-wide CUDA device (ordinal 0), opened once.
pub(crate) fn shared() -> Result<Arc<GpuDevice<CudaDevice>>> {
    probe::driver()?;
    nvrtc::nvrtc()?;
    static DEVICE: Shared<CudaDevice> = Shared::new();
    device::shared(&DEVICE, CudaDevice::open)
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
            return Err(unavailable("the CUDA driver reports no device"));
        }
        let ctx = CudaContext::new(0).map_err(|e| unavailable(format!("cuCtxCreate: {e:?}")))?;
        let (major, minor) = ctx
            .compute_capability()
            .map_err(|e| unavailable(format!("compute capability: {e:?}")))?;
        let attr = |a: Attr| ctx.attribute(a).map(|v| v.max(0) as u64).unwrap_or(0);
        let mut version = 0;
        // SAFETY: the driver is loaded (probed) and the pointer is valid.
        unsafe { cudarc::driver::sys::cuDriverGetVersion(&mut version) };
        let description = DeviceDescription {
            vendor: "NVIDIA".into(),
            name: ctx.name().unwrap_or_else(|_| "CUDA device 0".into()),
            compute_capability: Some((major as u32, minor as u32)),
            is_cpu: false,
        };
        let limits = Limits {
            max_threads: attr(Attr::CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK),
            max_block: [
                attr(Attr::CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X),
                attr(Attr::CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y),
            ],
            max_shared: attr(Attr::CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK),
            images: true,
            fp64: true,
        };
        let driver = format!("driver {version}, NVRTC {}", nvrtc::nvrtc_version()?);
        Ok(CudaDevice {
            facts: Facts::new(&description, driver, limits),
            stream: ctx.default_stream(),
            arch: format!("compute_{major}{minor}"),
            ctx,
            last_launch: LastLaunch::default(),
            capturing: Mutex::new(Vec::new()),
        })
    }
}
