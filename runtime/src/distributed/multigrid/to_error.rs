//! [`DistPoisson::solve_to_error`]: cycles until the error estimated from
//! their corrections is small enough, as the single-process
//! [`Poisson::solve_to_error`](crate::multigrid::Poisson::solve_to_error).

use super::{DistPoisson, DistReal};
use crate::distributed::{all_gather, DistImage, DistResult};
use crate::multigrid::stopping::{self, ErrorEstimate};
use crate::multigrid::CycleOptions;
use crate::multigrid::{MultigridError, SolveReport};
use crate::Device;

impl<T: DistReal> DistPoisson<T> {
    /// Cycles until the algebraic error of the solution, estimated from
    /// the max-norm corrections of the cycles, is at most `max_error`, or
    /// `max_cycles` cycles ran; at least [`stopping::MIN_CYCLES`] cycles
    /// run. The corrections are maxima over every rank's block, exact, so
    /// the cycles, the estimate and (with the Neumann means taken exactly)
    /// the solution are those of the single-process solve, bit for bit;
    /// only the final residual norm rounds its sum differently.
    /// Collective; every rank gets the report.
    ///
    /// ```no_run
    /// use hipacc::distributed::{self, multigrid::DistPoisson, Grid};
    /// use hipacc::multigrid::{Bc, CycleKind, CycleOptions, Poisson, Smoother};
    /// use hipacc::Device;
    /// use std::rc::Rc;
    ///
    /// let universe = distributed::initialize()?;
    /// let grid = Rc::new(Grid::new(&universe.world(), 131, 71)?);
    /// let levels = Poisson::<f32>::default_levels(131, 71, Bc::Neumann);
    /// let mut p = DistPoisson::<f32>::new(&grid, levels, Bc::Neumann, 1.0, 32)?;
    /// p.set_rhs(|x, y| ((x * 7 + y * 3) % 11) as f32 - 5.0)?;
    /// let opts = CycleOptions::new(CycleKind::V, Smoother::RedBlack, 2, 1);
    /// let dev = Device::cpu();
    /// p.fmg(&dev, &opts, 1)?;
    /// let report = p.solve_to_error(&dev, &opts, 1e-3, 30)?;
    /// assert!(report.converged, "{report:?}");
    /// # Ok::<(), distributed::DistError>(())
    /// ```
    pub fn solve_to_error(
        &mut self,
        dev: &Device,
        opts: &CycleOptions,
        max_error: f64,
        max_cycles: usize,
    ) -> DistResult<SolveReport> {
        opts.validate(self.depth).map_err(crate::Error::from)?;
        if !(max_error > 0.0 && max_error.is_finite()) {
            return Err(crate::Error::from(MultigridError::Tolerance(max_error)).into());
        }
        if max_cycles == 0 {
            return Err(crate::Error::from(MultigridError::ZeroCycles).into());
        }
        self.make_compatible(dev)?;
        let norm_f = self.rms(&self.levels[0].f)?;
        let relative = |r: f64| if norm_f > 0.0 { r / norm_f } else { 0.0 };
        let mut previous = self.solution().block_pixels()?;
        let mut estimate = ErrorEstimate::default();
        while estimate.corrections().len() < max_cycles
            && (estimate.corrections().len() < stopping::MIN_CYCLES || estimate.error() > max_error)
        {
            self.cycle(dev, opts)?;
            estimate.push(max_change(self.solution(), &mut previous)?);
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
}

/// `max |u - previous|` over the whole image (every rank gets it), and
/// `previous` set to this rank's block of `u`. Collective.
fn max_change<T: DistReal>(u: &DistImage<T>, previous: &mut [T]) -> DistResult<f64> {
    let now = u.block_pixels()?;
    let mut change = 0.0f64;
    for (&n, p) in now.iter().zip(previous.iter_mut()) {
        let (a, b): (f64, f64) = (n.into(), (*p).into());
        change = change.max((a - b).abs());
        *p = n;
    }
    Ok(all_gather(u.grid(), change).into_iter().fold(0.0, f64::max))
}
