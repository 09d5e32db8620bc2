//! One OpenCL device with its context, in-order profiling queue, limits and
//! target of the architecture model.

use super::probe::{self, Want};
use crate::gpu::backend::Facts;
use crate::gpu::device::{self, Shared};
use crate::gpu::errors::{launch, unavailable};
use crate::gpu::limits::Limits;
use crate::gpu::timing::LastLaunch;
use crate::gpu::GpuDevice;
use crate::{BackendKind, Error, Result};
use hipacc_codegen::DeviceDescription;
use opencl3::command_queue::{CommandQueue, CL_QUEUE_PROFILING_ENABLE};
use opencl3::context::Context;
use opencl3::device::{
    Device as ClDeviceId, CL_DEVICE_TYPE_CPU, CL_FP_CORRECTLY_ROUNDED_DIVIDE_SQRT,
};
use opencl3::event::Event;
use std::sync::Arc;
use std::time::Duration;

/// An OpenCL device ready for launches. One per process (see [`shared`]).
pub(crate) struct ClDevice {
    pub(crate) facts: Facts,
    pub(crate) device: ClDeviceId,
    pub(crate) context: Context,
    pub(crate) queue: CommandQueue,
    /// Options for `clBuildProgram`.
    pub(crate) build_options: String,
    /// The last launch's event, for its profiled duration.
    pub(crate) last_launch: LastLaunch<Event>,
}

/// The process-wide OpenCL device: the first GPU, else any device (found
/// once; later calls share its context, buffers and kernel cache).
pub(crate) fn shared() -> Result<Arc<GpuDevice<ClDevice>>> {
    static DEVICE: Shared<ClDevice> = Shared::new();
    device::shared(&DEVICE, || ClDevice::open(Want::GpuFirst))
}

/// True when an OpenCL GPU is present (for `Device::auto`); never builds a
/// context for a CPU device.
pub(crate) fn gpu_present() -> bool {
    probe::find(Want::GpuOnly).is_ok()
}

fn cl_err(what: &str) -> impl Fn(opencl3::error_codes::ClError) -> Error + '_ {
    move |e| unavailable(BackendKind::OpenCl, format!("{what}: {e}"))
}

impl ClDevice {
    fn open(want: Want) -> Result<ClDevice> {
        let device = probe::find(want)?;
        let name = device
            .name()
            .map_err(cl_err("device name"))?
            .trim()
            .to_string();
        let vendor = device.vendor().map_err(cl_err("device vendor"))?;
        let version = device.version().unwrap_or_default();
        let driver = format!(
            "{} / driver {}",
            version.trim(),
            device.driver_version().unwrap_or_default().trim()
        );
        let is_cpu = device.dev_type().map_err(cl_err("device type"))? & CL_DEVICE_TYPE_CPU != 0;
        let compute_capability = match (
            device.compute_capability_major_nv(),
            device.compute_capability_minor_nv(),
        ) {
            (Ok(major), Ok(minor)) => Some((major, minor)),
            _ => None,
        };
        let description = DeviceDescription {
            vendor,
            name,
            compute_capability,
            is_cpu,
        };
        let items = device
            .max_work_item_sizes()
            .map_err(cl_err("work-item sizes"))?;
        let item = |i: usize| items.get(i).map_or(0, |&n| n as u64);
        let limits = Limits {
            max_threads: device
                .max_work_group_size()
                .map_err(cl_err("work-group size"))? as u64,
            max_block: [item(0), item(1)],
            max_shared: device
                .local_mem_size()
                .map_err(cl_err("local memory size"))?,
            images: device.image_support().unwrap_or(false),
            fp64: device
                .extensions()
                .is_ok_and(|e| e.split_whitespace().any(|x| x == "cl_khr_fp64")),
        };
        let rounded = device.single_fp_config().unwrap_or(0) & CL_FP_CORRECTLY_ROUNDED_DIVIDE_SQRT;
        // `-w`: warnings of generated code mean nothing to the user, and a
        // driver may print them; a failed build's log still has its errors.
        // `tests/opencl_warnings.rs` builds every variant family with
        // `-Werror` instead, so the generated code stays warning-free.
        let build_options = if rounded != 0 {
            "-w -cl-fp32-correctly-rounded-divide-sqrt".to_string()
        } else {
            "-w".to_string()
        };
        let context = Context::from_device(&device).map_err(cl_err("creating a context"))?;
        let queue = CommandQueue::create_default(&context, CL_QUEUE_PROFILING_ENABLE)
            .map_err(cl_err("creating a command queue"))?;
        Ok(ClDevice {
            facts: Facts::new(&description, driver, limits),
            device,
            context,
            queue,
            build_options,
            last_launch: LastLaunch::default(),
        })
    }

    /// The duration of the last launch, from its profiling event (waits for
    /// it to finish).
    pub(crate) fn last_launch_time(&self) -> Option<Duration> {
        self.last_launch.duration(|event| {
            event.wait().ok()?;
            let start = event.profiling_command_start().ok()?;
            let end = event.profiling_command_end().ok()?;
            Some(Duration::from_nanos(end.saturating_sub(start)))
        })
    }

    /// Waits for every queued command.
    pub(crate) fn finish(&self) -> Result<()> {
        self.queue
            .finish()
            .map_err(|e| launch::<ClDevice>("", "clFinish", e))
    }
}
