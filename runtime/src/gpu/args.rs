//! Kernel arguments: resolving codegen's parameter list against a launch's
//! bindings, and the bytes of mask coefficients.

use crate::{Error, Result};
use hipacc_codegen::{ArgKind, KernelInfo, Launch};
use hipacc_core::ir::{ScalarType, Value};
use hipacc_core::kernel::Bindings;
use hipacc_core::Rect;

/// `Error::Aliasing` when an accessor reads the output image: a GPU launch
/// would read pixels that other threads are writing.
pub(crate) fn check_aliasing(kernel: &str, bindings: &Bindings, output: u64) -> Result<()> {
    match bindings.accessors.iter().find(|a| a.image.id() == output) {
        Some(a) => Err(hipacc_core::Error::Aliasing {
            kernel: kernel.to_string(),
            accessor: a.slot.name.clone(),
            image: output,
        }
        .into()),
        None => Ok(()),
    }
}

/// A scalar passed by value, with the width of its C type.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum Scalar {
    /// `unsigned char`.
    U8(u8),
    /// `unsigned short`.
    U16(u16),
    /// `int`.
    I32(i32),
    /// `unsigned int`.
    U32(u32),
    /// `float`.
    F32(f32),
    /// `double`.
    F64(f64),
}

/// One kernel argument's value as the bytes of its C type, in storage
/// aligned for any of them: what `cuLaunchKernel` (a pointer per parameter)
/// and `clSetKernelArg` (a pointer and a size) both take.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Packed {
    word: u64,
    len: usize,
}

impl Packed {
    /// A 64-bit driver handle: a device pointer or texture object.
    pub(crate) fn handle(h: u64) -> Packed {
        Packed { word: h, len: 8 }
    }
    /// The value's bytes.
    pub(crate) fn bytes(&self) -> &[u8] {
        // SAFETY: `word` is 8 initialised bytes and `len` is at most 8.
        unsafe { std::slice::from_raw_parts((&self.word as *const u64).cast(), self.len) }
    }
    /// A pointer to the value, for the driver to read `len()` bytes from.
    pub(crate) fn ptr(&mut self) -> *mut std::ffi::c_void {
        (&mut self.word as *mut u64).cast()
    }
    /// The size of the value's C type.
    pub(crate) fn len(&self) -> usize {
        self.len
    }
}

impl Scalar {
    /// The value as the bytes of its C type.
    pub(crate) fn packed(self) -> Packed {
        let mut word = [0u8; 8];
        let bytes: &[u8] = match self {
            Scalar::U8(x) => &[x],
            Scalar::U16(x) => &x.to_ne_bytes(),
            Scalar::I32(x) => &x.to_ne_bytes(),
            Scalar::U32(x) => &x.to_ne_bytes(),
            Scalar::F32(x) => &x.to_ne_bytes(),
            Scalar::F64(x) => &x.to_ne_bytes(),
        };
        word[..bytes.len()].copy_from_slice(bytes);
        Packed {
            word: u64::from_ne_bytes(word),
            len: bytes.len(),
        }
    }

    /// A parameter value converted to the slot's scalar type (parameters are
    /// bound with their own type, so this is the identity in practice).
    fn from_value(v: Value, ty: ScalarType) -> Result<Scalar> {
        let lit = v.to_literal().ok_or_else(|| {
            Error::Config(format!(
                "a parameter of type {ty:?} got the vector value {v:?}"
            ))
        })?;
        Ok(match Value::from_literal(lit, ty) {
            Value::U8(x) => Scalar::U8(x),
            Value::U16(x) => Scalar::U16(x),
            Value::I32(x) => Scalar::I32(x),
            Value::U32(x) => Scalar::U32(x),
            Value::F32(x) => Scalar::F32(x),
            Value::F64(x) => Scalar::F64(x),
            Value::Bool(b) => Scalar::I32(b as i32),
            Value::Vec4(_) => unreachable!("bug: from_literal gives scalars"),
        })
    }
}

/// One resolved kernel argument; buffers name the image or mask they bind.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum ArgValue {
    /// A value passed by value.
    Scalar(Scalar),
    /// The output image's buffer.
    Output,
    /// Accessor `i`'s buffer.
    AccessorBuffer(usize),
    /// Accessor `i` as an image / texture object.
    AccessorImage(usize),
    /// Mask `i`'s coefficients in a constant buffer.
    MaskBuffer(usize),
}

