//! `pyramid`: builds the Burt-Adelson Gaussian and Laplacian pyramids of an
//! image and reconstructs its finest level from the Laplacian pyramid.
//!
//! ```text
//! pyramid (IN | --size N) [--levels L] [--backend cpu|opencl|cuda|auto]
//!         [--runs R] [--dot FILE] [--timings] [--json]
//! ```
//!
//! IN is any image the `image` crate reads (or PFM), as luminance in
//! `[0, 1]`; `--size N` uses a generated N x N test image instead. The
//! pyramid (see `hipacc_examples::pyramid`) is described once for any depth.
//! After one warm-up run, decomposition plus reconstruction runs R times
//! (default 5) and the median is reported. `--timings` prints the
//! per-kernel, per-level table of the last run, `--dot FILE` writes its
//! control flow as Graphviz DOT, and `--json` prints one object with `size`,
//! `levels`, `kernel_launches`, `max_reconstruction_error`, `ms`,
//! `ms_decompose`, `ms_reconstruct` and `backend`.

use anyhow::{bail, Context, Result};
use clap::Parser;
use hipacc::core::io;
use hipacc::{max_depth, Device, Image, Trace};
use hipacc_examples::pyramid::{test_image, BurtAdelson};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

/// The largest generated image side accepted.
const MAX_SIZE: usize = 32768;

/// Gaussian/Laplacian pyramid decomposition and reconstruction.
#[derive(Parser, Debug)]
#[command(
    name = "pyramid",
    override_usage = "pyramid (IN | --size N) [--levels L] [--backend B] [--runs R] [--dot FILE] [--timings] [--json]"
)]
struct Args {
    /// Input image (omit with --size).
    input: Option<PathBuf>,
    /// Use a generated N x N test image.
    #[arg(long, value_name = "N")]
    size: Option<usize>,
    /// Pyramid levels (default: down to 1x1).
    #[arg(long, value_name = "L")]
    levels: Option<usize>,
    /// cpu, opencl, cuda or auto.
    #[arg(long, default_value = "auto", value_name = "B")]
    backend: String,
    /// Timed runs after the warm-up.
    #[arg(long, default_value_t = 5, value_name = "R")]
    runs: usize,
    /// Write the schedule of the last run as Graphviz DOT.
    #[arg(long, value_name = "FILE")]
    dot: Option<PathBuf>,
    /// Print the per-kernel, per-level timing table.
    #[arg(long)]
    timings: bool,
    /// Print the results as one JSON object.
    #[arg(long)]
    json: bool,
}

fn main() -> ExitCode {
    match run(Args::parse()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("pyramid: {e:#}");
            ExitCode::FAILURE
        }
    }
}

fn run(args: Args) -> Result<()> {
    let input = match (&args.input, args.size) {
        (Some(_), Some(_)) => bail!("give either an input image or --size, not both"),
        (None, None) => bail!("give an input image or --size N"),
        (Some(path), None) => {
            io::load_luminance(path).with_context(|| format!("cannot read {}", path.display()))?
        }
        (None, Some(n)) => {
            if n == 0 || n > MAX_SIZE {
                bail!("--size must be 1 to {MAX_SIZE}, not {n}");
            }
            test_image(n)?
        }
    };
    if args.runs == 0 {
        bail!("--runs must be at least 1");
    }
    let levels = args
        .levels
        .unwrap_or_else(|| max_depth(input.width(), input.height()));
    let dev = Device::from_name(&args.backend).context("cannot open the backend")?;
    let work = BurtAdelson::new(&input, levels).context("cannot build the pyramids")?;

    let mut last = None;
    let mut times = Vec::new();
    for i in 0..=args.runs {
        let t0 = Instant::now();
        let down = work.decompose(&dev)?;
        dev.synchronize()?;
        let t1 = Instant::now();
        let up = work.reconstruct(&dev)?;
        dev.synchronize()?;
        let t2 = Instant::now();
        if i > 0 {
            times.push(((t1 - t0).as_secs_f64() * 1e3, (t2 - t1).as_secs_f64() * 1e3));
        }
        last = Some((down, up));
    }
    let Some((down, up)) = last else {
        unreachable!("bug: at least one run")
    };
    let mut trace = down;
    trace.append(up);
    let error = work.max_reconstruction_error()?;
    let median = |f: &dyn Fn(&(f64, f64)) -> f64| {
        let mut v: Vec<f64> = times.iter().map(f).collect();
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    let (ms, ms_down, ms_up) = (median(&|t| t.0 + t.1), median(&|t| t.0), median(&|t| t.1));

    if let Some(path) = &args.dot {
        write_atomically(path, &trace.to_dot())?;
    }
    if args.timings {
        print!("{}", trace.timing_table());
    }
    report(
        &args,
        &input,
        levels,
        &trace,
        error,
        (ms, ms_down, ms_up),
        &dev,
    );
    Ok(())
}

fn report(
    args: &Args,
    input: &Image<f32>,
    levels: usize,
    trace: &Trace,
    error: f32,
    (ms, ms_down, ms_up): (f64, f64, f64),
    dev: &Device,
) {
    let size = if input.width() == input.height() {
        input.width().to_string()
    } else {
        format!("\"{}x{}\"", input.width(), input.height())
    };
    if args.json {
        println!(
            "{{\"size\": {size}, \"levels\": {levels}, \"kernel_launches\": {}, \
             \"max_reconstruction_error\": {error:e}, \"ms\": {ms:.3}, \
             \"ms_decompose\": {ms_down:.3}, \"ms_reconstruct\": {ms_up:.3}, \
             \"backend\": \"{}\"}}",
            trace.kernel_launches(),
            dev.kind().name()
        );
    } else {
        println!(
            "{}x{}, {levels} levels on {}: {} launches, {ms:.2} ms median \
             ({ms_down:.2} decompose + {ms_up:.2} reconstruct), max reconstruction error {error:e}",
            input.width(),
            input.height(),
            dev.name(),
            trace.kernel_launches()
        );
    }
}

/// Writes `text` to a temporary file beside `path`, then renames it.
fn write_atomically(path: &PathBuf, text: &str) -> Result<()> {
    let tmp = path.with_extension("dot.tmp");
    std::fs::write(&tmp, text).with_context(|| format!("cannot write {}", tmp.display()))?;
    std::fs::rename(&tmp, path).with_context(|| format!("cannot write {}", path.display()))
}
