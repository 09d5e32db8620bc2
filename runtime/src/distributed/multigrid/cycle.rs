//! V-, W-, F-cycles and full multigrid over the distributed levels.
//!
//! The recursion follows the single-process traversal step for step: a
//! W-cycle recurses twice as a W-cycle, an F-cycle first as an F-cycle and
//! then as a V-cycle, full multigrid once as full multigrid and then runs
//! its cycles at its own level. Where the recursion reaches the gathered
//! level, rank 0 runs those same steps on the single-process [`Poisson`]
//! holding it and the levels below.

use super::launch::DistReal;
use super::stats::CycleStats;
use crate::distributed::{DistImage, DistResult, Grid};
use crate::multigrid::{CycleKind, CycleOptions, Poisson, Smoother};
use crate::Device;
use std::rc::Rc;
use std::time::Instant;

/// One distributed level: solution, right-hand side and scratch.
pub(super) struct Level<T: DistReal> {
    pub(super) grid: Rc<Grid>,
    pub(super) g: crate::multigrid::real::Grid,
    pub(super) u: DistImage<T>,
    pub(super) f: DistImage<T>,
    pub(super) t: DistImage<T>,
}

/// What the cycles share: the device, the options, the options of the
/// gathered levels (whose level 0 is the gathered one) and, on rank 0,
/// the gathered problem.
pub(super) struct Ctx<'a, T: DistReal> {
    pub(super) dev: &'a Device,
    pub(super) opts: &'a CycleOptions,
    pub(super) below: CycleOptions,
    pub(super) coarse: Option<&'a Poisson<T>>,
    pub(super) stats: CycleStats,
}

/// How the gathered level starts and what it runs.
#[derive(Clone, Copy, Debug)]
pub(super) enum Gathered<'k> {
    /// Cycles of these kinds, one after the other, from the current
    /// solution (`zero`: from a zero guess, as a coarse correction).
    Cycles { kinds: &'k [CycleKind], zero: bool },
    /// Full multigrid with `cycles` cycles per level.
    Fmg { cycles: usize },
}

impl<T: DistReal> Ctx<'_, T> {
    /// `sweeps` smoothing sweeps on `l` (level `k`), the solution left in `l.u`.
    fn smooth(&mut self, l: &mut Level<T>, k: usize, sweeps: usize) -> DistResult<()> {
        for _ in 0..sweeps {
            match self.opts.smoother {
                Smoother::Jacobi { omega } => {
                    let s = T::dist_smooth(self.dev, l.g, &l.u, &l.f, &l.t, omega, -1)?;
                    self.stats.add(k, s);
                    std::mem::swap(&mut l.u, &mut l.t);
                }
                Smoother::RedBlack => {
                    let s = T::dist_smooth(self.dev, l.g, &l.u, &l.f, &l.t, 1.0, 0)?;
                    self.stats.add(k, s);
                    let s = T::dist_smooth(self.dev, l.g, &l.t, &l.f, &l.u, 1.0, 1)?;
                    self.stats.add(k, s);
                }
            }
        }
        Ok(())
    }

    /// One cycle step of `kind` at `levels[0]`, level `k` of the
    /// hierarchy (a distributed level above the gathered one).
    pub(super) fn cycle(
        &mut self,
        levels: &mut [Level<T>],
        k: usize,
        kind: CycleKind,
    ) -> DistResult<()> {
        let [here, rest @ ..] = levels else {
            unreachable!("bug: a cycle below the levels")
        };
        let (pre, post) = self.opts.sweeps(k);
        self.smooth(here, k, pre)?;
        let child = &rest[0];
        if self.opts.fused {
            let s = T::dist_residual_restrict(self.dev, here.g, &here.u, &here.f, &child.f)?;
            self.stats.add(k, s);
        } else {
            let s = T::dist_residual(self.dev, here.g, &here.u, &here.f, &here.t)?;
            self.stats.add(k, s);
            self.stats
                .add(k, T::dist_restrict(self.dev, &here.t, &child.f)?);
        }
        // The child's recursions, as the single-process cycle makes them.
        let kinds: &[CycleKind] = match kind {
            CycleKind::V => &[CycleKind::V],
            CycleKind::W => &[CycleKind::W, CycleKind::W],
            CycleKind::F => &[CycleKind::F, CycleKind::V],
        };
        if rest.len() == 1 {
            self.gathered(&mut rest[0], Gathered::Cycles { kinds, zero: true })?;
        } else {
            self.stats
                .add(k + 1, T::dist_fill(self.dev, 0.0, &rest[0].u)?);
            for &kind in kinds {
                self.cycle(rest, k + 1, kind)?;
            }
        }
        let child = &rest[0];
        let s = T::dist_prolong(self.dev, here.g.bc, 1.0, &here.u, &child.u, &here.t)?;
        self.stats.add(k, s);
        std::mem::swap(&mut here.u, &mut here.t);
        self.smooth(here, k, post)
    }

    /// One full-multigrid step at `levels[0]`, level `k`.
    pub(super) fn fmg(
        &mut self,
        levels: &mut [Level<T>],
        k: usize,
        cycles: usize,
    ) -> DistResult<()> {
        let [here, rest @ ..] = levels else {
            unreachable!("bug: full multigrid below the levels")
        };
        self.stats
            .add(k, T::dist_restrict(self.dev, &here.f, &rest[0].f)?);
        if rest.len() == 1 {
            self.gathered(&mut rest[0], Gathered::Fmg { cycles })?;
        } else {
            self.fmg(rest, k + 1, cycles)?;
        }
        // The scratch level is read with weight 0: u = P u_coarse.
        let s = T::dist_prolong(self.dev, here.g.bc, 0.0, &here.t, &rest[0].u, &here.u)?;
        self.stats.add(k, s);
        for _ in 0..cycles {
            self.cycle(levels, k, self.opts.kind)?;
        }
        Ok(())
    }

    /// The gathered level `l`: its right-hand side (and, unless starting
    /// from zero, its solution) onto rank 0, `what` there, the solution
    /// back.
    pub(super) fn gathered(&mut self, l: &mut Level<T>, what: Gathered<'_>) -> DistResult<()> {
        let start = Instant::now();
        let f = l.f.gather(0)?;
        let u = match what {
            Gathered::Cycles { zero: false, .. } => l.u.gather(0)?,
            _ => None,
        };
        let solution = match (f, self.coarse) {
            (Some(f), Some(p)) => {
                p.rhs().copy_from_slice(&f.to_vec()?)?;
                match u {
                    Some(u) => p.solution().copy_from_slice(&u.to_vec()?)?,
                    None => p.solution().write()?.fill(T::default()),
                }
                match what {
                    Gathered::Cycles { kinds, .. } => {
                        for &kind in kinds {
                            let opts = CycleOptions {
                                kind,
                                ..self.below.clone()
                            };
                            p.cycle(self.dev, &opts)?;
                        }
                    }
                    Gathered::Fmg { cycles } => p.fmg_part(self.dev, &self.below, cycles)?,
                }
                Some(p.solution())
            }
            _ => None,
        };
        l.u = DistImage::scatter(&l.grid, 0, solution.as_ref())?;
        self.stats.coarse_seconds += start.elapsed().as_secs_f64();
        Ok(())
    }
}
