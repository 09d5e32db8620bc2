//! `multigrid`: solves `-Δu = f` on an N x N cell-centred grid of the unit
//! square with a manufactured solution (`sin(πx) sin(πy)` for Dirichlet,
//! `cos(πx) cos(πy)` for Neumann) and reports convergence and timing.
//!
//! ```text
//! multigrid [--size N] [--levels L] [--cycle v|w|f] [--smoother jacobi|rbgs]
//!           [--omega W] [--pre N1] [--post N2] [--bc dirichlet|neumann]
//!           [--max-cycles C] [--tol T] [--fused] [--graph] [--precision f32|f64]
//!           [--start random|zero|fmg] [--backend B] [--timings]
//!           [--plot FILE.svg] [--json] [--gather-at G]
//! ```
//!
//! The cycles start from a pseudo-random initial guess (`--start random`,
//! the default: every error frequency is present, as convergence factors
//! are measured), from zero, or from full multigrid with one cycle per
//! level (`--start fmg`; its error is reported as `error_after_fmg`). They
//! stop when the residual has fallen to `--tol` times the norm of `f`, or
//! after `--max-cycles`. `--json` prints one object with `size`, `levels`,
//! `cycle`, `smoother`, `omega`, `pre`, `post`, `bc`, `fused`, `graph`,
//! `precision`, `backend`, `residuals`, `convergence_factor`,
//! `error_vs_exact`, `error_after_fmg`, `ms_fmg` (full multigrid's wall
//! time), `ms_per_cycle` (median) and
//! `ms_per_level` (of the last cycle, from its trace).
//!
//! Built with the `distributed` feature and started by `mpirun` (any
//! number of ranks, one included), the problem is split across the ranks
//! and solved by `hipacc::distributed::multigrid::DistPoisson`
//! (`hipacc_examples::multigrid::distributed`): `mpirun -np 4 multigrid
//! --size 4096`. Its solutions are the single-process run's, bit for bit,
//! and so are the errors; the residual norms differ by the rounding of
//! their sums. Levels of at most `--gather-at` cells per side (default 64)
//! are gathered onto rank 0 and solved there. Every rank's levels live on
//! its `--backend` device (then the single-process run on that backend is
//! the reference); `--graph` is refused. The report adds the rank count, the process
//! grid and the distributed levels; `--timings` prints, for the last
//! cycle, the slowest rank's halo exchange and kernel time per distributed
//! level and the time of the coarse levels (gather, solve on rank 0,
//! scatter); `--json` has them as `ranks`, `process_grid`,
//! `distributed_levels`, `gather_at`, `exchange_ms_per_level`,
//! `kernel_ms_per_level` and `coarse_ms` (and no `ms_per_level`). Only
//! rank 0 prints, and a failure on any rank (a grid too small to split
//! over the ranks among them) stops all of them with one message.

use anyhow::{bail, Result};
use clap::Parser;
use hipacc::core::io::write_atomically;
use hipacc::multigrid::{Bc, CycleKind, CycleOptions, MultigridError, Poisson, Smoother};
use hipacc::Device;
use hipacc_examples::multigrid::{median, residual_plot, smoother_name, Figures, Problem, Start};
use hipacc_examples::ranks::{self, Ranks};
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

