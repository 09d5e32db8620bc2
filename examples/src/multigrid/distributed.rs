//! The `multigrid` example across MPI ranks (the `distributed` feature;
//! `mpirun -np N multigrid ...`): the same manufactured problem, solved
//! by [`DistPoisson`].
//!
//! Rank 0 builds the right-hand side (and the pseudo-random initial guess
//! of [`Start::Random`]) with the single-process functions of
//! [`manufactured`] and scatters it, so every pixel has the single-process
//! value; it gathers the solution to measure its error the same way. The
//! cycles run on every rank. Their solutions are the single-process
//! solver's, bit for bit, for any rank count (see
//! [`hipacc::distributed::multigrid`]); the residual norms differ from the
//! single-process ones by the rounding of their sums, which each rank
//! count groups differently: each rank sums the squares of its block in
//! `f64` and the ranks' sums are added in rank order, where one process
//! adds them in row-major chunks. Both orders are within `(n - 1) u`
//! of the exact sum of the `n` squares (`u = 2⁻⁵³`), so the norms agree
//! to about `n u` relative. The stopping test compares them with the
//! norm of `f` that rank 0 computes as one process does, so a run stops
//! after the same cycle unless a residual lands within that rounding of
//! its tolerance.

use super::{rhs_norm, Figures, Problem, Start};
use crate::ranks::mpi::{agree, rank_error};
use anyhow::Result;
use hipacc::distributed::mpi::collective::SystemOperation;
use hipacc::distributed::mpi::topology::SimpleCommunicator;
use hipacc::distributed::mpi::traits::*;
use hipacc::distributed::multigrid::{CycleStats, DistPoisson, DistReal};
use hipacc::distributed::{DistError, DistImage, Grid};
use hipacc::multigrid::{convergence_factor, manufactured};
use hipacc::{Device, Image};
use std::rc::Rc;
use std::time::Instant;

/// What a run across the ranks measured (on rank 0).
#[derive(Clone, Debug)]
pub struct DistOutcome {
    /// Residuals, errors and cycle times (each cycle's wall time between
    /// barriers).
    pub figures: Figures,
    /// Ranks of the job.
    pub ranks: usize,
    /// The process grid, ranks along x and y.
    pub process_grid: (usize, usize),
    /// Levels split across the ranks, above the one gathered onto rank 0.
    pub distributed_levels: usize,
    /// The last cycle's (or full multigrid's, if no cycle ran) halo
    /// exchanges per distributed level, finest first: the slowest rank's
    /// milliseconds.
    pub exchange_ms: Vec<f64>,
    /// The same step's kernels per distributed level: the slowest rank's
    /// milliseconds.
    pub kernel_ms: Vec<f64>,
    /// The same step's coarse levels: gathering onto rank 0, solving there
    /// and scattering back, the slowest rank's milliseconds.
    pub coarse_ms: f64,
}

/// Solves `problem` in precision `T` across the ranks of `world` on
/// `dev`, gathering levels of at most `gather_at` cells per side onto
/// rank 0. Collective; rank 0 gets the outcome, the others `None`. An
/// error on any rank is every rank's error.
pub fn run<T: DistReal>(
    problem: &Problem,
    world: &SimpleCommunicator,
    dev: &Device,
    gather_at: usize,
) -> Result<Option<DistOutcome>> {
    let n = problem.size;
    let dist = |e: DistError| rank_error(world, e);
    problem.opts.validate(problem.levels)?;
    let grid = Rc::new(Grid::new(world, n, n).map_err(dist)?);
    let mut p = DistPoisson::<T>::new(&grid, problem.levels, problem.bc, 1.0 / n as f64, gather_at)
        .map_err(dist)?;
    let root = grid.rank() == 0;
    // The right-hand side and a random guess as one process makes them.
    let rhs = agree(
        world,
        on_root(root, n, |f| manufactured::fill_rhs(problem.bc, f)),
    )?;
    p.set_rhs(scattered(&grid, rhs.as_ref())?).map_err(dist)?;
    let mut stats = CycleStats::default();
    let mut error_after_fmg = None;
    let mut ms_fmg = None;
    match problem.start {
        Start::Random => {
            let guess = agree(
                world,
                on_root(root, n, |u| manufactured::random_guess(u, 1)),
            )?;
            p.set_solution(scattered(&grid, guess.as_ref())?)
                .map_err(dist)?;
        }
        Start::Zero => {}
        Start::Fmg => {
            world.barrier();
            let t0 = Instant::now();
            stats = p.fmg(dev, &problem.opts, 1).map_err(dist)?;
            world.barrier();
            ms_fmg = Some(t0.elapsed().as_secs_f64() * 1e3);
            error_after_fmg = max_error(world, problem, p.solution())?;
        }
    }
    let norm_f = norm_of_rhs(world, problem, p.rhs())?;
    let mut residuals = vec![p.residual_norm(dev).map_err(dist)?];
    let mut ms_cycles = Vec::new();
    while problem.goes_on(&residuals, norm_f) {
        world.barrier();
        let t0 = Instant::now();
        stats = p.cycle(dev, &problem.opts).map_err(dist)?;
        world.barrier();
        ms_cycles.push(t0.elapsed().as_secs_f64() * 1e3);
        residuals.push(p.residual_norm(dev).map_err(dist)?);
    }
    let error_vs_exact = max_error(world, problem, p.solution())?;
    let distributed_levels = p.distributed_levels();
    let (exchange_ms, kernel_ms, coarse_ms) = slowest(world, &stats, distributed_levels);
    Ok(error_vs_exact.map(|error_vs_exact| DistOutcome {
        figures: Figures {
            convergence_factor: convergence_factor(&residuals),
            error_vs_exact,
            error_after_fmg,
            ms_fmg,
            residuals,
            ms_cycles,
        },
        ranks: grid.ranks(),
        process_grid: grid.shape(),
        distributed_levels,
        exchange_ms,
        kernel_ms,
        coarse_ms,
    }))
}

