//! Geometric multigrid for the Poisson equation `-Δu = f` on pyramids.
//!
//! # Discretisation
//! The grid is **cell-centred**: a `w x h` image is `w x h` cells of width
//! `h_0` (the spacing; `1/N` for the unit square split into `N x N` cells,
//! 1 for an image in pixel units) with the unknowns at the cell centres.
//! The operator is the 5-point Laplacian. A cell on the boundary has a
//! ghost neighbour across each boundary side:
//! - **Dirichlet**: the ghost is `2g - u_c`, so the linear interpolant is `g`
//!   on the boundary face; with `g = 0` the ghost is `-u_c`. Non-zero
//!   values are moved to the right-hand side
//!   ([`Poisson::add_dirichlet_values`]).
//! - **Neumann**: the ghost is `u_c` (zero flux through the face).
//!
//! Both are written as `(d u_c - Σ nb) / h² = f` with the outside
//! neighbours left out of `Σ nb` and the diagonal `d = 4 + s · e`, where `e`
//! is the number of the cell's sides on the boundary and `s = +1`
//! (Dirichlet) or `-1` (Neumann). Every kernel reads the solution with a
//! constant-0 boundary and computes `e` from its coordinates, so the
//! smoothers are exact Jacobi/Gauss-Seidel for the boundary rows too.
//!
//! # Hierarchy and transfers
//! The levels are the levels of [`Pyramid`]s: each halves the size (rounded
//! up) and doubles the spacing. Cell `j` of level `k` is the union of the
//! finest cells `[j 2^k, (j + 1) 2^k)` that exist, so every level covers
//! exactly the finest grid's domain; where a size is odd the last column
//! (row) of the coarser level covers one cell of the finer instead of two
//! and is narrower than the others. The coarse operator is the
//! finite-volume 5-point operator rediscretised on those cells: each face
//! couples its two cells by its length over the distance of their centres
//! (1 between equal cells; the kernels' docs give the formula). The transfer operators are the
//! cell-centred pair:
//! - restriction: a quarter of the sum of the 2x2 fine cells under a coarse
//!   cell (the finite-volume full weighting: it integrates the residual
//!   over the coarse cell, in units of a full cell's area). Past an odd
//!   edge the sum has fewer terms; the coarse equations are integrated over
//!   the same narrower cells, so sums (and Neumann compatibility) are kept;
//! - prolongation: bilinear interpolation between cell centres, weights
//!   `9/16, 3/16, 3/16, 1/16` from the four nearest coarse cells, with the
//!   ghost values above at the boundary (`-e` Dirichlet, `e` Neumann). At a
//!   narrow last cell the weights are those of equal cells: the centres
//!   move by less than a cell, the interpolation stays first order there,
//!   and the cycles converge as on even sizes (below).
//!
//! Orders 1 + 2 exceed the operator's order 2, as multigrid theory asks.
//!
//! Why narrow cells: treating the last coarse cell as a full one (the grid
//! padded by a cell of zero residual) solves each coarse problem on a
//! domain up to one fine cell longer than the fine one, so its smooth
//! modes, the ones the coarse grid is there to correct, are slightly wrong
//! on every level with an odd size. Measured with Neumann V(2,2) red-black
//! cycles and an exact coarsest solve, the residual fell by 0.044 to 0.090
//! per cycle on 127x33, 301x155, 161x219 and 437x161 against 0.015 on
//! 128x96; with the narrow cells all of them fall by 0.015 to 0.017 (the
//! test `odd_sizes_converge_as_fast_as_even_ones`). This is the
//! finite-volume coarsening of non-uniform cell-centred grids; a Krylov
//! method around the cycles would recover the rate too, at the cost of a
//! symmetric cycle and more passes per iteration.
//!
//! A Dirichlet grid must have even sizes on every level but the coarsest
//! ([`Poisson::max_levels`]): a narrow last cell would put the Dirichlet
//! boundary off the coarse cell's face, which the ghost value above does
//! not model. A Neumann grid may have any size.
//!
//! # Cycles
//! [`Poisson::cycle`] runs one V-, W- or F-cycle written with
//! [`traverse`](crate::traverse); [`Poisson::fmg`] runs full multigrid,
//! from the coarsest level up. On each level: pre-smoothing, the residual
//! restricted to the next level's right-hand side (fused into one kernel
//! with [`CycleOptions::fused`]), a zero initial correction, the
//! recursion, the prolongated correction added, post-smoothing. Red-black
//! Gauss-Seidel updates one colour per launch, the other colour passing
//! through: the red launch reads `u` and writes `t`, the black one reads `t`
//! and writes `u`, so a sweep ends where it started and each colour sees
//! the other's new values, as Gauss-Seidel requires. (A launch may not
//! write an image it reads; the two colours interleave within every cache
//! line, so writing only one colour in place would move the same lines.)
//! Other launches alternate between the solution and a scratch level and
//! the two are exchanged at the end of a level ([`Pyramid::swap_level`]),
//! so no sweep copies: hold on to [`Poisson::solution`] only until the
//! next cycle.
//!
//! # The coarsest level
//! It is solved exactly by banded Cholesky on the host when its band has at
//! most 4M entries (up to about 128x128 cells), otherwise smoothed with
//! [`CycleOptions::coarse_sweeps`] sweeps.
//!
//! # Pure Neumann problems
//! The operator is singular: constants are its null space, and `-Δu = f`
//! has a solution only when `f` has zero mean. [`Poisson::solve`] and
//! [`Poisson::fmg`] first subtract the mean of `f` (the least-squares
//! compatible right-hand side), and finally shift the solution to zero
//! mean. Cycles leave the mean alone: constants change no residual.
//!
//! ```
//! use hipacc::multigrid::{Bc, CycleKind, CycleOptions, Poisson, Smoother};
//! use hipacc::Device;
//! let n = 64;
//! let p = Poisson::<f64>::new(n, n, 5, Bc::Dirichlet, 1.0 / n as f64)?;
//! p.rhs().write()?.fill(1.0);
//! let opts = CycleOptions::new(CycleKind::V, Smoother::RedBlack, 2, 2);
//! let report = p.solve(&Device::cpu(), &opts, 1e-6, 20)?;
//! assert!(report.relative_residual <= 1e-6, "{report:?}");
//! # Ok::<(), hipacc::Error>(())
//! ```

