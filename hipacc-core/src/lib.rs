//! DSL types and kernel IR of hipacc, an image-processing DSL compiler.
//!
//! Users describe kernels as Rust structs deriving [`Kernel`] whose fields are
//! [`Accessor`]s, [`Mask`]s, [`Domain`]s and scalar parameters, with a body
//! captured by `#[kernel_body]`. This crate holds those types, the IR the body
//! becomes ([`ir`]) and the evaluator that defines what every backend must
//! compute. Most users depend on the `hipacc` crate, which re-exports this one
//! and adds the backends.

#![warn(missing_docs)]

extern crate self as hipacc_core;

mod accessor;
pub mod boundary;
pub mod cpu;
mod domain;
mod error;
mod huge_pages;
pub mod image;
pub mod interpolate;
pub mod io;
pub mod ir;
pub mod kernel;
mod mask;
mod pixel;
mod rect;
pub mod row_window;
mod space;
mod window_walk;

pub use accessor::{Accessor, Interpolation};
pub use boundary::{Boundary, BoundaryMode};
pub use domain::Domain;
pub use error::{Error, Result};
pub use hipacc_macros::{kernel_body, Kernel};
pub use image::Image;
pub use ir::ReduceOp;
pub use kernel::{Bindings, Kernel, KernelBody, KernelField, KernelFields};
pub use mask::Mask;
pub use pixel::{LaneScalar, Pixel, Reducible, Rgba};
pub use rect::Rect;
pub use space::IterationSpace;

/// The reduction operators a kernel body names: `Sum`, `Min`, `Max` and
/// `Prod`, the second argument of `reduce` and `convolve`.
///
/// `reduce`, `convolve`, `iterate`, `x()` and `y()` are not items: inside a
/// body, `#[kernel_body]` recognises them by name and compiles them for
/// every backend, so they need no import (and exist nowhere else).
///
/// ```
/// use hipacc_core::dsl::*;
/// use hipacc_core::ReduceOp;
/// assert_eq!([Sum, Min, Max, Prod], [ReduceOp::Sum, ReduceOp::Min, ReduceOp::Max, ReduceOp::Prod]);
/// ```
pub mod dsl {
    pub use crate::ir::ReduceOp::{Max, Min, Prod, Sum};
}
