//! Probing for the CUDA driver before cudarc touches it.
//!
//! cudarc loads `libcuda` on first use and panics when it is absent, so
//! every entry point of this backend that needs a device calls [`driver`]
//! first, which turns absence into [`Error::BackendUnavailable`] naming
//! what is missing. NVRTC is probed likewise by [`super::nvrtc`].

use crate::{BackendKind, Error, Result};
use std::sync::OnceLock;

/// The CUDA backend cannot be used, for `reason`.
pub(crate) fn unavailable(reason: impl Into<String>) -> Error {
    crate::gpu::errors::unavailable(BackendKind::Cuda, reason)
}

/// `Ok` when the CUDA driver library can be loaded.
pub(crate) fn driver() -> Result<()> {
    static PRESENT: OnceLock<bool> = OnceLock::new();
    // SAFETY: only tries to dlopen the driver library by its usual names.
    let present = *PRESENT.get_or_init(|| unsafe { cudarc::driver::sys::is_culib_present() });
    if present {
        Ok(())
    } else {
        Err(unavailable(
            "libcuda.so not found: install the NVIDIA driver (a machine with an NVIDIA GPU)",
        ))
    }
}
