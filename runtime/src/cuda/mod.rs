//! The CUDA backend: generated CUDA C compiled with NVRTC at run time and
//! launched through the driver API (`cudarc`, dynamic loading).
//!
//! | file | concept |
//! |---|---|
//! | `probe` | finding libcuda; its absence is an error naming what to install (cudarc would panic) |
//! | `device` | the primary context, the default stream, limits, the target of the architecture model |
//! | `buffer` | device memory of images, texture objects over it |
//! | `nvrtc` | finding NVRTC (also in the pip wheels), CUDA C to PTX ([`compile_program`]); works without a GPU |
//! | `ptxas` | PTX to SASS with `ptxas -v`, and the registers / shared memory it reports ([`assemble`]) |
//! | `graph` | CUDA graphs: a replayed launch sequence captured and launched as one |
//! | `backend` | the [`crate::gpu::backend::Backend`]: copies, module loading (PTX optionally on disk), constant memory for masks, launching |
//!
//! The program cache, launch path (with the occupancy check), residency
//! and replay above the driver are the generic ones of [`crate::gpu`].
//!
//! The public items here are the GPU-less tool chain checks: compile every
//! variant with NVRTC and assemble it with ptxas to see its resource use
//! ([`assemble_program`]).

mod backend;
mod buffer;
mod device;
mod graph;
mod nvrtc;
mod probe;
mod ptxas;

pub(crate) use device::{present, shared};

pub use nvrtc::compile_program;
pub use nvrtc::NVCUDA_DIR_ENV;
pub use ptxas::{assemble, assemble_program, ptxas_path, KernelResources};

/// `Ok` when NVRTC can be loaded (from the system, or the pip wheels in
/// `HIPACC_NVCUDA_DIR` / `/opt/nvcuda`); else the error says how to get it.
pub fn nvrtc_available() -> crate::Result<()> {
    nvrtc::nvrtc()
}
