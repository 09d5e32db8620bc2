//! `gpu-variants`: gauss5 and the Jacobi sweep on each GPU-style backend
//! present (OpenCL, CUDA, and wgpu with the `wgpu` feature), one row per
//! variant the architecture model
//! allows at the chosen block shape (boundary scheme x memory kind x pixels
//! per thread x mask handling), with the median device time and the
//! effective bandwidth (8 and 12 bytes per pixel).
//!
//! ```text
//! cargo run --release -p hipacc-benches --bin gpu-variants [-- --size N --runs N]
//! cargo run --release -p hipacc-benches --features wgpu --bin gpu-variants
//! ```
//!
//! The times are the explore mode's (event timing, pass timestamps on
//! wgpu, a warm-up launch per variant); nothing is remembered in the
//! tuning cache. A device that runs on the CPU (PoCL, Mesa's lavapipe
//! under wgpu) is marked: its figures check the code path of each variant,
//! not GPU speed.

use anyhow::{bail, Result};
use hipacc::explore::{ExploreOptions, ExploreReport};
use hipacc::prelude::*;
use hipacc_benches::gpu::{self, devices};
use hipacc_benches::workload::{
    Gauss5Run, JacobiRun, GAUSS5_BYTES_PER_PIXEL, JACOBI_BYTES_PER_PIXEL,
};

fn main() {
    if let Err(e) = run() {
        eprintln!("gpu-variants: error: {e:#}");
        std::process::exit(1);
    }
}

/// `--size N` (default 2048) and `--runs N` (default 7).
fn args() -> Result<(usize, usize)> {
    gpu::size_and_runs(2048, 7)
}

fn run() -> Result<()> {
    let (size, runs) = args()?;
    let mut any = false;
    for (name, device) in devices() {
        let device = match device {
            Ok(d) => d,
            Err(e) => {
                println!("[SKIP] {name}: {e}");
                continue;
            }
        };
        any = true;
        let on_cpu = device
            .target()
            .is_some_and(|t| t.vendor == hipacc::codegen::Vendor::Cpu);
        let jacobi = JacobiRun::new(size, size, device.clone())?;
        let (k, space) = jacobi.kernel();
        let report = explore(k, &device, space, runs)?;
        print(&report, on_cpu, size, JACOBI_BYTES_PER_PIXEL);
        let gauss = Gauss5Run::new(size, size, device.clone())?;
        let (k, space) = gauss.kernel();
        let report = explore(k, &device, space, runs)?;
        print(&report, on_cpu, size, GAUSS5_BYTES_PER_PIXEL);
    }
    if !any {
        bail!("no GPU-style device found (OpenCL, CUDA, or wgpu with the `wgpu` feature)");
    }
    Ok(())
}

/// Every variant of `kernel` at the block shape the heuristics choose.
fn explore<K: Kernel>(
    kernel: &K,
    device: &Device,
    space: &IterationSpace<K::Output>,
    runs: usize,
) -> Result<ExploreReport> {
    let block = device.config_for(&kernel.ir()?)?.block;
    let options = ExploreOptions {
        warmup: 1,
        runs,
        print: false,
        remember: false,
        blocks: vec![block],
    };
    Ok(hipacc::explore_with(kernel, device, space, &options)?)
}

fn print(report: &ExploreReport, on_cpu: bool, size: usize, bytes_per_pixel: u64) {
    let bytes = (size * size) as f64 * bytes_per_pixel as f64;
    println!(
        "\n{} on {}, {size}x{size}, {bytes_per_pixel} B/px",
        report.kernel, report.device
    );
    if on_cpu {
        println!("(a CPU driver: the figures check each variant's code path, not GPU speed)");
    }
    println!("{:>10} {:>8}  variant", "median ms", "GB/s");
    let mut rows: Vec<_> = report.rows.iter().collect();
    rows.sort_by_key(|r| r.median);
    for r in rows {
        let s = r.median.as_secs_f64();
        println!(
            "{:>10.3} {:>8.2}  {}",
            s * 1e3,
            bytes / s / 1e9,
            r.config.key()
        );
    }
}