/// On rank 0 (`root`), an `n x n` image filled by `fill`; `None` elsewhere.
fn on_root<T: DistReal>(
    root: bool,
    n: usize,
    fill: impl FnOnce(&Image<T>) -> hipacc::Result<()>,
) -> Result<Option<Image<T>>> {
    if !root {
        return Ok(None);
    }
    let image = Image::new(n, n)?;
    fill(&image)?;
    Ok(Some(image))
}

/// `global` (rank 0's) scattered over `grid`, as the global pixel
/// function [`DistPoisson::set_rhs`] takes. Collective.
fn scattered<T: DistReal>(
    grid: &Rc<Grid>,
    global: Option<&Image<T>>,
) -> Result<impl Fn(usize, usize) -> T> {
    let world = grid.comm();
    let block = DistImage::scatter(grid, 0, global)
        .and_then(|d| d.block_pixels())
        .map_err(|e| rank_error(world, e))?;
    let b = grid.my_block();
    Ok(move |x: usize, y: usize| block[(y - b.y) * b.width + (x - b.x)])
}

/// The norm of `rhs` ([`rhs_norm`]), computed on rank 0 from the
/// gathered image as one process computes it, on every rank. Collective.
fn norm_of_rhs<T: DistReal>(
    world: &SimpleCommunicator,
    problem: &Problem,
    rhs: &DistImage<T>,
) -> Result<f64> {
    let gathered = rhs.gather(0).map_err(|e| rank_error(world, e))?;
    let local = match &gathered {
        Some(f) => rhs_norm(problem.bc, f).map_err(anyhow::Error::from),
        None => Ok(0.0),
    };
    let mut norm = [agree(world, local)?];
    world.process_at_rank(0).broadcast_into(&mut norm[..]);
    Ok(norm[0])
}

/// `max |u - u_exact|` of the gathered solution `u`, as one process
/// measures it ([`manufactured::max_error`]), on rank 0; `None`
/// elsewhere. Collective.
fn max_error<T: DistReal>(
    world: &SimpleCommunicator,
    problem: &Problem,
    u: &DistImage<T>,
) -> Result<Option<f64>> {
    let gathered = u.gather(0).map_err(|e| rank_error(world, e))?;
    let local = match &gathered {
        Some(u) => manufactured::max_error(problem.bc, u)
            .map(Some)
            .map_err(anyhow::Error::from),
        None => Ok(None),
    };
    agree(world, local)
}

/// The slowest rank's figures of `stats` in milliseconds: halo exchange
/// and kernels per distributed level, and the coarse levels. Collective.
fn slowest(
    world: &SimpleCommunicator,
    stats: &CycleStats,
    levels: usize,
) -> (Vec<f64>, Vec<f64>, f64) {
    let level = |k: usize| stats.levels.get(k).cloned().unwrap_or_default();
    let mut mine: Vec<f64> = (0..levels).map(|k| level(k).exchange.seconds).collect();
    mine.extend((0..levels).map(|k| level(k).compute_seconds));
    mine.push(stats.coarse_seconds);
    let mut max = vec![0.0f64; mine.len()];
    world.all_reduce_into(&mine[..], &mut max[..], SystemOperation::max());
    let ms: Vec<f64> = max.iter().map(|s| s * 1e3).collect();
    (
        ms[..levels].to_vec(),
        ms[levels..2 * levels].to_vec(),
        ms[2 * levels],
    )
}
