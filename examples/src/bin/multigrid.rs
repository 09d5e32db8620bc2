//! `multigrid`: solves `-Δu = f` on an N x N cell-centred grid of the unit
//! square with a manufactured solution (`sin(πx) sin(πy)` for Dirichlet,
//! `cos(πx) cos(πy)` for Neumann) and reports convergence and timing.
//!
//! ```text
//! multigrid [--size N] [--levels L] [--cycle v|w|f] [--smoother jacobi|rbgs]
//!           [--omega W] [--pre N1] [--post N2] [--bc dirichlet|neumann]
//!           [--max-cycles C] [--tol T] [--fused] [--graph] [--precision f32|f64]
//!           [--start random|zero|fmg] [--backend B] [--timings]
//!           [--plot FILE.svg] [--json]
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
//! `error_vs_exact`, `error_after_fmg`, `ms_per_cycle` (median) and
//! `ms_per_level` (of the last cycle, from its trace).

use anyhow::Result;
use clap::Parser;
use hipacc::core::io::write_atomically;
use hipacc::multigrid::{Bc, CycleKind, CycleOptions, MultigridError, Poisson, Smoother};
use hipacc::Device;
use hipacc_examples::multigrid::{median, residual_plot, smoother_name, Problem, Start};
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
}

fn main() -> ExitCode {
    match run(Args::parse()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("multigrid: {e:#}");
            ExitCode::FAILURE
        }
    }
}

fn run(args: Args) -> Result<()> {
    if args.size == 0 || args.size > 16384 {
        anyhow::bail!("--size must be between 1 and 16384, got {}", args.size);
    }
    // Checked whatever the smoother: an out-of-range weight is a mistake
    // even where red-black Gauss-Seidel would not use it.
    if !(args.omega > 0.0 && args.omega < 2.0) {
        return Err(MultigridError::Omega(args.omega).into());
    }
    let smoother = match args.smoother.as_str() {
        "jacobi" => Smoother::Jacobi { omega: args.omega },
        _ => Smoother::RedBlack,
    };
    let levels = args
        .levels
        .unwrap_or_else(|| Poisson::<f64>::default_levels(args.size, args.size, args.bc));
    let mut opts = CycleOptions::new(args.cycle, smoother, args.pre, args.post)
        .fused(args.fused)
        .graph(args.graph);
    opts.coarse_sweeps = 64;
    opts.validate(levels)?;
    if args.max_cycles == 0 {
        anyhow::bail!("--max-cycles must be at least 1");
    }
    if !(args.tol > 0.0 && args.tol.is_finite()) {
        anyhow::bail!("--tol must be positive, got {}", args.tol);
    }
    let problem = Problem {
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
    };
    let dev = Device::from_name(&args.backend)?;
    let out = if args.precision == "f32" {
        problem.run::<f32>(&dev)?
    } else {
        problem.run::<f64>(&dev)?
    };
    let ms_per_cycle = median(&out.ms_cycles);
    let title = format!(
        "{}({},{}) {} {}, {}x{}, {} levels, {}",
        args.cycle.to_string().to_uppercase(),
        args.pre,
        args.post,
        args.smoother,
        args.bc,
        args.size,
        args.size,
        levels,
        dev.name()
    );
    if let Some(path) = &args.plot {
        let svg = residual_plot(&out.residuals, &title);
        write_atomically(path, |f| {
            f.write_all(svg.as_bytes()).map_err(|e| e.to_string())
        })?;
    }
    if args.timings {
        println!("{}", out.trace.timing_table());
    }
    let per_level = per_level_ms(&out.trace, levels);
    if args.json {
        let json = serde_json::json!({
            "size": args.size,
            "levels": levels,
            "cycle": args.cycle.to_string(),
            "smoother": smoother_name(smoother),
            "omega": args.omega,
            "pre": args.pre,
            "post": args.post,
            "bc": args.bc.to_string(),
            "fused": args.fused,
            "graph": args.graph,
            "precision": args.precision,
            "backend": dev.name(),
            "start": args.start,
            "residuals": out.residuals,
            "convergence_factor": out.convergence_factor,
            "error_vs_exact": out.error_vs_exact,
            "error_after_fmg": out.error_after_fmg,
            "ms_per_cycle": ms_per_cycle,
            "ms_per_level": per_level,
        });
        println!("{json}");
    } else {
        println!("{title}");
        for (i, r) in out.residuals.iter().enumerate() {
            let ratio = if i > 0 {
                r / out.residuals[i - 1]
            } else {
                f64::NAN
            };
            println!("cycle {i:3}  residual {r:.3e}  ratio {ratio:.3}");
        }
        match out.convergence_factor {
            Some(f) => println!("convergence factor {f:.3}"),
            None => println!("convergence factor: no cycle ran"),
        }
        if let Some(e) = out.error_after_fmg {
            println!("error after FMG   {e:.3e}");
        }
        println!("error vs exact    {:.3e}", out.error_vs_exact);
        println!(
            "ms per cycle      {ms_per_cycle:.3} (median of {})",
            out.ms_cycles.len()
        );
    }
    Ok(())
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
