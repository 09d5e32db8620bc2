//! `suite-ratios`: the workloads of [`hipacc_benches::suite`] on 2048x2048
//! inputs on the native CPU; prints each workload's median.
//!
//! ```text
//! cargo run --release -p hipacc-benches --bin suite-ratios [-- --rounds R] [--runs N] [--dump DIR] [--json] [--only NAME]
//! ```
//!
//! Each round times every workload in turn as a block, the way the peers
//! of `benches/scripts/suite_compare.py` are timed: one untimed call (its
//! thread pool awake, its caches and plan warm), then `N` timed calls in a
//! row. Every call writes into the same output images, allocated once
//! before timing, as the peers realise into preallocated buffers. The
//! median is taken over all `R · N` samples.
//!
//! `--dump DIR` writes the inputs and every output as raw little-endian
//! arrays (`input.f32`, `input.u8`, `ix.f32`, `iy.f32`, `it.f32`, `u.f32`,
//! `v.f32`, `<workload>.f32`, `hornschunck_v.f32`, `histogram.u64`) for the
//! peers to compare with; `--json` prints one line per workload instead of
//! the table.

use anyhow::{bail, Context, Result};
use hipacc::core::Pixel;
use hipacc::{Device, Image};
use hipacc_benches::suite::{Suite, WORKLOADS};
use hipacc_benches::workload::SIZE;
use std::path::{Path, PathBuf};
use std::time::Instant;

/// Fewest samples (rounds times runs) accepted.
const MIN_SAMPLES: usize = 5;

struct Args {
    rounds: usize,
    runs: usize,
    dump: Option<PathBuf>,
    json: bool,
    only: Option<String>,
}

fn main() {
    if let Err(e) = run() {
        eprintln!("suite-ratios: error: {e:#}");
        std::process::exit(1);
    }
}

fn args() -> Result<Args> {
    let mut a = Args {
        rounds: 3,
        runs: 5,
        dump: None,
        json: false,
        only: None,
    };
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        match flag.as_str() {
            "--rounds" => {
                let n = it.next().context("--rounds needs a value")?;
                a.rounds = n.parse().with_context(|| format!("--rounds {n}"))?;
            }
            "--runs" => {
                let n = it.next().context("--runs needs a value")?;
                a.runs = n.parse().with_context(|| format!("--runs {n}"))?;
            }
            "--dump" => a.dump = Some(it.next().context("--dump needs a directory")?.into()),
            "--json" => a.json = true,
            "--only" => a.only = Some(it.next().context("--only needs a workload")?),
            _ => bail!(
                "usage: suite-ratios [--rounds R] [--runs N] [--dump DIR] [--json] [--only NAME]"
            ),
        }
    }
    if a.rounds * a.runs < MIN_SAMPLES {
        bail!("--rounds times --runs must be at least {MIN_SAMPLES} for a median");
    }
    Ok(a)
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn write<T: Pixel>(dir: &Path, name: &str, img: &Image<T>, bytes: fn(T) -> Vec<u8>) -> Result<()> {
    let data: Vec<u8> = img.to_vec()?.into_iter().flat_map(bytes).collect();
    let path = dir.join(name);
    std::fs::write(&path, data).with_context(|| path.display().to_string())
}

fn f32_bytes(v: f32) -> Vec<u8> {
    v.to_le_bytes().to_vec()
}

fn run() -> Result<()> {
    let a = args()?;
    let dev = Device::cpu();
    let s = Suite::new(SIZE, SIZE)?;
    if let Some(dir) = &a.dump {
        std::fs::create_dir_all(dir).with_context(|| dir.display().to_string())?;
        write(dir, "input.f32", &s.input, f32_bytes)?;
        write(dir, "input.u8", &s.bytes, |v| vec![v])?;
        for (name, img) in s.flow_inputs() {
            write(dir, &format!("{name}.f32"), img, f32_bytes)?;
        }
        for w in &WORKLOADS {
            s.run(w.name, &dev)?;
            write(dir, &format!("{}.f32", w.name), s.output(w.name), f32_bytes)?;
        }
        write(dir, "hornschunck_v.f32", &s.flow.1, f32_bytes)?;
        let h: Vec<u8> = s
            .histogram(&dev)?
            .iter()
            .flat_map(|c| c.to_le_bytes())
            .collect();
        std::fs::write(dir.join("histogram.u64"), h)?;
    }
    let names: Vec<&str> = WORKLOADS
        .iter()
        .map(|w| w.name)
        .chain(["histogram"])
        .filter(|n| a.only.as_deref().is_none_or(|o| o == *n))
        .collect();
    if names.is_empty() {
        bail!("--only: no such workload");
    }
    let call = |name: &str| -> Result<()> {
        if name == "histogram" {
            std::hint::black_box(s.histogram(&dev)?);
        } else {
            s.run(name, &dev)?;
        }
        Ok(())
    };
    let mut times: Vec<Vec<f64>> = vec![Vec::new(); names.len()];
    for _ in 0..a.rounds {
        for (i, name) in names.iter().enumerate() {
            call(name)?;
            for _ in 0..a.runs {
                let t = Instant::now();
                call(name)?;
                times[i].push(t.elapsed().as_secs_f64() * 1e3);
            }
        }
    }
    if !a.json {
        println!("| workload | ms |");
        println!("|---|---:|");
    }
    for (name, t) in names.iter().zip(times) {
        let samples: Vec<String> = t.iter().map(|v| format!("{v:.4}")).collect();
        let ms = median(t);
        if a.json {
            println!(
                "{{\"workload\":\"{name}\",\"size\":{SIZE},\"ms\":{ms:.4},\"samples_ms\":[{}]}}",
                samples.join(",")
            );
        } else {
            println!("| {name} | {ms:.2} |");
        }
    }
    Ok(())
}
