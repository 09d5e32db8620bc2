//! Images: 2D pixel buffers shared between the host and at most one device.
//!
//! An [`Image`] is a cheap handle (`Clone` shares the pixels, like HIPAcc's
//! `Image`). Its pixels live on the host, on a device, or both; a validity
//! flag per side says which copy is current, so data moves only when the
//! other side needs it: a GPU backend uploads before a launch that reads an
//! image whose device copy is stale and marks the host copy stale after it
//! writes; [`Image::to_vec`] downloads only then.

use crate::huge_pages;
use crate::ir::{Type, Value};
use crate::{Error, Pixel, Result};
use std::any::Any;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, PoisonError, RwLock, RwLockReadGuard, RwLockWriteGuard};

mod host;
mod rects;
pub use host::HostPixels;
pub use rects::ByteRect;

/// A device-side copy of an image, owned by a backend.
///
/// Backends keep their buffers behind this trait so `hipacc-core` needs no
/// knowledge of them; [`Any`] lets the owning backend downcast to its type.
pub trait DeviceBuffer: Any + Send + Sync {
    /// Identifies the device (backend and device index) holding the buffer.
    fn device_key(&self) -> u64;
    /// Copies the whole buffer to `dst` (row-major, tightly packed pixels).
    fn download(&self, dst: &mut [u8]) -> Result<()>;
    /// Copies the bytes `rect` of the buffer into the same bytes of `dst`,
    /// which has the whole buffer's size; the rest of `dst` is left alone.
    fn download_rect(&self, rect: ByteRect, dst: &mut [u8]) -> Result<()>;
    /// Copies the bytes `rect` of `src`, which has the whole buffer's
    /// size, into the same bytes of the buffer; the rest of the buffer is
    /// left alone.
    fn upload_rect(&self, rect: ByteRect, src: &[u8]) -> Result<()>;
    /// For downcasting by the owning backend.
    fn as_any(&self) -> &dyn Any;
    /// For downcasting by the owning backend.
    fn as_any_mut(&mut self) -> &mut dyn Any;
}

/// Where an image's pixels are and which copy is current.
pub struct Storage<T> {
    /// Host pixels, row-major, `width * height` of them.
    pub host: HostPixels<T>,
    /// The host copy is current.
    pub host_valid: bool,
    /// The device copy, if a backend made one.
    pub device: Option<Box<dyn DeviceBuffer>>,
    /// The device copy is current.
    pub device_valid: bool,
}

impl<T: Pixel> Storage<T> {
    /// Makes the host copy current, downloading from the device if needed.
    pub fn sync_to_host(&mut self) -> Result<()> {
        if self.host_valid {
            return Ok(());
        }
        let dev = self
            .device
            .as_ref()
            .filter(|_| self.device_valid)
            .ok_or_else(|| Error::Transfer("bug: image has no current copy".into()))?;
        dev.download(as_bytes_mut(&mut self.host))?;
        self.host_valid = true;
        Ok(())
    }
}

pub(crate) struct ImageShared<T> {
    width: usize,
    height: usize,
    id: u64,
    storage: RwLock<Storage<T>>,
}

/// A 2D image of pixels of type `T`.
///
/// ```
/// use hipacc_core::Image;
/// let img = Image::from_vec(3, 2, vec![1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0])?;
/// assert_eq!(img.get(2, 1)?, 6.0);
/// assert!(Image::<f32>::new(0, 4).is_err());
/// # Ok::<(), hipacc_core::Error>(())
/// ```
pub struct Image<T: Pixel> {
    shared: Arc<ImageShared<T>>,
}

impl<T: Pixel> Clone for Image<T> {
    fn clone(&self) -> Self {
        Image {
            shared: Arc::clone(&self.shared),
        }
    }
}

impl<T: Pixel> std::fmt::Debug for Image<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "Image<{}>#{}({}x{})",
            T::TYPE,
            self.id(),
            self.width(),
            self.height()
        )
    }
}

static NEXT_ID: AtomicU64 = AtomicU64::new(1);

