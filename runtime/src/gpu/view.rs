//! The image view of an image's device memory: what a kernel reading an
//! accessor as an image binds (a texture object over the memory in CUDA, an
//! `image2d_t` copy of it in OpenCL).
//!
//! A view is made on the first launch that reads the memory as images of a
//! pixel type, kept for later launches, remade for another pixel type, and
//! refreshed before a launch when the memory changed since it was last
//! brought up to date (a view that aliases the memory refreshes as a no-op).

use super::backend::Backend;
use super::errors::transfer;
use crate::Result;
use hipacc_core::ir::{ScalarType, Type};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, PoisonError};

/// A view and what it shows.
struct View<T> {
    pixel: Type,
    /// The memory's version the view was last brought up to date with.
    version: u64,
    view: T,
}

/// The view of one image's memory, if any, and the memory's version.
pub(crate) struct ImageView<T> {
    /// Bumped whenever the memory's contents change (upload, kernel write).
    version: AtomicU64,
    slot: Mutex<Option<View<T>>>,
}

impl<T> Default for ImageView<T> {
    fn default() -> Self {
        ImageView {
            version: AtomicU64::new(0),
            slot: Mutex::new(None),
        }
    }
}

impl<T> ImageView<T> {
    /// Records that the memory's contents changed.
    pub(crate) fn touch(&self) {
        self.version.fetch_add(1, Ordering::Relaxed);
    }

    /// `handle` of the view as `pixel`s: the one held when it shows that
    /// type, else a new one from `make`; `refresh` brings it up to date when
    /// the memory changed since.
    pub(crate) fn get<R>(
        &self,
        pixel: Type,
        make: impl FnOnce() -> Result<T>,
        refresh: impl FnOnce(&mut T) -> Result<()>,
        handle: impl FnOnce(&T) -> R,
    ) -> Result<R> {
        let version = self.version.load(Ordering::Relaxed);
        let mut slot = self.slot.lock().unwrap_or_else(PoisonError::into_inner);
        let view = match slot.take() {
            Some(v) if v.pixel == pixel => v,
            _ => View {
                pixel,
                version: u64::MAX,
                view: make()?,
            },
        };
        let view = slot.insert(view);
        if view.version != version {
            refresh(&mut view.view)?;
            view.version = version;
        }
        Ok(handle(&view.view))
    }

    /// Drops the view (before the memory it shows is freed).
    pub(crate) fn clear(&mut self) {
        *self.slot.get_mut().unwrap_or_else(PoisonError::into_inner) = None;
    }
}

/// The driver's format for channels of `pixel`'s scalar type, from
/// `formats` in the order u8, u16, u32, i32, f32: the types an image view
/// can show; `Err` names the backend and the type for the others.
pub(crate) fn channel_format<B: Backend, F: Copy>(pixel: Type, formats: [F; 5]) -> Result<F> {
    Ok(match pixel.scalar {
        ScalarType::U8 => formats[0],
        ScalarType::U16 => formats[1],
        ScalarType::U32 => formats[2],
        ScalarType::I32 => formats[3],
        ScalarType::F32 => formats[4],
        ScalarType::F64 | ScalarType::Bool => {
            return Err(transfer::<B>(
                "an image view",
                format!("image views cannot show {pixel} pixels"),
            ))
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::Cell;

    #[test]
    fn views_are_remade_per_pixel_type_and_refreshed_after_writes() {
        let (made, refreshed) = (Cell::new(0), Cell::new(0));
        let view = ImageView::<u32>::default();
        let get = |pixel: Type| {
            view.get(
                pixel,
                || {
                    made.set(made.get() + 1);
                    Ok(made.get())
                },
                |_| {
                    refreshed.set(refreshed.get() + 1);
                    Ok(())
                },
                |v| *v,
            )
            .unwrap()
        };
        let (f, u) = (Type::scalar(ScalarType::F32), Type::scalar(ScalarType::U8));
        assert_eq!((get(f), get(f)), (1, 1));
        assert_eq!(refreshed.get(), 1);
        view.touch();
        assert_eq!(get(f), 1);
        assert_eq!(refreshed.get(), 2);
        assert_eq!(get(u), 2);
        assert_eq!((made.get(), refreshed.get()), (2, 3));
    }
}
