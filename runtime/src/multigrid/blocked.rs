//! Smoothing sweeps blocked in time ([`super::CycleOptions::blocked`]).
//!
//! Each sweep of a smoother reads the whole solution and right-hand side
//! and writes a whole new solution: on a grid larger than the caches,
//! every sweep is a pass over memory, and so is the coarse-grid
//! correction before the post-smoothing. Blocked, the sweeps of a level
//! run as one [`Pipeline`] whose stages are the sweeps (each reading the
//! previous one's output), and the correction `u + P e` joins the
//! post-smoothing sweeps as the pipeline's first stage. On the CPU a
//! pipeline runs per row strip of its last stage with every earlier stage
//! computed into a cache-sized scratch, recomputing the halo rows that
//! neighbouring strips share: the pre-smoothing reads `u` and `f` and
//! writes the smoothed `u` once, whatever the number of sweeps. Each row is
//! computed by the code an unblocked launch runs for it, so the result is
//! the same bit for bit.
//!
//! A pipeline of `n` stages over strips of `s` rows recomputes about
//! `n / s` of every stage's rows, so long chains are split into pipelines
//! of at most [`MAX_STAGES`] stages. Levels below [`MIN_PIXELS`] fit in
//! the caches anyway and run one launch per sweep, as do other devices
//! (an OpenCL CPU device too: its unblocked launches run its own compiled
//! kernels) and cycles recorded for replay, whose recordings keep single
//! launches only.

use super::cycle::PingPong;
use super::options::Smoother;
use super::real::{Grid, Real};
use crate::pipeline::Pipeline;
use crate::{Device, Result};
use hipacc_core::{Image, IterationSpace, Kernel, Pixel};
use std::sync::{Mutex, PoisonError};

/// The most stages of one pipeline: a correction and two red-black sweeps.
pub(crate) const MAX_STAGES: usize = 5;

/// The smallest level (in cells) run blocked: below it a level's images
/// stay in the caches between sweeps.
pub(crate) const MIN_PIXELS: usize = 256 * 256;

/// The launches of `sweeps` sweeps of `smoother`, as `(omega, colour)` of
/// the smoothing kernel: one per Jacobi sweep, two per red-black sweep.
pub(crate) fn steps(smoother: Smoother, sweeps: usize) -> Vec<(f64, i32)> {
    let sweep: &[(f64, i32)] = match smoother {
        Smoother::Jacobi { omega } => &[(omega, -1)],
        Smoother::RedBlack => &[(1.0, 0), (1.0, 1)],
    };
    sweep.repeat(sweeps)
}

/// Whether a level of grid `g` runs blocked on `dev`, when the options
/// ask for it and the cycle is not being recorded.
pub(crate) fn applies(dev: &Device, g: Grid) -> bool {
    dev.gpu().is_none() && g.w * g.h >= MIN_PIXELS
}

/// One pipeline: the optional correction `input + P e` (the boundary
/// sign and `e`), then smoothing launches `(omega, colour)`, each writing
/// the next image of `outs` and the next reading it, then optionally the
/// residual of the last output restricted into `restrict` (the coarser
/// level's right-hand side). The first stage reads `input`; the last
/// output is the level's scratch image, the others are intermediates that
/// only a device running stage by stage writes (part of the sealed
/// `Launch`, not nameable outside the crate).
pub struct Chain<'a, T: Pixel> {
    pub(crate) input: &'a Image<T>,
    pub(crate) correction: Option<(f64, &'a Image<T>)>,
    pub(crate) steps: &'a [(f64, i32)],
    pub(crate) outs: Vec<Image<T>>,
    pub(crate) restrict: Option<&'a Image<T>>,
}

