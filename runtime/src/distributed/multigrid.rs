//! The multigrid V-cycle on images split across ranks.
//!
//! [`DistPoisson`] is the [`Poisson`] problem of
//! [`multigrid`](crate::multigrid) with its fine levels distributed: each
//! level's grid is the previous one's [`Grid::coarser`], and every level
//! runs the single-process cycle's kernels through [`execute`](super::execute),
//! their edge tests and red-black colours in global coordinates from
//! [`Reads::origin`](super::Reads::origin). Coarsening stops at the first
//! level whose longer side is at most `gather_at`, that cannot be split
//! further, or that is the hierarchy's coarsest: its right-hand side is
//! gathered onto rank 0, which runs the single-process cycle from that
//! level down (the same options, its exact coarse solve included) and
//! scatters the correction back. So every launch computes what the
//! single-process cycle computes, and `n` cycles give a solution
//! bit-identical to its `n` cycles for any rank count and any `gather_at`.
//!
//! V-cycles only, both smoothers, both boundary conditions. The residual
//! norm sums each rank's squares in `f64` and adds the ranks' sums, so it
//! differs from [`Poisson::residual_norm`] by the rounding of that sum.
//! A pure Neumann problem needs a zero-mean right-hand side (the
//! single-process `solve` subtracts the mean first; this type runs cycles
//! only).
//!
//! ```no_run
//! use hipacc::distributed::{self, multigrid::DistPoisson, Grid};
//! use hipacc::multigrid::{Bc, CycleKind, CycleOptions, Smoother};
//! use hipacc::Device;
//! use std::rc::Rc;
//!
//! let universe = distributed::initialize()?;
//! let n = 256;
//! let grid = Rc::new(Grid::new(&universe.world(), n, n)?);
//! let levels = hipacc::multigrid::Poisson::<f32>::default_levels(n, n, Bc::Dirichlet);
//! let mut p = DistPoisson::<f32>::new(&grid, levels, Bc::Dirichlet, 1.0 / n as f64, 32)?;
//! p.set_rhs(|_, _| 1.0)?;
//! let opts = CycleOptions::new(CycleKind::V, Smoother::RedBlack, 2, 2);
//! let dev = Device::cpu();
//! for _ in 0..5 {
//!     p.cycle(&dev, &opts)?;
//! }
//! let r = p.residual_norm(&dev)?;
//! if grid.rank() == 0 {
//!     println!("residual {r:e}");
//! }
//! # Ok::<(), distributed::DistError>(())
//! ```

use super::{all_gather, DistError, DistImage, DistResult, Grid, LaunchStats};
use crate::multigrid::{Bc, CycleKind, CycleOptions, MultigridError, Poisson, Real, Smoother};
use crate::Device;
use std::rc::Rc;

type MgGrid = crate::multigrid::real::Grid;

/// One distributed level: solution, right-hand side and scratch.
struct Level<T: Real> {
    grid: Rc<Grid>,
    g: MgGrid,
    u: DistImage<T>,
    f: DistImage<T>,
    t: DistImage<T>,
}

/// A Poisson problem whose fine levels are split across the ranks (see
/// the [module docs](self)).
pub struct DistPoisson<T: Real> {
    /// The distributed levels, the last one the gathered level.
    levels: Vec<Level<T>>,
    /// The gathered level and those below, on rank 0.
    coarse: Option<Poisson<T>>,
    /// Levels of the whole hierarchy.
    depth: usize,
}

/// What a cycle did on this rank.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct CycleStats {
    /// The launches' halo exchanges and kernel time, summed.
    pub launches: LaunchStats,
    /// Gathering the coarse right-hand side, the rank-0 solve and
    /// scattering the correction, in seconds.
    pub coarse_seconds: f64,
}

impl CycleStats {
    fn add(&mut self, s: LaunchStats) {
        self.launches.exchange += s.exchange;
        self.launches.compute_seconds += s.compute_seconds;
    }
}

