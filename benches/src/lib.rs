//! Benchmarks of hipacc's CPU backend on the workloads of PERF.md, beside
//! hand-written Rust baselines and the STREAM triad, so that ratios measured
//! in one run can be stated:
//!
//! - [`pipelines`]: multi-kernel pipelines, fused and kernel by kernel;
//! - [`baseline`]: plain loops + rayon versions of `jacobi` and `gauss5`;
//! - [`gpu`]: the command line and devices of the GPU benches;
//! - [`stream`]: the STREAM triad, the machine's memory bandwidth;
//! - [`vcycle`]: one multigrid V-cycle and the bytes its kernels must move;
//! - [`workload`]: the workloads' data and the hipacc kernels, runnable
//!   through either implementation.
//!
//! `cargo bench -p hipacc-benches` runs the criterion benches (GB/s per
//! workload); `cargo run --release -p hipacc-benches --bin cpu-ratios`
//! prints a table of medians and ratios; `--bin vcycle-ratios` the same
//! for the multigrid V-cycle against its bandwidth bound.

pub mod baseline;
pub mod gpu;
pub mod local;
pub mod pipelines;
pub mod stream;
pub mod suite;
pub mod vcycle;
pub mod workload;