/// Read access to an image's host pixels (row-major, `width` per row).
pub type HostRead<'a, T> = ReadGuard<'a, T>;

/// A read guard on current host pixels.
pub struct ReadGuard<'a, T>(RwLockReadGuard<'a, Storage<T>>);
impl<T> std::ops::Deref for ReadGuard<'_, T> {
    type Target = [T];
    fn deref(&self) -> &[T] {
        &self.0.host
    }
}

/// A write guard on host pixels; the device copy is marked stale.
pub struct WriteGuard<'a, T>(RwLockWriteGuard<'a, Storage<T>>);
impl<T> std::ops::Deref for WriteGuard<'_, T> {
    type Target = [T];
    fn deref(&self) -> &[T] {
        &self.0.host
    }
}
impl<T> std::ops::DerefMut for WriteGuard<'_, T> {
    fn deref_mut(&mut self) -> &mut [T] {
        &mut self.0.host
    }
}

impl<T: Pixel> Image<T> {
    /// A `width x height` image of default (zero) pixels.
    pub fn new(width: usize, height: usize) -> Result<Image<T>> {
        let len = checked_len(width, height)?;
        let data = HostPixels::with(len, |v| v.resize(v.len() + len, T::default()));
        Ok(Self::wrap(width, height, data))
    }

    /// An image from row-major pixels.
    ///
    /// Large images keep their pixels where `data` has them. Pages of
    /// `data` that were written before this call are small ones; images
    /// made by [`Image::new`] and [`Image::from_fn`] get huge pages from the
    /// start where the OS offers them.
    pub fn from_vec(width: usize, height: usize, data: Vec<T>) -> Result<Image<T>> {
        let len = checked_len(width, height)?;
        if data.len() != len {
            return Err(Error::DataLength {
                len: data.len(),
                width,
                height,
            });
        }
        huge_pages::advise_slice(&data);
        Ok(Self::wrap(width, height, HostPixels::from_vec(data)))
    }

    /// An image of `data`, which holds exactly `width * height` pixels.
    fn wrap(width: usize, height: usize, data: HostPixels<T>) -> Image<T> {
        Image {
            shared: Arc::new(ImageShared {
                width,
                height,
                id: NEXT_ID.fetch_add(1, Ordering::Relaxed),
                storage: RwLock::new(Storage {
                    host: data,
                    host_valid: true,
                    device: None,
                    device_valid: false,
                }),
            }),
        }
    }

    /// An image whose pixel `(x, y)` is `f(x, y)`.
    pub fn from_fn(width: usize, height: usize, f: impl Fn(usize, usize) -> T) -> Result<Image<T>> {
        let len = checked_len(width, height)?;
        let data = HostPixels::with(len, |v| {
            v.extend(
                (0..height)
                    .flat_map(|y| (0..width).map(move |x| (x, y)))
                    .map(|(x, y)| f(x, y)),
            )
        });
        Ok(Self::wrap(width, height, data))
    }

    /// Width in pixels.
    pub fn width(&self) -> usize {
        self.shared.width
    }
    /// Height in pixels.
    pub fn height(&self) -> usize {
        self.shared.height
    }
    /// A process-unique id (two handles to the same pixels share it).
    pub fn id(&self) -> u64 {
        self.shared.id
    }

    /// The pixels, row-major (downloads from the device if needed).
    pub fn to_vec(&self) -> Result<Vec<T>> {
        Ok(self.read()?.to_vec())
    }

    /// One pixel.
    pub fn get(&self, x: usize, y: usize) -> Result<T> {
        Rect::new(x, y, 1, 1).check_in(self.width(), self.height())?;
        Ok(self.read()?[y * self.width() + x])
    }

