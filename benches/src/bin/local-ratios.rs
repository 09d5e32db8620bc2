//! `local-ratios`: the local-operator kernels of [`hipacc_benches::local`]
//! timed alternately on 2048x2048 f32, medians over many rounds, printed
//! with their ratio to the same stencil written out tap by tap.
//!
//! ```text
//! cargo run --release -p hipacc-benches --bin local-ratios [-- --rounds N]
//! ```
//!
//! Every output is first checked equal, bit for bit, to its written-out
//! counterpart (and `conv5_scaled` to the hand-written Rust loop); the
//! domain sum, which runs as two passes, within the rounding of its sum.

use anyhow::{bail, Context, Result};
use hipacc::Device;
use hipacc_benches::local::LocalRun;
use hipacc_benches::workload::SIZE;
use std::time::Instant;

/// Fewest rounds accepted.
const MIN_ROUNDS: usize = 5;

/// Each kernel and the written-out kernel it is compared with.
const PAIRS: [(&str, &str); 5] = [
    ("conv5_scaled", "written5_scaled"),
    ("conv5_pair", "written5_pair"),
    ("conv3_scaled", "written3_scaled"),
    ("domain_max5", "written5_max"),
    ("domain_sum5", "written5_sum"),
];

fn main() {
    if let Err(e) = run() {
        eprintln!("local-ratios: error: {e:#}");
        std::process::exit(1);
    }
}

fn rounds_arg() -> Result<usize> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.as_slice() {
        [] => Ok(21),
        [flag, n] if flag == "--rounds" => {
            let n: usize = n.parse().with_context(|| format!("--rounds {n}"))?;
            if n < MIN_ROUNDS {
                bail!("--rounds {n}: at least {MIN_ROUNDS} rounds are needed for a median");
            }
            Ok(n)
        }
        _ => bail!("usage: local-ratios [--rounds N]"),
    }
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn run() -> Result<()> {
    let rounds = rounds_arg()?;
    let run = LocalRun::new(SIZE, SIZE, Device::cpu())?;
    let kernels = run.kernels()?;
    let mut outputs = Vec::new();
    for (name, k) in &kernels {
        run.poison()?;
        run.run(k).with_context(|| name.to_string())?;
        outputs.push((*name, run.output()?));
    }
    run.poison()?;
    run.baseline_conv5_scaled()?;
    outputs.push(("loop5_scaled", run.output()?));
    let out = |n: &str| outputs.iter().find(|(m, _)| *m == n).map(|(_, o)| o);
    // Bit for bit, but for the domain sum: it runs as a row pass and a
    // column pass (a box), the same 25 terms regrouped, within the
    // `(n + 4) ε Σ |a|` bound of an n-term sum (`Σ |a|` is the sum itself
    // for the non-negative input).
    let same = |a: &str, b: &str| match (out(a), out(b)) {
        (Some(x), Some(y)) if a == "domain_sum5" => x
            .iter()
            .zip(y)
            .all(|(p, q)| (p - q).abs() <= 29.0 * f32::EPSILON * q.abs()),
        (Some(x), Some(y)) => x.iter().zip(y).all(|(p, q)| p.to_bits() == q.to_bits()),
        _ => false,
    };
    for (a, b) in PAIRS.iter().chain(&[("conv5_scaled", "loop5_scaled")]) {
        if !same(a, b) {
            bail!("{a} and {b} differ");
        }
    }
    let mut times: Vec<Vec<f64>> = vec![Vec::new(); kernels.len() + 1];
    for r in 0..rounds {
        for i in 0..=kernels.len() {
            let i = (i + r) % (kernels.len() + 1);
            let t = Instant::now();
            match kernels.get(i) {
                Some((_, k)) => run.run(k)?,
                None => run.baseline_conv5_scaled()?,
            }
            times[i].push(t.elapsed().as_secs_f64() * 1e3);
        }
    }
    let ms: Vec<f64> = times.into_iter().map(median).collect();
    let at = |n: &str| {
        kernels
            .iter()
            .position(|(m, _)| *m == n)
            .map_or(ms[kernels.len()], |i| ms[i])
    };
    println!("| kernel | ms | written out | ms | ratio |");
    println!("|---|---:|---|---:|---:|");
    for (a, b) in PAIRS.iter().chain(&[("conv5_scaled", "loop5_scaled")]) {
        println!(
            "| {a} | {:.2} | {b} | {:.2} | {:.2} |",
            at(a),
            at(b),
            at(a) / at(b)
        );
    }
    Ok(())
}