/// Geometric multigrid on a manufactured Poisson problem.
#[derive(Parser, Debug)]
#[command(name = "multigrid")]
struct Args {
    /// Cells per side.
    #[arg(long, default_value_t = 1024, value_name = "N")]
    size: usize,
    /// Levels (default: down to at most 16x16).
    #[arg(long, value_name = "L")]
    levels: Option<usize>,
    /// v, w or f.
    #[arg(long, default_value = "v")]
    cycle: CycleKind,
    /// jacobi (weighted) or rbgs (red-black Gauss-Seidel).
    #[arg(long, default_value = "rbgs", value_parser = ["jacobi", "rbgs"])]
    smoother: String,
    /// Jacobi weight, in (0, 2).
    #[arg(long, default_value_t = 0.8, value_name = "W")]
    omega: f64,
    /// Pre-smoothing sweeps.
    #[arg(long, default_value_t = 2)]
    pre: usize,
    /// Post-smoothing sweeps.
    #[arg(long, default_value_t = 2)]
    post: usize,
    /// dirichlet or neumann.
    #[arg(long, default_value = "dirichlet")]
    bc: Bc,
    /// Most cycles.
    #[arg(long, default_value_t = 20, value_name = "C")]
    max_cycles: usize,
    /// Stop when the residual has fallen to T times the norm of f.
    #[arg(long, default_value_t = 1e-10, value_name = "T")]
    tol: f64,
    /// Residual and restriction in one kernel.
    #[arg(long)]
    fused: bool,
    /// Record the first cycle from each state, replay later ones (every backend).
    #[arg(long)]
    graph: bool,
    /// f32 or f64.
    #[arg(long, default_value = "f64", value_parser = ["f32", "f64"])]
    precision: String,
    /// random, zero or fmg.
    #[arg(long, default_value = "random", value_parser = ["random", "zero", "fmg"])]
    start: String,
    /// cpu, opencl, cuda or auto.
    #[arg(long, default_value = "cpu", value_name = "B")]
    backend: String,
    /// Print the per-kernel, per-level timing table of the last cycle.
    #[arg(long)]
    timings: bool,
    /// Write the residual per cycle as an SVG chart (log scale).
    #[arg(long, value_name = "FILE.svg")]
    plot: Option<PathBuf>,
    /// Print the results as one JSON object.
    #[arg(long)]
    json: bool,
    /// Under mpirun: gather levels of at most G cells per side onto rank 0
    /// [default: 64].
    #[arg(long, value_name = "G")]
    gather_at: Option<usize>,
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
    let ranks = match Ranks::start() {
        Ok(ranks) => ranks,
        Err(e) => {
            eprintln!("multigrid: {e:#}");
            return ExitCode::FAILURE;
        }
    };
    match run(&args, &ranks) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) if speaks => {
            eprintln!("multigrid: {e:#}");
            ExitCode::FAILURE
        }
        // Under `mpirun` the job's status is rank 0's, which reports the
        // failure every rank agreed on; the others end quietly.
        Err(_) => ExitCode::SUCCESS,
    }
}

fn run(args: &Args, ranks: &Ranks) -> Result<()> {
    let problem = problem(args)?;
    #[cfg(feature = "distributed")]
    if let Some(world) = ranks.world() {
        return distributed::run(args, &problem, &world, ranks);
    }
    if args.gather_at.is_some() {
        bail!("--gather-at applies to runs across MPI ranks: start multigrid with mpirun");
    }
    single(args, &problem, ranks)
}

/// The problem the arguments describe, checked.
fn problem(args: &Args) -> Result<Problem> {
    if args.size == 0 || args.size > 16384 {
        bail!("--size must be between 1 and 16384, got {}", args.size);
    }
    // Checked whatever the smoother: an out-of-range weight is a mistake
    // even where red-black Gauss-Seidel would not use it.
    if !(args.omega > 0.0 && args.omega < 2.0) {
        return Err(MultigridError::Omega(args.omega).into());
    }
    let levels = args
        .levels
        .unwrap_or_else(|| Poisson::<f64>::default_levels(args.size, args.size, args.bc));
    let mut opts = CycleOptions::new(args.cycle, smoother(args), args.pre, args.post)
        .fused(args.fused)
        .graph(args.graph);
    opts.coarse_sweeps = 64;
    opts.validate(levels)?;
    if args.max_cycles == 0 {
        bail!("--max-cycles must be at least 1");
    }
    if !(args.tol > 0.0 && args.tol.is_finite()) {
        bail!("--tol must be positive, got {}", args.tol);
    }
    Ok(Problem {
        size: args.size,
        levels,
        bc: args.bc,
        opts,
        max_cycles: args.max_cycles,
        tol: args.tol,
        start: match args.start.as_str() {
            "zero" => Start::Zero,
            "fmg" => Start::Fmg,
            _ => Start::Random,
        },
    })
}

