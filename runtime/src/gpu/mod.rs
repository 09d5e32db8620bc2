//! What the OpenCL and CUDA backends share: choosing a config for the
//! device's target, resolving kernel arguments from bindings, keeping images
//! resident on a device, and writing generated sources to disk.
//!
//! A launch on either backend is:
//!
//! 1. `ir = kernel.ir()`, the bindings, and a refusal of an output image that
//!    an accessor reads ([`check_aliasing`]);
//! 2. the [`Config`] from the architecture model's heuristics for the
//!    device's target, `HIPACC_CONFIG`, and the device's API override, in
//!    that order ([`choose_config`]), checked against the device's real
//!    limits by the backend;
//! 3. the program from the backend's kernel cache ([`crate::cache`]), built
//!    on a miss (sources go to `HIPACC_DUMP_DIR` when set, see [`dump`]);
//! 4. every image made current on the device ([`residency`]);
//! 5. the arguments in the order codegen lists them ([`resolve_args`]) and
//!    the launch geometry from [`KernelInfo::launch`];
//! 6. the output's host copy marked stale: it downloads when the host reads.

pub(crate) mod dump;
pub(crate) mod residency;

use crate::{Error, Result};
use hipacc_codegen::{ArgKind, Config, ConfigOverride, KernelInfo, Language, Launch, Target};
use hipacc_core::ir::{self, ScalarType, Value};
use hipacc_core::kernel::Bindings;
use hipacc_core::Rect;

/// Converts a code generation error into the runtime's error type.
pub(crate) fn codegen_error(e: hipacc_codegen::Error) -> Error {
    match e {
        hipacc_codegen::Error::Launch { kernel, reason } => Error::Launch {
            backend: "gpu".into(),
            kernel,
            message: reason,
        },
        other => Error::Config(other.to_string()),
    }
}

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

/// The config for `kernel` on `target`: the heuristics, then `HIPACC_CONFIG`,
/// then `api` (the device's override, which wins), validated for the target.
pub(crate) fn choose_config(
    kernel: &ir::Kernel,
    target: &Target,
    language: Language,
    api: Option<&ConfigOverride>,
) -> Result<Config> {
    let env = ConfigOverride::from_env().map_err(codegen_error)?;
    let merged = layer(env, api);
    Config::choose(kernel, target, language, merged.as_ref()).map_err(codegen_error)
}

/// [`choose_config`] for a launch over `space` on the device whose tuning
/// key is `device` (see [`crate::explore`]): a winner remembered by the
/// explore mode replaces the heuristics (under `HIPACC_CONFIG` and `api`);
/// a remembered config that no longer validates is ignored. The flag is true
/// when the remembered config was used.
pub(crate) fn choose_launch_config(
    kernel: &ir::Kernel,
    target: &Target,
    language: Language,
    api: Option<&ConfigOverride>,
    device: &str,
    space: Rect,
) -> Result<(Config, bool)> {
    if !api.is_some_and(pins_everything) {
        if let Some(tuned) = crate::explore::tuned(kernel, device, space) {
            let env = ConfigOverride::from_env().map_err(codegen_error)?;
            let base = layer(Some(tuned), env.as_ref());
            let merged = layer(base, api);
            if let Ok(c) = Config::choose(kernel, target, language, merged.as_ref()) {
                return Ok((c, true));
            }
        }
    }
    choose_config(kernel, target, language, api).map(|c| (c, false))
}

/// True when `o` fixes every axis, so nothing remembered can apply.
fn pins_everything(o: &ConfigOverride) -> bool {
    o.boundary.is_some()
        && o.memory.is_some()
        && o.pixels_per_thread.is_some()
        && o.block.is_some()
        && o.masks.is_some()
}

/// `base` with the axes `top` fixes replaced.
fn layer(base: Option<ConfigOverride>, top: Option<&ConfigOverride>) -> Option<ConfigOverride> {
    match (base, top) {
        (Some(b), Some(t)) => Some(merge(b, t)),
        (Some(b), None) => Some(b),
        (None, Some(t)) => Some(t.clone()),
        (None, None) => None,
    }
}

/// True when the block shape is fixed by `HIPACC_CONFIG` or `api`, so no
/// occupancy refinement may change it (a tuned block is measured, not
/// refined: see the CUDA launch).
pub(crate) fn block_fixed(api: Option<&ConfigOverride>) -> Result<bool> {
    let env = ConfigOverride::from_env().map_err(codegen_error)?;
    Ok(api.is_some_and(|o| o.block.is_some()) || env.is_some_and(|o| o.block.is_some()))
}

/// `base` with every axis that `top` fixes replaced.
fn merge(base: ConfigOverride, top: &ConfigOverride) -> ConfigOverride {
    ConfigOverride {
        boundary: top.boundary.or(base.boundary),
        memory: top.memory.clone().or(base.memory),
        pixels_per_thread: top.pixels_per_thread.or(base.pixels_per_thread),
        block: top.block.or(base.block),
        masks: top.masks.or(base.masks),
    }
}

/// The override that pins every axis of `config`: what
/// [`Device::with_config`](crate::Device::with_config) stores.
pub(crate) fn pin(config: &Config) -> ConfigOverride {
    ConfigOverride {
        boundary: Some(config.boundary),
        memory: Some(config.memory.clone()),
        pixels_per_thread: Some(config.pixels_per_thread),
        block: Some(config.block),
        masks: Some(config.masks),
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
            Error::Config(format!(
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
                    Error::Config(format!(
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
                    return Err(Error::Config(format!(
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
    use hipacc_codegen::{BlockShape, BoundaryScheme, MemoryKind, PixelsPerThread};

    #[test]
    fn api_override_wins_over_env_axes() {
        let env = ConfigOverride::parse("block=32x4,ppt=4").unwrap();
        let api = ConfigOverride::parse("ppt=8,boundary=generic").unwrap();
        let m = merge(env, &api);
        assert_eq!(m.block, Some(BlockShape { x: 32, y: 4 }));
        assert_eq!(m.pixels_per_thread, Some(PixelsPerThread::Eight));
        assert_eq!(m.boundary, Some(BoundaryScheme::Generic));
        assert_eq!(m.memory, None);
    }

    #[test]
    fn pinned_config_round_trips() {
        let c = Config {
            boundary: BoundaryScheme::Regions,
            memory: vec![MemoryKind::LocalTile, MemoryKind::Global],
            pixels_per_thread: PixelsPerThread::Four,
            block: BlockShape { x: 16, y: 8 },
            masks: hipacc_codegen::MaskHandling::ConstantMemory,
        };
        let back = pin(&c)
            .apply(&Config::uniform(2, BlockShape { x: 1, y: 1 }))
            .unwrap();
        assert_eq!(back, c);
    }

    #[test]
    fn mask_bytes_follow_the_scalar_type() {
        let b = mask_bytes(&[Value::F32(1.5), Value::F32(-2.0)], ScalarType::F32).unwrap();
        assert_eq!(b.len(), 8);
        assert_eq!(f32::from_ne_bytes([b[4], b[5], b[6], b[7]]), -2.0);
        let b = mask_bytes(&[Value::U8(7), Value::U8(9)], ScalarType::U8).unwrap();
        assert_eq!(b, vec![7, 9]);
    }
}
