//! `vcycle-ratios`: one V(2,2) Jacobi cycle on 2048x2048 f32 (6 levels),
//! fused and unfused, fused with every launch parallel (no
//! single-threaded path for small levels), and fused with the sweeps
//! blocked in time, alternating with the STREAM triad; prints ms per
//! cycle, the finest level's share and the ratio to the bandwidth bound
//! (bytes the kernels must move / triad bandwidth of the same run). The
//! blocked cycle is measured against the fused cycle's bound, one pass
//! per kernel: below 1, it moves less than that.
//!
//! ```text
//! cargo run --release -p hipacc-benches --bin vcycle-ratios [-- --rounds N]
//! ```

use anyhow::{bail, Context, Result};
use hipacc::Device;
use hipacc_benches::stream::{Triad, TRIAD_DEFAULT_LEN};
use hipacc_benches::vcycle::{trace_bytes, VcycleRun, LEVELS, SIZE};
use std::hint::black_box;
use std::time::Instant;

fn main() {
    if let Err(e) = run() {
        eprintln!("vcycle-ratios: error: {e:#}");
        std::process::exit(1);
    }
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

fn run() -> Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let rounds = match args.as_slice() {
        [] => 21,
        [flag, n] if flag == "--rounds" => n.parse().with_context(|| format!("--rounds {n}"))?,
        _ => bail!("usage: vcycle-ratios [--rounds N]"),
    };
    if rounds < 5 {
        bail!("--rounds {rounds}: at least 5 are needed for a median");
    }
    let mut triad = Triad::new(TRIAD_DEFAULT_LEN);
    // The last run sends every launch to rayon, coarse levels included: the
    // cost of the single-threaded path below `Device::CPU_SERIAL_PIXELS`
    // not being there.
    let runs = [
        ("unfused", VcycleRun::new(Device::cpu(), false)?),
        ("fused", VcycleRun::new(Device::cpu(), true)?),
        (
            "fused, no serial",
            VcycleRun::new(Device::cpu_serial_below(0), true)?,
        ),
        (
            "fused, blocked",
            VcycleRun::new(Device::cpu(), true)?.with_blocked(true),
        ),
    ];
    triad.run(3.0);
    // The blocked cycle's bound is the fused one's (its twin unblocked).
    let bytes: Vec<u64> = runs
        .iter()
        .map(|(_, r)| Ok(trace_bytes(&r.cycle()?)))
        .collect::<Result<_>>()?;
    let fused_bytes = bytes[1];
    let bytes: Vec<u64> = runs
        .iter()
        .zip(bytes)
        .map(|((name, _), b)| {
            if name.ends_with("blocked") {
                fused_bytes
            } else {
                b
            }
        })
        .collect();
    let mut triad_ms = Vec::new();
    let mut cycle_ms = vec![Vec::new(); runs.len()];
    let mut finest_ms = vec![Vec::new(); runs.len()];
    for _ in 0..rounds {
        let t = Instant::now();
        triad.run(black_box(3.0));
        triad_ms.push(t.elapsed().as_secs_f64() * 1e3);
        for (i, (_, r)) in runs.iter().enumerate() {
            let t = Instant::now();
            let trace = r.cycle()?;
            cycle_ms[i].push(t.elapsed().as_secs_f64() * 1e3);
            let fine: f64 = trace
                .launches()
                .filter(|l| l.level == 0)
                .map(|l| l.elapsed.as_secs_f64() * 1e3)
                .sum();
            finest_ms[i].push(fine);
        }
    }
    black_box(triad.a(0));
    let triad_gbs = triad.bytes() as f64 / (median(triad_ms.clone()) * 1e6);
    println!(
        "V(2,2) weighted Jacobi, Dirichlet, {SIZE}x{SIZE} f32, {LEVELS} levels, {} threads, median of {rounds} alternating rounds",
        rayon::current_num_threads()
    );
    println!(
        "STREAM triad {triad_gbs:.1} GB/s ({:.3} ms)",
        median(triad_ms)
    );
    println!(
        "{:<16} {:>9} {:>13} {:>10} {:>11} {:>9}",
        "cycle", "ms", "finest level", "MB moved", "bound ms", "x bound"
    );
    for (i, (name, _)) in runs.iter().enumerate() {
        let ms = median(cycle_ms[i].clone());
        let share = median(finest_ms[i].clone()) / ms;
        let bound = bytes[i] as f64 / (triad_gbs * 1e6);
        println!(
            "{name:<16} {ms:>9.2} {:>12.0}% {:>10.1} {bound:>11.2} {:>9.2}",
            100.0 * share,
            bytes[i] as f64 / 1e6,
            ms / bound
        );
    }
    Ok(())
}
