//! `traverse`: recursive schedules over pyramids (V-, W- and F-cycles).
//!
//! [`traverse`] binds pyramids of the same shape and runs a body at the
//! finest level. Inside, the body addresses a bound pyramid's levels
//! relative to the current one ([`Traversal::image`]: 0 = current, -1 =
//! finer, +1 = coarser) and descends with [`Traversal::recurse`] (one
//! recursion: a V-cycle) or [`Traversal::recurse_n`] (`n` recursions with
//! work between them: `n = 2` gives W-cycles). The body is written once,
//! whatever the depth. Every launch and every synchronisation point is
//! recorded in the returned [`Trace`].
//!
//! Binding is checked at run time: a pyramid is bound to one traversal at a
//! time (passing it twice, or passing a pyramid of an enclosing traversal to
//! a nested one, is [`PyramidError::AlreadyBound`]), the pyramids of one
//! traversal must have the same shape, and a relative index outside the
//! pyramid or a recursion below the coarsest level is an error. Nothing
//! panics and nothing is unsafe.

use crate::pyramid::{BindPyramid, Pyramid, PyramidError};
use crate::trace::{self, RecordingGuard, Trace};
use crate::Result;
use hipacc_core::{Image, Pixel};

/// The state of a running traversal at one level, given to its body.
pub struct Traversal<'t> {
    run: &'t Run<'t>,
    level: usize,
}

/// What is shared by all levels of one traversal.
struct Run<'t> {
    ids: Vec<u64>,
    depth: usize,
    body: &'t dyn Fn(&Traversal<'_>) -> Result<()>,
    recorder: &'t RecordingGuard,
}

/// Runs `body` at the finest level of `pyramids` and returns the trace of
/// what it launched.
///
/// ```
/// use hipacc::{traverse, Image, Pyramid};
/// let fine = Image::from_fn(8, 8, |x, y| (x + y) as f32)?;
/// let p = Pyramid::new(&fine, 3)?;
/// let trace = traverse(&[&p], |t| {
///     // Same code at every level: copy the finer level's pixel (2x, 2y).
///     if !t.is_top_level() {
///         let (fine, here) = (t.image(&p, -1)?, t.image(&p, 0)?);
///         let src = fine.to_vec()?;
///         let mut dst = here.write()?;
///         for (i, d) in dst.iter_mut().enumerate() {
///             let (x, y) = (i % here.width(), i / here.width());
///             *d = src[2 * y * fine.width() + 2 * x];
///         }
///     }
///     if !t.is_bottom_level() {
///         t.recurse()?;
///     }
///     Ok(())
/// })?;
/// assert_eq!(trace.sync_levels(), [0, 1, 2, 1, 0]);
/// assert_eq!(p.level(2)?.to_vec()?, [0.0, 4.0, 4.0, 8.0]);
/// # Ok::<(), hipacc::Error>(())
/// ```
pub fn traverse(
    pyramids: &[&dyn BindPyramid],
    body: impl Fn(&Traversal<'_>) -> Result<()>,
) -> Result<Trace> {
    let first = pyramids.first().ok_or(PyramidError::NoPyramids)?;
    for p in &pyramids[1..] {
        crate::pyramid::same_shape(first.shape(), p.shape())?;
    }
    let guard = BindGuard::bind(pyramids)?;
    let recorder = trace::start();
    let run = Run {
        ids: pyramids.iter().map(|p| p.id()).collect(),
        depth: first.depth(),
        body: &body,
        recorder: &recorder,
    };
    run.enter(0)?;
    drop(guard);
    Ok(recorder.finish())
}

impl Run<'_> {
    /// Runs the body at `level`.
    fn enter(&self, level: usize) -> Result<()> {
        self.recorder.sync(level);
        (self.body)(&Traversal { run: self, level })
    }
}

impl Traversal<'_> {
    /// The current level (0 = finest).
    pub fn level(&self) -> usize {
        self.level
    }

    /// Number of levels of the bound pyramids.
    pub fn depth(&self) -> usize {
        self.run.depth
    }

    /// True at the finest level (0).
    pub fn is_top_level(&self) -> bool {
        self.level == 0
    }

    /// True at the coarsest level (`depth - 1`).
    pub fn is_bottom_level(&self) -> bool {
        self.level + 1 == self.run.depth
    }

    /// The image of `pyramid` at `relative` levels from the current one
    /// (0 = current, -1 = finer, +1 = coarser).
    pub fn image<T: Pixel>(&self, pyramid: &Pyramid<T>, relative: i64) -> Result<Image<T>> {
        pyramid.level(self.target(pyramid.id(), relative)?)
    }

    /// The absolute level `relative` levels from the current one of the
    /// bound pyramid `id`: `NotBound` or `LevelOutside` otherwise.
    pub(crate) fn target(&self, id: u64, relative: i64) -> Result<usize> {
        if !self.run.ids.contains(&id) {
            return Err(PyramidError::NotBound { id }.into());
        }
        let outside = || PyramidError::LevelOutside {
            relative,
            level: self.level,
            depth: self.run.depth,
        };
        let target = i64::try_from(self.level)
            .ok()
            .and_then(|l| l.checked_add(relative))
            .filter(|l| (0..self.run.depth as i64).contains(l))
            .ok_or_else(outside)?;
        Ok(target as usize)
    }

    /// Runs the body once at the next coarser level (a V-cycle's descent).
    pub fn recurse(&self) -> Result<()> {
        self.recurse_n(1, |_| Ok(()))
    }

    /// Runs the body `n` times at the next coarser level, calling `between`
    /// (at this level) between consecutive runs: `n = 2` gives a W-cycle.
    /// `n = 0` does nothing. Control returning to this level after each run
    /// is a synchronisation point of the trace.
    pub fn recurse_n(
        &self,
        n: usize,
        between: impl Fn(&Traversal<'_>) -> Result<()>,
    ) -> Result<()> {
        if n == 0 {
            return Ok(());
        }
        if self.is_bottom_level() {
            return Err(PyramidError::RecurseAtBottom { level: self.level }.into());
        }
        for i in 0..n {
            if i > 0 {
                between(self)?;
            }
            self.run.enter(self.level + 1)?;
            self.run.recorder.sync(self.level);
        }
        Ok(())
    }

    /// Exchanges the storage of two pyramids (see [`Pyramid::swap`]).
    pub fn swap<T: Pixel>(&self, a: &Pyramid<T>, b: &Pyramid<T>) -> Result<()> {
        a.swap(b)
    }
}

/// Keeps pyramids bound; unbinds them when dropped (also on errors).
struct BindGuard<'a> {
    bound: Vec<&'a dyn BindPyramid>,
}

impl<'a> BindGuard<'a> {
    fn bind(pyramids: &[&'a dyn BindPyramid]) -> Result<BindGuard<'a>> {
        let mut guard = BindGuard { bound: Vec::new() };
        for p in pyramids {
            p.bind()?;
            guard.bound.push(*p);
        }
        Ok(guard)
    }
}

impl Drop for BindGuard<'_> {
    fn drop(&mut self) {
        for p in &self.bound {
            p.unbind();
        }
    }
}