fn smoother(args: &Args) -> Smoother {
    match args.smoother.as_str() {
        "jacobi" => Smoother::Jacobi { omega: args.omega },
        _ => Smoother::RedBlack,
    }
}

/// The run on this process alone.
fn single(args: &Args, problem: &Problem, ranks: &Ranks) -> Result<()> {
    let dev = Device::from_name(&args.backend)?;
    let out = if args.precision == "f32" {
        problem.run::<f32>(&dev)?
    } else {
        problem.run::<f64>(&dev)?
    };
    let title = title(args, problem, &dev.name());
    plot(args, Some((&out.figures, &title)), ranks)?;
    if args.timings {
        println!("{}", out.trace.timing_table());
    }
    if args.json {
        let mut json = json(args, problem, &dev, &out.figures);
        json["ms_per_level"] = serde_json::json!(per_level_ms(&out.trace, problem.levels));
        println!("{json}");
    } else {
        println!("{title}");
        print_figures(&out.figures);
    }
    Ok(())
}

/// The title of the report and the plot.
fn title(args: &Args, problem: &Problem, device: &str) -> String {
    format!(
        "{}({},{}) {} {}, {}x{}, {} levels, {device}",
        args.cycle.to_string().to_uppercase(),
        args.pre,
        args.post,
        args.smoother,
        args.bc,
        args.size,
        args.size,
        problem.levels,
    )
}

/// Writes `--plot` if asked, on the process that has the `report`
/// (figures and title). Collective.
fn plot(args: &Args, report: Option<(&Figures, &str)>, ranks: &Ranks) -> Result<()> {
    let written = match (&args.plot, report) {
        (Some(path), Some((figures, title))) => {
            let svg = residual_plot(&figures.residuals, title);
            write_atomically(path, |f| {
                f.write_all(svg.as_bytes()).map_err(|e| e.to_string())
            })
            .map_err(anyhow::Error::from)
        }
        _ => Ok(()),
    };
    ranks.agree(written)
}

/// The JSON report's fields common to both runs.
fn json(args: &Args, problem: &Problem, dev: &Device, figures: &Figures) -> serde_json::Value {
    serde_json::json!({
        "size": args.size,
        "levels": problem.levels,
        "cycle": args.cycle.to_string(),
        "smoother": smoother_name(problem.opts.smoother),
        "omega": args.omega,
        "pre": args.pre,
        "post": args.post,
        "bc": args.bc.to_string(),
        "fused": args.fused,
        "graph": args.graph,
        "precision": args.precision,
        "backend": dev.name(),
        "start": args.start,
        "residuals": figures.residuals,
        "convergence_factor": figures.convergence_factor,
        "error_vs_exact": figures.error_vs_exact,
        "error_after_fmg": figures.error_after_fmg,
        "ms_fmg": figures.ms_fmg,
        "ms_per_cycle": median(&figures.ms_cycles),
    })
}

/// The text report: residual per cycle, convergence, errors, time.
fn print_figures(figures: &Figures) {
    let residuals = &figures.residuals;
    for (i, r) in residuals.iter().enumerate() {
        let ratio = if i > 0 {
            r / residuals[i - 1]
        } else {
            f64::NAN
        };
        println!("cycle {i:3}  residual {r:.3e}  ratio {ratio:.3}");
    }
    match figures.convergence_factor {
        Some(f) => println!("convergence factor {f:.3}"),
        None => println!("convergence factor: no cycle ran"),
    }
    if let Some(e) = figures.error_after_fmg {
        println!("error after FMG   {e:.3e}");
    }
    if let Some(ms) = figures.ms_fmg {
        println!("ms of FMG         {ms:.3}");
    }
    println!("error vs exact    {:.3e}", figures.error_vs_exact);
    println!(
        "ms per cycle      {:.3} (median of {})",
        median(&figures.ms_cycles),
        figures.ms_cycles.len()
    );
}

