//! The errors of a driver call, one constructor per kind of call, shared by
//! the backends so a failure reads the same whichever driver made it.

use super::backend::Backend;
use crate::{BackendKind, Error};
use std::fmt::Display;

/// `backend` cannot be used: its library, platform or device is missing.
pub(crate) fn unavailable(backend: BackendKind, reason: impl Into<String>) -> Error {
    Error::BackendUnavailable {
        backend,
        reason: reason.into(),
    }
}

/// A driver call of the launch of `kernel` on `B` failed.
pub(crate) fn launch<B: Backend>(kernel: &str, what: &str, e: impl Display) -> Error {
    Error::Launch {
        backend: B::KIND,
        kernel: kernel.to_string(),
        message: format!("{what}: {e}"),
    }
}

/// A memory allocation or copy on `B` failed.
pub(crate) fn transfer<B: Backend>(what: &str, e: impl Display) -> Error {
    hipacc_core::Error::Transfer(format!("{}: {what}: {e}", B::KIND)).into()
}

/// `Err` unless a copy moves exactly the memory's `size` bytes (`bytes`).
pub(crate) fn check_copy<B: Backend>(what: &str, bytes: usize, size: usize) -> crate::Result<()> {
    if bytes == size {
        Ok(())
    } else {
        Err(transfer::<B>(
            what,
            format!("bug: {bytes} bytes for memory of {size}"),
        ))
    }
}
