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
    let copy = descriptor(rect, from, to);
    // SAFETY: the caller's contract.
    unsafe { sys::cuMemcpy2D_v2(&copy) }.result()
}

/// The `cuMemcpy2D` descriptor of a rectangle copy.
///
/// Every field is written: the memory types are enums with no zero value
/// (host is 1), so the descriptor cannot start zero-initialised as in C.
/// The unused pointer of each side is null and the arrays unused.
fn descriptor(rect: ByteRect, from: Side, to: Side) -> sys::CUDA_MEMCPY2D {
    use sys::CUmemorytype::{CU_MEMORYTYPE_DEVICE, CU_MEMORYTYPE_HOST};
    let (src_type, src_host, src_device) = match from {
        Side::Host(p) => (CU_MEMORYTYPE_HOST, p.cast_const(), 0),
        Side::Device(p) => (CU_MEMORYTYPE_DEVICE, std::ptr::null(), p),
    };
    let (dst_type, dst_host, dst_device) = match to {
        Side::Host(p) => (CU_MEMORYTYPE_HOST, p, 0),
        Side::Device(p) => (CU_MEMORYTYPE_DEVICE, std::ptr::null_mut(), p),
    };
    sys::CUDA_MEMCPY2D {
        srcXInBytes: rect.x,
        srcY: rect.y,
        srcMemoryType: src_type,
        srcHost: src_host,
        srcDevice: src_device,
        srcArray: std::ptr::null_mut(),
        srcPitch: rect.pitch,
        dstXInBytes: rect.x,
        dstY: rect.y,
        dstMemoryType: dst_type,
        dstHost: dst_host,
        dstDevice: dst_device,
        dstArray: std::ptr::null_mut(),
        dstPitch: rect.pitch,
        WidthInBytes: rect.bytes,
        Height: rect.rows,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Building the descriptor needs no GPU, so the host runs it: each
    /// direction's fields land where the driver reads them.
    #[test]
    fn rectangle_descriptors_name_both_sides() {
        use sys::CUmemorytype::{CU_MEMORYTYPE_DEVICE, CU_MEMORYTYPE_HOST};
        let rect = ByteRect {
            x: 12,
            y: 3,
            bytes: 40,
            rows: 5,
            pitch: 256,
        };
        let mut host = [0u8; 4];
        let h = host.as_mut_ptr().cast::<std::ffi::c_void>();
        let up = descriptor(rect, Side::Host(h), Side::Device(0xd000));
        assert_eq!(up.srcMemoryType, CU_MEMORYTYPE_HOST);
        assert_eq!((up.srcHost, up.srcDevice), (h.cast_const(), 0));
        assert_eq!(up.dstMemoryType, CU_MEMORYTYPE_DEVICE);
        assert_eq!((up.dstHost, up.dstDevice), (std::ptr::null_mut(), 0xd000));
        let down = descriptor(rect, Side::Device(0xd000), Side::Host(h));
        assert_eq!(down.srcMemoryType, CU_MEMORYTYPE_DEVICE);
        assert_eq!((down.srcHost, down.srcDevice), (std::ptr::null(), 0xd000));
        assert_eq!(down.dstMemoryType, CU_MEMORYTYPE_HOST);
        assert_eq!((down.dstHost, down.dstDevice), (h, 0));
        for d in [up, down] {
            assert_eq!((d.srcXInBytes, d.srcY, d.srcPitch), (12, 3, 256));
            assert_eq!((d.dstXInBytes, d.dstY, d.dstPitch), (12, 3, 256));
            assert_eq!((d.WidthInBytes, d.Height), (40, 5));
            assert!(d.srcArray.is_null() && d.dstArray.is_null());
        }
    }
}
