//! The OpenCL backend: generated OpenCL C built by the driver at run time.
//!
//! | file | concept |
//! |---|---|
//! | `probe` | finding a device; a missing ICD loader or platform is an error naming what to install |
//! | `device` | the context, an in-order profiling queue, limits, the target of the architecture model |
//! | `buffer` | device memory of images (buffers, `image2d_t` copies for image reads) |
//! | `program` | building programs with the driver; its log only for a failed build |
//! | `launch` | setting arguments and enqueueing |
//! | `backend` | all of the above as a [`crate::gpu::backend::Backend`] |
//!
//! The program cache, launch path, residency and replay above the driver
//! are the generic ones of [`crate::gpu`].
//!
//! `opencl3` is used with dynamic loading, so the crate builds and runs
//! without any OpenCL installed. Unsafe FFI stays in these files, each block
//! with a `SAFETY` comment.

mod backend;
mod buffer;
mod device;
mod launch;
mod probe;
mod program;

pub(crate) use device::{gpu_present, shared};