    /// Read access to current host pixels.
    pub fn read(&self) -> Result<ReadGuard<'_, T>> {
        self.shared.read()
    }

    /// Write access to host pixels; the device copy becomes stale.
    pub fn write(&self) -> Result<WriteGuard<'_, T>> {
        let mut s = self.storage_write();
        s.sync_to_host()?;
        s.device_valid = false;
        Ok(WriteGuard(s))
    }

    /// Replaces all pixels.
    pub fn copy_from_slice(&self, data: &[T]) -> Result<()> {
        self.shared.copy_from_slice(data)
    }

    /// The storage lock, for backends that manage device copies.
    pub fn storage_write(&self) -> RwLockWriteGuard<'_, Storage<T>> {
        self.shared.storage_write()
    }
    /// The storage lock, shared.
    pub fn storage_read(&self) -> RwLockReadGuard<'_, Storage<T>> {
        self.shared.storage_read()
    }

    /// Type-erased handle to the same pixels.
    pub fn to_dyn(&self) -> Arc<dyn DynImage> {
        self.shared.clone()
    }
}

fn checked_len(width: usize, height: usize) -> Result<usize> {
    if width == 0 || height == 0 {
        return Err(Error::EmptyImage { width, height });
    }
    width
        .checked_mul(height)
        .filter(|&n| n <= isize::MAX as usize / 16)
        .ok_or_else(|| Error::SizeMismatch {
            what: format!("{width}x{height} is too large"),
        })
}

use crate::Rect;

/// A type-erased image, for code that handles every pixel type alike (the
/// evaluator, GPU backends).
pub trait DynImage: Send + Sync {
    /// Width in pixels.
    fn width(&self) -> usize;
    /// Height in pixels.
    fn height(&self) -> usize;
    /// Process-unique id.
    fn id(&self) -> u64;
    /// Pixel type.
    fn pixel_type(&self) -> Type;
    /// All pixels as evaluator values (downloads if needed).
    fn values(&self) -> Result<Vec<Value>>;
    /// Replaces all pixels from evaluator values of the pixel type.
    fn set_values(&self, values: &[Value]) -> Result<()>;
    /// The concrete `Image<T>`'s shared state, for downcasting.
    fn as_any(&self) -> &dyn Any;
    /// Runs `f` on the storage under the write lock, with pixels as bytes:
    /// how GPU backends upload, download and keep their device copies.
    fn with_storage(&self, f: &mut dyn FnMut(&mut dyn ErasedStorage) -> Result<()>) -> Result<()>;
}

/// Read access to the host pixels of a type-erased image, if its pixels are
/// `T` (`None` otherwise): how a backend that knows the pixel type from the
/// IR reads an accessor's image directly.
pub fn read_as<T: Pixel>(image: &dyn DynImage) -> Option<Result<ReadGuard<'_, T>>> {
    image
        .as_any()
        .downcast_ref::<ImageShared<T>>()
        .map(ImageShared::read)
}

/// An image's [`Storage`] with the pixels as bytes, for backends.
pub trait ErasedStorage {
    /// Host pixels as bytes (row-major, tightly packed).
    fn host_bytes(&self) -> &[u8];
    /// Host pixels as mutable bytes.
    fn host_bytes_mut(&mut self) -> &mut [u8];
    /// Whether the host copy is current.
    fn host_valid(&self) -> bool;
    /// Marks the host copy current or stale.
    fn set_host_valid(&mut self, valid: bool);
    /// The device copy slot.
    fn device(&mut self) -> &mut Option<Box<dyn DeviceBuffer>>;
    /// Whether the device copy is current.
    fn device_valid(&self) -> bool;
    /// Marks the device copy current or stale.
    fn set_device_valid(&mut self, valid: bool);
    /// Makes the host copy current (downloads if needed).
    fn sync_to_host(&mut self) -> Result<()>;
}

impl<T: Pixel> ErasedStorage for Storage<T> {
    fn host_bytes(&self) -> &[u8] {
        as_bytes(&self.host)
    }
    fn host_bytes_mut(&mut self) -> &mut [u8] {
        as_bytes_mut(&mut self.host)
    }
    fn host_valid(&self) -> bool {
        self.host_valid
    }
    fn set_host_valid(&mut self, valid: bool) {
        self.host_valid = valid;
    }
    fn device(&mut self) -> &mut Option<Box<dyn DeviceBuffer>> {
        &mut self.device
    }
    fn device_valid(&self) -> bool {
        self.device_valid
    }
    fn set_device_valid(&mut self, valid: bool) {
        self.device_valid = valid;
    }
    fn sync_to_host(&mut self) -> Result<()> {
        Storage::sync_to_host(self)
    }
}

