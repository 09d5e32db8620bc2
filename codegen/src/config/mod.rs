//! Variant configurations: one value on each axis code generation varies.
//!
//! A [`Config`] is plain data. [`Config::choose`] picks one from the
//! architecture model's defaults and the kernel's footprints, an override
//! ([`ConfigOverride`], e.g. from `HIPACC_CONFIG`) replaces any axis, and
//! [`Config::validate`] / [`Config::validate_for`] check it against the target
//! (and the kernel). [`Config::enumerate`] lists every valid config, the
//! search space of the explore mode; [`Config::families`] one config per
//! variant family, for conformance tests.

mod axes;
mod choose;
pub mod occupancy;
mod parse;
mod variant;

pub use crate::vocab::{BlockShape, PixelsPerThread};
pub use axes::{BoundaryScheme, MaskHandling, MemoryKind};
pub use parse::{ConfigOverride, ENV_VAR};
pub use variant::Config;

#[cfg(test)]
mod tests;
