//! Example programs of hipacc and the kernels they share with the
//! benchmarks and tests.
//!
//! - [`filters`]: the kernels of the `filters` binary (Gaussian, box mean,
//!   Sobel, Laplacian, bilateral) and its argument parsing.

pub mod filters;
