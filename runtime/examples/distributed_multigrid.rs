//! Strong scaling of the distributed multigrid solver: `-Δu = f` on the
//! unit square (`f = 2π² sin(πx) sin(πy)`, zero Dirichlet boundary,
//! cell-centred, `f32`) split over the MPI ranks.
//!
//! ```sh
//! cargo build --release -p hipacc --features distributed --example distributed_multigrid
//! mpirun -np 2 target/release/examples/distributed_multigrid --size 4096 --cycles 5
//! mpirun -np 2 target/release/examples/distributed_multigrid --size 4096 --fmg --cycles 0
//! ```
//!
//! Options: `--size N` (cells per side, default 1024), `--cycle v|w|f`,
//! `--cycles C` (cycles after the start, default 5), `--fmg` (start with
//! full multigrid, one cycle per level; otherwise from zero),
//! `--gather-at G` (levels of at most `G` cells per side are gathered onto
//! rank 0, default 64), `--jacobi` (weighted Jacobi, `ω = 0.8`, instead of
//! red-black Gauss-Seidel), `--json`.
//!
//! Rank 0 prints the residual norm after the start and after every cycle
//! (17 significant digits, to compare rank counts), each step's wall time
//! (between barriers), the slowest rank's halo-exchange time per
//! distributed level and the time spent gathering, solving and scattering
//! the coarse levels; `--json` prints one object with the same figures.

use hipacc::distributed::multigrid::{CycleStats, DistPoisson};
use hipacc::distributed::{self, mpi::traits::*, Grid};
use hipacc::multigrid::{Bc, CycleKind, CycleOptions, Poisson, Smoother};
use hipacc::prelude::*;
use std::f64::consts::PI;
use std::rc::Rc;
use std::time::Instant;

fn arg(name: &str) -> Option<String> {
    let args: Vec<String> = std::env::args().collect();
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1).cloned())
}

fn number(name: &str, default: usize) -> usize {
    arg(name).map_or(default, |v| {
        v.parse()
            .unwrap_or_else(|_| panic!("{name} takes a number"))
    })
}

fn flag(name: &str) -> bool {
    std::env::args().any(|a| a == name)
}

/// One step (full multigrid or a cycle) as every rank saw it: wall time,
/// the slowest rank's exchange seconds per level and coarse seconds.
struct Step {
    name: String,
    residual: f64,
    wall_s: f64,
    exchange_s: Vec<f64>,
    coarse_s: f64,
}

/// The slowest rank's figures of `stats`. Collective.
fn slowest(grid: &Grid, stats: &CycleStats, levels: usize) -> (Vec<f64>, f64) {
    let mut mine: Vec<f64> = (0..levels)
        .map(|k| stats.levels.get(k).map_or(0.0, |l| l.exchange.seconds))
        .collect();
    mine.push(stats.coarse_seconds);
    let mut max = vec![0.0f64; mine.len()];
    grid.comm().all_reduce_into(
        &mine[..],
        &mut max[..],
        distributed::mpi::collective::SystemOperation::max(),
    );
    let coarse = max.pop().unwrap_or(0.0);
    (max, coarse)
}

fn main() -> Result<(), distributed::DistError> {
    let size = number("--size", 1024);
    let cycles = number("--cycles", 5);
    let gather_at = number("--gather-at", 64);
    let kind = match arg("--cycle").as_deref() {
        None | Some("v") => CycleKind::V,
        Some("w") => CycleKind::W,
        Some("f") => CycleKind::F,
        Some(other) => panic!("--cycle takes v, w or f, not {other}"),
    };
    let smoother = if flag("--jacobi") {
        Smoother::Jacobi { omega: 0.8 }
    } else {
        Smoother::RedBlack
    };
    let universe = distributed::initialize()?;
    let world = universe.world();
    let grid = Rc::new(Grid::new(&world, size, size)?);
    let dev = Device::cpu();
    let levels = Poisson::<f32>::default_levels(size, size, Bc::Dirichlet);
    let h = 1.0 / size as f64;
    let mut p = DistPoisson::<f32>::new(&grid, levels, Bc::Dirichlet, h, gather_at)?;
    p.set_rhs(|x, y| {
        let (cx, cy) = ((x as f64 + 0.5) * h, (y as f64 + 0.5) * h);
        (2.0 * PI * PI * (PI * cx).sin() * (PI * cy).sin()) as f32
    })?;
    let opts = CycleOptions::new(kind, smoother, 2, 2);
    let distributed_levels = p.distributed_levels();
    let mut steps = vec![Step {
        name: "start".into(),
        residual: p.residual_norm(&dev)?,
        wall_s: 0.0,
        exchange_s: vec![0.0; distributed_levels],
        coarse_s: 0.0,
    }];
    let runs = usize::from(flag("--fmg")) + cycles;
    for i in 0..runs {
        world.barrier();
        let start = Instant::now();
        let (name, stats) = if i == 0 && flag("--fmg") {
            ("fmg".to_string(), p.fmg(&dev, &opts, 1)?)
        } else {
            (format!("cycle {}", steps.len()), p.cycle(&dev, &opts)?)
        };
        world.barrier();
        let wall_s = start.elapsed().as_secs_f64();
        let (exchange_s, coarse_s) = slowest(&grid, &stats, distributed_levels);
        steps.push(Step {
            name,
            residual: p.residual_norm(&dev)?,
            wall_s,
            exchange_s,
            coarse_s,
        });
    }
    if grid.rank() != 0 {
        return Ok(());
    }
    let (px, py) = grid.shape();
    let cycle = format!("{kind:?}").to_lowercase();
    if flag("--json") {
        let steps: Vec<_> = steps
            .iter()
            .map(|s| {
                serde_json::json!({
                    "step": s.name,
                    "residual": s.residual,
                    "wall_ms": s.wall_s * 1e3,
                    "exchange_ms_per_level": s.exchange_s.iter().map(|e| e * 1e3).collect::<Vec<_>>(),
                    "coarse_ms": s.coarse_s * 1e3,
                })
            })
            .collect();
        let json = serde_json::json!({
            "size": size,
            "ranks": grid.ranks(),
            "process_grid": [px, py],
            "levels": levels,
            "distributed_levels": distributed_levels,
            "gather_at": gather_at,
            "cycle": cycle,
            "steps": steps,
        });
        println!("{json}");
        return Ok(());
    }
    println!(
        "{size}x{size} on {} ranks ({px}x{py}), {levels} levels, {distributed_levels} distributed, {cycle}-cycles",
        grid.ranks()
    );
    for s in &steps {
        let ex: Vec<String> = s
            .exchange_s
            .iter()
            .map(|e| format!("{:.3}", e * 1e3))
            .collect();
        println!(
            "{:<9} residual {:.16e}  wall {:8.2} ms  halo exchange per level (ms, slowest rank) [{}]  coarse {:.2} ms",
            s.name,
            s.residual,
            s.wall_s * 1e3,
            ex.join(" "),
            s.coarse_s * 1e3
        );
    }
    Ok(())
}
