//! `gpu-pipelines`: small pipelines on each GPU-style backend present
//! (OpenCL, CUDA, and wgpu with the `wgpu` feature), run as one
//! [`Pipeline`] and kernel by kernel, with the median wall time of each
//! (device synchronised), their ratio, how many intermediates the
//! pipeline folded (never wrote), and the median host time of each: the
//! calling thread's CPU time until the launches are queued, which is what
//! a small image's pipeline waits on. This is the measurement behind the
//! architecture model's `recompute_reads_per_access`: on a GPU, a fold the
//! model accepts should beat the launches, and one it refuses should not
//! have.
//!
//! ```text
//! cargo run --release -p hipacc-benches --bin gpu-pipelines [-- --size N --runs N]
//! cargo run --release -p hipacc-benches --features wgpu --bin gpu-pipelines
//! ```
//!
//! A device that runs on the CPU (PoCL, Mesa's lavapipe under wgpu) is
//! asked for device launches (`HIPACC_PIPELINE=launches`) and marked: its
//! figures check the code path, not GPU speed.

use anyhow::{bail, Result};
use hipacc::pipeline::{Pipeline, PIPELINE_ENV};
use hipacc::prelude::*;
use hipacc_benches::gpu::{self, devices};
use std::time::Instant;

/// `v² a + v - 0.25`, point-wise.
#[derive(Kernel)]
#[kernel(output = f32)]
struct Poly {
    input: Accessor<f32>,
    a: f32,
}

#[kernel_body]
impl Poly {
    fn kernel(&self) -> f32 {
        let v = self.input();
        v * v * self.a + v - 0.25
    }
}

/// A 3x3 box mean.
#[derive(Kernel)]
#[kernel(output = f32)]
struct Blur {
    input: Accessor<f32>,
    window: Domain,
}

#[kernel_body]
impl Blur {
    fn kernel(&self) -> f32 {
        reduce(&self.window, Sum, |dx, dy| self.input.at(dx, dy)) * (1.0 / 9.0)
    }
}

/// The input pushed away from a second image.
#[derive(Kernel)]
#[kernel(output = f32)]
struct Sharpen {
    input: Accessor<f32>,
    blurred: Accessor<f32>,
}

#[kernel_body]
impl Sharpen {
    fn kernel(&self) -> f32 {
        self.input() + 0.5 * (self.input() - self.blurred())
    }
}

/// A central difference in x.
#[derive(Kernel)]
#[kernel(output = f32)]
struct Gradient {
    input: Accessor<f32>,
}

#[kernel_body]
impl Gradient {
    fn kernel(&self) -> f32 {
        (self.input.at(1, 0) - self.input.at(-1, 0)) * 0.5
    }
}

fn main() {
    if let Err(e) = run() {
        eprintln!("gpu-pipelines: error: {e:#}");
        std::process::exit(1);
    }
}

/// `--size N` (default 2048) and `--runs N` (default 11).
fn args() -> Result<(usize, usize)> {
    gpu::size_and_runs(2048, 11)
}

/// What one pipeline's timing found.
struct Row {
    name: &'static str,
    launches_ms: f64,
    pipeline_ms: f64,
    /// Median host time of the launches, µs ([`gpu::thread_cpu_ms`]).
    launches_host_us: f64,
    /// Median host time of the pipeline, µs.
    pipeline_host_us: f64,
    folded: usize,
    intermediates: usize,
    max_diff: f32,
}

fn run() -> Result<()> {
    let (size, runs) = args()?;
    let mut any = false;
    println!(
        "{:<10} {:<34} {:>12} {:>12} {:>7} {:>8} {:>10} {:>19}",
        "device",
        "pipeline",
        "launches ms",
        "pipeline ms",
        "ratio",
        "folded",
        "max diff",
        "host µs (l / p)"
    );
    for (name, device) in devices() {
        let device = match device {
            Ok(d) => d,
            Err(e) => {
                println!("[SKIP] {name}: {e}");
                continue;
            }
        };
        any = true;
        let on_cpu = !device.is_gpu();
        if on_cpu {
            // As a GPU runs them: device launches, folded by the model.
            std::env::set_var(PIPELINE_ENV, "launches");
        }
        for row in pipelines(&device, size, runs)? {
            println!(
                "{:<10} {:<34} {:>12.3} {:>12.3} {:>7.2} {:>8} {:>10.1e} {:>19}{}",
                name,
                row.name,
                row.launches_ms,
                row.pipeline_ms,
                row.pipeline_ms / row.launches_ms,
                format!("{} of {}", row.folded, row.intermediates),
                row.max_diff,
                format!("{:.1} / {:.1}", row.launches_host_us, row.pipeline_host_us),
                if on_cpu {
                    "  (CPU device: code path only)"
                } else {
                    ""
                }
            );
        }
    }
    if !any {
        bail!("no GPU-style device found (OpenCL, CUDA, or wgpu with the `wgpu` feature)");
    }
    Ok(())
}

/// A fresh image marked so that a write shows.
fn marked(size: usize) -> Result<Image<f32>> {
    Ok(Image::from_vec(size, size, vec![f32::NAN; size * size])?)
}

fn written(img: &Image<f32>) -> Result<bool> {
    Ok(img.to_vec()?.iter().any(|v| !v.is_nan()))
}

