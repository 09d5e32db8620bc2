//! `hdr-compress`: gradient-domain compression of a high-dynamic-range
//! image (Fattal, Lischinski, Werman 2002) into a displayable one.
//!
//! ```text
//! hdr-compress [IN.hdr|IN.exr|IN.pfm|-] [-o OUT.png|.jpg|.exr|-] [--format F]
//!              [--bits 8|16] [--quality Q] [--encoding gamma|srgb]
//!              [--alpha A] [--beta B] [--saturation S] [--noise N]
//!              [--detail-level D] [--black-point P] [--white-point P]
//!              [--gamma G] [--cycle v|w|f] [--tol T] [--backend B]
//!              [--replay] [--timings] [--emit DIR] [--before FILE] [--json]
//! hdr-compress IN... --out-dir DIR [--format png|jpg|exr] [--jobs N] [...]
//! ```
//!
//! Without IN it compresses a generated scene (dynamic range above 1e5:1)
//! and writes `hdr-compress-demo.png`; with IN the default output is
//! `IN`'s stem plus `.png` (or the `--format` extension) in the current
//! directory; `-` as IN reads standard input (default output `stdin.png`),
//! `-o -` writes the image to standard output in the `--format` given.
//! PNG and JPEG output is display-encoded with a 1/2.2 power
//! (`--encoding srgb` for the sRGB curve), EXR output is linear. NaN,
//! infinite and negative input values are repaired with a one-line warning.
//! `--json` prints one object with `input`, `output`, `width`, `height`,
//! `backend`, `levels`, `cycles`, `residual`, `error_estimate`, `ms_total` and per-stage `ms`
//! (`read`, `repair`, the tone-mapping stages, `tonemap` their sum,
//! `write`). `--before FILE` also writes the input linearly scaled, for
//! before/after comparisons.
//!
//! With `--out-dir DIR` (batch mode, [`hipacc_examples::hdr::batch`]) every
//! input, a directory standing for its HDR files, is written to DIR; a bad
//! file is reported and skipped, `--json` prints one object per file (JSON
//! lines), and a summary ends the run on stderr.
//!
//! No output may be the input file, however its path is spelled
//! ([`hipacc_examples::hdr::guard`]). A SIGINT or SIGTERM removes the
//! temporary files of writes in progress before the process exits.
//!
//! Built with the `distributed` feature and started by `mpirun` (any
//! number of ranks, one included), the single-file mode runs split across
//! the ranks: `mpirun -np 4 hdr-compress big.hdr -o out.png` (rank 0 reads
//! and writes, every rank tone-maps its block on its `--backend` device;
//! the output is the single-process run's on that backend, byte for byte;
//! see `hipacc_examples::hdr::distributed_job`). Batch mode and `--emit`
//! run on one rank only. Only rank 0 prints, and a failure on any rank
//! stops all of them with its message.

use anyhow::{bail, Context, Result};
use clap::Parser;
use hipacc::multigrid::CycleKind;
use hipacc::Device;
use hipacc_examples::hdr::batch::{self, FileResult, Observer};
use hipacc_examples::hdr::fattal::{self, Params};
use hipacc_examples::hdr::guard::{self, Source};
use hipacc_examples::hdr::job::{self, Destination, Job, Outcome};
use hipacc_examples::hdr::output::{self, OutputKind, FORMAT_NAMES};
use hipacc_examples::hdr::{interrupt, scene};
use hipacc_examples::ranks;
use indicatif::{ProgressBar, ProgressStyle};
use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;

/// Images and pyramid levels on huge pages: far fewer page faults (see
/// [`hipacc_examples::hdr::huge_alloc`]).
#[cfg(target_os = "linux")]
#[global_allocator]
static ALLOCATOR: hipacc_examples::hdr::huge_alloc::HugePageAlloc =
    hipacc_examples::hdr::huge_alloc::HugePageAlloc;

const AFTER_HELP: &str = "\
Output: without -o, the result is written to the current directory as the \
input's file name with its extension replaced by .png (or the --format \
extension): `hdr-compress photos/memorial.hdr` writes ./memorial.png. \
Without an input, the demo scene is written to ./hdr-compress-demo.png; \
with `-` (standard input), to ./stdin.png. `-o -` writes the image to \
standard output (--format required) and nothing else. No output may be the \
input file.

Batch: `hdr-compress IN... --out-dir DIR` writes DIR/<stem>.png for each \
input (a directory stands for its .hdr, .pic, .rgbe, .exr and .pfm files), \
goes on past bad files, prints a summary on stderr and exits non-zero if \
any file failed.";

