#![doc = include_str!("../../README.md")]
#![doc = include_str!("guide.md")]
#![warn(missing_docs)]

extern crate self as hipacc;

/// Code generation (architecture model, variant configs, offline emission).
pub use hipacc_codegen as codegen;
pub use hipacc_core as core;

mod cache;
#[cfg(feature = "conformance")]
pub mod conformance;
mod cpu;
pub mod cuda;
mod device;
#[cfg(feature = "distributed")]
pub mod distributed;
mod error;
mod execute;
pub mod explore;
mod folded;
mod gpu;
pub mod multigrid;
mod opencl;
pub mod pipeline;
mod pyramid;
pub mod reduce;
pub mod trace;
mod traverse;
#[cfg(feature = "wgpu")]
mod wgpu;

pub use device::{BackendKind, Device, BACKEND_ENV};
pub use error::{Error, Result};
pub use execute::Execute;
pub use explore::{explore, explore_with, ExploreOptions, ExploreReport};
pub use hipacc_core::Image;
pub use pipeline::Pipeline;
pub use pyramid::{level_size, max_depth, BindPyramid, Pyramid, PyramidError};
pub use trace::Trace;
pub use traverse::{traverse, Traversal};

/// Everything a kernel author needs: `use hipacc::prelude::*;`.
pub mod prelude {
    pub use crate::{reduce, traverse, Device, Execute, Pyramid};
    pub use hipacc_core::dsl::*;
    pub use hipacc_core::{
        kernel_body, Accessor, Boundary, Domain, Image, Interpolation, IterationSpace, Kernel,
        Mask, Rect, Rgba,
    };
}