/// Builds `chain`'s pipeline from the correction kernel, a kernel per
/// smoothing launch (`sweep(u, step)` reads `u`) and the residual and
/// restriction of the last output (`residual`, writing `chain.restrict`),
/// runs it on `dev`, and notes it in the trace as one launch.
///
/// With the residual, the last sweep is an output that a later stage
/// reads: each strip computes its rows and the row above and below the
/// strip that the restriction's 2x2 cells reach, and the residual's
/// strip of the coarse grid (half the rows) comes from them while they
/// are in cache. The level's solution and the coarse right-hand side so
/// take one pass over `u` and `f` instead of two.
pub(crate) fn run<T, P, K, R>(
    dev: &Device,
    chain: &Chain<'_, T>,
    correction: Option<P>,
    sweep: impl Fn(&Image<T>, (f64, i32)) -> K,
    residual: Option<R>,
) -> Result<()>
where
    T: Pixel,
    P: Kernel<Output = T>,
    K: Kernel<Output = T>,
    R: Kernel<Output = T>,
{
    let first = usize::from(correction.is_some());
    let spaces: Vec<IterationSpace<T>> = chain.outs.iter().map(IterationSpace::full).collect();
    let kernels: Vec<K> = chain
        .steps
        .iter()
        .enumerate()
        .map(|(i, &step)| match (i + first).checked_sub(1) {
            Some(prev) => sweep(&chain.outs[prev], step),
            None => sweep(chain.input, step),
        })
        .collect();
    let residual = match (residual, chain.restrict) {
        (Some(r), Some(img)) => Some((r, IterationSpace::full(img))),
        (None, None) => None,
        _ => unreachable!("bug: a residual without its coarse image, or one without the other"),
    };
    let mut pipeline = Pipeline::new();
    if let Some(p) = &correction {
        pipeline = pipeline.stage(p, &spaces[0]);
    }
    for (i, (k, space)) in kernels.iter().zip(&spaces[first..]).enumerate() {
        // The last sweep is the result, and the residual's input.
        pipeline = match residual {
            Some(_) if i + 1 == kernels.len() => pipeline.output(k, space),
            _ => pipeline.stage(k, space),
        };
    }
    let mut name = match &correction {
        Some(_) => format!("{}+{} x{}", P::NAME, K::NAME, kernels.len()),
        None => format!("{} x{}", K::NAME, kernels.len()),
    };
    if let Some((r, space)) = &residual {
        pipeline = pipeline.stage(r, space);
        name = format!("{name}+{}", R::NAME);
    }
    let name = format!("{name} (blocked)");
    crate::trace::launch(&name, dev.kind().name(), || pipeline.execute(dev))
}

/// Runs the correction by `correction` (when given) and the smoothing
/// launches `steps` on `s`, blocked: pipelines of at most [`MAX_STAGES`]
/// stages, each from the current solution into the scratch image; the
/// last one also restricts the residual into `restrict` when given (and
/// `steps` is not empty).
#[allow(clippy::too_many_arguments)]
pub(crate) fn smooth<T: Real>(
    scratch: &Scratch<T>,
    dev: &Device,
    g: Grid,
    level: usize,
    f: &Image<T>,
    correction: Option<(f64, &Image<T>)>,
    steps: &[(f64, i32)],
    restrict: Option<&Image<T>>,
    s: &mut PingPong<T>,
) -> Result<()> {
    let mut correction = correction;
    let mut rest = steps;
    while correction.is_some() || !rest.is_empty() {
        let stages = (usize::from(correction.is_some()) + rest.len()).min(MAX_STAGES);
        let sweeps = stages - usize::from(correction.is_some());
        let mut outs = scratch.images(level, g.w, g.h, stages - 1)?;
        outs.push(s.spare.clone());
        let last = sweeps == rest.len();
        let chain = Chain {
            input: &s.cur,
            correction,
            steps: &rest[..sweeps],
            outs,
            restrict: restrict.filter(|_| last && sweeps > 0),
        };
        T::smooth_chain(dev, g, f, &chain)?;
        s.flip();
        correction = None;
        rest = &rest[sweeps..];
    }
    Ok(())
}

/// The intermediate images of the pipelines, per level, made on first use
/// and kept. On the CPU no pipeline writes them: their pages stay
/// untouched (zero pages the OS maps on a first write that never comes).
pub(crate) struct Scratch<T: Pixel> {
    levels: Mutex<Vec<Vec<Image<T>>>>,
}

impl<T: Pixel> Default for Scratch<T> {
    fn default() -> Scratch<T> {
        Scratch {
            levels: Mutex::new(Vec::new()),
        }
    }
}

impl<T: Pixel> Scratch<T> {
    /// `n` distinct `w x h` images of `level`.
    fn images(&self, level: usize, w: usize, h: usize, n: usize) -> Result<Vec<Image<T>>> {
        let mut levels = self.levels.lock().unwrap_or_else(PoisonError::into_inner);
        if levels.len() <= level {
            levels.resize_with(level + 1, Vec::new);
        }
        let kept = &mut levels[level];
        while kept.len() < n {
            // Zeroed by the allocator, not written here: see the type docs.
            kept.push(Image::from_vec(w, h, vec![T::default(); w * h])?);
        }
        Ok(kept[..n].to_vec())
    }
}
