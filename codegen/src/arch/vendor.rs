//! Who makes a device: how the architecture model tells vendors apart.

/// Who makes a device.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Vendor {
    /// NVIDIA GPUs.
    Nvidia,
    /// AMD GPUs.
    Amd,
    /// Intel GPUs.
    Intel,
    /// CPU OpenCL implementations (PoCL, Intel CPU runtime, …).
    Cpu,
    /// Anything else.
    Other,
}

impl Vendor {
    /// The vendor named by an OpenCL `CL_DEVICE_VENDOR` string (or a CUDA
    /// device, which is always `Nvidia`).
    pub fn from_vendor_string(vendor: &str) -> Vendor {
        let v = vendor.to_ascii_lowercase();
        if v.contains("nvidia") {
            Vendor::Nvidia
        } else if v.contains("advanced micro devices") || v.contains("amd") {
            Vendor::Amd
        } else if v.contains("intel") {
            Vendor::Intel
        } else {
            Vendor::Other
        }
    }
}