impl<T: Real> DistPoisson<T> {
    /// A problem on `grid` with `levels` levels (as
    /// [`Poisson::new`]), zero right-hand side and initial guess; levels
    /// are distributed down to the first whose longer side is at most
    /// `gather_at` (see the [module docs](self)). Collective.
    pub fn new(
        grid: &Rc<Grid>,
        levels: usize,
        bc: Bc,
        spacing: f64,
        gather_at: usize,
    ) -> DistResult<Self> {
        let (w, h) = (grid.width(), grid.height());
        let max = Poisson::<T>::max_levels(w, h, bc);
        if levels == 0 {
            return Err(DistError::Usage("a multigrid hierarchy needs a level"));
        }
        if levels > max {
            return Err(crate::Error::from(MultigridError::NotDivisible {
                width: w,
                height: h,
                max,
            })
            .into());
        }
        if !(spacing > 0.0 && spacing.is_finite()) {
            return Err(crate::Error::from(MultigridError::Spacing(spacing)).into());
        }
        let mut grids = vec![grid.clone()];
        loop {
            let last = &grids[grids.len() - 1];
            if grids.len() == levels || last.width().max(last.height()) <= gather_at {
                break;
            }
            match last.coarser() {
                Ok(g) => grids.push(Rc::new(g)),
                Err(DistError::TooSmall { .. }) => break,
                Err(e) => return Err(e),
            }
        }
        let gathered = grids.len() - 1;
        let coarse = if grid.rank() == 0 {
            let g = &grids[gathered];
            Some(Poisson::coarse_part(
                (g.width(), g.height()),
                levels - gathered,
                bc,
                spacing,
                gathered,
                (w, h),
            )?)
        } else {
            None
        };
        let levels_vec = grids
            .into_iter()
            .enumerate()
            .map(|(k, grid)| {
                Ok(Level {
                    g: MgGrid::of_level((grid.width(), grid.height()), (w, h), k, spacing, bc),
                    u: DistImage::new(&grid)?,
                    f: DistImage::new(&grid)?,
                    t: DistImage::new(&grid)?,
                    grid,
                })
            })
            .collect::<DistResult<Vec<_>>>()?;
        Ok(DistPoisson {
            levels: levels_vec,
            coarse,
            depth: levels,
        })
    }

    /// Levels of the hierarchy.
    pub fn levels(&self) -> usize {
        self.depth
    }

    /// The distributed levels above the gathered one (0: the whole
    /// problem is solved on rank 0).
    pub fn distributed_levels(&self) -> usize {
        self.levels.len() - 1
    }

    /// Sets the finest right-hand side to `f(x, y)` (global coordinates).
    pub fn set_rhs(&mut self, f: impl Fn(usize, usize) -> T) -> DistResult<()> {
        self.levels[0].f = DistImage::from_fn(&self.levels[0].grid, f)?;
        Ok(())
    }

    /// Sets the solution (the next cycle's initial guess) to `u(x, y)`.
    pub fn set_solution(&mut self, u: impl Fn(usize, usize) -> T) -> DistResult<()> {
        self.levels[0].u = DistImage::from_fn(&self.levels[0].grid, u)?;
        Ok(())
    }

    /// The finest solution.
    pub fn solution(&self) -> &DistImage<T> {
        &self.levels[0].u
    }

    /// One V-cycle from the current solution. Collective.
    pub fn cycle(&mut self, dev: &Device, opts: &CycleOptions) -> DistResult<CycleStats> {
        opts.validate(self.depth).map_err(crate::Error::from)?;
        if opts.kind != CycleKind::V {
            return Err(DistError::Usage("distributed multigrid runs V-cycles only"));
        }
        let mut stats = CycleStats::default();
        // The gathered levels' own options: their level 0 is this level.
        let below = CycleOptions {
            per_level: opts
                .per_level
                .iter()
                .skip(self.distributed_levels())
                .copied()
                .collect(),
            graph: false,
            ..opts.clone()
        };
        v_cycle(
            &mut self.levels,
            self.coarse.as_ref(),
            dev,
            opts,
            &below,
            0,
            &mut stats,
        )?;
        Ok(stats)
    }

