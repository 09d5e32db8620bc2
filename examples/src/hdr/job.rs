//! One tone-mapping run of `hdr-compress`: read, repair, tone-map, write
//! (and the optional linearly scaled "before" image), timing each stage.
//!
//! The single-file mode and every file of a batch go through [`run`]; the
//! checks that must come before any reading or writing (formats, writable
//! directories, the output not being the input) are the caller's.

use super::fattal::{self, Encoding, Params};
use super::guard::Source;
use super::output::{self, OutputKind};
use super::{input, repair, scene};
use anyhow::{bail, Context, Result};
use hipacc::core::Rgba;
use hipacc::{Device, Image};
use std::path::{Path, PathBuf};
use std::time::Instant;

/// The demo scene's size.
pub const DEMO_SIZE: (usize, usize) = (768, 512);

/// The file the demo scene is written to without `-o`.
pub const DEMO_OUTPUT: &str = "hdr-compress-demo";

/// The stem of the default output name for standard input.
pub const STDIN_STEM: &str = "stdin";

/// Where a result goes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Destination {
    /// A file, written atomically.
    File(PathBuf),
    /// Standard output (`-o -`).
    Stdout,
}

impl Destination {
    /// The name for messages and reports: the path, or `-`.
    pub fn name(&self) -> String {
        match self {
            Destination::File(p) => p.display().to_string(),
            Destination::Stdout => "-".into(),
        }
    }
}

/// The default output for `source` in `dir`: its stem (`stdin` for
/// standard input, [`DEMO_OUTPUT`] for the demo) plus `kind`'s extension.
pub fn default_output(source: &Source, dir: &Path, kind: OutputKind) -> Result<PathBuf> {
    let stem = match source {
        Source::Demo => DEMO_OUTPUT.as_ref(),
        s if s.is_stdin() => STDIN_STEM.as_ref(),
        Source::Path(p) => p
            .file_stem()
            .with_context(|| format!("{}: the input path has no file name", p.display()))?,
    };
    Ok(dir.join(stem).with_extension(kind.extension()))
}

/// One run's files and formats.
#[derive(Debug, Clone)]
pub struct Job {
    pub source: Source,
    pub output: Destination,
    pub kind: OutputKind,
    /// `--before FILE` and its format.
    pub before: Option<(PathBuf, OutputKind)>,
}

