//! Mapping a device found at run time to the nearest target of the model.

use super::target::Target;
use super::vendor::Vendor;

/// What a runtime knows of a device, enough to pick a target.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct DeviceDescription {
    /// The vendor string (`CL_DEVICE_VENDOR`, or `"NVIDIA"` for CUDA).
    pub vendor: String,
    /// The device name (`CL_DEVICE_NAME`, `cuDeviceGetName`).
    pub name: String,
    /// CUDA compute capability, when known (CUDA, or NVIDIA's OpenCL
    /// `cl_nv_device_attribute_query`).
    pub compute_capability: Option<(u32, u32)>,
    /// True for CPU devices (`CL_DEVICE_TYPE_CPU`).
    pub is_cpu: bool,
}

impl Target {
    /// The target that best models a device found at run time.
    ///
    /// The nearest target: CPU devices map to `pocl`; NVIDIA devices by compute
    /// capability (or, without one, by name); AMD to `amd-gcn`; Intel GPUs to
    /// `intel-gpu`; anything else to `pocl` when it is a CPU, else `k20` (a
    /// conservative NVIDIA-like GPU: 1024 threads, 48 KiB shared memory).
    pub fn nearest(dev: &DeviceDescription) -> &'static Target {
        let pick = |name: &str| {
            Target::by_name(name)
                .unwrap_or_else(|| unreachable!("bug: target `{name}` not in table"))
        };
        if dev.is_cpu {
            return pick("pocl");
        }
        let name = dev.name.to_ascii_lowercase();
        match Vendor::from_vendor_string(&dev.vendor) {
            Vendor::Nvidia => {
                if let Some(cc) = dev.compute_capability {
                    return pick(nvidia_by_capability(cc, &name));
                }
                pick(nvidia_by_name(&name))
            }
            Vendor::Amd => pick("amd-gcn"),
            Vendor::Intel => pick("intel-gpu"),
            Vendor::Cpu => pick("pocl"),
            Vendor::Other if name.contains("pthread") || name.contains("cpu") => pick("pocl"),
            Vendor::Other => pick("k20"),
        }
    }
}

fn nvidia_by_capability((major, minor): (u32, u32), name: &str) -> &'static str {
    match major {
        0 | 1 => "fx5800",
        2 => "fermi",
        3..=7 => "k20",
        8 => "a100",
        _ if minor == 0 && name.contains("h200") => "h200",
        _ => "h100",
    }
}

fn nvidia_by_name(name: &str) -> &'static str {
    if name.contains("h200") {
        "h200"
    } else if name.contains("h100") || name.contains("gh200") {
        "h100"
    } else if name.contains("a100") || name.contains("a30") || name.contains("a10") {
        "a100"
    } else if name.contains("fx 5800") || name.contains("fx5800") || name.contains("gt200") {
        "fx5800"
    } else if name.contains("c20") || name.contains("m20") || name.contains("gtx 4") {
        "fermi"
    } else {
        "k20"
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dev(vendor: &str, name: &str, cc: Option<(u32, u32)>, is_cpu: bool) -> DeviceDescription {
        DeviceDescription {
            vendor: vendor.into(),
            name: name.into(),
            compute_capability: cc,
            is_cpu,
        }
    }

    #[test]
    fn maps_devices_to_targets() {
        let cases = [
            (dev("NVIDIA", "NVIDIA H200", Some((9, 0)), false), "h200"),
            (
                dev("NVIDIA", "NVIDIA H100 80GB HBM3", Some((9, 0)), false),
                "h100",
            ),
            (
                dev("NVIDIA", "NVIDIA A100-SXM4-40GB", Some((8, 0)), false),
                "a100",
            ),
            (
                dev("NVIDIA", "NVIDIA GeForce RTX 4090", Some((8, 9)), false),
                "a100",
            ),
            (dev("NVIDIA", "Tesla K20c", Some((3, 5)), false), "k20"),
            (dev("NVIDIA", "Tesla C2050", Some((2, 0)), false), "fermi"),
            (
                dev("NVIDIA Corporation", "Quadro FX 5800", None, false),
                "fx5800",
            ),
            (
                dev("NVIDIA Corporation", "NVIDIA H200", None, false),
                "h200",
            ),
            (
                dev("Advanced Micro Devices, Inc.", "gfx900", None, false),
                "amd-gcn",
            ),
            (
                dev(
                    "Intel(R) Corporation",
                    "Intel(R) UHD Graphics 620",
                    None,
                    false,
                ),
                "intel-gpu",
            ),
            (
                dev("The pocl project", "pthread-AMD EPYC", None, true),
                "pocl",
            ),
            (
                dev("Intel(R) Corporation", "Intel(R) Xeon(R) CPU", None, true),
                "pocl",
            ),
            (dev("Unknown", "mystery GPU", None, false), "k20"),
        ];
        for (d, want) in cases {
            assert_eq!(Target::nearest(&d).name, want, "{d:?}");
        }
    }
}
