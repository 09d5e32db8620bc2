//! Finding an OpenCL device.
//!
//! `opencl3` loads `libOpenCL.so.1` (the ICD loader) at run time; with no
//! loader or no installed platform, listing platforms fails with an error
//! (never a panic), which becomes [`Error::BackendUnavailable`] with the
//! install hint.
//!
//! `opencl3` opens `libOpenCL.so`, the development symlink, which systems
//! with only the runtime package (`ocl-icd-libopencl1`) lack; unless the user
//! set `OPENCL_DYLIB_PATH` (its list of libraries to try), [`find`] sets it
//! to try `libOpenCL.so`, then `libOpenCL.so.1`, before the first call.

use crate::{BackendKind, Error, Result};
use opencl3::device::{Device as ClDeviceId, CL_DEVICE_TYPE_ALL, CL_DEVICE_TYPE_GPU};
use opencl3::platform::get_platforms;

/// How to get an OpenCL runtime when none is found.
pub(crate) const INSTALL_HINT: &str =
    "install an OpenCL driver (GPU vendor driver, or for the CPU: \
     apt-get install pocl-opencl-icd ocl-icd-libopencl1)";

fn unavailable(reason: String) -> Error {
    crate::gpu::errors::unavailable(BackendKind::OpenCl, reason)
}

/// Which devices a search accepts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Want {
    /// The first GPU of any platform, else the first device of any type.
    GpuFirst,
    /// GPUs only.
    GpuOnly,
}

/// Makes `opencl3` also try the versioned loader name (once per process,
/// before any OpenCL call).
fn library_names() {
    static SET: std::sync::Once = std::sync::Once::new();
    SET.call_once(|| {
        if std::env::var_os("OPENCL_DYLIB_PATH").is_none() {
            std::env::set_var("OPENCL_DYLIB_PATH", "libOpenCL.so;libOpenCL.so.1");
        }
    });
}

/// The first OpenCL device matching `want`, in platform order.
pub(crate) fn find(want: Want) -> Result<ClDeviceId> {
    library_names();
    let platforms = get_platforms().map_err(|e| {
        unavailable(format!(
            "no OpenCL platform ({e}; is libOpenCL.so.1 present?): {INSTALL_HINT}"
        ))
    })?;
    if platforms.is_empty() {
        return Err(unavailable(format!("no OpenCL platform: {INSTALL_HINT}")));
    }
    let of_type = |ty| -> Vec<ClDeviceId> {
        platforms
            .iter()
            .flat_map(|p| p.get_devices(ty).unwrap_or_default())
            .map(ClDeviceId::new)
            .filter(|d| d.available().unwrap_or(false) && d.compiler_available().unwrap_or(false))
            .collect()
    };
    if let Some(gpu) = of_type(CL_DEVICE_TYPE_GPU).into_iter().next() {
        return Ok(gpu);
    }
    if want == Want::GpuOnly {
        return Err(unavailable("no OpenCL GPU device".into()));
    }
    of_type(CL_DEVICE_TYPE_ALL)
        .into_iter()
        .next()
        .ok_or_else(|| {
            unavailable(format!(
                "OpenCL platforms have no usable device: {INSTALL_HINT}"
            ))
        })
}