/// Gradient-domain HDR compression.
#[derive(Parser, Debug)]
#[command(name = "hdr-compress", after_help = AFTER_HELP)]
struct Args {
    /// Inputs (.hdr, .exr, .pfm; `-` for standard input); omit for the
    /// built-in demo scene. Several inputs or a directory need --out-dir.
    #[arg(value_name = "IN")]
    inputs: Vec<PathBuf>,
    /// Output file; its extension chooses the format (.png, .jpg, .exr);
    /// `-` for standard output (with --format). Default: the input's stem
    /// plus .png in the current directory.
    #[arg(short, long, value_name = "FILE")]
    output: Option<PathBuf>,
    /// Batch mode: one output per input in DIR (created if missing), named
    /// after the input's stem with the --format extension.
    #[arg(long, value_name = "DIR")]
    out_dir: Option<PathBuf>,
    /// Output format for `-o -`, --out-dir and the default output name.
    #[arg(long, value_name = "F", value_parser = FORMAT_NAMES)]
    format: Option<String>,
    /// Batch mode: overlap reading, tone-mapping and writing of
    /// consecutive files (`stages`, the default) or tone-map several whole
    /// files at once (`files`, see --jobs).
    #[arg(long, value_name = "HOW", value_parser = ["files", "stages"])]
    parallel: Option<String>,
    /// Batch mode: files tone-mapped at once with --parallel files (default:
    /// one per core with the CPU backend, 1 otherwise); implies it.
    #[arg(long, value_name = "N", allow_hyphen_values = true)]
    jobs: Option<i64>,
    /// PNG bits per channel: 8 or 16.
    #[arg(long, allow_hyphen_values = true)]
    bits: Option<i64>,
    /// JPEG quality, 1 to 100.
    #[arg(long, allow_hyphen_values = true)]
    quality: Option<i64>,
    /// Display encoding of PNG/JPEG output: gamma (1/2.2 power) or srgb.
    #[arg(long, default_value = "gamma", value_parser = ["gamma", "srgb"])]
    encoding: String,
    /// Gradient threshold, times the level's mean gradient.
    #[arg(long, default_value_t = 1.0, allow_hyphen_values = true)]
    alpha: f32,
    /// Attenuation exponent.
    #[arg(long, default_value_t = 0.9, allow_hyphen_values = true)]
    beta: f32,
    /// Colour saturation.
    #[arg(long, default_value_t = 0.8, allow_hyphen_values = true)]
    saturation: f32,
    /// Gradient magnitude treated as noise.
    #[arg(long, default_value_t = 0.002, allow_hyphen_values = true)]
    noise: f32,
    /// Finest pyramid levels left unattenuated.
    #[arg(long, default_value_t = 3, allow_hyphen_values = true)]
    detail_level: i64,
    /// Percentage of pixels mapped to black.
    #[arg(long, default_value_t = 0.1, allow_hyphen_values = true)]
    black_point: f32,
    /// Percentage of pixels mapped to white.
    #[arg(long, default_value_t = 0.5, allow_hyphen_values = true)]
    white_point: f32,
    /// Luminance gamma after compression.
    #[arg(long, default_value_t = 0.8, allow_hyphen_values = true)]
    gamma: f32,
    /// Multigrid cycle: v, w or f.
    #[arg(long, default_value = "v")]
    cycle: CycleKind,
    /// Largest error of the solved log-luminance the Poisson solve stops at,
    /// estimated from the corrections of its cycles (2e-3 keeps 8-bit output
    /// within half a level of the exact solve).
    #[arg(long, default_value_t = fattal::DEFAULT_TOL, allow_hyphen_values = true)]
    tol: f64,
    /// cpu, opencl, cuda or auto.
    #[arg(long, default_value = "cpu", value_name = "B")]
    backend: String,
    /// Record the Poisson solver's first cycle and replay later ones: the
    /// same output, less host work per cycle (it pays with many cycles:
    /// W-cycles, a small --tol).
    #[arg(long)]
    replay: bool,
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
    /// Print the results as JSON: one object (on stderr with `-o -`), or
    /// one line per file in batch mode.
    #[arg(long)]
    json: bool,
}

