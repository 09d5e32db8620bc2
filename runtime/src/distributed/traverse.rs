//! `traverse` over distributed pyramids: the single-process
//! [`crate::traverse`] (its binding checks, recursion and trace), with a
//! body that reads [`DistPyramid`] levels and may fail with a
//! [`DistError`].

use super::{DistError, DistImage, DistPyramid, DistResult};
use crate::pyramid::{BindPyramid, PyramidError};
use crate::{Trace, Traversal};
use hipacc_core::Pixel;
use std::cell::RefCell;
use std::rc::Rc;

/// The state of a running distributed traversal at one level, given to
/// its body: [`Traversal`]'s API for [`DistPyramid`]s.
pub struct DistTraversal<'a, 't> {
    inner: &'a Traversal<'t>,
    failure: &'a RefCell<Option<DistError>>,
}

/// Runs the body, keeping a distributed error aside: the single-process
/// traversal carries [`crate::Error`]s only, so it is handed a stand-in
/// that stops it, and [`traverse`] returns the kept error instead.
fn run(failure: &RefCell<Option<DistError>>, result: DistResult<()>) -> crate::Result<()> {
    match result {
        Ok(()) => Ok(()),
        Err(DistError::Local(e)) => Err(e),
        Err(e) => {
            *failure.borrow_mut() = Some(e);
            Err(PyramidError::NoPyramids.into())
        }
    }
}

/// Runs `body` at the finest level of the distributed `pyramids` and
/// returns the trace of what this rank launched. Collective in the sense
/// that every rank runs the same body: the kernels it launches through
/// [`execute`](super::execute) are.
///
/// Binding and relative levels are checked as [`crate::traverse`] checks
/// them (same errors). A body that fails on some ranks only leaves the
/// others waiting in their next collective; agree on local failures with
/// [`all_ok`](super::all_ok) before launching.
///
/// ```no_run
/// use hipacc::distributed::{self, DistImage, DistPyramid, Grid};
/// use hipacc::prelude::*;
/// use std::rc::Rc;
///
/// /// `G_{k+1}`: the 2x2 mean of `G_k` (reads the finer level).
/// #[derive(Kernel)]
/// #[kernel(output = f32)]
/// struct Down { fine: Accessor<f32> }
///
/// #[kernel_body]
/// impl Down {
///     fn kernel(&self) -> f32 {
///         0.25 * (self.fine.at(x(), y()) + self.fine.at(x() + 1, y())
///             + self.fine.at(x(), y() + 1) + self.fine.at(x() + 1, y() + 1))
///     }
/// }
///
/// let universe = distributed::initialize()?;
/// let grid = Rc::new(Grid::new(&universe.world(), 131, 71)?);
/// let fine = Rc::new(DistImage::from_fn(&grid, |x, y| (x * y) as f32)?);
/// let g = DistPyramid::new(&fine, DistPyramid::<f32>::max_depth(&grid))?;
/// let dev = Device::cpu();
/// let trace = distributed::traverse(&[&g], |t| {
///     if !t.is_top_level() {
///         let (fine, here) = (t.image(&g, -1)?, t.image(&g, 0)?);
///         distributed::execute(&dev, &here, |r| Down {
///             fine: r.accessor(&fine, Boundary::Clamp),
///         })?;
///     }
///     if !t.is_bottom_level() {
///         t.recurse()?;
///     }
///     Ok(())
/// })?;
/// assert_eq!(trace.sync_levels().len(), 2 * g.depth() - 1);
/// # Ok::<(), distributed::DistError>(())
/// ```
pub fn traverse(
    pyramids: &[&dyn BindPyramid],
    body: impl Fn(&DistTraversal<'_, '_>) -> DistResult<()>,
) -> DistResult<Trace> {
    let failure = RefCell::new(None);
    let trace = crate::traverse(pyramids, |t| {
        run(
            &failure,
            body(&DistTraversal {
                inner: t,
                failure: &failure,
            }),
        )
    });
    match (failure.into_inner(), trace) {
        (Some(e), _) => Err(e),
        (None, trace) => Ok(trace?),
    }
}

impl DistTraversal<'_, '_> {
    /// The current level (0 = finest).
    pub fn level(&self) -> usize {
        self.inner.level()
    }

    /// Number of levels of the bound pyramids.
    pub fn depth(&self) -> usize {
        self.inner.depth()
    }

    /// True at the finest level (0).
    pub fn is_top_level(&self) -> bool {
        self.inner.is_top_level()
    }

    /// True at the coarsest level (`depth - 1`).
    pub fn is_bottom_level(&self) -> bool {
        self.inner.is_bottom_level()
    }

    /// The image of `pyramid` at `relative` levels from the current one
    /// (0 = current, -1 = finer, +1 = coarser).
    pub fn image<T: Pixel>(
        &self,
        pyramid: &DistPyramid<T>,
        relative: i64,
    ) -> DistResult<Rc<DistImage<T>>> {
        pyramid.level(self.inner.target(pyramid.id(), relative)?)
    }

    /// Runs the body once at the next coarser level (a V-cycle's descent).
    pub fn recurse(&self) -> DistResult<()> {
        self.recurse_n(1, |_| Ok(()))
    }

    /// Runs the body `n` times at the next coarser level, calling `between`
    /// (at this level) between consecutive runs: `n = 2` gives a W-cycle.
    pub fn recurse_n(
        &self,
        n: usize,
        between: impl Fn(&DistTraversal<'_, '_>) -> DistResult<()>,
    ) -> DistResult<()> {
        let failure = self.failure;
        let result = self.inner.recurse_n(n, |t| {
            run(failure, between(&DistTraversal { inner: t, failure }))
        });
        match (failure.borrow_mut().take(), result) {
            (Some(e), _) => Err(e),
            (None, r) => Ok(r?),
        }
    }
}
