//! The distributed multigrid solver against the single-process one.
//!
//! Cycles and full multigrid must give bit-identical solutions: every
//! distributed launch runs the single-process kernel on the same inputs
//! (global coordinates from the origin) and rank 0 runs the
//! single-process steps on the gathered levels, so both do the same
//! arithmetic for any rank count and any gathering threshold. Residual
//! norms are sums of `n` squares in `f64` grouped differently (per rank,
//! per chunk); each sum is within `(n - 1) u` relative of the exact one
//! (`u = ε / 2`), so they differ by less than `n ε` relative. A pure
//! Neumann solve shifts `f` and `u` by means from exact sums, the same
//! bits on every split, so those solutions are bit-identical as well.

use super::mpi_support::{pattern, Checker};
use hipacc::distributed::mpi::topology::SimpleCommunicator;
use hipacc::distributed::mpi::traits::*;
use hipacc::distributed::multigrid::DistPoisson;
use hipacc::distributed::Grid;
use hipacc::multigrid::{Bc, CycleKind, CycleOptions, Poisson, Smoother};
use hipacc::prelude::*;
use std::rc::Rc;

const CYCLES: usize = 3;

/// One configuration: device, grid, boundary condition, options,
/// threshold.
struct Case<'a> {
    dev: &'a Device,
    grid: &'a Rc<Grid>,
    bc: Bc,
    opts: &'a CycleOptions,
    gather_at: usize,
}

impl Case<'_> {
    fn what(&self, run: &str) -> String {
        let (w, h) = (self.grid.width(), self.grid.height());
        format!(
            "multigrid {run} {w}x{h} {:?} {:?} {:?} fused {} gathered at {}",
            self.bc, self.opts.kind, self.opts.smoother, self.opts.fused, self.gather_at
        )
    }

    /// Both solvers on this case with right-hand side `f`.
    fn problems(&self, f: &dyn Fn(usize, usize) -> f32) -> (Poisson<f32>, DistPoisson<f32>) {
        let (w, h) = (self.grid.width(), self.grid.height());
        let levels = Poisson::<f32>::max_levels(w, h, self.bc);
        let spacing = 1.0 / w as f64;
        let single = Poisson::<f32>::new(w, h, levels, self.bc, spacing).expect("problem");
        {
            let rhs = single.rhs();
            let mut px = rhs.write().expect("rhs");
            for (i, v) in px.iter_mut().enumerate() {
                *v = f(i % w, i / w);
            }
        }
        let mut p = DistPoisson::<f32>::new(self.grid, levels, self.bc, spacing, self.gather_at)
            .expect("distributed problem");
        p.set_rhs(f).expect("rhs");
        (single, p)
    }
}

/// A right-hand side of (nearly) zero mean, so Neumann cycles converge
/// without a mean correction.
fn zero_mean(w: usize, h: usize) -> impl Fn(usize, usize) -> f32 {
    let raw: Vec<f64> = (0..w * h)
        .map(|i| pattern(5)(i % w, i / w) as f64)
        .collect();
    let mean = raw.iter().sum::<f64>() / raw.len() as f64;
    move |x, y| (raw[y * w + x] - mean) as f32
}

/// `CYCLES` cycles of the case's kind: bit-identical solutions, residual
/// norms within `n ε` relative, and the residual falls.
fn check_cycles(c: &mut Checker, case: &Case, distributed_levels: Option<usize>) {
    let dev = case.dev;
    let what = case.what("cycles");
    let (w, h) = (case.grid.width(), case.grid.height());
    let (single, mut p) = case.problems(&zero_mean(w, h));
    if let Some(d) = distributed_levels {
        c.equal(
            &format!("{what}: distributed levels"),
            &[d as u64],
            &[p.distributed_levels() as u64],
        );
    }
    let mut expected = vec![single.residual_norm(dev).expect("residual")];
    let mut got = vec![p.residual_norm(dev).expect("residual")];
    for _ in 0..CYCLES {
        single.cycle(dev, case.opts).expect("single-process cycle");
        expected.push(single.residual_norm(dev).expect("residual"));
        p.cycle(dev, case.opts).expect(&what);
        got.push(p.residual_norm(dev).expect("residual"));
    }
    c.same(&what, &single.solution(), p.solution());
    let bound = (w * h) as f64 * f64::EPSILON;
    for (i, (e, g)) in expected.iter().zip(&got).enumerate() {
        c.relative(&format!("{what}: residual after {i} cycles"), *e, *g, bound);
    }
    // The cycles converge (a check of the test itself).
    if expected[CYCLES] > 0.1 * expected[0] {
        eprintln!("MISMATCH {what}: residuals {expected:?} do not fall");
        c.world.abort(1);
    }
}