impl<T: Pixel> DynImage for ImageShared<T> {
    fn width(&self) -> usize {
        self.width
    }
    fn height(&self) -> usize {
        self.height
    }
    fn id(&self) -> u64 {
        self.id
    }
    fn pixel_type(&self) -> Type {
        T::TYPE
    }
    fn values(&self) -> Result<Vec<Value>> {
        let r = self.read()?;
        Ok(r.iter().map(|p| p.to_value()).collect())
    }
    fn set_values(&self, values: &[Value]) -> Result<()> {
        let data: Option<Vec<T>> = values.iter().map(|v| T::from_value(*v)).collect();
        let data = data.ok_or_else(|| Error::SizeMismatch {
            what: format!("values are not all {}", T::TYPE),
        })?;
        self.copy_from_slice(&data)
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
    fn with_storage(&self, f: &mut dyn FnMut(&mut dyn ErasedStorage) -> Result<()>) -> Result<()> {
        f(&mut *self.storage_write())
    }
}

impl<T: Pixel> ImageShared<T> {
    fn storage_read(&self) -> RwLockReadGuard<'_, Storage<T>> {
        self.storage.read().unwrap_or_else(PoisonError::into_inner)
    }
    fn storage_write(&self) -> RwLockWriteGuard<'_, Storage<T>> {
        self.storage.write().unwrap_or_else(PoisonError::into_inner)
    }
    fn read(&self) -> Result<ReadGuard<'_, T>> {
        {
            let s = self.storage_read();
            if s.host_valid {
                return Ok(ReadGuard(s));
            }
        }
        self.storage_write().sync_to_host()?;
        Ok(ReadGuard(self.storage_read()))
    }
    fn copy_from_slice(&self, data: &[T]) -> Result<()> {
        let mut s = self.storage_write();
        if data.len() != s.host.len() {
            return Err(Error::DataLength {
                len: data.len(),
                width: self.width,
                height: self.height,
            });
        }
        s.host.copy_from_slice(data);
        s.host_valid = true;
        s.device_valid = false;
        Ok(())
    }
}

/// Views pixels as bytes, for device transfers.
pub fn as_bytes<T: Pixel>(data: &[T]) -> &[u8] {
    // SAFETY: every Pixel type is a plain scalar or a #[repr(C)] struct of four
    // equal scalars: no padding, no invalid bit patterns when read as bytes.
    unsafe { std::slice::from_raw_parts(data.as_ptr().cast::<u8>(), std::mem::size_of_val(data)) }
}

/// Views pixels as mutable bytes, for device transfers.
pub fn as_bytes_mut<T: Pixel>(data: &mut [T]) -> &mut [u8] {
    // SAFETY: as in `as_bytes`; moreover every byte pattern is a valid value of
    // every Pixel type (integers, floats and arrays of them), so writes through
    // the byte view cannot create an invalid T.
    unsafe {
        std::slice::from_raw_parts_mut(data.as_mut_ptr().cast::<u8>(), std::mem::size_of_val(data))
    }
}

impl<T: Pixel> Image<T> {
    /// From a 2D array (rows = first axis).
    pub fn from_array2(a: &ndarray::Array2<T>) -> Result<Image<T>> {
        let (h, w) = a.dim();
        Self::from_vec(w, h, a.iter().copied().collect())
    }
    /// To a 2D array (rows = first axis).
    pub fn to_array2(&self) -> Result<ndarray::Array2<T>> {
        ndarray::Array2::from_shape_vec((self.height(), self.width()), self.to_vec()?).map_err(
            |e| Error::SizeMismatch {
                what: e.to_string(),
            },
        )
    }
}
