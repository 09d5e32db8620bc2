//! Example programs of hipacc and the kernels they share with the
//! benchmarks and tests.
//!
//! - [`filters`]: the kernels of the `filters` binary (Gaussian, box mean,
//!   Sobel, Laplacian, bilateral) and its argument parsing.
//! - [`pyramid`]: the Burt-Adelson Gaussian/Laplacian pyramid of the
//!   `pyramid` binary, written once for any depth with `traverse`.

pub mod filters;
pub mod pyramid;
