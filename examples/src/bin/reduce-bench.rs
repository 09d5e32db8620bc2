//! `reduce-bench`: times a global sum of a `f32` image that lives on a GPU
//! device, reduced on the device vs read back and summed on the host.
//!
//! ```text
//! reduce-bench [--size N] [--runs R] [--backend opencl|cuda|wgpu]
//! ```
//!
//! (`wgpu` needs the `wgpu` feature of `hipacc-examples`.)
//!
//! The image (N x N, default 4096) is written on the device by a copy
//! kernel before every run, outside the timed part; each line gives the
//! median of R runs (default 9) after one warm-up run.

use anyhow::{bail, Result};
use clap::Parser;
use hipacc::prelude::*;
use hipacc::{reduce, Device};
use std::time::Instant;

/// Times a device sum against read-back + host sum.
#[derive(Parser, Debug)]
struct Args {
    /// Image side in pixels.
    #[arg(long, default_value_t = 4096)]
    size: usize,
    /// Timed runs per variant.
    #[arg(long, default_value_t = 9)]
    runs: usize,
    /// The GPU backend.
    #[arg(long, default_value = "opencl")]
    backend: String,
}

#[derive(Kernel)]
#[kernel(output = f32)]
struct Copy {
    input: Accessor<f32>,
}

#[kernel_body]
impl Copy {
    fn kernel(&self) -> f32 {
        self.input()
    }
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() -> Result<()> {
    let args = Args::parse();
    let dev = Device::from_name(&args.backend)?;
    if args.runs == 0 {
        bail!("--runs must be at least 1");
    }
    let n = args.size;
    let src = Image::from_fn(n, n, |x, y| ((x * 7 + y * 13) % 1000) as f32 * 1e-3)?;
    let img = Image::<f32>::new(n, n)?;
    let refresh = || -> Result<()> {
        Copy {
            input: Accessor::new(&src),
        }
        .execute(&dev, &IterationSpace::full(&img))?;
        dev.synchronize()?;
        Ok(())
    };
    let cpu = Device::cpu();
    let mut device = Vec::new();
    let mut host = Vec::new();
    let (mut a, mut b) = (0.0, 0.0);
    for run in 0..=args.runs {
        refresh()?;
        let t = Instant::now();
        a = reduce::sum(&dev, &img, None)?;
        let d = t.elapsed().as_secs_f64() * 1e3;
        refresh()?;
        let t = Instant::now();
        img.read()?;
        b = reduce::sum(&cpu, &img, None)?;
        let h = t.elapsed().as_secs_f64() * 1e3;
        if run > 0 {
            device.push(d);
            host.push(h);
        }
    }
    println!("{} {n}x{n} f32, median of {} runs", dev.name(), args.runs);
    println!("device sum:             {:8.2} ms  ({a})", median(device));
    println!("read-back + host sum:   {:8.2} ms  ({b})", median(host));
    Ok(())
}
