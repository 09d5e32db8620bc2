//! An image's host pixels, each new image's first pixel at its own place
//! in the cache's sets.
//!
//! A first-level data cache of 32 KiB with 8 ways maps addresses 4 KiB
//! apart to the same set. Large buffers start at the same offset into a
//! page (the allocator maps them fresh), and a 2048-pixel f32 row is 8 KiB
//! long, so pixel `(x, y)` of every such image lies in the same set. A
//! kernel that reads several images at once (five for a Horn-Schunck
//! update, nine rows among them, and its output) then keeps more lines
//! live in one set than it has ways, and they evict each other before
//! their second vector is read. Each image allocated here starts three
//! cache lines earlier in the 4 KiB period than the one before
//! (wrapping), so the images a kernel reads together fall into different
//! sets. Halide's Horn-Schunck iteration on five 2048² inputs allocated at
//! one offset took 10 to 14% longer than on inputs started 17 cache lines
//! apart.
//!
//! Earlier, not later: a kernel reads its inputs at and ahead of the
//! column it stores, and a load whose address matches a pending store's
//! in its low 12 bits waits for that store (4K aliasing). An output made
//! after its inputs then starts a little before them in the period, where
//! no load catches up with its stores; starting it a few hundred bytes
//! after them made a 3x3 median about 4% slower.
//!
//! Pixels handed over as a `Vec` ([`HostPixels::from_vec`]) stay where
//! they are: moving them would copy the image.

use std::ops::{Deref, DerefMut};
use std::sync::atomic::{AtomicUsize, Ordering};

/// Bytes of one cache line.
const LINE: usize = 64;

/// Cache lines in the period after which addresses map to the same
/// first-level set (4 KiB).
const COLOURS: usize = 4096 / LINE;

/// Cache lines from the start of one image to the start of the next one
/// allocated, modulo [`COLOURS`]: three lines back. Coprime with
/// [`COLOURS`], so 64 images in a row all start in different sets.
const COLOUR_STEP: usize = COLOURS - 3;

/// Images smaller than this start where the allocator puts them: they
/// stay in the caches whole, and up to 4 KiB of padding would be a large
/// share of them.
const MIN_BYTES: usize = 64 << 10;

/// The colour of the next image allocated.
static NEXT_COLOUR: AtomicUsize = AtomicUsize::new(0);

/// Host pixels, row-major: `len` of them from `offset` into `buf`.
pub struct HostPixels<T> {
    buf: Vec<T>,
    offset: usize,
    len: usize,
}

impl<T: Clone + Default> HostPixels<T> {
    /// `len` pixels made by `fill` (given an empty vector with room for
    /// them, which it must extend by exactly `len`), started at the next
    /// colour where they take at least [`MIN_BYTES`]. The buffer is advised to use huge pages where large
    /// (`crate::huge_pages`).
    pub(crate) fn with(len: usize, fill: impl FnOnce(&mut Vec<T>)) -> HostPixels<T> {
        let size = std::mem::size_of::<T>();
        let offset = if len.saturating_mul(size) >= MIN_BYTES {
            offset_of(NEXT_COLOUR.fetch_add(1, Ordering::Relaxed), size)
        } else {
            0
        };
        let mut buf = crate::huge_pages::vec_with_capacity(offset + len);
        buf.resize(offset, T::default());
        fill(&mut buf);
        debug_assert_eq!(buf.len(), offset + len, "bug: fill made another length");
        HostPixels { buf, offset, len }
    }
}

/// Pixels of `size` bytes before the first pixel of the `nth` image
/// allocated: whole pixels, less than one period (a pixel wider than a
/// line moves by whole pixels).
fn offset_of(nth: usize, size: usize) -> usize {
    (nth * COLOUR_STEP % COLOURS * LINE).div_ceil(size.max(1))
}

impl<T> HostPixels<T> {
    /// Pixels where `data` has them.
    pub(crate) fn from_vec(data: Vec<T>) -> HostPixels<T> {
        HostPixels {
            len: data.len(),
            buf: data,
            offset: 0,
        }
    }
}

impl<T> Deref for HostPixels<T> {
    type Target = [T];
    fn deref(&self) -> &[T] {
        &self.buf[self.offset..self.offset + self.len]
    }
}

impl<T> DerefMut for HostPixels<T> {
    fn deref_mut(&mut self) -> &mut [T] {
        &mut self.buf[self.offset..self.offset + self.len]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// 64 images in a row start in 64 different sets of the 4 KiB
    /// period, whatever their pixel's size, and hold exactly their pixels.
    #[test]
    fn images_in_a_row_start_in_different_sets() {
        for size in [1, 4, 16] {
            let mut sets: Vec<usize> = (0..COLOURS)
                .map(|n| offset_of(n, size) * size % 4096 / LINE)
                .collect();
            sets.sort_unstable();
            sets.dedup();
            assert_eq!(sets.len(), COLOURS, "{size}-byte pixels");
        }
        for len in [1000, 100_000] {
            let p = HostPixels::with(len, |v| v.extend((0..len).map(|i| i as f32)));
            assert_eq!(p.len(), len);
            assert!(p.iter().enumerate().all(|(i, &v)| v == i as f32));
        }
    }
}
