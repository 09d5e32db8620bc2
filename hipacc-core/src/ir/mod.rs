//! The kernel IR: plain data describing one kernel, consumed by the
//! evaluator ([`eval`]), the CPU backend (through the macro's compiled body)
//! and the OpenCL/CUDA code generators.
//!
//! Pipeline: `#[kernel_body]` captures a [`surface`] AST; [`lower`] resolves
//! its names against the kernel's [`Bindings`](crate::Bindings) and infers
//! types as rustc does, giving a [`Kernel`]; [`footprint`] derives each
//! accessor's window.

pub mod eval;
mod expr;
mod fold;
mod fold_window;
pub mod footprint;
mod kernel;
mod lower;
mod stmt;
pub mod surface;
mod types;

pub use eval::{evaluate, evaluate_kernel};
pub use expr::{BinaryOp, Expr, ExprKind, Intrinsic, ReduceOp, UnaryOp, Window};
pub use fold::fold;
pub use fold_window::{fold_window, reads_per_pixel, recompute_reads};
pub use footprint::{footprints, Footprint};
pub use kernel::{AccessorSlot, DomainSlot, Kernel, MaskSlot, ParamSlot};
pub use lower::lower;
pub use stmt::{Block, Stmt, VarId, VarInfo};
pub use types::{Literal, Scalar4, ScalarType, Type, Value};
