//! `hipacc-bench`: the project's side of each PERF.md workload, alone, one
//! JSON line per workload (per image for `hdr`), so its figures can be put
//! beside any other tool's.
//!
//! ```text
//! cargo run --release -p hipacc-benches --bin hipacc-bench -- \
//!     --workload gauss5|jacobi|pyramid|vcycle|hdr|triad|all \
//!     --backend cpu|opencl|cuda|auto [--runs N] [--input FILE]...
//! ```
//!
//! Every line holds `workload`, `backend`, `median_ms`, `min_ms`, `max_ms`,
//! `runs` (timed runs; the warm-up runs before them, for at least 0.1 s, are
//! excluded) and
//! `samples_ms`; bandwidth-bound workloads add the bytes they must move and
//! the GB/s that makes at the median. The workloads:
//!
//! - `gauss5`: 5x5 binomial Gaussian, 2048x2048 f32, clamp-to-edge;
//! - `jacobi`: one weighted-Jacobi sweep, 2048x2048 f32, omega 0.8,
//!   constant-0 border (12 bytes per pixel);
//! - `pyramid`: Burt-Adelson decomposition and reconstruction of a
//!   4096x4096 f32 image with 11 levels (also the two halves' medians and
//!   `max |R_0 - G_0|`);
//! - `vcycle`: one V(2,2) weighted-Jacobi cycle, 2048x2048 f32, 6 levels,
//!   Dirichlet 0, residual and restriction fused, the sweeps blocked in
//!   time on the CPU (`bytes`: what the kernels of the unblocked cycle
//!   must move at least, one pass each); on a GPU backend also the cycle replayed
//!   (`graph_median_ms`, `graph_min_ms`), timed after the plain launches;
//! - `hdr`: Fattal tone mapping (default parameters, gamma 2.2 encoding)
//!   of each `--input`, by default every `.hdr`/`.pic`/`.exr`/`.pfm` file in
//!   `../shared/hdr` (relative to the working directory), else the
//!   procedural demo scene; file loading is not timed;
//! - `triad`: the STREAM triad, the machine's memory bandwidth (not part of
//!   `all`).
//!
//! `--dump DIR [--size N]` instead writes small-size inputs and hipacc's
//! outputs of gauss5, jacobi, pyramid and vcycle as raw little-endian f32
//! files plus `dump.json` describing them, so that other implementations
//! can be checked against the same computation.

use anyhow::{bail, Context, Result};
use clap::Parser;
use hipacc::multigrid::{manufactured, Bc, CycleKind, CycleOptions, Poisson, Smoother};
use hipacc::Device;
use hipacc_benches::stream::{Triad, TRIAD_DEFAULT_LEN};
use hipacc_benches::vcycle::{self, trace_bytes, VcycleRun};
use hipacc_benches::workload::{self, pattern, Gauss5Run, JacobiRun};
use hipacc_examples::hdr::fattal::{tone_map, Encoding, Params};
use hipacc_examples::hdr::{input::load_hdr, scene::demo_scene};
use hipacc_examples::pyramid::{test_image, BurtAdelson};
use serde_json::{json, Value};
use std::hint::black_box;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// The pyramid workload's side.
const PYRAMID_SIZE: usize = 4096;
/// The pyramid workload's levels.
const PYRAMID_LEVELS: usize = 11;
/// The demo scene's size when no HDR file is found.
const DEMO_SIZE: (usize, usize) = (1024, 768);
/// Where HDR images are looked for by default.
const HDR_DIR: &str = "../shared/hdr";
/// Fewest timed runs accepted.
const MIN_RUNS: usize = 7;

/// Times hipacc on the PERF.md workloads and prints one JSON line each.
#[derive(Parser, Debug)]
#[command(name = "hipacc-bench", version)]
struct Args {
    /// gauss5, jacobi, pyramid, vcycle, hdr, triad, or all (every one but
    /// triad).
    #[arg(long, default_value = "all")]
    workload: String,
    /// cpu, opencl, cuda or auto.
    #[arg(long, default_value = "cpu")]
    backend: String,
    /// Timed runs per workload (after warm-up runs for at least 0.1 s).
    #[arg(long, default_value_t = 11)]
    runs: usize,
    /// HDR input file for `hdr` (repeatable).
    #[arg(long)]
    input: Vec<PathBuf>,
    /// Write small-size inputs and outputs to this directory and exit.
    #[arg(long)]
    dump: Option<PathBuf>,
    /// Image side for `--dump`.
    #[arg(long, default_value_t = 64)]
    size: usize,
}

