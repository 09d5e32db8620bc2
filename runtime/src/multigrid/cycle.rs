//! V-, W-, F-cycles and full multigrid as one `traverse` body.
//!
//! A traversal runs one body at every level it recurses into; what the body
//! does there depends on how it was reached, recorded per level in
//! `modes`: a V-, W- or F-cycle step, or a full-multigrid step. An F-cycle
//! step recurses twice, first as an F-cycle and then as a V-cycle; full
//! multigrid recurses once as full multigrid and then runs its cycles at
//! its own level, each recursing as that cycle.

use super::blocked;
use super::graph::Recorder;
use super::options::{CycleKind, CycleOptions};
use super::real::Real;
use super::Poisson;
use crate::{traverse, Device, Result, Trace, Traversal};
use hipacc_core::Image;
use std::cell::RefCell;

/// How the traversal starts.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Start {
    /// One cycle of the options' kind.
    Cycle,
    /// Full multigrid with `cycles` cycles per level.
    Fmg { cycles: usize },
}

/// What the body does at a level.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Mode {
    Cycle(CycleKind),
    Fmg { cycles: usize },
}

struct Ctx<'a, T: Real> {
    p: &'a Poisson<T>,
    dev: &'a Device,
    opts: &'a CycleOptions,
    modes: RefCell<Vec<Mode>>,
    /// Set while the cycle is recorded for replay.
    rec: Option<&'a Recorder>,
}

/// Runs the traversal (noting its host steps in `rec` when recording).
pub(crate) fn run<T: Real>(
    p: &Poisson<T>,
    dev: &Device,
    opts: &CycleOptions,
    start: Start,
    rec: Option<&Recorder>,
) -> Result<Trace> {
    let first = match start {
        Start::Cycle => Mode::Cycle(opts.kind),
        Start::Fmg { cycles } => Mode::Fmg { cycles },
    };
    let ctx = Ctx {
        p,
        dev,
        opts,
        modes: RefCell::new(vec![first; p.levels()]),
        rec,
    };
    traverse(&[&p.u, &p.f, &p.t], |t| ctx.body(t))
}

/// The solution and scratch images of a level and which holds the current
/// solution.
pub(super) struct PingPong<T: Real> {
    pub(super) cur: Image<T>,
    pub(super) spare: Image<T>,
    in_scratch: bool,
}

/// The exact solve of the coarsest level, on the host.
pub(crate) fn coarse_solve<T: Real>(p: &Poisson<T>) -> Result<()> {
    let Some(solver) = p.coarse_solver()? else {
        unreachable!("bug: a coarse solve without a coarse solver")
    };
    let last = p.levels() - 1;
    let g = p.grid(last)?;
    let f: Vec<f64> = p
        .level(&p.f, last)
        .to_vec()?
        .into_iter()
        .map(Into::into)
        .collect();
    let u = solver.solve(&f, g.h2);
    let img = p.level(&p.u, last);
    let mut out = img.write()?;
    for (o, v) in out.iter_mut().zip(u) {
        *o = T::from_f64(v);
    }
    Ok(())
}

impl<T: Real> PingPong<T> {
    /// After a launch that wrote `spare`.
    pub(super) fn flip(&mut self) {
        std::mem::swap(&mut self.cur, &mut self.spare);
        self.in_scratch = !self.in_scratch;
    }
}