fn main() -> ExitCode {
    // Under `mpirun` every rank parses the same arguments; one reports.
    let speaks = ranks::speaks();
    let args = match Args::try_parse() {
        Ok(args) => args,
        Err(e) if speaks => e.exit(),
        // The others end quietly and successfully: one ending first with a
        // failure would make `mpirun` stop the job before rank 0 printed.
        Err(_) => std::process::exit(0),
    };
    if let Err(e) = interrupt::install() {
        eprintln!("hdr-compress: warning: signals are not handled: {e}");
    }
    let ranks = match ranks::Ranks::start() {
        Ok(ranks) => ranks,
        Err(e) => {
            eprintln!("hdr-compress: {e:#}");
            return ExitCode::FAILURE;
        }
    };
    match run(args, &ranks) {
        Ok(code) => code,
        Err(e) if speaks => {
            eprintln!("hdr-compress: {e:#}");
            ExitCode::FAILURE
        }
        // Under `mpirun` the job's status is rank 0's, which reports the
        // failure every rank agreed on. The others end quietly: one of them
        // ending first with a failure would make `mpirun` kill the rest,
        // rank 0 perhaps before its message.
        Err(_) => ExitCode::SUCCESS,
    }
}

fn run(args: Args, ranks: &ranks::Ranks) -> Result<ExitCode> {
    if ranks.several() && (args.emit.is_some() || args.out_dir.is_some()) {
        bail!("--emit and --out-dir run on one process: start hdr-compress without mpirun");
    }
    let params = params(&args)?;
    if let Some(dir) = &args.emit {
        if !args.inputs.is_empty()
            || args.output.is_some()
            || args.before.is_some()
            || args.out_dir.is_some()
        {
            bail!("--emit writes kernel sources only: give no input, -o, --out-dir or --before");
        }
        emit(dir, &params)?;
        return Ok(ExitCode::SUCCESS);
    }
    match &args.out_dir {
        Some(dir) => batch_mode(&args, &params, dir),
        None => single(&args, &params, ranks),
    }
}

/// `--bits` and `--quality` as the output module takes them: negative
/// values are refused here, with the flag's name.
fn format_options(args: &Args) -> Result<(Option<u32>, Option<u32>)> {
    let bits = match args.bits {
        Some(b) => Some(
            u32::try_from(b)
                .ok()
                .context(format!("--bits must be 8 or 16, got {b}"))?,
        ),
        None => None,
    };
    let quality = match args.quality {
        Some(q) => Some(
            u32::try_from(q)
                .ok()
                .context(format!("--quality must be 1 to 100, got {q}"))?,
        ),
        None => None,
    };
    Ok((bits, quality))
}

/// The format of `--format`, if given.
fn named_format(args: &Args) -> Result<Option<OutputKind>> {
    let (bits, quality) = format_options(args)?;
    args.format
        .as_deref()
        .map(|f| OutputKind::from_name(f, bits, quality))
        .transpose()
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
    let detail_level = usize::try_from(args.detail_level).ok().context(format!(
        "--detail-level must be at least 0, got {}",
        args.detail_level
    ))?;
    let (b, w) = (args.black_point, args.white_point);
    if !(b >= 0.0 && w >= 0.0 && b + w < 100.0) {
        bail!(
            "--black-point and --white-point are percentages with a sum below 100, got {b} and {w}"
        );
    }
    if !(args.tol > 0.0 && args.tol < 1.0) {
        bail!("--tol must be in (0, 1), got {}", args.tol);
    }
    if let Some(n) = args.jobs {
        if n < 1 {
            bail!("--jobs must be at least 1, got {n}");
        }
    }
    format_options(args)?;
    Ok(Params {
        alpha: args.alpha,
        beta: args.beta,
        saturation: args.saturation,
        noise: args.noise,
        detail_level,
        black_point: b,
        white_point: w,
        gamma: args.gamma,
        cycle: args.cycle,
        tol: args.tol,
        replay: args.replay,
        ..Params::default()
    })
}

/// One input (or the demo scene) to one output.
fn single(args: &Args, params: &Params, ranks: &ranks::Ranks) -> Result<ExitCode> {
    // Every rank checks the arguments and files; all go on only if all
    // passed, so that no rank waits for one that stopped.
    let prepared = ranks.agree(prepare(args));
    let (dev, job) = prepared?;
    let bar = if ranks.is_root() { stage_bar() } else { None };
    let tick = |stage: &str| {
        if let Some(b) = &bar {
            b.set_message(stage.to_string());
            b.inc(1);
        }
    };
    let warn = |w: String| eprintln!("hdr-compress: warning: {w}");
    let srgb = args.encoding == "srgb";
    let outcome = ranks.run(&dev, &job, params, srgb, &warn, &tick);
    if let Some(b) = &bar {
        b.finish_and_clear();
    }
    let Some(outcome) = outcome? else {
        return Ok(ExitCode::SUCCESS);
    };
    report(args, &job, &dev, &outcome);
    Ok(ExitCode::SUCCESS)
}

