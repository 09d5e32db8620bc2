//! `cpu-ratios`: the STREAM triad, Jacobi and gauss5 (hipacc and baseline)
//! timed alternately on 2048x2048 f32, medians over many rounds, printed as
//! a table of ms, GB/s and the ratios the project's goals are stated in.
//!
//! ```text
//! cargo run --release -p hipacc-benches --bin cpu-ratios [-- --rounds N]
//! ```
//!
//! Running the five alternately, one of each per round, exposes them to the
//! same machine noise, so their ratios are steadier than separate runs; the
//! order rotates from round to round, so that none always runs after the
//! same workload.

use anyhow::{bail, Context, Result};
use hipacc::Device;
use hipacc_benches::stream::{Triad, TRIAD_DEFAULT_LEN};
use hipacc_benches::workload::{Gauss5Run, JacobiRun, SIZE};
use std::hint::black_box;
use std::time::Instant;

/// Halide 21's gauss5 on this kind of machine (PERF.md), in ms.
const HALIDE_GAUSS5_MS: f64 = 1.82;
/// Fewest rounds accepted.
const MIN_ROUNDS: usize = 15;

fn main() {
    if let Err(e) = run() {
        eprintln!("cpu-ratios: error: {e:#}");
        std::process::exit(1);
    }
}

fn rounds_arg() -> Result<usize> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.as_slice() {
        [] => Ok(31),
        [flag, n] if flag == "--rounds" => {
            let n: usize = n.parse().with_context(|| format!("--rounds {n}"))?;
            if n < MIN_ROUNDS {
                bail!("--rounds {n}: at least {MIN_ROUNDS} rounds are needed for a median");
            }
            Ok(n)
        }
        _ => bail!("usage: cpu-ratios [--rounds N]"),
    }
}

/// Milliseconds `f` takes.
fn time(f: impl FnOnce() -> Result<()>) -> Result<f64> {
    let t = Instant::now();
    f()?;
    Ok(t.elapsed().as_secs_f64() * 1e3)
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

fn max_difference(a: &[f32], b: &[f32]) -> f32 {
    a.iter()
        .zip(b)
        .map(|(x, y)| (x - y).abs())
        .fold(0.0, f32::max)
}

fn run() -> Result<()> {
    let rounds = rounds_arg()?;
    let mut triad = Triad::new(TRIAD_DEFAULT_LEN);
    let jacobi = JacobiRun::new(SIZE, SIZE, Device::cpu())?;
    let gauss = Gauss5Run::new(SIZE, SIZE, Device::cpu())?;

    // Warm up every path once and check hipacc against the baselines.
    triad.run(3.0);
    let (ours, theirs) = jacobi.outputs()?;
    let dj = max_difference(&ours, &theirs);
    let (ours, theirs) = gauss.outputs()?;
    let dg = max_difference(&ours, &theirs);
    if dj > 1e-5 || dg > 1e-5 {
        bail!("hipacc and the baselines disagree: jacobi max |diff| {dj}, gauss5 {dg}");
    }

    let names = [
        "stream triad",
        "jacobi baseline",
        "jacobi hipacc",
        "gauss5 baseline",
        "gauss5 hipacc",
    ];
    let bytes = [
        triad.bytes(),
        jacobi.bytes(),
        jacobi.bytes(),
        gauss.bytes(),
        gauss.bytes(),
    ];
    let mut samples: [Vec<f64>; 5] = Default::default();
    for round in 0..rounds {
        // Each round starts one workload later, so that no workload always
        // follows the same one (whose data the shared cache still holds).
        for k in 0..names.len() {
            let w = (round + k) % names.len();
            let ms = match w {
                0 => time(|| {
                    triad.run(black_box(3.0));
                    Ok(())
                })?,
                1 => time(|| Ok(jacobi.baseline()?))?,
                2 => time(|| Ok(jacobi.hipacc()?))?,
                3 => time(|| Ok(gauss.baseline()?))?,
                _ => time(|| Ok(gauss.hipacc()?))?,
            };
            samples[w].push(ms);
        }
    }
    black_box(triad.a(0));

    let ms: Vec<f64> = samples.into_iter().map(median).collect();
    let gbs: Vec<f64> = ms
        .iter()
        .zip(bytes)
        .map(|(ms, b)| b as f64 / (ms * 1e6))
        .collect();
    println!(
        "{SIZE}x{SIZE} f32, {} threads, median of {rounds} alternating rounds",
        rayon::current_num_threads()
    );
    println!("{:<16} {:>9} {:>8}", "workload", "ms", "GB/s");
    for i in 0..names.len() {
        println!("{:<16} {:>9.3} {:>8.1}", names[i], ms[i], gbs[i]);
    }
    println!();
    println!("ratios");
    println!(
        "  jacobi hipacc   / triad bandwidth  {:>6.2}  (goal >= 0.60)",
        gbs[2] / gbs[0]
    );
    println!(
        "  jacobi baseline / triad bandwidth  {:>6.2}",
        gbs[1] / gbs[0]
    );
    println!(
        "  jacobi hipacc time / baseline time {:>6.2}  (goal <= 1.00)",
        ms[2] / ms[1]
    );
    println!(
        "  gauss5 hipacc time / baseline time {:>6.2}",
        ms[4] / ms[3]
    );
    println!(
        "  gauss5 hipacc time / Halide {HALIDE_GAUSS5_MS} ms  {:>6.2}  (goal <= 1.50; Halide from PERF.md)",
        ms[4] / HALIDE_GAUSS5_MS
    );
    println!(
        "  gauss5 baseline time / Halide {HALIDE_GAUSS5_MS} ms {:>5.2}",
        ms[3] / HALIDE_GAUSS5_MS
    );
    Ok(())
}