mod blocked;
mod coarse;
mod cycle;
mod graph;
pub(crate) mod kernels;
pub mod manufactured;
mod options;
pub(crate) mod real;
pub mod stopping;

pub use options::{Bc, CycleKind, CycleOptions, MultigridError, Smoother};
pub use real::Real;

use crate::{Device, Pyramid, Result, Trace};
use coarse::CoarseSolver;
use hipacc_core::Image;
use real::Grid;
use std::sync::OnceLock;

/// A Poisson problem on a pyramid of grids and the state of its solution.
pub struct Poisson<T: Real> {
    /// Solution (level 0) and coarse corrections.
    u: Pyramid<T>,
    /// Right-hand side (level 0) and restricted residuals.
    f: Pyramid<T>,
    /// Scratch: the other half of every ping-pong and the residual.
    t: Pyramid<T>,
    bc: Bc,
    spacing: f64,
    coarse: OnceLock<Option<CoarseSolver>>,
    /// Cycles recorded for replay.
    replays: graph::Replays,
    /// Intermediates of the blocked sweeps.
    blocked: blocked::Scratch<T>,
    /// The level of the whole hierarchy this problem's level 0 is, and the
    /// finest size of that hierarchy (`0` and the own size, but for the
    /// coarse levels of a distributed solver gathered onto one rank).
    first_level: usize,
    finest: (usize, usize),
}

