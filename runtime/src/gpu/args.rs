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

impl Scalar {
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
        match Scalar::from_value(*v, ty)? {
            Scalar::U8(x) => out.push(x),
            Scalar::U16(x) => out.extend_from_slice(&x.to_ne_bytes()),
            Scalar::I32(x) => out.extend_from_slice(&x.to_ne_bytes()),
            Scalar::U32(x) => out.extend_from_slice(&x.to_ne_bytes()),
            Scalar::F32(x) => out.extend_from_slice(&x.to_ne_bytes()),
            Scalar::F64(x) => out.extend_from_slice(&x.to_ne_bytes()),
        }
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
}
