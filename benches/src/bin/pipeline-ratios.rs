//! `pipeline-ratios`: the pipelines of [`hipacc_benches::pipelines`] on
//! 2048x2048 f32, each run as one fused [`hipacc::Pipeline`] and kernel by
//! kernel, timed alternately; prints medians and their ratio.
//!
//! ```text
//! cargo run --release -p hipacc-benches --bin pipeline-ratios [-- --rounds N] [--dump DIR] [--json]
//! ```
//!
//! Both ways are first checked equal, bit for bit. `--dump DIR` writes the
//! input and both outputs as raw little-endian f32 (`input.f32`,
//! `unsharp.f32`, `harris.f32`) for a peer to compare with; `--json`
//! prints one line per pipeline instead of the table.

use anyhow::{bail, Context, Result};
use hipacc::{Device, Image};
use hipacc_benches::pipelines::PipelineRun;
use hipacc_benches::workload::SIZE;
use std::path::PathBuf;
use std::time::Instant;

/// Fewest rounds accepted.
const MIN_ROUNDS: usize = 5;

struct Args {
    rounds: usize,
    dump: Option<PathBuf>,
    json: bool,
}

fn main() {
    if let Err(e) = run() {
        eprintln!("pipeline-ratios: error: {e:#}");
        std::process::exit(1);
    }
}

fn args() -> Result<Args> {
    let mut a = Args {
        rounds: 21,
        dump: None,
        json: false,
    };
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        match flag.as_str() {
            "--rounds" => {
                let n = it.next().context("--rounds needs a value")?;
                a.rounds = n.parse().with_context(|| format!("--rounds {n}"))?;
                if a.rounds < MIN_ROUNDS {
                    bail!("--rounds {n}: at least {MIN_ROUNDS} rounds are needed for a median");
                }
            }
            "--dump" => a.dump = Some(it.next().context("--dump needs a directory")?.into()),
            "--json" => a.json = true,
            _ => bail!("usage: pipeline-ratios [--rounds N] [--dump DIR] [--json]"),
        }
    }
    Ok(a)
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// Fills `img` with NaN, so that a run that writes nothing shows.
fn poison(img: &Image<f32>) -> Result<()> {
    Ok(img.copy_from_slice(&vec![f32::NAN; img.width() * img.height()])?)
}

fn write_f32(path: PathBuf, img: &Image<f32>) -> Result<()> {
    let bytes: Vec<u8> = img.to_vec()?.iter().flat_map(|v| v.to_le_bytes()).collect();
    std::fs::write(&path, bytes).with_context(|| path.display().to_string())
}

fn run() -> Result<()> {
    let a = args()?;
    let dev = Device::cpu();
    let p = PipelineRun::new(SIZE, SIZE)?;
    type Step = fn(&PipelineRun, &Device, bool) -> hipacc::Result<()>;
    let pipelines: [(&str, Step, &Image<f32>); 2] = [
        ("unsharp", PipelineRun::unsharp, &p.sharpened),
        ("harris", PipelineRun::harris, &p.response),
    ];
    for (name, step, out) in &pipelines {
        poison(out)?;
        step(&p, &dev, true)?;
        let fused = out.to_vec()?;
        poison(out)?;
        step(&p, &dev, false)?;
        let unfused = out.to_vec()?;
        if fused
            .iter()
            .zip(&unfused)
            .any(|(x, y)| x.to_bits() != y.to_bits())
        {
            bail!("{name}: the fused and unfused outputs differ");
        }
        if let Some(dir) = &a.dump {
            std::fs::create_dir_all(dir).with_context(|| dir.display().to_string())?;
            write_f32(dir.join(format!("{name}.f32")), out)?;
            write_f32(dir.join("input.f32"), &p.input)?;
        }
    }
    if !a.json {
        println!("| pipeline | fused ms | kernel by kernel ms | ratio |");
        println!("|---|---:|---:|---:|");
    }
    for (name, step, _) in &pipelines {
        let mut times = [Vec::new(), Vec::new()];
        for r in 0..a.rounds {
            for i in 0..2 {
                let fused = (i + r) % 2 == 0;
                let t = Instant::now();
                step(&p, &dev, fused)?;
                times[usize::from(!fused)].push(t.elapsed().as_secs_f64() * 1e3);
            }
        }
        let [fused, unfused] = times.map(median);
        if a.json {
            println!(
                "{{\"pipeline\":\"{name}\",\"size\":{SIZE},\"fused_ms\":{fused:.4},\"unfused_ms\":{unfused:.4}}}"
            );
        } else {
            println!(
                "| {name} | {fused:.2} | {unfused:.2} | {:.2} |",
                fused / unfused
            );
        }
    }
    Ok(())
}