/// The device and the job of the single-file mode, after every check
/// that must come before anything is read or written.
fn prepare(args: &Args) -> Result<(Device, Job)> {
    let source = match args.inputs.as_slice() {
        [] => Source::Demo,
        [one] => Source::Path(one.clone()),
        [first, ..] => bail!(
            "{}: several inputs are tone-mapped in batch mode only: give --out-dir DIR",
            first.display()
        ),
    };
    if let Source::Path(p) = &source {
        if !source.is_stdin() && p.is_dir() {
            bail!(
                "{}: is a directory; give --out-dir DIR to tone-map the HDR files in it",
                p.display()
            );
        }
    }
    // Before anything else, and before anything is read or written: no
    // output may be the input.
    for (path, what) in [(&args.output, "-o"), (&args.before, "--before")] {
        if let Some(p) = path.as_deref().filter(|p| p.as_os_str() != "-") {
            guard::refuse_overwriting_input(&source, p, what)?;
        }
    }
    let (bits, quality) = format_options(args)?;
    let format = named_format(args)?;
    let (output, kind) = match &args.output {
        Some(p) if p.as_os_str() == "-" => {
            let kind = format.context(
                "-o - writes the image to standard output: give its format with --format png|jpg|exr",
            )?;
            (Destination::Stdout, kind)
        }
        Some(p) => {
            if p.is_dir() {
                bail!("{}: is a directory, not an output file", p.display());
            }
            let kind = OutputKind::from_path(p, bits, quality)?;
            if let Some(f) = format.filter(|f| f.extension() != kind.extension()) {
                bail!(
                    "{}: --format {} does not match the file's extension",
                    p.display(),
                    f.extension()
                );
            }
            (Destination::File(p.clone()), kind)
        }
        None => {
            let kind = match format {
                Some(k) => k,
                None => OutputKind::from_name("png", bits, quality)?,
            };
            let path = job::default_output(&source, Path::new(""), kind)?;
            (Destination::File(path), kind)
        }
    };
    let before = match &args.before {
        Some(p) if p.as_os_str() == "-" => bail!("--before writes a file: `-` is not one"),
        Some(p) => Some(p.clone()),
        None => None,
    };

    // Nothing has been read or written yet. The default output may still be
    // the input (`hdr-compress c.exr --format exr`), and two outputs must
    // not be one file.
    if let (Destination::File(path), None) = (&output, &args.output) {
        guard::refuse_overwriting_input(&source, path, "the default output")?;
    }
    if let Some(p) = &before {
        if let Destination::File(o) = &output {
            if guard::same_destination(p, o) {
                bail!(
                    "{}: --before and the output name the same file",
                    p.display()
                );
            }
        }
    }
    if let Destination::File(path) = &output {
        output::check_writable(path)?;
    }
    let before = match before {
        Some(p) => {
            let k = output::prepare(&p, None, None)?;
            Some((p, k))
        }
        None => None,
    };
    let dev = Device::from_name(&args.backend)?;
    Ok((
        dev,
        Job {
            source,
            output,
            kind,
            before,
        },
    ))
}

/// `--timings`, `--json` and the names of the files written.
fn report(args: &Args, job: &Job, dev: &Device, outcome: &Outcome) {
    if args.timings {
        eprintln!("{:<12} {:>9}", "stage", "ms");
        for (name, ms) in &outcome.ms {
            let name = if *name == "tonemap" {
                "(tonemap)"
            } else {
                name
            };
            eprintln!("{name:<12} {ms:>9.2}");
        }
        eprintln!("{:<12} {:>9.2}", "total", outcome.ms_total);
    }
    let stdout_free = job.output != Destination::Stdout;
    if args.json {
        let json = outcome.to_json(job, &dev.name());
        // With `-o -` standard output carries the image alone.
        if stdout_free {
            println!("{json}");
        } else {
            eprintln!("{json}");
        }
    } else if stdout_free {
        // Name each file written, so that a run without `-o` says where
        // its output went.
        for path in job.before.iter().map(|(p, _)| p.display().to_string()) {
            println!("{path}");
        }
        println!("{}", job.output.name());
    }
}

