//! Images on an OpenCL device: a buffer of tightly packed pixels per image,
//! plus an `image2d_t` copy made on demand for accessors read as images.

use super::device::ClDevice;
use crate::gpu::errors::{check_copy, check_rect, transfer};
use crate::gpu::view::{channel_format, ImageView};
use crate::{Error, Result};
use hipacc_core::image::ByteRect;
use hipacc_core::ir::Type;
use opencl3::memory::{
    Buffer, ClMem as _, Image, CL_FLOAT, CL_MEM_OBJECT_IMAGE2D, CL_MEM_READ_ONLY,
    CL_MEM_READ_WRITE, CL_R, CL_RGBA, CL_SIGNED_INT32, CL_UNSIGNED_INT16, CL_UNSIGNED_INT32,
    CL_UNSIGNED_INT8,
};
use opencl3::types::{cl_image_desc, cl_image_format, cl_mem, CL_BLOCKING};

/// Device memory of one image.
pub(crate) struct ClMem {
    pub(crate) buffer: Buffer<u8>,
    pub(crate) bytes: usize,
    /// The `image2d_t` copy.
    image: ImageView<Image>,
}

impl ClMem {
    /// Records that the buffer's contents changed.
    pub(crate) fn touch(&self) {
        self.image.touch();
    }

    /// The buffer's `cl_mem`, for kernel arguments.
    pub(crate) fn raw(&self) -> cl_mem {
        self.buffer.get()
    }

    /// An `image2d_t` of `width x height` pixels of type `pixel` holding the
    /// buffer's current contents (copied on the device when stale). The
    /// returned `cl_mem` stays valid while `self` lives and no other launch
    /// of a different pixel type replaces it; launches hold the `ClMem`.
    pub(crate) fn as_image(
        &self,
        dev: &ClDevice,
        width: usize,
        height: usize,
        pixel: Type,
    ) -> Result<cl_mem> {
        let make = || create_image(dev, width, height, pixel);
        let refresh = |image: &mut Image| {
            let origin = [0usize; 3];
            let region = [width, height, 1];
            // SAFETY: the image was created with exactly `width x height`
            // pixels of `pixel`, whose bytes the buffer holds row-major.
            unsafe {
                dev.queue.enqueue_copy_buffer_to_image(
                    &self.buffer,
                    image,
                    0,
                    origin.as_ptr(),
                    region.as_ptr(),
                    &[],
                )
            }
            .map(drop)
            .map_err(|e| transfer_err("copying a buffer to an image", e))
        };
        self.image.get(pixel, make, refresh, Image::get)
    }
}

fn create_image(dev: &ClDevice, width: usize, height: usize, pixel: Type) -> Result<Image> {
    let format = image_format(pixel)?;
    let desc = cl_image_desc {
        image_type: CL_MEM_OBJECT_IMAGE2D,
        image_width: width,
        image_height: height,
        image_depth: 1,
        image_array_size: 1,
        image_row_pitch: 0,
        image_slice_pitch: 0,
        num_mip_levels: 0,
        num_samples: 0,
        buffer: std::ptr::null_mut(),
    };
    // SAFETY: format and desc are valid for the call; no host pointer.
    unsafe {
        Image::create(
            &dev.context,
            CL_MEM_READ_ONLY,
            &format,
            &desc,
            std::ptr::null_mut(),
        )
    }
    .map_err(|e| {
        Error::Config(format!(
            "{} cannot hold a {width}x{height} image of {pixel}: {e}",
            dev.facts.name
        ))
    })
}

/// The OpenCL image format of a pixel type, as codegen declares it.
fn image_format(pixel: Type) -> Result<cl_image_format> {
    let types = [
        CL_UNSIGNED_INT8,
        CL_UNSIGNED_INT16,
        CL_UNSIGNED_INT32,
        CL_SIGNED_INT32,
        CL_FLOAT,
    ];
    Ok(cl_image_format {
        image_channel_order: if pixel.lanes == 4 { CL_RGBA } else { CL_R },
        image_channel_data_type: channel_format::<ClDevice, _>(pixel, types)?,
    })
}

fn transfer_err(what: &str, e: impl std::fmt::Display) -> Error {
    transfer::<ClDevice>(what, e)
}

