//! Images on a CUDA device: linear device memory of tightly packed pixels,
//! with a texture object over it made on demand for texture reads.

use super::device::CudaDevice;
use crate::gpu::errors::transfer;
use crate::gpu::view::{channel_format, ImageView};
use crate::Result;
use cudarc::driver::sys::CUarray_format as Format;
use cudarc::driver::{result, sys, CudaContext};
use hipacc_core::image::ByteRect;
use hipacc_core::ir::{ScalarType, Type};
use std::sync::Arc;

/// Device memory of one image.
pub(crate) struct CuMem {
    pub(crate) ptr: sys::CUdeviceptr,
    pub(crate) bytes: usize,
    ctx: Arc<CudaContext>,
    /// A texture object over the memory.
    texture: ImageView<Texture>,
}

/// A texture object, destroyed with its owner (in its bound context).
struct Texture(sys::CUtexObject);

impl Drop for Texture {
    fn drop(&mut self) {
        // SAFETY: the handle was created once by `CuMem::texture`; errors
        // cannot be reported from drop.
        let _ = unsafe { sys::cuTexObjectDestroy(self.0) };
    }
}

/// Makes `ctx` current on the calling thread, as every driver call needs.
pub(crate) fn bind(ctx: &CudaContext) -> Result<()> {
    ctx.bind_to_thread()
        .map_err(|e| transfer::<CudaDevice>("bind context", e))
}

impl CuMem {
    /// Owns `bytes` bytes at `ptr`, allocated in `ctx`.
    pub(crate) fn new(ptr: sys::CUdeviceptr, bytes: usize, ctx: Arc<CudaContext>) -> CuMem {
        CuMem {
            ptr,
            bytes,
            ctx,
            texture: ImageView::default(),
        }
    }

    /// A texture object reading the memory as `pixel`s (1D, element type of
    /// the lane, 1 or 4 channels, point filtering, element read mode).
    pub(crate) fn texture(&self, pixel: Type) -> Result<sys::CUtexObject> {
        let formats = [
            Format::CU_AD_FORMAT_UNSIGNED_INT8,
            Format::CU_AD_FORMAT_UNSIGNED_INT16,
            Format::CU_AD_FORMAT_UNSIGNED_INT32,
            Format::CU_AD_FORMAT_SIGNED_INT32,
            Format::CU_AD_FORMAT_FLOAT,
        ];
        let format = channel_format::<CudaDevice, _>(pixel, formats)?;
        let make = || {
            bind(&self.ctx)?;
            // SAFETY: plain-data descriptors, zero-initialised as the API
            // expects for unused fields; the memory lives as long as `self`,
            // and `drop` destroys the texture before freeing the memory.
            unsafe {
                let mut res: sys::CUDA_RESOURCE_DESC = std::mem::zeroed();
                res.resType = sys::CUresourcetype::CU_RESOURCE_TYPE_LINEAR;
                res.res.linear.devPtr = self.ptr;
                res.res.linear.format = format;
                res.res.linear.numChannels = u32::from(pixel.lanes);
                res.res.linear.sizeInBytes = self.bytes;
                let mut desc: sys::CUDA_TEXTURE_DESC = std::mem::zeroed();
                desc.addressMode = [sys::CUaddress_mode::CU_TR_ADDRESS_MODE_CLAMP; 3];
                desc.filterMode = sys::CUfilter_mode::CU_TR_FILTER_MODE_POINT;
                if pixel.scalar != ScalarType::F32 {
                    desc.flags = sys::CU_TRSF_READ_AS_INTEGER;
                }
                let mut tex: sys::CUtexObject = 0;
                sys::cuTexObjectCreate(&mut tex, &res, &desc, std::ptr::null())
                    .result()
                    .map_err(|e| transfer::<CudaDevice>("cuTexObjectCreate", e))?;
                Ok(Texture(tex))
            }
        };
        // A texture reads the memory itself: it is never stale.
        self.texture.get(pixel, make, |_| Ok(()), |t| t.0)
    }
}

impl Drop for CuMem {
    fn drop(&mut self) {
        // Errors cannot be reported from drop; the context is being torn
        // down or the memory is already unusable.
        let _ = self.ctx.bind_to_thread();
        self.texture.clear();
        // SAFETY: the memory was allocated once by this object and is freed
        // once; cuMemFree waits for work using it.
        let _ = unsafe { result::free_sync(self.ptr) };
    }
}

/// One side of a rectangle copy.
pub(crate) enum Side {
    Host(*mut std::ffi::c_void),
    Device(sys::CUdeviceptr),
}

/// Copies the bytes `rect` between two buffers of the same layout, with one
/// `cuMemcpy2D`.
///
/// # Safety
/// Both sides must hold the rectangle (the caller checks it against their
/// sizes), in the bound context.
pub(crate) unsafe fn copy_rect(
    rect: ByteRect,
    from: Side,
    to: Side,
) -> std::result::Result<(), result::DriverError> {
    // SAFETY: a plain-data descriptor, zero-initialised as the API expects
    // for unused fields.
    let mut copy: sys::CUDA_MEMCPY2D = unsafe { std::mem::zeroed() };
    (copy.srcXInBytes, copy.srcY, copy.srcPitch) = (rect.x, rect.y, rect.pitch);
    (copy.dstXInBytes, copy.dstY, copy.dstPitch) = (rect.x, rect.y, rect.pitch);
    (copy.WidthInBytes, copy.Height) = (rect.bytes, rect.rows);
    match from {
        Side::Host(p) => {
            (copy.srcMemoryType, copy.srcHost) = (sys::CUmemorytype::CU_MEMORYTYPE_HOST, p)
        }
        Side::Device(p) => {
            (copy.srcMemoryType, copy.srcDevice) = (sys::CUmemorytype::CU_MEMORYTYPE_DEVICE, p)
        }
    }
    match to {
        Side::Host(p) => {
            (copy.dstMemoryType, copy.dstHost) = (sys::CUmemorytype::CU_MEMORYTYPE_HOST, p)
        }
        Side::Device(p) => {
            (copy.dstMemoryType, copy.dstDevice) = (sys::CUmemorytype::CU_MEMORYTYPE_DEVICE, p)
        }
    }
    // SAFETY: the caller's contract.
    unsafe { sys::cuMemcpy2D_v2(&copy) }.result()
}
