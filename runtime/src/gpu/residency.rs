//! Keeping images resident on a device.
//!
//! Every image has a host copy and at most one device copy, each with a
//! validity flag ([`hipacc_core::image::Storage`]). Before a launch the
//! backend makes each accessor's image current on its device: it allocates a
//! buffer when the image has none (or one of another device, after syncing
//! that copy to the host) and uploads when the device copy is stale. The
//! output image is uploaded only when the launch writes part of it (the rest
//! must survive); after the launch its device copy is current and its host
//! copy stale, so nothing moves until the host reads.
//!
//! Invariant (kept by `hipacc-core`): at least one copy is current.

use crate::Result;
use hipacc_core::image::{DeviceBuffer, DynImage, ErasedStorage};

/// What a backend provides to manage its buffers.
pub(crate) trait Residency {
    /// The handle a launch binds: cheap to clone, keeps the memory alive.
    type Handle: Clone;
    /// The device key this backend's buffers report.
    fn device_key(&self) -> u64;
    /// A new, uninitialised device buffer of `bytes` bytes.
    fn allocate(&self, bytes: usize) -> Result<Box<dyn DeviceBuffer>>;
    /// Copies `data` (the whole image) into `buffer`.
    fn upload(&self, buffer: &dyn DeviceBuffer, data: &[u8]) -> Result<()>;
    /// The handle of one of this backend's buffers (`None`: not ours).
    fn handle(&self, buffer: &dyn DeviceBuffer) -> Option<Self::Handle>;
}

/// How a launch uses an image.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Use {
    /// Read through an accessor.
    Read,
    /// Written by the launch; `whole` when every pixel is written.
    Write {
        /// The iteration space covers the whole image.
        whole: bool,
    },
}

/// Makes `image` current on the device of `backend` for `usage` and returns
/// the handle to bind.
pub(crate) fn make_resident<R: Residency>(
    backend: &R,
    image: &dyn DynImage,
    usage: Use,
) -> Result<R::Handle> {
    let mut outcome = None;
    let locked = image.with_storage(&mut |storage| {
        outcome = Some(resident_in(backend, storage, usage));
        Ok(())
    });
    match (locked, outcome) {
        (Err(e), _) => Err(e.into()),
        (Ok(()), Some(result)) => result,
        (Ok(()), None) => unreachable!("bug: with_storage returned Ok without running the closure"),
    }
}

fn resident_in<R: Residency>(
    backend: &R,
    storage: &mut dyn ErasedStorage,
    usage: Use,
) -> Result<R::Handle> {
    let ours = storage
        .device()
        .as_deref()
        .filter(|b| b.device_key() == backend.device_key())
        .and_then(|b| backend.handle(b));
    let handle = match ours {
        Some(h) => h,
        None => {
            if storage.device().is_some() {
                // Another device holds the image: bring its copy home first.
                storage.sync_to_host()?;
            }
            let buffer = backend.allocate(storage.host_bytes().len())?;
            let h = backend
                .handle(&*buffer)
                .unwrap_or_else(|| unreachable!("bug: a fresh buffer is not the backend's own"));
            *storage.device() = Some(buffer);
            storage.set_device_valid(false);
            h
        }
    };
    if !storage.device_valid() && usage != (Use::Write { whole: true }) {
        let Some(buffer) = storage.device().take() else {
            unreachable!("bug: the device slot was just filled")
        };
        let uploaded = backend.upload(&*buffer, storage.host_bytes());
        *storage.device() = Some(buffer);
        uploaded?;
        storage.set_device_valid(true);
    }
    Ok(handle)
}

/// After a launch wrote `image` on the device: the device copy is current,
/// the host copy stale.
pub(crate) fn mark_written(image: &dyn DynImage) -> Result<()> {
    image
        .with_storage(&mut |storage| {
            storage.set_device_valid(true);
            storage.set_host_valid(false);
            Ok(())
        })
        .map_err(Into::into)
}
