//! A whole kernel in IR form: slots plus body.

use super::{Block, Literal, Type, VarInfo};
use crate::{BoundaryMode, Interpolation};
use serde::{Deserialize, Serialize};

/// An accessor slot: an input image read through a boundary condition.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct AccessorSlot {
    /// Field name in the kernel struct.
    pub name: String,
    /// Pixel type.
    pub pixel: Type,
    /// Boundary mode.
    pub boundary: BoundaryMode,
    /// The constant of `Constant`, one literal per lane; empty otherwise.
    pub constant: Vec<Literal>,
    /// How fractional positions are read (issue: multiresolution).
    pub interpolation: Interpolation,
}

/// A mask slot: a rectangular array of coefficients centred on the pixel.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct MaskSlot {
    /// Field name.
    pub name: String,
    /// Coefficient type (scalar).
    pub ty: Type,
    /// Width (odd).
    pub width: u32,
    /// Height (odd).
    pub height: u32,
    /// Row-major coefficients when they are fixed at IR-build time (code
    /// generators propagate them as literals); `None` when supplied at launch.
    pub coefficients: Option<Vec<Literal>>,
}

/// A domain slot: which positions of a `width x height` window are visited.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct DomainSlot {
    /// Field name.
    pub name: String,
    /// Width (odd).
    pub width: u32,
    /// Height (odd).
    pub height: u32,
    /// Row-major: `true` where the position is visited.
    pub enabled: Vec<bool>,
}

/// A scalar parameter slot; its value is given at launch.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct ParamSlot {
    /// Field name.
    pub name: String,
    /// Scalar type.
    pub ty: Type,
}

/// A kernel: its slots, local variables and body. Plain data with a stable
/// hash ([`Kernel::stable_hash`]) that keys every compiled-code cache.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Kernel {
    /// The kernel struct's name.
    pub name: String,
    /// Output pixel type.
    pub output: Type,
    /// Accessor slots, in field order.
    pub accessors: Vec<AccessorSlot>,
    /// Mask slots, in field order.
    pub masks: Vec<MaskSlot>,
    /// Domain slots, in field order.
    pub domains: Vec<DomainSlot>,
    /// Parameter slots, in field order.
    pub params: Vec<ParamSlot>,
    /// Every local variable, indexed by [`VarId`](super::VarId).
    pub vars: Vec<VarInfo>,
    /// The body; its result is the output pixel.
    pub body: Block,
}

impl Kernel {
    /// A hash of the whole IR that is stable across runs, platforms and
    /// compiler versions, for use in on-disk cache keys: XXH3-64 of the
    /// IR's postcard encoding (serde's data model in declaration order,
    /// written compactly: integers as varints, strings with their length,
    /// enum variants by index).
    ///
    /// Every GPU launch looks its compiled kernel up by this hash, so it is
    /// on the launch path. Hashing the IR's JSON text instead took about a
    /// fifth of a small folded pipeline's host time per `execute`, mostly
    /// writing the field names and numbers; this takes about a fifth of
    /// that.
    pub fn stable_hash(&self) -> u64 {
        let bytes =
            postcard::to_allocvec(self).expect("bug: IR is plain data and always serialises");
        xxhash_rust::xxh3::xxh3_64(&bytes)
    }
}