fn main() {
    if let Err(e) = run() {
        eprintln!("hipacc-bench: error: {e:#}");
        std::process::exit(1);
    }
}

fn run() -> Result<()> {
    let args = Args::parse();
    let dev =
        Device::from_name(&args.backend).with_context(|| format!("backend {:?}", args.backend))?;
    if let Some(dir) = &args.dump {
        return dump(&dev, dir, args.size);
    }
    if args.runs < MIN_RUNS {
        bail!("--runs {}: at least {MIN_RUNS} are needed", args.runs);
    }
    let all = ["gauss5", "jacobi", "pyramid", "vcycle", "hdr"];
    let list: Vec<&str> = match args.workload.as_str() {
        "all" => all.to_vec(),
        w if all.contains(&w) || w == "triad" => vec![w],
        w => bail!("unknown workload {w:?}: expected one of {all:?}, triad or all"),
    };
    let bench = Bench {
        dev,
        backend: args.backend.clone(),
        runs: args.runs,
    };
    for w in list {
        match w {
            "gauss5" => bench.gauss5()?,
            "jacobi" => bench.jacobi()?,
            "pyramid" => bench.pyramid()?,
            "vcycle" => bench.vcycle()?,
            "hdr" => bench.hdr(&args.input)?,
            "triad" => bench.triad(),
            _ => unreachable!("bug: workload {w} passed the check"),
        }
    }
    Ok(())
}

/// Median, min and max of samples (at least one).
fn stats(samples: &[f64]) -> (f64, f64, f64) {
    let mut v = samples.to_vec();
    v.sort_by(f64::total_cmp);
    let n = v.len();
    let median = if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    };
    (median, v[0], v[n - 1])
}

fn round3(x: f64) -> f64 {
    (x * 1e3).round() / 1e3
}

/// How long a workload runs untimed before its timed runs: long enough for
/// idle cores to come back to speed and thread pools to wake, however short
/// one run is. The comparison runner warms its peers up alike.
const WARM_UP: Duration = Duration::from_millis(100);

struct Bench {
    dev: Device,
    backend: String,
    runs: usize,
}

impl Bench {
    /// Runs `f` to warm up (at least once and for [`WARM_UP`]), then `runs`
    /// times timed (each followed by a device synchronisation); the samples
    /// in ms.
    fn time(&self, mut f: impl FnMut() -> Result<()>) -> Result<Vec<f64>> {
        let start = Instant::now();
        loop {
            f()?;
            self.dev.synchronize()?;
            if start.elapsed() >= WARM_UP {
                break;
            }
        }
        (0..self.runs)
            .map(|_| {
                let t = Instant::now();
                f()?;
                self.dev.synchronize()?;
                Ok(t.elapsed().as_secs_f64() * 1e3)
            })
            .collect()
    }

    /// Prints the JSON line of `workload` with `extra` fields merged in.
    fn emit(&self, workload: &str, samples: &[f64], extra: Value) {
        let (median, min, max) = stats(samples);
        let mut line = json!({
            "workload": workload,
            "backend": self.backend,
            "device": self.dev.name(),
            "median_ms": round3(median),
            "min_ms": round3(min),
            "max_ms": round3(max),
            "runs": samples.len(),
        });
        if let (Value::Object(line), Value::Object(extra)) = (&mut line, extra) {
            line.extend(extra);
        }
        line["samples_ms"] = samples.iter().map(|&s| round3(s)).collect();
        println!("{line}");
    }

    /// Extra fields of a workload that must move `bytes`.
    fn bandwidth(samples: &[f64], bytes: u64) -> Value {
        let (median, _, _) = stats(samples);
        json!({ "bytes": bytes, "gbs": round3(bytes as f64 / (median * 1e6)) })
    }

    fn gauss5(&self) -> Result<()> {
        let g = Gauss5Run::new(workload::SIZE, workload::SIZE, self.dev.clone())?;
        let samples = self.time(|| Ok(g.hipacc()?))?;
        let extra = Self::bandwidth(&samples, g.bytes());
        self.emit("gauss5", &samples, size_fields(extra, workload::SIZE));
        Ok(())
    }

