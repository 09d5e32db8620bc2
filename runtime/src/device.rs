//! Devices: where kernels run.

use crate::{Error, Result};

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
/// ```
#[derive(Clone, Debug)]
pub struct Device {
    inner: DeviceInner,
}

#[derive(Clone, Debug)]
pub(crate) enum DeviceInner {
    Cpu,
}

impl Device {
    /// The native CPU backend; always available.
    pub fn cpu() -> Device {
        Device {
            inner: DeviceInner::Cpu,
        }
    }

    /// The best backend present: CUDA, then an OpenCL GPU, then the CPU.
    /// `HIPACC_BACKEND=cpu|opencl|cuda` selects one explicitly.
    pub fn auto() -> Result<Device> {
        if let Ok(name) = std::env::var("HIPACC_BACKEND") {
            if !name.is_empty() && name != "auto" {
                return Device::from_name(&name);
            }
        }
        Ok(Device::cpu())
    }

    /// A device by backend name: `cpu`, `opencl`, `cuda` or `auto`.
    pub fn from_name(name: &str) -> Result<Device> {
        match name {
            "cpu" => Ok(Device::cpu()),
            "auto" => Device::auto(),
            "opencl" | "cuda" => Err(Error::BackendUnavailable {
                backend: name.to_string(),
                reason: "not built into this version".to_string(),
            }),
            other => Err(Error::UnknownBackend(other.to_string())),
        }
    }

    /// The backend kind.
    pub fn kind(&self) -> BackendKind {
        match self.inner {
            DeviceInner::Cpu => BackendKind::Cpu,
        }
    }

    /// A human-readable device name.
    pub fn name(&self) -> String {
        match self.inner {
            DeviceInner::Cpu => format!("native CPU ({} threads)", rayon::current_num_threads()),
        }
    }

    pub(crate) fn inner(&self) -> &DeviceInner {
        &self.inner
    }
}
