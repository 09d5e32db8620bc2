//! hipacc: image kernels described once in Rust, run on the native CPU
//! backend, OpenCL or CUDA.

extern crate self as hipacc;

pub use hipacc_core as core;