    fn jacobi(&self) -> Result<()> {
        let j = JacobiRun::new(workload::SIZE, workload::SIZE, self.dev.clone())?;
        let samples = self.time(|| Ok(j.hipacc()?))?;
        let extra = Self::bandwidth(&samples, j.bytes());
        self.emit("jacobi", &samples, size_fields(extra, workload::SIZE));
        Ok(())
    }

    fn pyramid(&self) -> Result<()> {
        let work = BurtAdelson::new(&test_image(PYRAMID_SIZE)?, PYRAMID_LEVELS)?;
        let (mut down, mut up) = (Vec::new(), Vec::new());
        let samples = self.time(|| {
            let t0 = Instant::now();
            work.decompose(&self.dev)?;
            self.dev.synchronize()?;
            let t1 = Instant::now();
            work.reconstruct(&self.dev)?;
            self.dev.synchronize()?;
            down.push((t1 - t0).as_secs_f64() * 1e3);
            up.push(t1.elapsed().as_secs_f64() * 1e3);
            Ok(())
        })?;
        // Drop the warm-up runs' halves.
        let warm = down.len() - samples.len();
        let (down, up) = (&down[warm..], &up[warm..]);
        let extra = json!({
            "size": PYRAMID_SIZE,
            "levels": PYRAMID_LEVELS,
            "decompose_ms": round3(stats(down).0),
            "reconstruct_ms": round3(stats(up).0),
            "max_error": work.max_reconstruction_error()?,
        });
        self.emit("pyramid", &samples, extra);
        Ok(())
    }

    fn vcycle(&self) -> Result<()> {
        // Blocked in time on the CPU; the bound stays the unblocked
        // cycle's one pass per kernel.
        let v = VcycleRun::new(self.dev.clone(), true)?.with_blocked(true);
        let bytes = trace_bytes(&VcycleRun::new(self.dev.clone(), true)?.cycle()?);
        let samples = self.time(|| {
            black_box(v.cycle()?);
            Ok(())
        })?;
        let mut extra = Self::bandwidth(&samples, bytes);
        extra["levels"] = vcycle::LEVELS.into();
        extra["fused"] = true.into();
        extra["blocked"] = true.into();
        if self.dev.is_gpu() {
            // The same cycle recorded once and replayed, measured after it.
            let g = VcycleRun::new(self.dev.clone(), true)?.with_graph(true);
            let graph = self.time(|| {
                black_box(g.cycle()?);
                Ok(())
            })?;
            let (median, min, _) = stats(&graph);
            extra["graph_median_ms"] = round3(median).into();
            extra["graph_min_ms"] = round3(min).into();
        }
        self.emit("vcycle", &samples, size_fields(extra, vcycle::SIZE));
        Ok(())
    }

    fn hdr(&self, inputs: &[PathBuf]) -> Result<()> {
        let inputs = if inputs.is_empty() {
            default_hdr_inputs()?
        } else {
            inputs.to_vec()
        };
        let params = Params::default();
        let mut images = Vec::new();
        if inputs.is_empty() {
            eprintln!("hipacc-bench: no HDR files in {HDR_DIR}: timing the demo scene");
            let (w, h) = DEMO_SIZE;
            images.push(("demo scene".to_string(), demo_scene(w, h)?));
        }
        for path in &inputs {
            let name = path.file_name().map_or_else(
                || path.display().to_string(),
                |n| n.to_string_lossy().into_owned(),
            );
            images.push((name, load_hdr(path)?));
        }
        for (name, img) in images {
            let mut cycles = 0;
            let samples = self.time(|| {
                let (out, report) =
                    tone_map(&self.dev, &img, &params, Encoding::Gamma(2.2), &|_| {})?;
                black_box(out);
                cycles = report.cycles;
                Ok(())
            })?;
            let extra = json!({
                "image": name,
                "width": img.width(),
                "height": img.height(),
                "cycles": cycles,
            });
            self.emit("hdr", &samples, extra);
        }
        Ok(())
    }

