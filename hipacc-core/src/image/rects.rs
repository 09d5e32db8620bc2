//! Moving part of an image between its host and device copies.
//!
//! A distributed image's block lives on the rank's device, while its halo
//! is exchanged through host memory: each exchange reads the pixels near
//! the block's edges and writes the halo ring. Syncing the whole image for
//! that would move the block over the bus twice per exchange, so
//! [`Image::read_rects`] and [`Image::write_rects`] move only the
//! rectangles they are given, and leave the validity flags as they were.

use super::{as_bytes, as_bytes_mut, Image};
use crate::{Error, Pixel, Rect, Result};

/// A rectangle of a row-major buffer in bytes: `rows` rows from row `y`,
/// `bytes` bytes from byte `x` of each row of `pitch` bytes; a pixel
/// [`Rect`] of an image in the form device copies transfer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ByteRect {
    /// The first byte of each row.
    pub x: usize,
    /// The first row.
    pub y: usize,
    /// Bytes per row.
    pub bytes: usize,
    /// Rows.
    pub rows: usize,
    /// Bytes from one row of the buffer to the next.
    pub pitch: usize,
}

impl ByteRect {
    /// The bytes of pixel rectangle `rect` of a `width`-pixel-wide image of
    /// `T`.
    pub fn of<T: Pixel>(rect: Rect, width: usize) -> ByteRect {
        let size = std::mem::size_of::<T>();
        ByteRect {
            x: rect.x * size,
            y: rect.y,
            bytes: rect.width * size,
            rows: rect.height,
            pitch: width * size,
        }
    }

    /// The byte offset of each row's first byte, top to bottom.
    pub fn row_starts(&self) -> impl Iterator<Item = usize> + '_ {
        (self.y..self.y + self.rows).map(|y| y * self.pitch + self.x)
    }

    /// Copies the rectangle's bytes of `src` into the same bytes of `dst`
    /// (both whole buffers).
    pub fn copy(&self, src: &[u8], dst: &mut [u8]) {
        for s in self.row_starts() {
            dst[s..s + self.bytes].copy_from_slice(&src[s..s + self.bytes]);
        }
    }
}

impl<T: Pixel> Image<T> {
    /// Runs `f` on the host pixels, of which those inside `rects` are
    /// current: where only the device copy is, just those rectangles are
    /// downloaded, and the host copy stays marked stale (its other pixels
    /// are unspecified). How a halo exchange reads a block's edges while
    /// the block stays on its device.
    ///
    /// ```
    /// use hipacc_core::{Image, Rect};
    /// let img = Image::from_fn(4, 3, |x, y| (10 * y + x) as f32)?;
    /// let corner = img.read_rects(&[Rect::new(3, 2, 1, 1)], |px| px[2 * 4 + 3])?;
    /// assert_eq!(corner, 23.0);
    /// # Ok::<(), hipacc_core::Error>(())
    /// ```
    pub fn read_rects<R>(&self, rects: &[Rect], f: impl FnOnce(&[T]) -> R) -> Result<R> {
        let mut s = self.storage_write();
        self.download_stale(&mut s, rects)?;
        Ok(f(&s.host))
    }

    /// Runs `f` on the host pixels to change pixels inside `rects`, and
    /// only those, in every copy that is current: the rectangles are
    /// current on the host while `f` runs (downloaded first where only the
    /// device copy is) and are uploaded to the device copy afterwards when
    /// that is current. The flags stay as they were, so an image that
    /// lives on its device stays there. `f` must not change pixels outside
    /// `rects`: a current host copy would keep them and the device copy
    /// would not.
    ///
    /// ```
    /// use hipacc_core::{Image, Rect};
    /// let img = Image::<f32>::new(4, 3)?;
    /// img.write_rects(&[Rect::new(0, 1, 4, 1)], |px| px[4..8].fill(1.0))?;
    /// assert_eq!(img.to_vec()?.iter().sum::<f32>(), 4.0);
    /// # Ok::<(), hipacc_core::Error>(())
    /// ```
    pub fn write_rects<R>(&self, rects: &[Rect], f: impl FnOnce(&mut [T]) -> R) -> Result<R> {
        let mut s = self.storage_write();
        self.download_stale(&mut s, rects)?;
        let out = f(&mut s.host);
        if s.device_valid {
            let super::Storage { host, device, .. } = &mut *s;
            if let Some(dev) = device {
                for r in rects {
                    dev.upload_rect(ByteRect::of::<T>(*r, self.width()), as_bytes(host))?;
                }
            }
        }
        Ok(out)
    }

    /// Checks `rects` against the image and, when the host copy is stale,
    /// downloads them into it from the device copy.
    fn download_stale(&self, s: &mut super::Storage<T>, rects: &[Rect]) -> Result<()> {
        for r in rects {
            r.check_in(self.width(), self.height())?;
        }
        if s.host_valid {
            return Ok(());
        }
        let super::Storage {
            host,
            device,
            device_valid,
            ..
        } = s;
        let dev = device
            .as_ref()
            .filter(|_| *device_valid)
            .ok_or_else(|| Error::Transfer("bug: image has no current copy".into()))?;
        for r in rects {
            dev.download_rect(ByteRect::of::<T>(*r, self.width()), as_bytes_mut(host))?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn byte_rects_copy_exactly_their_rows_and_columns() {
        let r = ByteRect::of::<f32>(Rect::new(1, 2, 2, 3), 5);
        assert_eq!((r.x, r.y, r.bytes, r.rows, r.pitch), (4, 2, 8, 3, 20));
        let src: Vec<u8> = (0..120).map(|i| i as u8).collect();
        let mut dst = vec![0u8; 120];
        r.copy(&src, &mut dst);
        for (i, (&s, &d)) in src.iter().zip(&dst).enumerate() {
            let (row, col) = (i / 20, i % 20);
            let inside = (2..5).contains(&row) && (4..12).contains(&col);
            assert_eq!(d, if inside { s } else { 0 }, "byte {i}");
        }
    }

    #[test]
    fn rects_outside_the_image_are_refused() {
        let img = Image::<u8>::new(4, 3).expect("image");
        assert!(img.read_rects(&[Rect::new(3, 0, 2, 1)], |_| ()).is_err());
        assert!(img.write_rects(&[Rect::new(0, 3, 1, 1)], |_| ()).is_err());
    }
}
