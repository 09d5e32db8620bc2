//! Printing kernels as OpenCL C and CUDA C.
//!
//! [`generate`] prints one kernel variant, [`generate_batch`] several into
//! one program (one driver build). The printer is shared
//! ([`c_common`](self) expressions and statements, the kernel skeleton in
//! `kernel`); the `Dialect` trait (module `dialect`) holds the differences,
//! implemented in `opencl` and `cuda`.
//!
//! A kernel's parameters are listed in [`KernelInfo::args`], in order:
//! the output buffer, its stride and the iteration space (`x, y, width,
//! height`); per accessor its buffer (or image / texture), stride (pixels per
//! row of its image), region origin and size; scalar parameters; masks in
//! constant memory (OpenCL; CUDA uses [`KernelInfo::constant_symbols`]); the
//! four region starts when the boundary scheme is `Regions`. Every integer is
//! a 32-bit `int`.

mod c_common;
mod c_types;
mod cuda;
mod dialect;
mod generate;
mod header;
mod interp;
mod kernel;
mod opencl;
mod ops;
mod prelude;
mod program;
mod reads;
mod reduce;
mod wgsl;
mod wgsl_reduce;

pub use crate::vocab::Language;
pub use generate::{generate, generate_batch};
pub use program::{ArgKind, ConstantSymbol, KernelArg, KernelInfo, Launch, Program};
pub use reduce::{global_entry, global_program, GlobalOp, GLOBAL_BLOCK, LOCAL_BINS};
pub use wgsl::{tile_bytes as wgsl_tile_bytes, wgsl_layout, WgslSlot};

#[cfg(test)]
mod grid_tests;
#[cfg(test)]
mod tests;
#[cfg(test)]
mod wgsl_tests;
