//! The multigrid solver on images split across ranks.
//!
//! [`DistPoisson`] is the [`Poisson`] problem of
//! [`multigrid`](crate::multigrid) with its fine levels distributed: each
//! level's grid is the previous one's [`Grid::coarser`], and every level
//! runs the single-process solver's kernels through
//! [`execute`](super::execute), in their instances that take the launch's
//! origin for their edge tests and red-black colours (the single-process
//! solver binds instances without it, whose edge tests the CPU backend
//! folds). Coarsening stops at the first
//! level whose longer side is at most `gather_at`, that cannot be split
//! further, or that is the hierarchy's coarsest: its right-hand side is
//! gathered onto rank 0, which runs the single-process solver's steps from
//! that level down (the same options, its exact coarse solve included) and
//! scatters the solution back.
//!
//! V-, W- and F-cycles and full multigrid follow the single-process
//! recursion step for step, so every launch computes what the
//! single-process launch computes: `n` cycles, or full multigrid, give a
//! solution bit-identical to the single-process one for any rank count
//! and any `gather_at`.
//!
//! A pure Neumann problem's mean corrections ([`DistPoisson::fmg`],
//! [`DistPoisson::solve`] and [`DistPoisson::solve_to_error`] subtract the
//! mean of `f` first and of `u` last, as the single-process solver does)
//! take the mean from [`exact_sum`](super::exact_sum), the bits of the
//! single-process solver's host mean
//! ([`reduce::exact_mean`](crate::reduce::exact_mean)) for any rank count,
//! so those solutions are bit-identical too. The residual norm is the
//! exception: it sums each rank's squares in `f64` and adds the ranks'
//! sums, so it differs from [`Poisson::residual_norm`] by the rounding of
//! that sum, and a [`DistPoisson::solve`] stopping on it could stop a cycle
//! earlier or later where a residual lands on its tolerance.
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
//! let opts = CycleOptions::new(CycleKind::W, Smoother::RedBlack, 2, 2);
//! let dev = Device::cpu();
//! p.fmg(&dev, &opts, 1)?;
//! for _ in 0..3 {
//!     p.cycle(&dev, &opts)?;
//! }
//! let r = p.residual_norm(&dev)?;
//! if grid.rank() == 0 {
//!     println!("residual {r:e}");
//! }
//! # Ok::<(), distributed::DistError>(())
//! ```

mod cycle;
mod launch;
mod stats;
mod to_error;

pub use launch::DistReal;
pub use stats::CycleStats;

use super::{all_gather, DistError, DistImage, DistResult, Grid};
use crate::multigrid::real::Grid as MgGrid;
use crate::multigrid::{Bc, CycleOptions, MultigridError, Poisson, SolveReport};
use crate::Device;
use cycle::{Ctx, Gathered, Level};
use std::rc::Rc;

/// A Poisson problem whose fine levels are split across the ranks (see
/// the [module docs](self)).
pub struct DistPoisson<T: DistReal> {
    /// The distributed levels, the last one the gathered level.
    levels: Vec<Level<T>>,
    /// The gathered level and those below, on rank 0.
    coarse: Option<Poisson<T>>,
    /// Levels of the whole hierarchy.
    depth: usize,
    bc: Bc,
}

impl<T: DistReal> DistPoisson<T> {
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
            bc,
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

    /// The finest right-hand side.
    pub fn rhs(&self) -> &DistImage<T> {
        &self.levels[0].f
    }