/// What [`Poisson::solve`] did.
#[derive(Clone, Debug, PartialEq)]
pub struct SolveReport {
    /// The discrete L2 norm of the residual before the first cycle and
    /// after each cycle.
    pub residuals: Vec<f64>,
    /// Cycles run.
    pub cycles: usize,
    /// The last residual norm divided by the norm of the (compatible)
    /// right-hand side.
    pub relative_residual: f64,
    /// Whether the tolerance was reached: `relative_residual` for
    /// [`Poisson::solve`], `error_estimate` for [`Poisson::solve_to_error`].
    pub converged: bool,
    /// [`Poisson::solve_to_error`]: the max-norm change of the solution in
    /// each cycle (empty for [`Poisson::solve`]).
    pub corrections: Vec<f64>,
    /// [`Poisson::solve_to_error`]: the estimated max-norm algebraic error
    /// of the solution ([`stopping`]); `None` for [`Poisson::solve`].
    pub error_estimate: Option<f64>,
}

impl<T: Real> Poisson<T> {
    /// A problem on a `width x height` grid with `levels` levels, zero
    /// right-hand side and zero initial guess. `spacing` is the finest
    /// cell width `h_0`.
    pub fn new(width: usize, height: usize, levels: usize, bc: Bc, spacing: f64) -> Result<Self> {
        if !(spacing > 0.0 && spacing.is_finite()) {
            return Err(MultigridError::Spacing(spacing).into());
        }
        let u = Pyramid::zeros(width, height, levels)?;
        let max = Self::max_levels(width, height, bc);
        if levels > max {
            return Err(MultigridError::NotDivisible { width, height, max }.into());
        }
        Ok(Poisson {
            f: Pyramid::like(&u)?,
            t: Pyramid::like(&u)?,
            u,
            bc,
            spacing,
            coarse: OnceLock::new(),
            replays: graph::Replays::default(),
            blocked: blocked::Scratch::default(),
            first_level: 0,
            finest: (width, height),
        })
    }

    /// The levels from `first_level` down of the hierarchy whose finest
    /// `finest` grid has cell width `spacing`, as a problem of its own
    /// (`width x height` is that level's size): its grids, narrow last
    /// cells included, are those levels' grids.
    #[cfg(feature = "distributed")]
    pub(crate) fn coarse_part(
        (width, height): (usize, usize),
        levels: usize,
        bc: Bc,
        spacing: f64,
        first_level: usize,
        finest: (usize, usize),
    ) -> Result<Self> {
        let mut p = Self::new(width, height, levels, bc, spacing)?;
        p.first_level = first_level;
        p.finest = finest;
        Ok(p)
    }

    /// The most levels `bc` allows on a `width x height` grid: Neumann
    /// allows every pyramid level; Dirichlet only halving while both sizes
    /// are even (see the [module docs](self)).
    pub fn max_levels(width: usize, height: usize, bc: Bc) -> usize {
        match bc {
            Bc::Neumann => crate::max_depth(width, height),
            Bc::Dirichlet => {
                let (mut w, mut h, mut levels) = (width, height, 1);
                while w % 2 == 0 && h % 2 == 0 && w > 0 {
                    w /= 2;
                    h /= 2;
                    levels += 1;
                }
                levels
            }
        }
    }

    /// The default number of levels: coarsen until the longer side is at
    /// most 16 (so the coarsest level is solved exactly), within
    /// [`Self::max_levels`].
    pub fn default_levels(width: usize, height: usize, bc: Bc) -> usize {
        let mut levels = 1;
        let (mut w, mut h) = (width, height);
        while w.max(h) > 16 {
            w = w.div_ceil(2);
            h = h.div_ceil(2);
            levels += 1;
        }
        levels.min(Self::max_levels(width, height, bc))
    }

    /// Number of levels.
    pub fn levels(&self) -> usize {
        self.u.depth()
    }

    /// The boundary condition.
    pub fn bc(&self) -> Bc {
        self.bc
    }

    /// The finest right-hand side: write `f` into it before solving.
    pub fn rhs(&self) -> Image<T> {
        self.level(&self.f, 0)
    }

    /// The finest solution (also the initial guess of the next cycle).
    pub fn solution(&self) -> Image<T> {
        self.level(&self.u, 0)
    }