    /// The discrete L2 norm `sqrt(Σ r² / n)` of the finest residual.
    /// Collective; every rank gets it.
    pub fn residual_norm(&mut self, dev: &Device) -> DistResult<f64> {
        let l = &self.levels[0];
        T::dist_residual(dev, l.g, &l.u, &l.f, &l.t)?;
        let local: f64 =
            l.t.block_pixels()?
                .into_iter()
                .map(|v| {
                    let v: f64 = v.into();
                    v * v
                })
                .sum();
        let total: f64 = all_gather(&l.grid, local).into_iter().sum();
        Ok((total / (l.grid.width() * l.grid.height()) as f64).sqrt())
    }
}

/// `sweeps` smoothing sweeps on `l`, the solution left in `l.u`.
fn smooth<T: Real>(
    dev: &Device,
    l: &mut Level<T>,
    smoother: Smoother,
    sweeps: usize,
    stats: &mut CycleStats,
) -> DistResult<()> {
    for _ in 0..sweeps {
        match smoother {
            Smoother::Jacobi { omega } => {
                stats.add(T::dist_smooth(dev, l.g, &l.u, &l.f, &l.t, omega, -1)?);
                std::mem::swap(&mut l.u, &mut l.t);
            }
            Smoother::RedBlack => {
                stats.add(T::dist_smooth(dev, l.g, &l.u, &l.f, &l.t, 1.0, 0)?);
                stats.add(T::dist_smooth(dev, l.g, &l.t, &l.f, &l.u, 1.0, 1)?);
            }
        }
    }
    Ok(())
}

/// The V-cycle at `levels[0]`, level `k` of the hierarchy.
fn v_cycle<T: Real>(
    levels: &mut [Level<T>],
    coarse: Option<&Poisson<T>>,
    dev: &Device,
    opts: &CycleOptions,
    below: &CycleOptions,
    k: usize,
    stats: &mut CycleStats,
) -> DistResult<()> {
    let [here, rest @ ..] = levels else {
        unreachable!("bug: a V-cycle below the gathered level")
    };
    if rest.is_empty() {
        let start = std::time::Instant::now();
        gathered_cycle(here, coarse, dev, below)?;
        stats.coarse_seconds += start.elapsed().as_secs_f64();
        return Ok(());
    }
    let (pre, post) = opts.sweeps(k);
    smooth(dev, here, opts.smoother, pre, stats)?;
    let child = &mut rest[0];
    if opts.fused {
        stats.add(T::dist_residual_restrict(
            dev, here.g, &here.u, &here.f, &child.f,
        )?);
    } else {
        stats.add(T::dist_residual(dev, here.g, &here.u, &here.f, &here.t)?);
        stats.add(T::dist_restrict(dev, &here.t, &child.f)?);
    }
    stats.add(T::dist_fill(dev, 0.0, &child.u)?);
    v_cycle(rest, coarse, dev, opts, below, k + 1, stats)?;
    let child = &rest[0];
    stats.add(T::dist_prolong(
        dev, here.g.bc, 1.0, &here.u, &child.u, &here.t,
    )?);
    std::mem::swap(&mut here.u, &mut here.t);
    smooth(dev, here, opts.smoother, post, stats)
}

/// The gathered level: its right-hand side onto rank 0, the
/// single-process V-cycle from a zero guess there, the correction back.
fn gathered_cycle<T: Real>(
    l: &mut Level<T>,
    coarse: Option<&Poisson<T>>,
    dev: &Device,
    opts: &CycleOptions,
) -> DistResult<()> {
    let f = l.f.gather(0)?;
    let solution = match (f, coarse) {
        (Some(f), Some(p)) => {
            p.rhs().copy_from_slice(&f.to_vec()?)?;
            p.solution().write()?.fill(T::default());
            p.cycle(dev, opts)?;
            Some(p.solution())
        }
        _ => None,
    };
    l.u = DistImage::scatter(&l.grid, 0, solution.as_ref())?;
    Ok(())
}