    /// Runs `body` with a context for `opts`; returns what it did.
    fn run(
        &mut self,
        dev: &Device,
        opts: &CycleOptions,
        body: impl FnOnce(&mut Ctx<'_, T>, &mut [Level<T>]) -> DistResult<()>,
    ) -> DistResult<CycleStats> {
        opts.validate(self.depth).map_err(crate::Error::from)?;
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
        let mut ctx = Ctx {
            dev,
            opts,
            below,
            coarse: self.coarse.as_ref(),
            stats: CycleStats::default(),
        };
        body(&mut ctx, &mut self.levels)?;
        Ok(ctx.stats)
    }

    /// One cycle of `opts.kind` from the current solution. Collective.
    pub fn cycle(&mut self, dev: &Device, opts: &CycleOptions) -> DistResult<CycleStats> {
        self.run(dev, opts, |ctx, levels| {
            if levels.len() == 1 {
                let kinds = [ctx.opts.kind];
                ctx.gathered(
                    &mut levels[0],
                    Gathered::Cycles {
                        kinds: &kinds,
                        zero: false,
                    },
                )
            } else {
                ctx.cycle(levels, 0, ctx.opts.kind)
            }
        })
    }

    /// Full multigrid with `cycles` cycles of `opts` per level, replacing
    /// the solution, as [`Poisson::fmg`] (with its Neumann mean
    /// corrections; see the [module docs](self)). Collective.
    pub fn fmg(
        &mut self,
        dev: &Device,
        opts: &CycleOptions,
        cycles: usize,
    ) -> DistResult<CycleStats> {
        opts.validate(self.depth).map_err(crate::Error::from)?;
        if cycles == 0 {
            return Err(crate::Error::from(MultigridError::ZeroCycles).into());
        }
        self.make_compatible(dev)?;
        let stats = self.run(dev, opts, |ctx, levels| {
            if levels.len() == 1 {
                ctx.gathered(&mut levels[0], Gathered::Fmg { cycles })
            } else {
                ctx.fmg(levels, 0, cycles)
            }
        })?;
        self.fix_mean(dev)?;
        Ok(stats)
    }

    /// Cycles until the residual norm falls to `tol` times the norm of the
    /// right-hand side, or `max_cycles` cycles ran, as [`Poisson::solve`].
    /// Collective; every rank gets the report.
    pub fn solve(
        &mut self,
        dev: &Device,
        opts: &CycleOptions,
        tol: f64,
        max_cycles: usize,
    ) -> DistResult<SolveReport> {
        opts.validate(self.depth).map_err(crate::Error::from)?;
        if !(tol > 0.0 && tol.is_finite()) {
            return Err(crate::Error::from(MultigridError::Tolerance(tol)).into());
        }
        if max_cycles == 0 {
            return Err(crate::Error::from(MultigridError::ZeroCycles).into());
        }
        self.make_compatible(dev)?;
        let norm_f = self.rms(&self.levels[0].f)?;
        let mut residuals = vec![self.residual_norm(dev)?];
        let relative = |r: f64| if norm_f > 0.0 { r / norm_f } else { 0.0 };
        while residuals.len() <= max_cycles && relative(residuals[residuals.len() - 1]) > tol {
            self.cycle(dev, opts)?;
            residuals.push(self.residual_norm(dev)?);
        }
        self.fix_mean(dev)?;
        let last = residuals[residuals.len() - 1];
        Ok(SolveReport {
            cycles: residuals.len() - 1,
            relative_residual: relative(last),
            converged: relative(last) <= tol,
            residuals,
            corrections: Vec::new(),
            error_estimate: None,
        })
    }

    /// The discrete L2 norm `sqrt(Σ r² / n)` of the finest residual.
    /// Collective; every rank gets it.
    pub fn residual_norm(&mut self, dev: &Device) -> DistResult<f64> {
        let l = &self.levels[0];
        T::dist_residual(dev, l.g, &l.u, &l.f, &l.t)?;
        self.rms(&l.t)
    }

    /// `sqrt(Σ v² / n)`: each rank's squares summed in `f64`, the ranks'
    /// sums added in rank order.
    fn rms(&self, img: &DistImage<T>) -> DistResult<f64> {
        let local: f64 = img
            .block_pixels()?
            .into_iter()
            .map(|v| {
                let v: f64 = v.into();
                v * v
            })
            .sum();
        let g = img.grid();
        let total: f64 = all_gather(g, local).into_iter().sum();
        Ok((total / (g.width() * g.height()) as f64).sqrt())
    }

    /// Neumann: subtracts the mean of the right-hand side.
    fn make_compatible(&mut self, dev: &Device) -> DistResult<()> {
        if self.bc == Bc::Neumann {
            let l = &mut self.levels[0];
            let mean = mean(&l.f)?;
            T::dist_offset(dev, &l.f, -mean, &l.t)?;
            std::mem::swap(&mut l.f, &mut l.t);
        }
        Ok(())
    }

    /// Neumann: shifts the solution to zero mean.
    fn fix_mean(&mut self, dev: &Device) -> DistResult<()> {
        if self.bc == Bc::Neumann {
            let l = &mut self.levels[0];
            let mean = mean(&l.u)?;
            T::dist_offset(dev, &l.u, -mean, &l.t)?;
            std::mem::swap(&mut l.u, &mut l.t);
        }
        Ok(())
    }
}

/// The mean of a distributed image, from the exact all-reduced
/// [`exact_sum`](super::exact_sum): the single-process solver's bits.
fn mean<T: DistReal>(img: &DistImage<T>) -> DistResult<f64> {
    let g = img.grid();
    Ok(super::exact_sum(img)? / (g.width() * g.height()) as f64)
}