/// What a run did: sizes, solver figures and milliseconds per stage.
#[derive(Debug, Clone)]
pub struct Outcome {
    pub width: usize,
    pub height: usize,
    pub levels: usize,
    pub cycles: usize,
    pub residual: f64,
    /// The solver's estimate of its max-norm error in log luminance.
    pub error_estimate: f64,
    /// `read`, `repair`, the tone-mapping stages, `tonemap` (their sum),
    /// `write`, in order.
    pub ms: Vec<(&'static str, f64)>,
    pub ms_total: f64,
}

/// The display encoding for `kind`: linear for OpenEXR, else the sRGB curve
/// with `srgb`, else a 1/2.2 power.
pub fn encoding_for(kind: OutputKind, srgb: bool) -> Encoding {
    match (kind, srgb) {
        (OutputKind::Exr, _) => Encoding::Linear,
        (_, true) => Encoding::Srgb,
        _ => Encoding::Gamma(2.2),
    }
}

/// Runs `job` on `dev`: [`load`], [`tone_map`], [`store`]. `warn`
/// receives warnings (repaired pixels), `tick` each tone-mapping stage as
/// it starts.
pub fn run(
    dev: &Device,
    job: &Job,
    params: &Params,
    srgb: bool,
    warn: &dyn Fn(String),
    tick: &dyn Fn(&str),
) -> Result<Outcome> {
    let loaded = load(job, warn)?;
    let mapped = tone_map(dev, job, loaded, params, srgb, warn, tick)?;
    store(job, mapped)
}

/// An input read and checked, with the time it took.
pub struct Loaded {
    image: Image<Rgba<f32>>,
    ms: Vec<(&'static str, f64)>,
    start: Instant,
}

impl Loaded {
    /// The image read (repaired).
    pub fn image(&self) -> &Image<Rgba<f32>> {
        &self.image
    }
}

/// A result ready to be written.
pub struct Mapped {
    loaded: Loaded,
    result: Image<Rgba<f32>>,
    report: fattal::Report,
}

/// Reads `job`'s input, repairs invalid pixels (`warn` says how many) and
/// refuses an image without light.
pub fn load(job: &Job, warn: &dyn Fn(String)) -> Result<Loaded> {
    let start = Instant::now();
    let name = job.source.name();
    let mut ms = Vec::new();
    let t0 = Instant::now();
    let image = match &job.source {
        Source::Path(path) => input::load_hdr_with(path, |w| warn(w.to_string()))?,
        Source::Demo => scene::demo_scene(DEMO_SIZE.0, DEMO_SIZE.1)?,
    };
    ms.push(("read", elapsed_ms(t0)));

    let t0 = Instant::now();
    let fixed = repair::repair(&image).with_context(|| name.clone())?;
    if !fixed.is_clean() {
        warn(format!("{name}: {fixed}"));
    }
    refuse_without_light(&image).with_context(|| name.clone())?;
    ms.push(("repair", elapsed_ms(t0)));
    Ok(Loaded { image, ms, start })
}

/// Tone-maps a loaded input on `dev`; `warn` hears of a solve that did not
/// reach its tolerance.
pub fn tone_map(
    dev: &Device,
    job: &Job,
    loaded: Loaded,
    params: &Params,
    srgb: bool,
    warn: &dyn Fn(String),
    tick: &dyn Fn(&str),
) -> Result<Mapped> {
    let encoding = encoding_for(job.kind, srgb);
    let (result, report) = fattal::tone_map(dev, &loaded.image, params, encoding, tick)
        .with_context(|| job.source.name())?;
    Ok(mapped(job, loaded, result, report, params, warn))
}

/// A tone-mapped `result` of `loaded` ready to be written; `warn` hears of
/// a solve that did not reach its tolerance.
pub fn mapped(
    job: &Job,
    loaded: Loaded,
    result: Image<Rgba<f32>>,
    report: fattal::Report,
    params: &Params,
    warn: &dyn Fn(String),
) -> Mapped {
    if !report.converged {
        warn(format!(
            "{}: the Poisson solve stopped after {} cycles with an estimated error of \
             {:.1e} in log luminance, above --tol {:.1e}",
            job.source.name(),
            report.cycles,
            report.error_estimate,
            params.tol
        ));
    }
    Mapped {
        loaded,
        result,
        report,
    }
}

/// Writes a result (and the "before" image) where `job` says.
pub fn store(job: &Job, mapped: Mapped) -> Result<Outcome> {
    let Mapped {
        loaded,
        result,
        report,
    } = mapped;
    let mut ms = loaded.ms;
    ms.extend(report.ms.iter().copied());
    ms.push(("tonemap", report.ms.iter().map(|(_, m)| m).sum()));

    let t0 = Instant::now();
    if let Some((path, kind)) = &job.before {
        output::save(&linear_preview(&loaded.image)?, path, *kind)?;
    }
    match &job.output {
        Destination::File(path) => output::save(&result, path, job.kind)?,
        Destination::Stdout => {
            let stdout = std::io::stdout();
            output::write(&result, &mut stdout.lock(), "standard output", job.kind)?;
        }
    }
    ms.push(("write", elapsed_ms(t0)));

    Ok(Outcome {
        width: loaded.image.width(),
        height: loaded.image.height(),
        levels: report.levels,
        cycles: report.cycles,
        residual: report.residual,
        error_estimate: report.error_estimate,
        ms,
        ms_total: elapsed_ms(loaded.start),
    })
}

impl Outcome {
    /// The report of `--json`: `input`, `output`, `width`, `height`,
    /// `backend`, `levels`, `cycles`, `residual`, `error_estimate`,
    /// `ms_total` and `ms` per stage.
    pub fn to_json(&self, job: &Job, backend: &str) -> serde_json::Value {
        let ms: serde_json::Map<_, _> = self
            .ms
            .iter()
            .map(|(name, v)| ((*name).to_string(), (*v).into()))
            .collect();
        serde_json::json!({
            "input": job.source.name(),
            "output": job.output.name(),
            "width": self.width,
            "height": self.height,
            "backend": backend,
            "levels": self.levels,
            "cycles": self.cycles,
            "residual": self.residual,
            "error_estimate": self.error_estimate,
            "ms_total": self.ms_total,
            "ms": ms,
        })
    }
}

fn elapsed_ms(t0: Instant) -> f64 {
    t0.elapsed().as_secs_f64() * 1e3
}

/// `input` scaled so that its 99th luminance percentile is white, clamped
/// and display-encoded with a 1/2.2 power.
fn linear_preview(input: &Image<Rgba<f32>>) -> Result<Image<Rgba<f32>>> {
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
        .map(|p| Rgba::new(enc(p.r), enc(p.g), enc(p.b), 1.0))
        .collect();
    Ok(Image::from_vec(input.width(), input.height(), out)?)
}

/// An image without any light has no dynamic range to compress.
fn refuse_without_light(image: &Image<Rgba<f32>>) -> Result<()> {
    let pixels = image.read()?;
    if pixels
        .iter()
        .all(|p| p.r <= 0.0 && p.g <= 0.0 && p.b <= 0.0)
    {
        bail!("the image is black everywhere: there is no dynamic range to compress");
    }
    Ok(())
}
