//! One wgpu adapter and device with its queue, limits and target of the
//! architecture model.

use super::timing::LaunchClock;
use crate::gpu::backend::Facts;
use crate::gpu::device::{self, Shared};
use crate::gpu::limits::Limits;
use crate::gpu::GpuDevice;
use crate::{BackendKind, Error, Result};
use hipacc_codegen::{DeviceDescription, Target};
use std::sync::Arc;

/// How to get a Vulkan driver when no adapter is found.
pub(crate) const INSTALL_HINT: &str =
    "install a Vulkan driver (GPU vendor driver, or for the CPU: \
     apt-get install mesa-vulkan-drivers)";

/// A wgpu device ready for launches. One per process (see [`shared`]).
pub(crate) struct WgDevice {
    pub(crate) facts: Facts,
    pub(crate) device: wgpu::Device,
    pub(crate) queue: wgpu::Queue,
    pub(crate) clock: LaunchClock,
}

fn unavailable(reason: String) -> Error {
    crate::gpu::errors::unavailable(BackendKind::Wgpu, reason)
}

/// The process-wide wgpu device: the first high-performance adapter of any
/// native backend (found once; later calls share its buffers and kernels).
pub(crate) fn shared() -> Result<Arc<GpuDevice<WgDevice>>> {
    static DEVICE: Shared<WgDevice> = Shared::new();
    device::shared(&DEVICE, WgDevice::open)
}

/// The vendor's name for the architecture model, from its PCI id.
fn vendor(info: &wgpu::AdapterInfo) -> String {
    match info.vendor {
        0x10de => "NVIDIA".into(),
        0x1002 | 0x1022 => "AMD".into(),
        0x8086 => "Intel".into(),
        0x106b => "Apple".into(),
        _ => info.driver.clone(),
    }
}

/// The architecture model's target for an adapter: the nearest known one,
/// with the adapter's subgroup size as its warp width where the adapter
/// reports one size (wgpu reports a range; drivers that pick the size per
/// shader, as CPU drivers may, report several and keep the target's).
fn target(description: &DeviceDescription, info: &wgpu::AdapterInfo) -> &'static Target {
    let nearest = Target::nearest(description);
    let size = info.subgroup_min_size;
    if size == 0 || size != info.subgroup_max_size || size == nearest.warp_width {
        return nearest;
    }
    // The device is opened once per process (`shared`): one target a run.
    Box::leak(Box::new(Target {
        warp_width: size,
        ..nearest.clone()
    }))
}

/// The first high-performance adapter of any native backend.
pub(super) fn adapter() -> Result<wgpu::Adapter> {
    let mut desc = wgpu::InstanceDescriptor::new_without_display_handle();
    desc.backends = wgpu::Backends::VULKAN | wgpu::Backends::METAL | wgpu::Backends::DX12;
    let instance = wgpu::Instance::new(desc);
    pollster::block_on(instance.request_adapter(&wgpu::RequestAdapterOptions {
        power_preference: wgpu::PowerPreference::HighPerformance,
        force_fallback_adapter: false,
        compatible_surface: None,
        apply_limit_buckets: false,
    }))
    .map_err(|e| unavailable(format!("no adapter ({e}): {INSTALL_HINT}")))
}

/// A device of `adapter` with `features` and every limit the adapter has.
pub(super) fn request_device(
    adapter: &wgpu::Adapter,
    features: wgpu::Features,
) -> Result<(wgpu::Device, wgpu::Queue)> {
    pollster::block_on(adapter.request_device(&wgpu::DeviceDescriptor {
        label: Some("hipacc"),
        required_features: features,
        required_limits: adapter.limits(),
        experimental_features: wgpu::ExperimentalFeatures::disabled(),
        memory_hints: wgpu::MemoryHints::Performance,
        trace: wgpu::Trace::Off,
    }))
    .map_err(|e| {
        let name = adapter.get_info().name;
        unavailable(format!("requesting a device of {name}: {e}"))
    })
}

impl WgDevice {
    fn open() -> Result<WgDevice> {
        let adapter = adapter()?;
        let info = adapter.get_info();
        let f64 = adapter.features().contains(wgpu::Features::SHADER_F64);
        let limits = adapter.limits();
        // Timestamp queries time launches on the device itself (see
        // `timing`); without them launches are timed by the wall clock.
        let (device, queue) = request_device(
            &adapter,
            adapter.features() & (wgpu::Features::SHADER_F64 | wgpu::Features::TIMESTAMP_QUERY),
        )?;
        // Errors are caught in error scopes around each call; one that
        // escapes them must not abort the process.
        device.on_uncaptured_error(Arc::new(|e| {
            eprintln!("hipacc: wgpu: uncaptured error: {e}");
        }));
        let is_cpu = info.device_type == wgpu::DeviceType::Cpu;
        let description = DeviceDescription {
            vendor: vendor(&info),
            name: info.name.clone(),
            compute_capability: None,
            is_cpu,
        };
        let mut facts = Facts::new(
            &description,
            format!(
                "wgpu {:?} / {} {}",
                info.backend, info.driver, info.driver_info
            ),
            Limits {
                max_threads: u64::from(limits.max_compute_invocations_per_workgroup),
                max_block: [
                    u64::from(limits.max_compute_workgroup_size_x),
                    u64::from(limits.max_compute_workgroup_size_y),
                ],
                max_shared: u64::from(limits.max_compute_workgroup_storage_size),
                images: false,
                fp64: f64,
            },
        );
        facts.target = target(&description, &info);
        Ok(WgDevice {
            facts,
            clock: LaunchClock::new(&device, &queue),
            device,
            queue,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The adapter's single subgroup size becomes the target's warp width;
    /// a range keeps the nearest target's.
    #[test]
    fn the_target_takes_the_adapters_subgroup_size() {
        let description = DeviceDescription {
            vendor: "NVIDIA".into(),
            name: "some GPU".into(),
            compute_capability: None,
            is_cpu: false,
        };
        let nearest = Target::nearest(&description);
        let info = |min, max| wgpu::AdapterInfo {
            subgroup_min_size: min,
            subgroup_max_size: max,
            ..wgpu::AdapterInfo::new(wgpu::DeviceType::DiscreteGpu, wgpu::Backend::Vulkan)
        };
        let other = if nearest.warp_width == 64 { 32 } else { 64 };
        let t = target(&description, &info(other, other));
        assert_eq!(t.warp_width, other);
        assert_eq!(t.name, nearest.name);
        assert_eq!(t.max_threads_per_block, nearest.max_threads_per_block);
        assert!(std::ptr::eq(target(&description, &info(8, 64)), nearest));
        assert!(std::ptr::eq(target(&description, &info(0, 0)), nearest));
    }
}
