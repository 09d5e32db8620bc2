//! Images on a CUDA device: linear device memory of tightly packed pixels,
//! with a texture object over it made on demand for texture reads.

use crate::{Error, Result};
use cudarc::driver::{result, sys, CudaContext};
use hipacc_core::ir::{ScalarType, Type};
use std::sync::{Arc, Mutex, PoisonError};

/// Device memory of one image.
pub(crate) struct CuMem {
    pub(crate) ptr: sys::CUdeviceptr,
    pub(crate) bytes: usize,
    ctx: Arc<CudaContext>,
    /// A texture object over the memory and the pixel type it reads.
    texture: Mutex<Option<(Type, sys::CUtexObject)>>,
}

// SAFETY: the device pointer and texture handle are plain handles valid in
// any thread that binds the context, which every use does.
unsafe impl Send for CuMem {}
// SAFETY: as above; the texture slot is behind a mutex.
unsafe impl Sync for CuMem {}

pub(crate) fn transfer_err(what: &str, e: impl std::fmt::Debug) -> Error {
    hipacc_core::Error::Transfer(format!("CUDA: {what}: {e:?}")).into()
}

impl CuMem {
    /// Owns `bytes` bytes at `ptr`, allocated in `ctx`.
    pub(crate) fn new(ptr: sys::CUdeviceptr, bytes: usize, ctx: Arc<CudaContext>) -> CuMem {
        CuMem {
            ptr,
            bytes,
            ctx,
            texture: Mutex::new(None),
        }
    }

    /// A texture object reading the memory as `pixel`s (1D, element type of
    /// the lane, 1 or 4 channels, point filtering, element read mode).
    pub(crate) fn texture(&self, pixel: Type) -> Result<sys::CUtexObject> {
        let mut slot = self.texture.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some((t, tex)) = *slot {
            if t == pixel {
                return Ok(tex);
            }
        }
        let (format, integer) = match pixel.scalar {
            ScalarType::U8 => (sys::CUarray_format::CU_AD_FORMAT_UNSIGNED_INT8, true),
            ScalarType::U16 => (sys::CUarray_format::CU_AD_FORMAT_UNSIGNED_INT16, true),
            ScalarType::U32 => (sys::CUarray_format::CU_AD_FORMAT_UNSIGNED_INT32, true),
            ScalarType::I32 => (sys::CUarray_format::CU_AD_FORMAT_SIGNED_INT32, true),
            ScalarType::F32 => (sys::CUarray_format::CU_AD_FORMAT_FLOAT, false),
            ScalarType::F64 | ScalarType::Bool => {
                return Err(Error::Config(format!(
                    "CUDA textures cannot hold {pixel} pixels"
                )))
            }
        };
        // SAFETY: plain-data descriptors, zero-initialised as the API expects
        // for unused fields; the memory lives as long as `self`, and the
        // texture is destroyed in `drop` before the memory is freed.
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
            desc.flags = if integer {
                sys::CU_TRSF_READ_AS_INTEGER
            } else {
                0
            };
            self.ctx
                .bind_to_thread()
                .map_err(|e| transfer_err("bind context", e))?;
            let mut tex: sys::CUtexObject = 0;
            sys::cuTexObjectCreate(&mut tex, &res, &desc, std::ptr::null())
                .result()
                .map_err(|e| transfer_err("cuTexObjectCreate", e))?;
            if let Some((_, old)) = slot.replace((pixel, tex)) {
                let _ = sys::cuTexObjectDestroy(old);
            }
            Ok(tex)
        }
    }
}

impl Drop for CuMem {
    fn drop(&mut self) {
        // Errors cannot be reported from drop; the context is being torn
        // down or the memory is already unusable.
        let _ = self.ctx.bind_to_thread();
        let slot = self
            .texture
            .get_mut()
            .unwrap_or_else(PoisonError::into_inner);
        // SAFETY: the handles were created by this object and are destroyed
        // once; cuMemFree waits for work using the memory.
        unsafe {
            if let Some((_, tex)) = slot.take() {
                let _ = sys::cuTexObjectDestroy(tex);
            }
            let _ = result::free_sync(self.ptr);
        }
    }
}