/// Full multigrid (one cycle per level) from a right-hand side of nonzero
/// mean: bit-identical, the Neumann mean corrections included.
fn check_fmg(c: &mut Checker, case: &Case) {
    let dev = case.dev;
    let what = case.what("fmg");
    let (single, mut p) = case.problems(&pattern(11));
    single.fmg(dev, case.opts, 1).expect("single-process fmg");
    p.fmg(dev, case.opts, 1).expect(&what);
    c.same(&what, &single.solution(), p.solution());
}

/// A Neumann solve (mean of `f` removed first, of `u` last): the
/// residual histories agree to `f64` rounding of their sums, the
/// solutions bit for bit; so do those of a solve to an estimated error
/// (its corrections are exact maxima).
fn check_solve(c: &mut Checker, case: &Case) {
    let dev = case.dev;
    let what = case.what("solve");
    let (single, mut p) = case.problems(&pattern(13));
    let e = single
        .solve(dev, case.opts, 1e-5, 12)
        .expect("single-process solve");
    let g = p.solve(dev, case.opts, 1e-5, 12).expect(&what);
    c.equal(
        &format!("{what}: cycles"),
        &[e.cycles as u64],
        &[g.cycles as u64],
    );
    for (i, (e, g)) in e.residuals.iter().zip(&g.residuals).enumerate() {
        c.relative(&format!("{what}: residual after {i} cycles"), *e, *g, 1e-5);
    }
    c.same(&what, &single.solution(), p.solution());
    let what = case.what("solve_to_error");
    let (single, mut p) = case.problems(&pattern(17));
    single.fmg(dev, case.opts, 1).expect("single-process fmg");
    p.fmg(dev, case.opts, 1).expect(&what);
    let e = single
        .solve_to_error(dev, case.opts, 1e-4, 12)
        .expect("single-process solve_to_error");
    let g = p.solve_to_error(dev, case.opts, 1e-4, 12).expect(&what);
    let bits = |v: &[f64]| v.iter().map(|c| c.to_bits()).collect::<Vec<_>>();
    c.equal(
        &format!("{what}: corrections"),
        &bits(&e.corrections),
        &bits(&g.corrections),
    );
    c.same(&what, &single.solution(), p.solution());
    // The solution has zero mean on both (the mean correction ran).
    let mean = hipacc::distributed::sum(dev, p.solution()).expect("sum")
        / (case.grid.width() * case.grid.height()) as f64;
    c.close(&format!("{what}: mean of u"), 0.0, mean, 1e-5);
}

/// Every configuration on `dev`, on a grid split over `world`, against the
/// single-process solver on the same device.
pub(super) fn check(world: &SimpleCommunicator, c: &mut Checker, dev: &Device) {
    let mut rb = CycleOptions::new(CycleKind::V, Smoother::RedBlack, 2, 2);
    rb.fused = true;
    let mut jacobi = CycleOptions::new(CycleKind::V, Smoother::Jacobi { omega: 0.8 }, 3, 2);
    jacobi.fused = false;
    let even = Rc::new(Grid::new(world, 64, 48).expect("grid"));
    let odd = Rc::new(Grid::new(world, 37, 23).expect("grid"));
    for kind in [CycleKind::V, CycleKind::W, CycleKind::F] {
        let rb = CycleOptions { kind, ..rb.clone() };
        let jacobi = CycleOptions {
            kind,
            ..jacobi.clone()
        };
        let case = |grid, bc, opts, gather_at| Case {
            dev,
            grid,
            bc,
            opts,
            gather_at,
        };
        // 64x48, 32x24 and 16x12 distributed, 8x6 gathered.
        check_cycles(c, &case(&even, Bc::Dirichlet, &rb, 8), Some(3));
        check_cycles(c, &case(&even, Bc::Dirichlet, &jacobi, 0), None);
        check_cycles(c, &case(&even, Bc::Neumann, &rb, 0), None);
        // Odd sizes: narrow last cells on the coarse levels.
        check_cycles(c, &case(&odd, Bc::Neumann, &rb, 4), None);
        check_cycles(c, &case(&odd, Bc::Neumann, &jacobi, 12), None);
        // Everything gathered: the cycle runs on rank 0 from the current
        // solution.
        check_cycles(c, &case(&odd, Bc::Neumann, &rb, 64), Some(0));
        check_fmg(c, &case(&even, Bc::Dirichlet, &rb, 8));
        check_fmg(c, &case(&even, Bc::Dirichlet, &jacobi, 64));
        check_fmg(c, &case(&odd, Bc::Neumann, &rb, 4));
    }
    check_solve(
        c,
        &Case {
            dev,
            grid: &odd,
            bc: Bc::Neumann,
            opts: &rb,
            gather_at: 6,
        },
    );
    let w = CycleOptions {
        kind: CycleKind::W,
        ..jacobi
    };
    check_solve(
        c,
        &Case {
            dev,
            grid: &even,
            bc: Bc::Neumann,
            opts: &w,
            gather_at: 0,
        },
    );
}
