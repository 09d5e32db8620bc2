//! `filters`: applies one image filter, written as a hipacc kernel.
//!
//! ```text
//! filters <gaussian5|box|sobel|laplace|bilateral>
//!         --boundary <clamp|repeat|mirror|mirror-interior|undefined|constant:V>
//!         [--size N] [--backend cpu|opencl|cuda|auto] (IN | --demo) OUT
//! ```
//!
//! IN is any image the `image` crate reads (or PFM), converted to luminance
//! in `[0, 1]`. With `--demo` there is no IN: a built-in 512x512 test image
//! is filtered instead. OUT's extension chooses the format: `.exr` (32-bit
//! float, exact), `.png` (16-bit gray, clamped to `[0, 1]`) or `.pfm`.
//! The filters are defined in `hipacc_examples::filters`.
//!
//! Every error is one line on stderr and a non-zero exit; OUT is written
//! only when everything succeeded.

use anyhow::{bail, Context, Result};
use clap::Parser;
use hipacc::core::io;
use hipacc::Device;
use hipacc_examples::filters::{check_finite, demo_image, parse_boundary, Filter};
use std::path::PathBuf;
use std::process::ExitCode;

/// Side of the built-in `--demo` image.
const DEMO_SIZE: usize = 512;

/// Applies an image filter written as a hipacc kernel.
#[derive(Parser, Debug)]
#[command(
    name = "filters",
    override_usage = "filters <FILTER> --boundary <BOUNDARY> [--size N] [--backend B] (IN | --demo) OUT",
    after_help = "Filters: gaussian5 (5x5 binomial), box (N x N mean, N odd, default 3), \
                  sobel (gradient magnitude), laplace (5-point), bilateral (5x5, sigma_s 2, \
                  sigma_r 0.1).\nOutput format by extension: .exr (32-bit float), .png \
                  (16-bit gray), .pfm (32-bit float)."
)]
struct Args {
    /// gaussian5, box, sobel, laplace or bilateral.
    filter: String,
    /// clamp, repeat, mirror, mirror-interior, undefined or constant:V.
    #[arg(long)]
    boundary: String,
    /// Window size of `box` (odd).
    #[arg(long, value_name = "N")]
    size: Option<usize>,
    /// cpu, opencl, cuda or auto.
    #[arg(long, default_value = "auto", value_name = "B")]
    backend: String,
    /// Filter a built-in 512x512 test image instead of reading IN.
    #[arg(long)]
    demo: bool,
    /// IN OUT, or only OUT with --demo.
    #[arg(value_name = "FILE", num_args = 1..=2, required = true)]
    files: Vec<PathBuf>,
}

fn main() -> ExitCode {
    match run(Args::parse()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("filters: error: {e:#}");
            ExitCode::FAILURE
        }
    }
}

fn run(args: Args) -> Result<()> {
    let filter = Filter::parse(&args.filter, args.size)?;
    let boundary = parse_boundary(&args.boundary)?;
    let (input, output) = match (args.demo, args.files.as_slice()) {
        (false, [input, output]) => (Some(input), output),
        (true, [output]) => (None, output),
        (false, [_]) => bail!("expected IN and OUT (or --demo OUT)"),
        (true, _) => bail!("--demo takes only OUT, no IN"),
        _ => unreachable!("bug: clap allows one or two files"),
    };
    // Refuse an unknown output format before doing any work.
    io::OutputFormat::from_path(output)?;
    let device =
        Device::from_name(&args.backend).with_context(|| format!("--backend {}", args.backend))?;
    let image = match input {
        Some(path) => {
            let image = io::load_luminance(path)?;
            check_finite(&image).with_context(|| format!("{}", path.display()))?;
            image
        }
        None => demo_image(DEMO_SIZE, DEMO_SIZE)?,
    };
    let result = filter
        .apply(&image, boundary, &device)
        .with_context(|| format!("{} on {}", args.filter, device.name()))?;
    io::save_luminance(&result, output)?;
    Ok(())
}
