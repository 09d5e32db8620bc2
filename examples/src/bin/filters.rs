//! `filters`: applies one image filter, written as a hipacc kernel.
//!
//! ```text
//! filters <gaussian5|box|sobel|laplace|bilateral>
//!         --boundary <clamp|repeat|mirror|mirror-interior|undefined|constant:V>
//!         [--size N] [--backend cpu|opencl|cuda|auto] (IN | --demo) OUT
//! filters [FILTER] [--boundary B] [--size N] --emit DIR [--target NAME|all|list]
//! ```
//!
//! IN is any image the `image` crate reads (or PFM), converted to luminance
//! in `[0, 1]`. With `--demo` there is no IN: a built-in 512x512 test image
//! is filtered instead. OUT's extension chooses the format: `.exr` (32-bit
//! float, exact), `.png` (16-bit gray, clamped to `[0, 1]`) or `.pfm`.
//! The filters are defined in `hipacc_examples::filters`.
//!
//! `--emit DIR` runs nothing and needs no device: it writes the OpenCL and
//! CUDA sources of the kernel FILTER runs with the boundary B (default
//! `clamp`), or of every filter when FILTER is omitted, as the architecture
//! model chooses them for the target NAME (default: every target), to
//! `DIR/<target>/<kernel>__<variant>.<cl|cu>`. `--target list` prints the
//! target names.
//!
//! Every error is one line on stderr and a non-zero exit; OUT is written
//! only when everything succeeded.

use anyhow::{bail, Context, Result};
use clap::Parser;
use hipacc::codegen::{dump, Target};
use hipacc::core::io;
use hipacc::core::Image;
use hipacc::Device;
use hipacc_examples::filters::{check_finite, demo_image, parse_boundary, Filter, FILTER_NAMES};
use hipacc_examples::hdr::input;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// Side of the built-in `--demo` image.
const DEMO_SIZE: usize = 512;

/// Applies an image filter written as a hipacc kernel.
#[derive(Parser, Debug)]
#[command(
    name = "filters",
    override_usage = "filters <FILTER> --boundary <BOUNDARY> [--size N] [--backend B] (IN | --demo) OUT\n       \
                      filters [FILTER] [--boundary B] [--size N] --emit DIR [--target NAME|all|list]",
    after_help = "Filters: gaussian5 (5x5 binomial), box (N x N mean, N odd, default 3), \
                  sobel (gradient magnitude), laplace (5-point), bilateral (5x5, sigma_s 2, \
                  sigma_r 0.1).\nOutput format by extension: .exr (32-bit float), .png \
                  (16-bit gray), .pfm (32-bit float)."
)]
struct Args {
    /// gaussian5, box, sobel, laplace or bilateral.
    filter: Option<String>,
    /// clamp, repeat, mirror, mirror-interior, undefined or constant:V.
    #[arg(long)]
    boundary: Option<String>,
    /// Window size of `box` (odd).
    #[arg(long, value_name = "N")]
    size: Option<usize>,
    /// cpu, opencl, cuda or auto.
    #[arg(long, default_value = "auto", value_name = "B")]
    backend: String,
    /// Filter a built-in 512x512 test image instead of reading IN.
    #[arg(long)]
    demo: bool,
    /// Write the generated OpenCL and CUDA sources to DIR and exit.
    #[arg(long, value_name = "DIR")]
    emit: Option<PathBuf>,
    /// With --emit: a target of the architecture model, `all` or `list`.
    #[arg(long, value_name = "NAME")]
    target: Option<String>,
    /// IN OUT, or only OUT with --demo.
    #[arg(value_name = "FILE", num_args = 1..=2)]
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
    if args.target.as_deref() == Some("list") {
        print!("{}", Target::list_text());
        return Ok(());
    }
    if let Some(dir) = &args.emit {
        return emit(&args, dir);
    }
    if args.target.is_some() {
        bail!("--target is only for --emit");
    }
    let Some(name) = &args.filter else {
        bail!("expected a filter ({})", FILTER_NAMES.join(", "));
    };
    let Some(boundary) = &args.boundary else {
        bail!("expected --boundary");
    };
    let filter = Filter::parse(name, args.size)?;
    let boundary = parse_boundary(boundary)?;
    let (input, output) = match (args.demo, args.files.as_slice()) {
        (false, [input, output]) => (Some(input), output),
        (true, [output]) => (None, output),
        (false, [_] | []) => bail!("expected IN and OUT (or --demo OUT)"),
        (true, _) => bail!("--demo takes only OUT, no IN"),
        _ => unreachable!("bug: clap allows one or two files"),
    };
    // Refuse an unknown output format before doing any work.
    io::OutputFormat::from_path(output)?;
    let device =
        Device::from_name(&args.backend).with_context(|| format!("--backend {}", args.backend))?;
    let image = match input {
        Some(path) => {
            let image = load_luminance(path)?;
            check_finite(&image).with_context(|| format!("{}", path.display()))?;
            image
        }
        None => demo_image(DEMO_SIZE, DEMO_SIZE)?,
    };
    let result = filter
        .apply(&image, boundary, &device)
        .with_context(|| format!("{} on {}", name, device.name()))?;
    io::save_luminance(&result, output)?;
    Ok(())
}

/// The luminance of the image at `path`. Radiance pictures go through the
/// HDR tool's tolerant reader: pictures from old tools put lines such as
/// `VIEW=` before the `#?RADIANCE` signature, which the generic loader
/// does not recognise.
fn load_luminance(path: &Path) -> Result<Image<f32>> {
    if input::kind_from_extension(path) != Some(input::InputKind::Radiance) {
        return Ok(io::load_luminance(path)?);
    }
    let rgba = input::load_hdr(path)?;
    let (w, h) = (rgba.width(), rgba.height());
    let pixels = rgba.to_vec()?;
    let luma = pixels.iter().map(|p| io::luma([p.r, p.g, p.b])).collect();
    Ok(Image::from_vec(w, h, luma)?)
}

/// `--emit DIR`: the sources of the kernels the filters run, per target.
fn emit(args: &Args, dir: &std::path::Path) -> Result<()> {
    if !args.files.is_empty() || args.demo {
        bail!("--emit writes sources only: no IN, OUT or --demo");
    }
    let boundary = parse_boundary(args.boundary.as_deref().unwrap_or("clamp"))?;
    let filters = match &args.filter {
        Some(name) => vec![Filter::parse(name, args.size)?],
        None => FILTER_NAMES
            .iter()
            .map(|name| Filter::parse(name, None))
            .collect::<Result<_>>()?,
    };
    let kernels = filters
        .iter()
        .map(|f| f.kernel_ir(boundary))
        .collect::<Result<Vec<_>>>()?;
    let targets = dump::targets_from_arg(args.target.as_deref())?;
    let files = dump::emit_offline(dir, &kernels, &targets, true)
        .with_context(|| format!("--emit {}", dir.display()))?;
    for f in &files {
        println!("{}", f.display());
    }
    Ok(())
}