/// Times `pipeline` and `launches` (both ending in `out`) alternately,
/// after a first run of each that checks which of `intermediates` the
/// pipeline wrote and how far its output is from the launches'.
fn time(
    name: &'static str,
    device: &Device,
    runs: usize,
    (out, intermediates): (&Image<f32>, &[&Image<f32>]),
    pipeline: &dyn Fn() -> hipacc::Result<()>,
    launches: &dyn Fn() -> hipacc::Result<()>,
) -> Result<Row> {
    pipeline()?;
    device.synchronize()?;
    let mut folded = 0;
    for img in intermediates {
        folded += usize::from(!written(img)?);
    }
    let fused = out.to_vec()?;
    launches()?;
    device.synchronize()?;
    let max_diff = fused
        .iter()
        .zip(out.to_vec()?)
        .map(|(a, b)| (a - b).abs() / b.abs().max(1.0))
        .fold(0.0f32, f32::max);
    let (mut p, mut l, mut ph, mut lh) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for _ in 0..runs {
        for (f, times, host) in [(pipeline, &mut p, &mut ph), (launches, &mut l, &mut lh)] {
            let t = Instant::now();
            let cpu = gpu::thread_cpu_ms();
            f()?;
            host.push((gpu::thread_cpu_ms() - cpu) * 1e3);
            device.synchronize()?;
            times.push(t.elapsed().as_secs_f64() * 1e3);
        }
    }
    Ok(Row {
        name,
        launches_ms: median(l),
        pipeline_ms: median(p),
        launches_host_us: median(lh),
        pipeline_host_us: median(ph),
        folded,
        intermediates: intermediates.len(),
        max_diff,
    })
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn pipelines(device: &Device, size: usize, runs: usize) -> Result<Vec<Row>> {
    let input = Image::from_fn(size, size, |x, y| ((x * 7 + y * 13) % 23) as f32 * 0.125)?;
    let full = IterationSpace::full;
    let window = || Domain::new(3, 3);
    let mut rows = Vec::new();

    // Read at the reader's own pixel: folded on every device.
    let (m1, out) = (marked(size)?, marked(size)?);
    let poly = Poly {
        input: Accessor::new(&input),
        a: 0.375,
    };
    let sharpen = Sharpen {
        input: Accessor::new(&input),
        blurred: Accessor::new(&m1),
    };
    let (s1, so) = (full(&m1), full(&out));
    rows.push(time(
        "poly > sharpen (point-wise)",
        device,
        runs,
        (&out, &[&m1]),
        &|| {
            let p = Pipeline::new().stage(&poly, &s1).stage(&sharpen, &so);
            p.execute(device)
        },
        &|| {
            poly.execute(device, &s1)?;
            sharpen.execute(device, &so)
        },
    )?);

    // Read through a 3x3 window: recomputed where the model allows.
    let (m1, out) = (marked(size)?, marked(size)?);
    let blur = Blur {
        input: Accessor::new(&m1).with_boundary(Boundary::Mirror),
        window: window()?,
    };
    let (s1, so) = (full(&m1), full(&out));
    rows.push(time(
        "poly > blur3 (window)",
        device,
        runs,
        (&out, &[&m1]),
        &|| {
            let p = Pipeline::new().stage(&poly, &s1).stage(&blur, &so);
            p.execute(device)
        },
        &|| {
            poly.execute(device, &s1)?;
            blur.execute(device, &so)
        },
    )?);

    // Offsets, a point-wise fold, then a window over the merged kernel.
    let (m1, m2, m3, out) = (marked(size)?, marked(size)?, marked(size)?, marked(size)?);
    let gradient = Gradient {
        input: Accessor::new(&m1).with_boundary(Boundary::Clamp),
    };
    let poly2 = Poly {
        input: Accessor::new(&m2),
        a: -0.5,
    };
    let blur = Blur {
        input: Accessor::new(&m3).with_boundary(Boundary::Mirror),
        window: window()?,
    };
    let s: Vec<IterationSpace<f32>> = [&m1, &m2, &m3, &out].into_iter().map(full).collect();
    rows.push(time(
        "poly > grad > poly > blur3 (chain)",
        device,
        runs,
        (&out, &[&m1, &m2, &m3]),
        &|| {
            let p = Pipeline::new()
                .stage(&poly, &s[0])
                .stage(&gradient, &s[1])
                .stage(&poly2, &s[2])
                .stage(&blur, &s[3]);
            p.execute(device)
        },
        &|| {
            poly.execute(device, &s[0])?;
            gradient.execute(device, &s[1])?;
            poly2.execute(device, &s[2])?;
            blur.execute(device, &s[3])
        },
    )?);

    // A window over a window: past every model but the largest ratio.
    let (m1, out) = (marked(size)?, marked(size)?);
    let first = Blur {
        input: Accessor::new(&input).with_boundary(Boundary::Mirror),
        window: window()?,
    };
    let second = Blur {
        input: Accessor::new(&m1).with_boundary(Boundary::Mirror),
        window: window()?,
    };
    let (s1, so) = (full(&m1), full(&out));
    rows.push(time(
        "blur3 > blur3 (window of a window)",
        device,
        runs,
        (&out, &[&m1]),
        &|| {
            let p = Pipeline::new().stage(&first, &s1).stage(&second, &so);
            p.execute(device)
        },
        &|| {
            first.execute(device, &s1)?;
            second.execute(device, &so)
        },
    )?);
    Ok(rows)
}