    fn level(&self, p: &Pyramid<T>, level: usize) -> Image<T> {
        match p.level(level) {
            Ok(img) => img,
            Err(_) => unreachable!("bug: level {level} of a pyramid of {}", p.depth()),
        }
    }

    /// The grid of `level`.
    fn grid(&self, level: usize) -> Result<Grid> {
        let size = self.u.size(level)?;
        Ok(Grid::of_level(
            size,
            self.finest,
            self.first_level + level,
            self.spacing,
            self.bc,
        ))
    }

    /// Folds Dirichlet values `g(x, y)` (in the coordinates of the cell
    /// centres, `x = (i + 1/2) h_0`, boundary faces at `0` and `w h_0`)
    /// into the right-hand side: a boundary cell gains `2 g / h²` per side
    /// on the boundary, `g` taken at the middle of that face.
    pub fn add_dirichlet_values(&self, g: impl Fn(f64, f64) -> f64) -> Result<()> {
        let (w, h) = (self.u.size(0)?.0, self.u.size(0)?.1);
        let s = self.spacing;
        let scale = 2.0 / (s * s);
        let rhs = self.rhs();
        let mut f = rhs.write()?;
        let centre = |i: usize| (i as f64 + 0.5) * s;
        for y in 0..h {
            for x in 0..w {
                let mut add = 0.0;
                if x == 0 {
                    add += g(0.0, centre(y));
                }
                if x + 1 == w {
                    add += g(w as f64 * s, centre(y));
                }
                if y == 0 {
                    add += g(centre(x), 0.0);
                }
                if y + 1 == h {
                    add += g(centre(x), h as f64 * s);
                }
                if add != 0.0 {
                    let v: f64 = f[y * w + x].into();
                    f[y * w + x] = T::from_f64(v + scale * add);
                }
            }
        }
        Ok(())
    }

    /// The discrete L2 norm `sqrt(Σ r² / n)` of the finest residual
    /// `r = f + Δu` (computed into the scratch level).
    pub fn residual_norm(&self, dev: &Device) -> Result<f64> {
        let r = self.level(&self.t, 0);
        T::residual(dev, self.grid(0)?, &self.solution(), &self.rhs(), &r)?;
        rms(&r)
    }

    /// The IR of every kernel the solver launches (for emitting generated
    /// sources ahead of time); level 0 and 1 bind them.
    pub fn kernel_irs(&self) -> Result<Vec<hipacc_core::ir::Kernel>> {
        let coarse = self.level(&self.u, (self.levels() - 1).min(1));
        T::kernel_irs(self.grid(0)?, &self.solution(), &coarse)
    }

    /// Runs one cycle from the current solution; returns its trace.
    ///
    /// With [`CycleOptions::graph`], a cycle from a state
    /// recorded before is replayed: its trace is the
    /// recorded one, every launch marked `graph replay` with zero host
    /// time.
    pub fn cycle(&self, dev: &Device, opts: &CycleOptions) -> Result<Trace> {
        opts.validate(self.levels())?;
        if opts.graph {
            graph::cycle(self, dev, opts)
        } else {
            cycle::run(self, dev, opts, cycle::Start::Cycle, None)
        }
    }

    /// Full multigrid: the right-hand side restricted to every level, an
    /// exact solve on the coarsest, then on each finer level the coarser
    /// solution interpolated and improved by `cycles` cycles of `opts`
    /// (usually one V-cycle). Replaces the current solution.
    pub fn fmg(&self, dev: &Device, opts: &CycleOptions, cycles: usize) -> Result<Trace> {
        opts.validate(self.levels())?;
        if cycles == 0 {
            return Err(MultigridError::ZeroCycles.into());
        }
        self.make_compatible(dev)?;
        let trace = cycle::run(self, dev, opts, cycle::Start::Fmg { cycles }, None)?;
        self.fix_mean(dev)?;
        Ok(trace)
    }