/// The kernel arguments in declaration order, for a launch over `space` of
/// an output image `output_width` pixels wide.
pub(crate) fn resolve_args(
    info: &KernelInfo,
    bindings: &Bindings,
    output_width: usize,
    space: Rect,
    launch: &Launch,
) -> Result<Vec<ArgValue>> {
    let int = |what: &str, v: usize| -> Result<ArgValue> {
        i32::try_from(v)
            .map(|v| ArgValue::Scalar(Scalar::I32(v)))
            .map_err(|_| Error::Config(format!("{what} {v} does not fit a 32-bit int")))
    };
    let acc = |i: usize| {
        bindings.accessors.get(i).ok_or_else(|| {
            Error::Internal(format!(
                "kernel `{}` expects accessor {i}, the bindings have {}",
                info.kernel_name,
                bindings.accessors.len()
            ))
        })
    };
    let starts = launch.region_starts;
    info.args
        .iter()
        .map(|arg| match arg.kind {
            ArgKind::OutputBuffer => Ok(ArgValue::Output),
            ArgKind::OutputStride => int("output width", output_width),
            ArgKind::SpaceX => int("iteration space x", space.x),
            ArgKind::SpaceY => int("iteration space y", space.y),
            ArgKind::SpaceWidth => int("iteration space width", space.width),
            ArgKind::SpaceHeight => int("iteration space height", space.height),
            ArgKind::AccessorBuffer(i) => acc(i).map(|_| ArgValue::AccessorBuffer(i)),
            ArgKind::AccessorImage(i) => acc(i).map(|_| ArgValue::AccessorImage(i)),
            ArgKind::AccessorStride(i) => int("image width", acc(i)?.image.width()),
            ArgKind::AccessorX(i) => int("region x", acc(i)?.region.x),
            ArgKind::AccessorY(i) => int("region y", acc(i)?.region.y),
            ArgKind::AccessorWidth(i) => int("region width", acc(i)?.region.width),
            ArgKind::AccessorHeight(i) => int("region height", acc(i)?.region.height),
            ArgKind::Param(i) => {
                let p = bindings.params.get(i).ok_or_else(|| {
                    Error::Internal(format!(
                        "kernel `{}` expects parameter {i}",
                        info.kernel_name
                    ))
                })?;
                Ok(ArgValue::Scalar(Scalar::from_value(
                    p.value,
                    p.slot.ty.scalar,
                )?))
            }
            ArgKind::MaskBuffer(i) => {
                if i >= bindings.masks.len() {
                    return Err(Error::Internal(format!(
                        "kernel `{}` expects mask {i}",
                        info.kernel_name
                    )));
                }
                Ok(ArgValue::MaskBuffer(i))
            }
            ArgKind::RegionLeft => int("region start", starts.left as usize),
            ArgKind::RegionRight => int("region start", starts.right as usize),
            ArgKind::RegionTop => int("region start", starts.top as usize),
            ArgKind::RegionBottom => int("region start", starts.bottom as usize),
        })
        .collect()
}

/// A mask's coefficients as the bytes of a C array of its scalar type.
pub(crate) fn mask_bytes(values: &[Value], ty: ScalarType) -> Result<Vec<u8>> {
    let mut out = Vec::with_capacity(values.len() * ty.size());
    for v in values {
        out.extend_from_slice(Scalar::from_value(*v, ty)?.packed().bytes());
    }
    Ok(out)
}

/// The accessor regions of `bindings`, in slot order.
pub(crate) fn accessor_regions(bindings: &Bindings) -> Vec<Rect> {
    bindings.accessors.iter().map(|a| a.region).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mask_bytes_follow_the_scalar_type() {
        let b = mask_bytes(&[Value::F32(1.5), Value::F32(-2.0)], ScalarType::F32).unwrap();
        assert_eq!(b.len(), 8);
        assert_eq!(f32::from_ne_bytes([b[4], b[5], b[6], b[7]]), -2.0);
        let b = mask_bytes(&[Value::U8(7), Value::U8(9)], ScalarType::U8).unwrap();
        assert_eq!(b, vec![7, 9]);
    }

    #[test]
    fn packed_values_have_the_size_of_their_c_type() {
        assert_eq!(
            Scalar::U16(0x0102).packed().bytes(),
            0x0102u16.to_ne_bytes()
        );
        assert_eq!(Scalar::F64(-0.5).packed().bytes(), (-0.5f64).to_ne_bytes());
        let mut h = Packed::handle(0xdead_beef_0000_0001);
        assert_eq!(h.len(), 8);
        // SAFETY: the pointer is to the handle's 8 bytes.
        assert_eq!(unsafe { *h.ptr().cast::<u64>() }, 0xdead_beef_0000_0001);
    }
}
