//! Rows of an image held in a buffer of their own, for the CPU backend's
//! fused pipelines.
//!
//! A pipeline run per row strip computes the rows of an intermediate image
//! that a strip of its consumer reads into a small scratch buffer, and the
//! consumer reads them from there instead of from the image (Halide's
//! `compute_at`). The consumer's compiled body is unchanged: it reads
//! through an [`AccessorView`](crate::cpu::AccessorView), which takes its
//! pixels from the window registered here for the accessor's image while
//! the views are made. Coordinates, regions and boundary conditions stay
//! those of the whole image; only the rows a read lands on (after the
//! boundary condition) must lie in the window.

use crate::{Image, Pixel};
use std::any::TypeId;
use std::cell::RefCell;

/// Rows `first_row..first_row + len / width` of an image, held in a buffer
/// of whole rows with the image's width as stride.
#[derive(Clone, Copy, Debug)]
pub struct RowWindow {
    image: u64,
    pixel: TypeId,
    data: *const u8,
    len: usize,
    first_row: usize,
}

impl RowWindow {
    /// A window onto `rows` (whole rows of `image`'s width) standing for
    /// the rows of `image` from `first_row`.
    ///
    /// Panics when `rows` is not whole rows of `image` inside it: a bug of
    /// the caller, which sizes the buffer from the image.
    pub fn new<T: Pixel>(image: &Image<T>, first_row: usize, rows: &[T]) -> RowWindow {
        let width = image.width();
        assert!(
            width > 0
                && rows.len().is_multiple_of(width)
                && first_row + rows.len() / width <= image.height(),
            "bug: a row window of {} pixels from row {first_row} of a {}x{} image",
            rows.len(),
            width,
            image.height()
        );
        RowWindow {
            image: image.id(),
            pixel: TypeId::of::<T>(),
            data: rows.as_ptr().cast(),
            len: rows.len(),
            first_row,
        }
    }
}

thread_local! {
    static WINDOWS: RefCell<Vec<RowWindow>> = const { RefCell::new(Vec::new()) };
}

/// Runs `f` with `windows` registered on this thread: accessor views made
/// inside `f` (see [`crate::KernelFields::cpu_views_in`]) read the rows of
/// those images from the windows' buffers.
///
/// # Safety
/// The buffers of `windows` must stay alive and unmodified for as long as
/// any view made inside `f` is used, and every read such a view makes must
/// land (after its boundary condition) on a row its window holds.
pub unsafe fn with_row_windows<R>(windows: &[RowWindow], f: impl FnOnce() -> R) -> R {
    struct Restore(usize);
    impl Drop for Restore {
        fn drop(&mut self) {
            WINDOWS.with(|w| w.borrow_mut().truncate(self.0));
        }
    }
    let restore = Restore(WINDOWS.with(|w| {
        let mut w = w.borrow_mut();
        let before = w.len();
        w.extend_from_slice(windows);
        before
    }));
    let r = f();
    drop(restore);
    r
}

/// The window registered for `image` on this thread, as (pixels, length,
/// first row), when there is one.
pub(crate) fn window_of<T: Pixel>(image: &Image<T>) -> Option<(*const T, usize, usize)> {
    window_of_id(image.id())
}

/// The window registered on this thread for the image with id `id` and
/// pixels `T`, as (pixels, length, first row): how code that reads an
/// image's rows directly (not through an accessor view) finds the rows a
/// fused pipeline holds for it. The pointer is valid under the contract of
/// [`with_row_windows`].
pub fn window_of_id<T: Pixel>(id: u64) -> Option<(*const T, usize, usize)> {
    WINDOWS.with(|w| {
        w.borrow()
            .iter()
            .rev()
            .find(|w| w.image == id && w.pixel == TypeId::of::<T>())
            .map(|w| (w.data.cast::<T>(), w.len, w.first_row))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn windows_apply_inside_the_call_only() {
        let img = Image::<f32>::new(4, 6).unwrap();
        let rows = vec![1.0f32; 8];
        let w = RowWindow::new(&img, 3, &rows);
        assert!(window_of(&img).is_none());
        // SAFETY: nothing reads through the window.
        let inside = unsafe { with_row_windows(&[w], || window_of(&img)) };
        assert_eq!(inside, Some((rows.as_ptr(), 8, 3)));
        assert!(window_of(&img).is_none());
    }

    #[test]
    #[should_panic(expected = "row window")]
    fn a_window_past_the_image_is_a_bug() {
        let img = Image::<f32>::new(4, 2).unwrap();
        let _ = RowWindow::new(&img, 1, &[0.0; 8]);
    }
}
