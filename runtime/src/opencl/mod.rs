//! The OpenCL backend: generated OpenCL C built by the driver at run time.
//!
//! | file | concept |
//! |---|---|
//! | `probe` | finding a device; a missing ICD loader or platform is an error naming what to install |
//! | `device` | the context, an in-order profiling queue, limits, the target of the architecture model, the kernel cache |
//! | `buffer` | images resident on the device (buffers, `image2d_t` copies for image reads) |
//! | `program` | building programs (several kernels at once), build logs, caching kernels |
//! | `launch` | binding arguments in codegen's order and enqueueing over the iteration space |
//!
//! `opencl3` is used with dynamic loading, so the crate builds and runs
//! without any OpenCL installed. Unsafe FFI stays in these files, each block
//! with a `SAFETY` comment.

mod buffer;
mod device;
mod launch;
mod probe;
mod program;

pub(crate) use device::{gpu_present, shared, ClDevice};
pub(crate) use launch::execute;
pub(crate) use program::build;
