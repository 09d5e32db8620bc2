//! Example programs of hipacc and the kernels they share with the
//! benchmarks and tests.
//!
//! - [`filters`]: the kernels of the `filters` binary (Gaussian, box mean,
//!   Sobel, Laplacian, bilateral) and its argument parsing.
//! - [`hdr`]: high-dynamic-range input and output, the demo scene and pixel
//!   repair of the `hdr-compress` binary.
//! - [`multigrid`]: the manufactured Poisson problem of the `multigrid`
//!   binary, its measurements and residual plot.
//! - [`pyramid`]: the Burt-Adelson Gaussian/Laplacian pyramid of the
//!   `pyramid` binary, written once for any depth with `traverse`.
//! - [`ranks`]: the processes of a run, one or (with the `distributed`
//!   feature) the ranks of `mpirun`.

pub mod filters;
pub mod hdr;
pub mod multigrid;
pub mod pyramid;
pub mod ranks;
