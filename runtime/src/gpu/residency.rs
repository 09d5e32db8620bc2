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

use super::backend::Backend;
use crate::Result;
use hipacc_core::image::{ByteRect, DeviceBuffer, DynImage, ErasedStorage};
use std::any::Any;
use std::sync::Arc;

/// An image's device copy: the memory and the backend that owns it.
pub(crate) struct GpuBuffer<B: Backend> {
    backend: Arc<B>,
    mem: Arc<B::Mem>,
}

impl<B: Backend> DeviceBuffer for GpuBuffer<B> {
    fn device_key(&self) -> u64 {
        self.backend.facts().key
    }
    fn download(&self, dst: &mut [u8]) -> hipacc_core::Result<()> {
        self.backend
            .download(&self.mem, dst)
            .map_err(|e| hipacc_core::Error::Transfer(e.to_string()))
    }
    fn download_rect(&self, rect: ByteRect, dst: &mut [u8]) -> hipacc_core::Result<()> {
        self.backend
            .download_rect(&self.mem, rect, dst)
            .map_err(|e| hipacc_core::Error::Transfer(e.to_string()))
    }
    fn upload_rect(&self, rect: ByteRect, src: &[u8]) -> hipacc_core::Result<()> {
        self.backend
            .upload_rect(&self.mem, rect, src)
            .map_err(|e| hipacc_core::Error::Transfer(e.to_string()))
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
    fn as_any_mut(&mut self) -> &mut dyn Any {
        self
    }
}

/// The memory of `buffer` when it is one of `backend`'s.
fn handle<B: Backend>(backend: &B, buffer: &dyn DeviceBuffer) -> Option<Arc<B::Mem>> {
    if buffer.device_key() != backend.facts().key {
        return None;
    }
    buffer
        .as_any()
        .downcast_ref::<GpuBuffer<B>>()
        .map(|b| Arc::clone(&b.mem))
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
/// the memory to bind.
pub(crate) fn make_resident<B: Backend>(
    backend: &Arc<B>,
    image: &dyn DynImage,
    usage: Use,
) -> Result<Arc<B::Mem>> {
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

fn resident_in<B: Backend>(
    backend: &Arc<B>,
    storage: &mut dyn ErasedStorage,
    usage: Use,
) -> Result<Arc<B::Mem>> {
    let ours = storage
        .device()
        .as_deref()
        .and_then(|b| handle(&**backend, b));
    let bound = match ours {
        Some(h) => h,
        None => {
            if storage.device().is_some() {
                // Another device holds the image: bring its copy home first.
                storage.sync_to_host()?;
            }
            let mem = Arc::new(backend.allocate(storage.host_bytes().len())?);
            let h = Arc::clone(&mem);
            *storage.device() = Some(Box::new(GpuBuffer {
                backend: Arc::clone(backend),
                mem,
            }));
            storage.set_device_valid(false);
            h
        }
    };
    if !storage.device_valid() && usage != (Use::Write { whole: true }) {
        backend.upload(&bound, storage.host_bytes())?;
        storage.set_device_valid(true);
    }
    Ok(bound)
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

/// The memory of `image` on the device of `backend` when that copy is
/// current (the image lives there); `None` when only the host copy is.
pub(crate) fn current_on<B: Backend>(
    backend: &B,
    image: &dyn DynImage,
) -> Result<Option<Arc<B::Mem>>> {
    let mut found = None;
    image.with_storage(&mut |storage| {
        if storage.device_valid() {
            found = storage.device().as_deref().and_then(|b| handle(backend, b));
        }
        Ok(())
    })?;
    Ok(found)
}