/// Host time per level of the trace's launches.
fn per_level_ms(trace: &hipacc::Trace, levels: usize) -> Vec<f64> {
    let mut ms = vec![0.0; levels];
    for l in trace.launches() {
        if let Some(m) = ms.get_mut(l.level) {
            *m += l.elapsed.as_secs_f64() * 1e3;
        }
    }
    ms
}

/// The run across the ranks of `mpirun`.
#[cfg(feature = "distributed")]
mod distributed {
    use super::{json, plot, print_figures, title, Args};
    use anyhow::{bail, Result};
    use hipacc::distributed::mpi::topology::SimpleCommunicator;
    use hipacc::Device;
    use hipacc_examples::multigrid::distributed::{self as dist, DistOutcome};
    use hipacc_examples::multigrid::Problem;
    use hipacc_examples::ranks::Ranks;

    /// Levels of at most this many cells per side are gathered by default.
    const GATHER_AT: usize = 64;

    /// Solves `problem` across the ranks of `world`; rank 0 reports.
    /// Collective.
    pub(super) fn run(
        args: &Args,
        problem: &Problem,
        world: &SimpleCommunicator,
        ranks: &Ranks,
    ) -> Result<()> {
        if args.graph {
            bail!("--graph records single-process cycles: leave it out under mpirun");
        }
        // Every rank opens its own device; one that cannot stops them all.
        let dev = ranks.agree(Device::from_name(&args.backend).map_err(Into::into))?;
        let gather_at = args.gather_at.unwrap_or(GATHER_AT);
        let out = if args.precision == "f32" {
            dist::run::<f32>(problem, world, &dev, gather_at)?
        } else {
            dist::run::<f64>(problem, world, &dev, gather_at)?
        };
        let title = out.as_ref().map(|o| {
            let (px, py) = o.process_grid;
            let single = title(args, problem, &dev.name());
            format!("{single}, {} ranks ({px}x{py})", o.ranks)
        });
        let report = out.as_ref().zip(title.as_deref());
        plot(args, report.map(|(o, t)| (&o.figures, t)), ranks)?;
        let (Some(out), Some(title)) = (out, title) else {
            return Ok(());
        };
        let (px, py) = out.process_grid;
        if args.timings {
            print_timings(problem, &out);
        }
        if args.json {
            let mut json = json(args, problem, &dev, &out.figures);
            json["ranks"] = out.ranks.into();
            json["process_grid"] = serde_json::json!([px, py]);
            json["distributed_levels"] = out.distributed_levels.into();
            json["gather_at"] = gather_at.into();
            json["exchange_ms_per_level"] = serde_json::json!(out.exchange_ms);
            json["kernel_ms_per_level"] = serde_json::json!(out.kernel_ms);
            json["coarse_ms"] = out.coarse_ms.into();
            println!("{json}");
        } else {
            println!("{title}");
            println!(
                "{} of {} levels distributed, levels of at most {gather_at} cells per side gathered onto rank 0",
                out.distributed_levels, problem.levels
            );
            print_figures(&out.figures);
        }
        Ok(())
    }

    /// The last cycle's time per distributed level and on the coarse levels.
    fn print_timings(problem: &Problem, out: &DistOutcome) {
        println!("last cycle, slowest rank (ms):");
        println!("level  cells        halo exchange    kernels");
        let mut side = problem.size;
        for (k, (e, c)) in out.exchange_ms.iter().zip(&out.kernel_ms).enumerate() {
            println!("{k:5}  {:<11}  {e:13.3}  {c:9.3}", format!("{side}x{side}"));
            side = side.div_ceil(2);
        }
        println!(
            "levels {} to {} ({side}x{side} and below) on rank 0: gather, solve, scatter {:.3}",
            out.distributed_levels,
            problem.levels - 1,
            out.coarse_ms
        );
    }
}
