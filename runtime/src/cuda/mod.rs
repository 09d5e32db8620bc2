//! The CUDA backend: generated CUDA C compiled with NVRTC at run time and
//! launched through the driver API (`cudarc`, dynamic loading).
//!
//! | file | concept |
//! |---|---|
//! | `probe` | finding libcuda and NVRTC; absence is an error naming what to install (cudarc would panic) |
//! | `device` | the primary context, the default stream, limits, the target of the architecture model |
//! | `buffer` | device memory of images, texture objects over it |
//! | `nvrtc` | CUDA C to PTX ([`compile_program`]); works without a GPU |
//! | `ptxas` | PTX to SASS with `ptxas -v`, and the registers / shared memory it reports ([`assemble`]) |
//! | `backend` | the [`crate::gpu::backend::Backend`]: copies, module loading (PTX optionally on disk), constant memory for masks, launching |
//!
//! The program cache, launch path (with the occupancy check), residency
//! and replay above the driver are the generic ones of [`crate::gpu`].
//!
//! The public items here are the GPU-less tool chain checks: compile every
//! variant with NVRTC and assemble it with ptxas to see its resource use.
//!
//! ```no_run
//! use hipacc::cuda::assemble_program;
//! use hipacc_codegen::{generate, Config, Language, Target};
//! # fn check(kernel: &hipacc::core::ir::Kernel) -> Result<(), Box<dyn std::error::Error>> {
//! let target = Target::lookup("h200")?;
//! let config = Config::choose(kernel, target, Language::Cuda, None)?;
//! let program = generate(kernel, &config, target, Language::Cuda)?;
//! for k in assemble_program(&program, 90)? {
//!     println!("{}: {} registers, {} bytes smem", k.entry, k.registers, k.shared_bytes);
//! }
//! # Ok(()) }
//! ```

mod backend;
mod buffer;
mod device;
mod nvrtc;
mod probe;
mod ptxas;

pub(crate) use device::{present, shared};

pub use nvrtc::compile_program;
pub use probe::NVCUDA_DIR_ENV;
pub use ptxas::{assemble, assemble_program, ptxas_path, KernelResources};

/// `Ok` when NVRTC can be loaded (from the system, or the pip wheels in
/// `HIPACC_NVCUDA_DIR` / `/opt/nvcuda`); else the error says how to get it.
pub fn nvrtc_available() -> crate::Result<()> {
    probe::nvrtc()
}