/// `--out-dir DIR`: every input into DIR, several files at a time.
fn batch_mode(args: &Args, params: &Params, out_dir: &Path) -> Result<ExitCode> {
    if args.output.is_some() {
        bail!("-o and --out-dir exclude each other: batch outputs are named after their inputs");
    }
    if args.before.is_some() {
        bail!("--before applies to a single input, not to --out-dir");
    }
    if args.inputs.is_empty() {
        bail!("--out-dir needs input files or directories");
    }
    if out_dir.exists() && !out_dir.is_dir() {
        bail!("{}: --out-dir is not a directory", out_dir.display());
    }
    let kind = match named_format(args)? {
        Some(k) => k,
        None => {
            let (bits, quality) = format_options(args)?;
            OutputKind::from_name("png", bits, quality)?
        }
    };
    let sources = batch::expand_inputs(&args.inputs)?;
    let jobs = batch::plan(sources, out_dir, kind)?;
    let dev = Device::from_name(&args.backend)?;
    let parallelism = match (args.parallel.as_deref(), args.jobs) {
        (Some("stages"), Some(_)) => bail!("--jobs applies to --parallel files, not stages"),
        (Some("files"), _) | (None, Some(_)) => batch::Parallelism::Files(match args.jobs {
            Some(n) => usize::try_from(n).unwrap_or(1).max(1),
            None => batch::default_jobs(jobs.len(), &dev),
        }),
        _ => batch::Parallelism::Stages,
    };
    std::fs::create_dir_all(out_dir)
        .with_context(|| format!("{}: cannot create the directory", out_dir.display()))?;
    if let Some(Destination::File(first)) = jobs.first().map(|j| &j.output) {
        output::check_writable(first)?;
    }

    let files = jobs.len();
    let reporter = Reporter {
        bar: files_bar(files),
        json: args.json,
        backend: dev.name(),
    };
    let t0 = Instant::now();
    let results = batch::run(
        &dev,
        jobs,
        params,
        args.encoding == "srgb",
        parallelism,
        &reporter,
    );
    let seconds = t0.elapsed().as_secs_f64();
    if let Some(b) = &reporter.bar {
        b.finish_and_clear();
    }

    let refused: Vec<&FileResult> = results.iter().filter(|r| r.outcome.is_err()).collect();
    eprintln!(
        "hdr-compress: {files} file{} in {seconds:.2} s ({:.3} s per file, {}): {} done, {} refused",
        if files == 1 { "" } else { "s" },
        seconds / files as f64,
        match parallelism {
            batch::Parallelism::Files(n) => format!("{n} at a time"),
            batch::Parallelism::Stages => "stages overlapped".into(),
        },
        files - refused.len(),
        refused.len()
    );
    for r in &refused {
        if let Err(e) = &r.outcome {
            eprintln!("hdr-compress: refused: {e:#}");
        }
    }
    Ok(if refused.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}

/// Shows a batch's progress: the bar, and each finished file on stdout
/// (its output's name, or its JSON line).
struct Reporter {
    bar: Option<ProgressBar>,
    json: bool,
    backend: String,
}

impl Reporter {
    /// Runs `f` with the bar hidden, so that printed lines do not mix with it.
    fn quietly(&self, f: impl FnOnce()) {
        match &self.bar {
            Some(b) => b.suspend(f),
            None => f(),
        }
    }
}

impl Observer for Reporter {
    fn started(&self, job: &Job) {
        if let Some(b) = &self.bar {
            b.set_message(job.source.name());
        }
    }

    fn warn(&self, message: String) {
        self.quietly(|| eprintln!("hdr-compress: warning: {message}"));
    }

    fn finished(&self, result: &FileResult) {
        let line = match (&result.outcome, self.json) {
            (Ok(o), true) => Some(o.to_json(&result.job, &self.backend).to_string()),
            (Err(e), true) => Some(
                serde_json::json!({
                    "input": result.job.source.name(),
                    "output": result.job.output.name(),
                    "error": format!("{e:#}"),
                })
                .to_string(),
            ),
            (Ok(_), false) => Some(result.job.output.name()),
            (Err(_), false) => None,
        };
        if let Some(line) = line {
            self.quietly(|| println!("{line}"));
        }
        if let Some(b) = &self.bar {
            b.inc(1);
        }
    }
}

/// A bar over the tone-mapping stages when stderr is a terminal.
fn stage_bar() -> Option<ProgressBar> {
    bar(fattal::STAGES.len(), "{bar:30} {pos}/{len} {msg}")
}

/// A bar over a batch's files when stderr is a terminal.
fn files_bar(files: usize) -> Option<ProgressBar> {
    bar(files, "{bar:30} {pos}/{len} files, {elapsed} {msg}")
}

fn bar(len: usize, template: &str) -> Option<ProgressBar> {
    if !std::io::stderr().is_terminal() {
        return None;
    }
    let bar = ProgressBar::new(len as u64);
    if let Ok(style) = ProgressStyle::with_template(template) {
        bar.set_style(style);
    }
    Some(bar)
}

/// `--emit DIR`: the kernels of a run, for every target.
fn emit(dir: &Path, params: &Params) -> Result<()> {
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