    fn triad(&self) {
        let mut t = Triad::new(TRIAD_DEFAULT_LEN);
        let samples = self
            .time(|| {
                t.run(black_box(3.0));
                Ok(())
            })
            .unwrap_or_else(|e| unreachable!("bug: the triad cannot fail: {e}"));
        black_box(t.a(0));
        let mut extra = Self::bandwidth(&samples, t.bytes());
        extra["threads"] = rayon::current_num_threads().into();
        self.emit("triad", &samples, extra);
    }
}

fn size_fields(mut extra: Value, size: usize) -> Value {
    extra["width"] = size.into();
    extra["height"] = size.into();
    extra
}

/// Every HDR file in [`HDR_DIR`], sorted; empty when the directory is absent.
fn default_hdr_inputs() -> Result<Vec<PathBuf>> {
    let dir = Path::new(HDR_DIR);
    if !dir.is_dir() {
        return Ok(Vec::new());
    }
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir).with_context(|| format!("reading {HDR_DIR}"))? {
        let path = entry?.path();
        let ext = path
            .extension()
            .map(|e| e.to_string_lossy().to_ascii_lowercase());
        if matches!(ext.as_deref(), Some("hdr" | "pic" | "exr" | "pfm")) {
            files.push(path);
        }
    }
    files.sort();
    Ok(files)
}

/// Writes `data` as raw little-endian f32 to `dir/name`.
fn write_f32(dir: &Path, name: &str, data: &[f32]) -> Result<()> {
    let bytes: Vec<u8> = data.iter().flat_map(|v| v.to_le_bytes()).collect();
    let path = dir.join(name);
    std::fs::write(&path, bytes).with_context(|| format!("writing {}", path.display()))
}

/// The `--dump` mode (see the module docs).
fn dump(dev: &Device, dir: &Path, n: usize) -> Result<()> {
    if n < 64 || !n.is_multiple_of(32) {
        bail!("--size {n}: the dump needs a multiple of 32, at least 64 (the V-cycle's 6 levels)");
    }
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;

    let g = Gauss5Run::new(n, n, dev.clone())?;
    g.hipacc()?;
    write_f32(dir, "gauss5.in.f32", &pattern(n, n, 3))?;
    write_f32(dir, "gauss5.out.f32", &g.output()?)?;

    let j = JacobiRun::new(n, n, dev.clone())?;
    j.hipacc()?;
    write_f32(dir, "jacobi.u.f32", &pattern(n, n, 1))?;
    write_f32(dir, "jacobi.f.f32", &pattern(n, n, 2))?;
    write_f32(dir, "jacobi.out.f32", &j.output()?)?;

    let levels = hipacc::max_depth(n, n).min(PYRAMID_LEVELS);
    let work = BurtAdelson::new(&test_image(n)?, levels)?;
    work.decompose(dev)?;
    work.reconstruct(dev)?;
    write_f32(dir, "pyramid.in.f32", &work.g.level(0)?.to_vec()?)?;
    write_f32(dir, "pyramid.g1.f32", &work.g.level(1)?.to_vec()?)?;
    write_f32(dir, "pyramid.l0.f32", &work.l.level(0)?.to_vec()?)?;
    write_f32(dir, "pyramid.r0.f32", &work.r.level(0)?.to_vec()?)?;

    let p = Poisson::<f32>::new(n, n, vcycle::LEVELS, Bc::Dirichlet, 1.0 / n as f64)?;
    manufactured::fill_rhs(Bc::Dirichlet, &p.rhs())?;
    write_f32(dir, "vcycle.f.f32", &p.rhs().to_vec()?)?;
    let opts = CycleOptions::new(CycleKind::V, Smoother::Jacobi { omega: 0.8 }, 2, 2).fused(true);
    p.cycle(dev, &opts)?;
    write_f32(dir, "vcycle.u1.f32", &p.solution().to_vec()?)?;
    p.cycle(dev, &opts)?;
    write_f32(dir, "vcycle.u2.f32", &p.solution().to_vec()?)?;

    let meta = json!({
        "size": n,
        "omega": workload::OMEGA,
        "pyramid_levels": levels,
        "vcycle_levels": vcycle::LEVELS,
        "vcycle_spacing": 1.0 / n as f64,
        "backend": dev.name(),
    });
    let path = dir.join("dump.json");
    std::fs::write(&path, format!("{meta:#}\n"))
        .with_context(|| format!("writing {}", path.display()))?;
    Ok(())
}
