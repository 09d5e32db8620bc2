//! OpenCL C and CUDA C code generation from the kernel IR.
//!
//! The pipeline for one kernel and one device:
//!
//! 1. [`arch`]: the device found at run time maps to a [`Target`] of the
//!    architecture model ([`Target::nearest`]); targets are data (warp width,
//!    block limits, registers, shared memory, per-operator-class defaults).
//! 2. [`config`]: a [`Config`] picks one value on each variant axis (boundary
//!    scheme, memory per accessor, pixels per thread, block shape, mask
//!    handling). [`Config::choose`] applies the heuristics, an override
//!    ([`ConfigOverride`], also from `HIPACC_CONFIG`) replaces any choice, and
//!    [`Config::validate`] checks it against the target's limits.
//!    [`Config::enumerate`] lists every valid config (the explore mode).
//! 3. [`emit`]: [`generate`] prints the kernel as OpenCL C or CUDA C;
//!    [`generate_batch`] puts several kernels into one program. The result
//!    ([`Program`], [`KernelInfo`]) lists the kernel arguments in order and
//!    computes the launch geometry ([`KernelInfo::launch`]), so a runtime binds
//!    and launches without knowing how the source was made.
//! 4. [`dump`]: `HIPACC_DUMP_DIR` support and offline emission for the
//!    example binaries' `--emit DIR --target NAME`.
//!
//! ```
//! use hipacc_codegen::{generate, Config, Language, Target};
//! use hipacc_core::ir::{Block, Expr, ExprKind, Kernel, Type};
//!
//! // out(x, y) = x as f32: a kernel with no inputs.
//! let x = Expr::new(Type::I32, ExprKind::X);
//! let body = Block { stmts: vec![], result: Some(Expr::new(Type::F32, ExprKind::Cast(Box::new(x)))) };
//! let kernel = Kernel {
//!     name: "Ramp".into(), output: Type::F32, accessors: vec![], masks: vec![],
//!     domains: vec![], params: vec![], vars: vec![], body,
//! };
//! let target = Target::by_name("h100").expect("h100 is in the model");
//! let config = Config::choose(&kernel, target, Language::Cuda, None)?;
//! let program = generate(&kernel, &config, target, Language::Cuda)?;
//! assert!(program.source.contains("__global__ void"));
//! # Ok::<(), hipacc_codegen::Error>(())
//! ```

#![warn(missing_docs)]

pub mod arch;
pub mod config;
pub mod dump;
pub mod emit;
mod error;
mod passes;
pub mod regions;
#[cfg(test)]
mod test_kernels;
mod vocab;

pub use arch::{DeviceDescription, OperatorClass, Target, Vendor};
pub use config::{
    BlockShape, BoundaryScheme, Config, ConfigOverride, MaskHandling, MemoryKind, PixelsPerThread,
};
pub use emit::{
    generate, generate_batch, ArgKind, ConstantSymbol, KernelArg, KernelInfo, Language, Launch,
    Program,
};
pub use emit::{wgsl_layout, WgslSlot};
pub use error::{Error, Result};
pub use hipacc_core::ir::footprint::Footprint;
pub use passes::analysis::uses_f64;
pub use passes::reach::footprints;
pub use regions::RegionStarts;