    /// [`Self::fmg`] without its Neumann mean corrections: the levels
    /// below a distributed solver's gathered level run it as the part of
    /// the whole hierarchy's full multigrid they are.
    #[cfg(feature = "distributed")]
    pub(crate) fn fmg_part(&self, dev: &Device, opts: &CycleOptions, cycles: usize) -> Result<()> {
        cycle::run(self, dev, opts, cycle::Start::Fmg { cycles }, None).map(|_| ())
    }

    /// Cycles until the residual norm falls to `tol` times the norm of the
    /// right-hand side, or `max_cycles` cycles ran.
    pub fn solve(
        &self,
        dev: &Device,
        opts: &CycleOptions,
        tol: f64,
        max_cycles: usize,
    ) -> Result<SolveReport> {
        opts.validate(self.levels())?;
        if !(tol > 0.0 && tol.is_finite()) {
            return Err(MultigridError::Tolerance(tol).into());
        }
        if max_cycles == 0 {
            return Err(MultigridError::ZeroCycles.into());
        }
        self.make_compatible(dev)?;
        let norm_f = rms(&self.rhs())?;
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

    /// Cycles until the algebraic error of the solution, estimated from the
    /// cycles' corrections, is at most `max_error` in the max norm (in the
    /// units of `u`), or `max_cycles` cycles ran; at least
    /// [`stopping::MIN_CYCLES`] cycles run (see [`stopping`] for the
    /// estimate and why a residual test is not enough). `residuals` holds
    /// only the residual norm after the last cycle.
    ///
    /// ```
    /// use hipacc::multigrid::{Bc, CycleKind, CycleOptions, Poisson, Smoother};
    /// use hipacc::Device;
    /// let p = Poisson::<f32>::new(64, 48, 4, Bc::Neumann, 1.0)?;
    /// p.rhs().write()?.iter_mut().enumerate().for_each(|(i, v)| *v = (i % 7) as f32 - 3.0);
    /// let opts = CycleOptions::new(CycleKind::V, Smoother::RedBlack, 2, 2);
    /// let dev = Device::cpu();
    /// p.fmg(&dev, &opts, 1)?;
    /// let report = p.solve_to_error(&dev, &opts, 1e-4, 30)?;
    /// assert!(report.converged && report.error_estimate.unwrap() <= 1e-4, "{report:?}");
    /// # Ok::<(), hipacc::Error>(())
    /// ```
    pub fn solve_to_error(
        &self,
        dev: &Device,
        opts: &CycleOptions,
        max_error: f64,
        max_cycles: usize,
    ) -> Result<SolveReport> {
        opts.validate(self.levels())?;
        if !(max_error > 0.0 && max_error.is_finite()) {
            return Err(MultigridError::Tolerance(max_error).into());
        }
        if max_cycles == 0 {
            return Err(MultigridError::ZeroCycles.into());
        }
        self.make_compatible(dev)?;
        let norm_f = rms(&self.rhs())?;
        let relative = |r: f64| if norm_f > 0.0 { r / norm_f } else { 0.0 };
        let mut previous: Vec<T> = self.solution().to_vec()?;
        let mut estimate = stopping::ErrorEstimate::default();
        while estimate.corrections().len() < max_cycles
            && (estimate.corrections().len() < stopping::MIN_CYCLES || estimate.error() > max_error)
        {
            self.cycle(dev, opts)?;
            estimate.push(max_change(&self.solution(), &mut previous)?);
        }
        self.fix_mean(dev)?;
        let last = self.residual_norm(dev)?;
        let error = estimate.error();
        Ok(SolveReport {
            cycles: estimate.corrections().len(),
            relative_residual: relative(last),
            converged: error <= max_error,
            residuals: vec![last],
            corrections: estimate.corrections().to_vec(),
            error_estimate: Some(error),
        })
    }

    /// Neumann: subtracts the mean of the right-hand side.
    fn make_compatible(&self, dev: &Device) -> Result<()> {
        if self.bc == Bc::Neumann {
            self.shift(dev, &self.f, -neumann_mean(dev, &self.rhs())?)?;
        }
        Ok(())
    }

    /// Neumann: shifts the solution to zero mean.
    fn fix_mean(&self, dev: &Device) -> Result<()> {
        if self.bc == Bc::Neumann {
            let mean = neumann_mean(dev, &self.solution())?;
            self.shift(dev, &self.u, -mean)?;
        }
        Ok(())
    }

    /// Adds `value` to level 0 of `p` (through the scratch level).
    fn shift(&self, dev: &Device, p: &Pyramid<T>, value: f64) -> Result<()> {
        T::offset(dev, &self.level(p, 0), value, &self.level(&self.t, 0))?;
        p.swap_level(&self.t, 0)
    }

    /// The exact coarsest-level solver, factorised on first use; `None`
    /// when the coarsest level is too large.
    fn coarse_solver(&self) -> Result<Option<&CoarseSolver>> {
        let g = self.grid(self.levels() - 1)?;
        Ok(self
            .coarse
            .get_or_init(|| CoarseSolver::new(g.w, g.h, self.bc, (g.last_w, g.last_h)))
            .as_ref())
    }
}

/// The mean residual reduction per cycle: the geometric mean of
/// `residuals[i + 1] / residuals[i]` over the cycles until the residual
/// has fallen by 1e-5 from `residuals[0]` (or all of them), so that
/// cycles spent at round-off level do not distort it. `None` with fewer
/// than two entries or a zero first residual.
///
/// ```
/// use hipacc::multigrid::convergence_factor;
/// let r = [1.0, 0.1, 0.01, 1e-3, 1e-4, 1e-5, 1e-6, 0.9e-6];
/// assert!((convergence_factor(&r).unwrap() - 0.1).abs() < 1e-12);
/// ```
pub fn convergence_factor(residuals: &[f64]) -> Option<f64> {
    let first = *residuals.first()?;
    if residuals.len() < 2 || first <= 0.0 {
        return None;
    }
    let end = residuals
        .iter()
        .position(|&r| r <= 1e-5 * first)
        .unwrap_or(residuals.len() - 1)
        .max(1);
    Some((residuals[end] / first).powf(1.0 / end as f64))
}

/// `max |u - previous|` in `f64`, then `previous = u`.
fn max_change<T: Real>(u: &Image<T>, previous: &mut [T]) -> Result<f64> {
    use rayon::prelude::*;
    let now = u.read()?;
    Ok(now
        .par_chunks(1 << 14)
        .zip(previous.par_chunks_mut(1 << 14))
        .map(|(now, prev)| {
            let mut change = 0.0f64;
            for (&n, p) in now.iter().zip(prev) {
                let (a, b): (f64, f64) = (n.into(), (*p).into());
                change = change.max((a - b).abs());
                *p = n;
            }
            change
        })
        .reduce(|| 0.0, f64::max))
}

/// The mean a pure Neumann problem subtracts from `f` and `u`. On the
/// host the order-independent [`reduce::exact_mean`](crate::reduce::exact_mean):
/// every pixel of the solution moves with it, and the distributed solver
/// takes the same bits from its ranks' blocks, so the two solutions agree
/// bit for bit. On a GPU device holding the image, the device's sum (no
/// read-back; device sums round in their own order anyway).
fn neumann_mean<T: Real>(dev: &Device, img: &Image<T>) -> Result<f64> {
    if dev.gpu().is_some() {
        crate::reduce::mean(dev, img, None)
    } else {
        crate::reduce::exact_mean(img, None)
    }
}

/// `sqrt(Σ v² / n)` in `f64`, summed in parallel chunks (a fixed grouping,
/// so the result does not depend on scheduling).
fn rms<T: Real>(img: &Image<T>) -> Result<f64> {
    use rayon::prelude::*;
    let pixels = img.read()?;
    let partial: Vec<f64> = pixels
        .par_chunks(1 << 14)
        .map(|chunk| {
            chunk
                .iter()
                .map(|&v| {
                    let v: f64 = v.into();
                    v * v
                })
                .sum()
        })
        .collect();
    Ok((partial.iter().sum::<f64>() / pixels.len() as f64).sqrt())
}

#[cfg(test)]
mod tests;
