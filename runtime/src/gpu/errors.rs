//! The errors of a driver call, one constructor per kind of call, shared by
//! the backends so a failure reads the same whichever driver made it.

use super::backend::Backend;
use crate::{BackendKind, Error};
use hipacc_core::image::ByteRect;
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

/// `Err` unless the rectangle copy `rect` moves bytes of a whole-memory
/// host buffer of `host` bytes to or from memory of `size` bytes inside
/// both, and at least one byte.
pub(crate) fn check_rect<B: Backend>(
    what: &str,
    rect: ByteRect,
    host: usize,
    size: usize,
) -> crate::Result<()> {
    check_copy::<B>(what, host, size)?;
    let end = (rect.y + rect.rows)
        .checked_sub(1)
        .and_then(|last| last.checked_mul(rect.pitch))
        .and_then(|row| row.checked_add(rect.x + rect.bytes));
    match end {
        Some(end) if rect.bytes > 0 && rect.x + rect.bytes <= rect.pitch && end <= size => Ok(()),
        _ => Err(transfer::<B>(
            what,
            format!("bug: {rect:?} reaches past memory of {size} bytes"),
        )),
    }
}