impl<T: Real> Ctx<'_, T> {
    fn body(&self, t: &Traversal<'_>) -> Result<()> {
        let mode = self.modes.borrow()[t.level()];
        match mode {
            Mode::Cycle(kind) => self.cycle(t, kind),
            Mode::Fmg { cycles } => self.fmg(t, cycles),
        }
    }

    fn set_child(&self, t: &Traversal<'_>, mode: Mode) {
        self.modes.borrow_mut()[t.level() + 1] = mode;
    }

    fn images(&self, t: &Traversal<'_>) -> Result<PingPong<T>> {
        Ok(PingPong {
            cur: t.image(&self.p.u, 0)?,
            spare: t.image(&self.p.t, 0)?,
            in_scratch: false,
        })
    }

    /// Makes the level's solution current in `u` again.
    fn settle(&self, t: &Traversal<'_>, s: &PingPong<T>) -> Result<()> {
        if s.in_scratch {
            self.p.u.swap_level(&self.p.t, t.level())?;
            if let Some(rec) = self.rec {
                rec.swapped(t.level());
            }
        }
        Ok(())
    }

    /// Whether this level's sweeps run blocked in time: where the options
    /// ask for it and [`blocked::applies`].
    fn blocked(&self, t: &Traversal<'_>) -> Result<bool> {
        let g = self.p.grid(t.level())?;
        Ok(self.opts.blocked && self.rec.is_none() && blocked::applies(self.dev, g))
    }

    /// `sweeps` sweeps, after the coarse-grid correction by `correction`
    /// (the coarser level's solution) when given; blocked in time where
    /// [`Self::blocked`], and then with the residual restricted into
    /// `restrict` in the same pipeline when given (blocked only).
    fn smooth(
        &self,
        t: &Traversal<'_>,
        s: &mut PingPong<T>,
        correction: Option<&Image<T>>,
        sweeps: usize,
        restrict: Option<&Image<T>>,
    ) -> Result<()> {
        let g = self.p.grid(t.level())?;
        let f = t.image(&self.p.f, 0)?;
        let steps = blocked::steps(self.opts.smoother, sweeps);
        if self.blocked(t)? {
            let correction = correction.map(|e| (g.bc, e));
            let scratch = &self.p.blocked;
            let level = t.level();
            return blocked::smooth(
                scratch, self.dev, g, level, &f, correction, &steps, restrict, s,
            );
        }
        debug_assert!(
            restrict.is_none(),
            "bug: a restriction joined to unblocked sweeps"
        );
        if let Some(e) = correction {
            T::prolong(self.dev, g.bc, 1.0, &s.cur, e, &s.spare)?;
            s.flip();
        }
        for (omega, colour) in steps {
            T::smooth(self.dev, g, &s.cur, &f, &s.spare, omega, colour)?;
            s.flip();
        }
        Ok(())
    }

    /// The coarsest level: the exact solve, or sweeps.
    fn bottom(&self, t: &Traversal<'_>) -> Result<()> {
        match self.p.coarse_solver()? {
            Some(_) => match self.rec {
                Some(rec) => rec.coarse_solve(|| coarse_solve(self.p)),
                None => coarse_solve(self.p),
            },
            None => {
                let mut s = self.images(t)?;
                self.smooth(t, &mut s, None, self.opts.coarse_sweeps, None)?;
                self.settle(t, &s)
            }
        }
    }

    /// One cycle step at this level.
    fn cycle(&self, t: &Traversal<'_>, kind: CycleKind) -> Result<()> {
        if t.is_bottom_level() {
            return self.bottom(t);
        }
        let (pre, post) = self.opts.sweeps(t.level());
        let g = self.p.grid(t.level())?;
        let mut s = self.images(t)?;
        let f = t.image(&self.p.f, 0)?;
        let coarse_f = t.image(&self.p.f, 1)?;
        // Blocked, the fused residual and restriction join the last
        // pre-smoothing pipeline: one pass over the level instead of two.
        let joined = self.opts.fused && pre > 0 && self.blocked(t)?;
        self.smooth(t, &mut s, None, pre, joined.then_some(&coarse_f))?;
        if !joined && self.opts.fused {
            T::residual_restrict(self.dev, g, &s.cur, &f, &coarse_f)?;
        } else if !joined {
            T::residual(self.dev, g, &s.cur, &f, &s.spare)?;
            T::restrict(self.dev, &s.spare, &coarse_f)?;
        }
        T::fill(self.dev, 0.0, &t.image(&self.p.u, 1)?)?;
        match kind {
            CycleKind::V => {
                self.set_child(t, Mode::Cycle(CycleKind::V));
                t.recurse()?;
            }
            CycleKind::W => {
                self.set_child(t, Mode::Cycle(CycleKind::W));
                t.recurse_n(2, |_| Ok(()))?;
            }
            CycleKind::F => {
                self.set_child(t, Mode::Cycle(CycleKind::F));
                t.recurse_n(2, |_| {
                    self.set_child(t, Mode::Cycle(CycleKind::V));
                    Ok(())
                })?;
            }
        }
        let e = t.image(&self.p.u, 1)?;
        self.smooth(t, &mut s, Some(&e), post, None)?;
        self.settle(t, &s)
    }

    /// One full-multigrid step at this level.
    fn fmg(&self, t: &Traversal<'_>, cycles: usize) -> Result<()> {
        if t.is_bottom_level() {
            return self.bottom(t);
        }
        let f = t.image(&self.p.f, 0)?;
        T::restrict(self.dev, &f, &t.image(&self.p.f, 1)?)?;
        self.set_child(t, Mode::Fmg { cycles });
        t.recurse()?;
        let g = self.p.grid(t.level())?;
        // The scratch level is read with weight 0: u = P u_coarse.
        let (coarse, here) = (t.image(&self.p.u, 1)?, t.image(&self.p.u, 0)?);
        T::prolong(self.dev, g.bc, 0.0, &t.image(&self.p.t, 0)?, &coarse, &here)?;
        for _ in 0..cycles {
            self.cycle(t, self.opts.kind)?;
        }
        Ok(())
    }
}
