//! `hdr-compress`: gradient-domain compression of a high-dynamic-range
//! image (Fattal, Lischinski, Werman 2002) into a displayable one.
//!
//! ```text
//! hdr-compress [IN.hdr|IN.exr|IN.pfm] [-o OUT.png|.jpg|.exr] [--bits 8|16]
//!              [--quality Q] [--encoding gamma|srgb] [--alpha A] [--beta B]
//!              [--saturation S] [--noise N] [--detail-level D]
//!              [--black-point P] [--white-point P] [--gamma G]
//!              [--cycle v|w|f] [--tol T] [--backend B] [--timings]
//!              [--emit DIR] [--json]
//! ```
//!
//! Without IN it compresses a generated scene (dynamic range above 1e5:1)
//! and writes `hdr-compress-demo.png`; with IN the default output is
//! `IN`'s stem plus `.png` in the current directory. PNG and JPEG output is
//! display-encoded with a 1/2.2 power (`--encoding srgb` for the sRGB
//! curve), EXR output is linear. NaN, infinite and negative input values
//! are repaired with a one-line warning. `--json` prints one object with
//! `input`, `output`, `width`, `height`, `backend`, `levels`, `cycles`,
//! `residual`, `error_estimate`, `ms_total` and per-stage `ms` (`read`, `repair`, the
//! tone-mapping stages, `tonemap` their sum, `write`). `--before FILE`
//! also writes the input linearly scaled, for before/after comparisons.

use anyhow::{bail, Context, Result};
use clap::Parser;
use hipacc::multigrid::CycleKind;
use hipacc::{Device, Image};
use hipacc_examples::hdr::fattal::{self, Encoding, Params};
use hipacc_examples::hdr::{input, output, repair, scene};
use indicatif::{ProgressBar, ProgressStyle};
use std::io::IsTerminal;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

/// The demo scene's size.
const DEMO_SIZE: (usize, usize) = (768, 512);

/// Gradient-domain HDR compression.
#[derive(Parser, Debug)]
#[command(name = "hdr-compress")]
struct Args {
    /// Input (.hdr, .exr, .pfm); omit for the built-in demo scene.
    input: Option<PathBuf>,
    /// Output file; its extension chooses the format (.png, .jpg, .exr).
    #[arg(short, long, value_name = "FILE")]
    output: Option<PathBuf>,
    /// PNG bits per channel: 8 or 16.
    #[arg(long)]
    bits: Option<u32>,
    /// JPEG quality, 1 to 100.
    #[arg(long)]
    quality: Option<u32>,
    /// Display encoding of PNG/JPEG output: gamma (1/2.2 power) or srgb.
    #[arg(long, default_value = "gamma", value_parser = ["gamma", "srgb"])]
    encoding: String,
    /// Gradient threshold, times the level's mean gradient.
    #[arg(long, default_value_t = 1.0)]
    alpha: f32,
    /// Attenuation exponent.
    #[arg(long, default_value_t = 0.9)]
    beta: f32,
    /// Colour saturation.
    #[arg(long, default_value_t = 0.8)]
    saturation: f32,
    /// Gradient magnitude treated as noise.
    #[arg(long, default_value_t = 0.002)]
    noise: f32,
    /// Finest pyramid levels left unattenuated.
    #[arg(long, default_value_t = 3)]
    detail_level: usize,
    /// Percentage of pixels mapped to black.
    #[arg(long, default_value_t = 0.1)]
    black_point: f32,
    /// Percentage of pixels mapped to white.
    #[arg(long, default_value_t = 0.5)]
    white_point: f32,
    /// Luminance gamma after compression.
    #[arg(long, default_value_t = 0.8)]
    gamma: f32,
    /// Multigrid cycle: v, w or f.
    #[arg(long, default_value = "v")]
    cycle: CycleKind,
    /// Largest error of the solved log-luminance the Poisson solve stops at,
    /// estimated from the corrections of its cycles (2e-3 keeps 8-bit output
    /// within a third of a level of the exact solve).
    #[arg(long, default_value_t = fattal::DEFAULT_TOL)]
    tol: f64,
    /// cpu, opencl, cuda or auto.
    #[arg(long, default_value = "cpu", value_name = "B")]
    backend: String,
    /// Print the time of each stage.
    #[arg(long)]
    timings: bool,
    /// Write the generated OpenCL and CUDA sources of every kernel to DIR.
    #[arg(long, value_name = "DIR")]
    emit: Option<PathBuf>,
    /// Also write the input linearly scaled (its 99th luminance percentile
    /// to white, display-encoded like the output) to FILE: the "before"
    /// of a before/after pair.
    #[arg(long, value_name = "FILE")]
    before: Option<PathBuf>,
    /// Print the results as one JSON object.
    #[arg(long)]
    json: bool,
}