impl ClDevice {
    /// New device memory of `bytes` (> 0) bytes.
    pub(crate) fn allocate(&self, bytes: usize) -> Result<ClMem> {
        // SAFETY: no host pointer; the size is the image's byte size (> 0).
        let buffer = unsafe {
            Buffer::<u8>::create(
                &self.context,
                CL_MEM_READ_WRITE,
                bytes,
                std::ptr::null_mut(),
            )
        }
        .map_err(|e| transfer_err(&format!("allocating {bytes} bytes"), e))?;
        Ok(ClMem {
            buffer,
            bytes,
            image: ImageView::default(),
        })
    }

    /// Copies `data`, exactly the memory's size, into `mem`.
    pub(crate) fn upload(&self, mem: &ClMem, data: &[u8]) -> Result<()> {
        check_copy::<ClDevice>("upload", data.len(), mem.bytes)?;
        // SAFETY: a blocking write of exactly the buffer's size from `data`
        // into a live buffer of this device's context; the returned event is
        // owned (and released) by `Event`.
        let event = unsafe {
            opencl3::command_queue::enqueue_write_buffer(
                self.queue.get(),
                mem.raw(),
                CL_BLOCKING,
                0,
                data.len(),
                data.as_ptr().cast(),
                0,
                std::ptr::null(),
            )
        }
        .map_err(|e| transfer_err("write", opencl3::error_codes::ClError(e)))?;
        drop(opencl3::event::Event::new(event));
        mem.touch();
        Ok(())
    }

    /// Copies the bytes `rect` of `mem` into the same bytes of `dst` (the
    /// memory's size): one strided read.
    pub(crate) fn download_rect(&self, mem: &ClMem, rect: ByteRect, dst: &mut [u8]) -> Result<()> {
        check_rect::<ClDevice>("rectangle read", rect, dst.len(), mem.bytes)?;
        let (origin, region) = rect_geometry(rect);
        // SAFETY: a blocking read of a rectangle checked to lie inside both
        // the buffer and `dst` (the same size and layout); the event is
        // owned (and released) by `Event`.
        let event = unsafe {
            opencl3::command_queue::enqueue_read_buffer_rect(
                self.queue.get(),
                mem.raw(),
                CL_BLOCKING,
                origin.as_ptr(),
                origin.as_ptr(),
                region.as_ptr(),
                rect.pitch,
                0,
                rect.pitch,
                0,
                dst.as_mut_ptr().cast(),
                0,
                std::ptr::null(),
            )
        }
        .map_err(|e| transfer_err("rectangle read", opencl3::error_codes::ClError(e)))?;
        drop(opencl3::event::Event::new(event));
        Ok(())
    }

    /// Copies the bytes `rect` of `src` (the memory's size) into the same
    /// bytes of `mem`: one strided write.
    pub(crate) fn upload_rect(&self, mem: &ClMem, rect: ByteRect, src: &[u8]) -> Result<()> {
        check_rect::<ClDevice>("rectangle write", rect, src.len(), mem.bytes)?;
        let (origin, region) = rect_geometry(rect);
        // SAFETY: a blocking write of a rectangle checked to lie inside both
        // `src` and the buffer (the same size and layout).
        let event = unsafe {
            opencl3::command_queue::enqueue_write_buffer_rect(
                self.queue.get(),
                mem.raw(),
                CL_BLOCKING,
                origin.as_ptr(),
                origin.as_ptr(),
                region.as_ptr(),
                rect.pitch,
                0,
                rect.pitch,
                0,
                src.as_ptr().cast(),
                0,
                std::ptr::null(),
            )
        }
        .map_err(|e| transfer_err("rectangle write", opencl3::error_codes::ClError(e)))?;
        drop(opencl3::event::Event::new(event));
        mem.touch();
        Ok(())
    }

    /// Copies `mem`, exactly `dst`'s size, to `dst`.
    pub(crate) fn download(&self, mem: &ClMem, dst: &mut [u8]) -> Result<()> {
        check_copy::<ClDevice>("download", dst.len(), mem.bytes)?;
        // SAFETY: a blocking read of exactly the buffer's size into `dst`.
        unsafe {
            self.queue
                .enqueue_read_buffer(&mem.buffer, CL_BLOCKING, 0, dst, &[])
        }
        .map(|_| ())
        .map_err(|e| transfer_err("read", e))
    }
}

/// The origin and region (bytes, rows, slices) of a rectangle transfer.
fn rect_geometry(rect: ByteRect) -> ([usize; 3], [usize; 3]) {
    ([rect.x, rect.y, 0], [rect.bytes, rect.rows, 1])
}