fn main() -> ExitCode {
    match run(Args::parse()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("hdr-compress: {e:#}");
            ExitCode::FAILURE
        }
    }
}

fn params(args: &Args) -> Result<Params> {
    let positive = [
        ("--alpha", args.alpha),
        ("--beta", args.beta),
        ("--gamma", args.gamma),
    ];
    for (name, v) in positive {
        if !(v > 0.0 && v.is_finite()) {
            bail!("{name} must be positive, got {v}");
        }
    }
    if !(args.saturation >= 0.0 && args.saturation.is_finite()) {
        bail!("--saturation must be at least 0, got {}", args.saturation);
    }
    if !(args.noise >= 0.0 && args.noise.is_finite()) {
        bail!("--noise must be at least 0, got {}", args.noise);
    }
    let (b, w) = (args.black_point, args.white_point);
    if !(b >= 0.0 && w >= 0.0 && b + w < 100.0) {
        bail!(
            "--black-point and --white-point are percentages with a sum below 100, got {b} and {w}"
        );
    }
    if !(args.tol > 0.0 && args.tol < 1.0) {
        bail!("--tol must be in (0, 1), got {}", args.tol);
    }
    Ok(Params {
        alpha: args.alpha,
        beta: args.beta,
        saturation: args.saturation,
        noise: args.noise,
        detail_level: args.detail_level,
        black_point: b,
        white_point: w,
        gamma: args.gamma,
        cycle: args.cycle,
        tol: args.tol,
        ..Params::default()
    })
}

fn run(args: Args) -> Result<()> {
    let t_start = Instant::now();
    let params = params(&args)?;
    if let Some(dir) = &args.emit {
        if args.input.is_some() || args.output.is_some() || args.before.is_some() {
            bail!("--emit writes kernel sources only: give no input, -o or --before");
        }
        return emit(dir, &params);
    }
    let out_path = match (&args.output, &args.input) {
        (Some(o), _) => o.clone(),
        (None, None) => PathBuf::from("hdr-compress-demo.png"),
        (None, Some(i)) => {
            let stem = i.file_stem().context("the input path has no file name")?;
            PathBuf::from(stem).with_extension("png")
        }
    };
    let kind = output::prepare(&out_path, args.bits, args.quality)?;
    let before_kind = match &args.before {
        Some(p) => Some(output::prepare(p, None, None)?),
        None => None,
    };
    let encoding = match (kind, args.encoding.as_str()) {
        (output::OutputKind::Exr, _) => Encoding::Linear,
        (_, "srgb") => Encoding::Srgb,
        _ => Encoding::Gamma(2.2),
    };
    let dev = Device::from_name(&args.backend)?;

    let t0 = Instant::now();
    let image = match &args.input {
        Some(path) => input::load_hdr_with(path, |w| eprintln!("hdr-compress: warning: {w}"))?,
        None => scene::demo_scene(DEMO_SIZE.0, DEMO_SIZE.1)?,
    };
    let ms_read = t0.elapsed().as_secs_f64() * 1e3;

    let t0 = Instant::now();
    let fixed = repair::repair(&image)?;
    if !fixed.is_clean() {
        eprintln!("hdr-compress: warning: {fixed}");
    }
    refuse_without_light(&image)?;
    let ms_repair = t0.elapsed().as_secs_f64() * 1e3;

    let bar = progress_bar();
    let tick = |stage: &str| {
        if let Some(b) = &bar {
            b.set_message(stage.to_string());
            b.inc(1);
        }
    };
    let (result, report) = fattal::tone_map(&dev, &image, &params, encoding, &tick)?;
    if let Some(b) = &bar {
        b.finish_and_clear();
    }
    let ms_tonemap: f64 = report.ms.iter().map(|(_, m)| m).sum();
    if !report.converged {
        eprintln!(
            "hdr-compress: warning: the Poisson solve stopped after {} cycles with an \
             estimated error of {:.1e} in log luminance, above --tol {:.1e}",
            report.cycles, report.error_estimate, params.tol
        );
    }

    if let (Some(path), Some(k)) = (&args.before, before_kind) {
        output::save(&linear_preview(&image)?, path, k)?;
    }
    let t0 = Instant::now();
    output::save(&result, &out_path, kind)?;
    let ms_write = t0.elapsed().as_secs_f64() * 1e3;
    let ms_total = t_start.elapsed().as_secs_f64() * 1e3;

    if args.timings {
        eprintln!("{:<12} {:>9}", "stage", "ms");
        eprintln!("{:<12} {ms_read:>9.2}", "read");
        eprintln!("{:<12} {ms_repair:>9.2}", "repair");
        for (name, ms) in &report.ms {
            eprintln!("{name:<12} {ms:>9.2}");
        }
        eprintln!("{:<12} {ms_tonemap:>9.2}", "(tonemap)");
        eprintln!("{:<12} {ms_write:>9.2}", "write");
        eprintln!("{:<12} {ms_total:>9.2}", "total");
    }
    if args.json {
        let mut ms = serde_json::Map::new();
        ms.insert("read".into(), ms_read.into());
        ms.insert("repair".into(), ms_repair.into());
        for (name, v) in &report.ms {
            ms.insert((*name).into(), (*v).into());
        }
        ms.insert("tonemap".into(), ms_tonemap.into());
        ms.insert("write".into(), ms_write.into());
        let json = serde_json::json!({
            "input": args.input.as_ref().map_or("demo scene".to_string(), |p| p.display().to_string()),
            "output": out_path.display().to_string(),
            "width": image.width(),
            "height": image.height(),
            "backend": dev.name(),
            "levels": report.levels,
            "cycles": report.cycles,
            "residual": report.residual,
            "error_estimate": report.error_estimate,
            "ms_total": ms_total,
            "ms": ms,
        });
        println!("{json}");
    } else {
        // Like `--emit`, name each file written, so that a run without
        // `-o` says where its output went.
        for path in args.before.iter().chain([&out_path]) {
            println!("{}", path.display());
        }
    }
    Ok(())
}

/// `input` scaled so that its 99th luminance percentile is white, clamped
/// and display-encoded with a 1/2.2 power.
fn linear_preview(
    input: &Image<hipacc::core::Rgba<f32>>,
) -> Result<Image<hipacc::core::Rgba<f32>>> {
    let pixels = input.to_vec()?;
    let mut lum: Vec<f32> = pixels
        .iter()
        .map(|p| 0.2126 * p.r + 0.7152 * p.g + 0.0722 * p.b)
        .collect();
    let k = (lum.len() * 99 / 100).min(lum.len() - 1);
    let (_, p99, _) = lum.select_nth_unstable_by(k, f32::total_cmp);
    let scale = if *p99 > 0.0 { 1.0 / *p99 } else { 1.0 };
    let enc = |c: f32| (c * scale).clamp(0.0, 1.0).powf(1.0 / 2.2);
    let out: Vec<_> = pixels
        .iter()
        .map(|p| hipacc::core::Rgba::new(enc(p.r), enc(p.g), enc(p.b), 1.0))
        .collect();
    Ok(Image::from_vec(input.width(), input.height(), out)?)
}

/// An image without any light has no dynamic range to compress.
fn refuse_without_light(image: &Image<hipacc::core::Rgba<f32>>) -> Result<()> {
    let pixels = image.read()?;
    if pixels
        .iter()
        .all(|p| p.r <= 0.0 && p.g <= 0.0 && p.b <= 0.0)
    {
        bail!("the image is black everywhere: there is no dynamic range to compress");
    }
    Ok(())
}

/// A bar over the tone-mapping stages when stderr is a terminal.
fn progress_bar() -> Option<ProgressBar> {
    if !std::io::stderr().is_terminal() {
        return None;
    }
    let bar = ProgressBar::new(fattal::STAGES.len() as u64);
    if let Ok(style) = ProgressStyle::with_template("{bar:30} {pos}/{len} {msg}") {
        bar.set_style(style);
    }
    Some(bar)
}

/// `--emit DIR`: the kernels of a run, for every target.
fn emit(dir: &std::path::Path, params: &Params) -> Result<()> {
    let small = scene::demo_scene(64, 48)?;
    let kernels = fattal::kernel_irs(&small, params)?;
    let targets = hipacc::codegen::dump::targets_from_arg(None)?;
    let files = hipacc::codegen::dump::emit_offline(dir, &kernels, &targets, true)
        .with_context(|| format!("--emit {}", dir.display()))?;
    for f in &files {
        println!("{}", f.display());
    }
    Ok(())
}
