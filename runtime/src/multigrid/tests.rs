//! Convergence of the cycles on the CPU backend (the OpenCL backend runs
//! the same checks in `tests/multigrid.rs`).

use super::manufactured::{fill_rhs, max_error};
use super::*;

fn problem(n: usize, bc: Bc) -> Poisson<f64> {
    let levels = Poisson::<f64>::default_levels(n, n, bc);
    let p = Poisson::new(n, n, levels, bc, 1.0 / n as f64).expect("valid problem");
    fill_rhs(bc, &p.rhs()).expect("rhs");
    p
}

/// Convergence factors are measured from a random initial guess, so that
/// every error component is present from the first cycle.
fn factor(n: usize, bc: Bc, opts: &CycleOptions) -> f64 {
    let p = problem(n, bc);
    super::manufactured::random_guess(&p.solution(), 7).expect("guess");
    let report = p.solve(&Device::cpu(), opts, 1e-9, 30).expect("solve");
    convergence_factor(&report.residuals).expect("residuals")
}

const JACOBI: Smoother = Smoother::Jacobi { omega: 0.8 };

#[test]
fn convergence_factors_are_textbook_for_both_boundary_conditions() {
    let cases = [
        (CycleKind::V, JACOBI, 2, 0.20),
        (CycleKind::V, Smoother::RedBlack, 2, 0.10),
        (CycleKind::W, JACOBI, 2, 0.15),
        (CycleKind::V, Smoother::RedBlack, 1, 0.15),
    ];
    for (kind, smoother, nu, bound) in cases {
        for fused in [false, true] {
            let opts = CycleOptions::new(kind, smoother, nu, nu).fused(fused);
            let d = factor(128, Bc::Dirichlet, &opts);
            let n = factor(128, Bc::Neumann, &opts);
            assert!(d <= bound, "{opts:?}: Dirichlet factor {d} > {bound}");
            assert!(
                (n - d).abs() <= 0.05,
                "{opts:?}: Neumann {n} vs Dirichlet {d}"
            );
        }
    }
}

#[test]
fn fused_and_unfused_cycles_agree() {
    let opts = CycleOptions::new(CycleKind::V, Smoother::RedBlack, 2, 2);
    let a = problem(64, Bc::Dirichlet);
    let b = problem(64, Bc::Dirichlet);
    let dev = Device::cpu();
    a.cycle(&dev, &opts).expect("cycle");
    b.cycle(&dev, &opts.clone().fused(true)).expect("cycle");
    let (ua, ub) = (
        a.solution().to_vec().expect("u"),
        b.solution().to_vec().expect("u"),
    );
    let diff = ua
        .iter()
        .zip(&ub)
        .map(|(x, y)| (x - y).abs())
        .fold(0.0, f64::max);
    assert!(diff < 1e-12, "fused and unfused differ by {diff}");
}

#[test]
fn f_cycles_converge_at_least_as_fast_as_v_cycles() {
    let v = factor(
        64,
        Bc::Dirichlet,
        &CycleOptions::new(CycleKind::V, JACOBI, 2, 2),
    );
    let f = factor(
        64,
        Bc::Dirichlet,
        &CycleOptions::new(CycleKind::F, JACOBI, 2, 2),
    );
    assert!(f <= v + 1e-3, "F {f} vs V {v}");
}

#[test]
fn fmg_reaches_the_discretisation_error_with_second_order() {
    let dev = Device::cpu();
    let opts = CycleOptions::new(CycleKind::V, Smoother::RedBlack, 2, 2);
    for bc in [Bc::Dirichlet, Bc::Neumann] {
        let mut errors = Vec::new();
        for n in [32, 64, 128] {
            let fmg = problem(n, bc);
            fmg.fmg(&dev, &opts, 1).expect("fmg");
            let exact = problem(n, bc);
            exact.solve(&dev, &opts, 1e-12, 40).expect("solve");
            let (e_fmg, e_disc) = (
                max_error(bc, &fmg.solution()).expect("error"),
                max_error(bc, &exact.solution()).expect("error"),
            );
            assert!(
                e_fmg <= 2.0 * e_disc,
                "{bc:?} n={n}: FMG {e_fmg} vs discrete {e_disc}"
            );
            errors.push(e_disc);
        }
        for w in errors.windows(2) {
            let ratio = w[0] / w[1];
            assert!(
                (3.5..4.5).contains(&ratio),
                "{bc:?}: error ratio {ratio} ({errors:?})"
            );
        }
    }
}

#[test]
fn odd_and_rectangular_grids_converge() {
    let dev = Device::cpu();
    let opts = CycleOptions::new(CycleKind::V, Smoother::RedBlack, 2, 2).fused(true);
    for (w, h) in [(1, 1), (2, 3), (17, 5), (127, 33), (100, 75), (96, 40)] {
        for bc in [Bc::Dirichlet, Bc::Neumann] {
            let levels = Poisson::<f32>::default_levels(w, h, bc);
            let p = Poisson::<f32>::new(w, h, levels, bc, 1.0).expect("problem");
            let rhs = p.rhs();
            for (k, v) in rhs.write().expect("rhs").iter_mut().enumerate() {
                *v = ((k * 37) % 11) as f32 - 5.0;
            }
            let r = p.solve(&dev, &opts, 1e-5, 40).expect("solve");
            assert!(r.converged, "{w}x{h} {bc:?}: {r:?}");
        }
    }
}

#[test]
fn more_levels_than_default_still_converge() {
    // 64x64 with 7 levels: the coarsest is 1x1.
    let p = Poisson::<f64>::new(64, 64, 7, Bc::Neumann, 1.0 / 64.0).expect("problem");
    fill_rhs(Bc::Neumann, &p.rhs()).expect("rhs");
    let opts = CycleOptions::new(CycleKind::W, Smoother::RedBlack, 1, 1);
    let r = p.solve(&Device::cpu(), &opts, 1e-8, 30).expect("solve");
    assert!(r.converged, "{r:?}");
}

#[test]
fn a_large_coarsest_level_is_smoothed_instead() {
    // 2 levels of 512x512: the coarsest 256x256 is beyond the exact solver,
    // and sweeps there reduce only its rough error components: with a
    // rough right-hand side the cycles still converge, slowly.
    let p = Poisson::<f32>::new(512, 512, 2, Bc::Dirichlet, 1.0).expect("problem");
    assert!(p.coarse_solver().expect("size").is_none());
    let rhs = p.rhs();
    for (k, v) in rhs.write().expect("rhs").iter_mut().enumerate() {
        *v = ((k * 37) % 11) as f32 - 5.0;
    }
    let opts = CycleOptions::new(CycleKind::V, Smoother::RedBlack, 2, 2);
    let r = p.solve(&Device::cpu(), &opts, 1e-9, 4).expect("solve");
    assert!(r.residuals.windows(2).all(|w| w[1] < w[0]), "{r:?}");
    assert!(r.residuals[4] < 0.05 * r.residuals[0], "{r:?}");
}

#[test]
fn dirichlet_values_are_folded_into_the_right_hand_side() {
    // u = 1 + x: harmonic, so -Δu = 0 with g = 1 + x on the boundary; the
    // scheme is exact for linear functions.
    let n = 32;
    let p = Poisson::<f64>::new(n, n, 4, Bc::Dirichlet, 1.0 / n as f64).expect("problem");
    p.add_dirichlet_values(|x, _| 1.0 + x).expect("values");
    let opts = CycleOptions::new(CycleKind::V, Smoother::RedBlack, 2, 2);
    let r = p.solve(&Device::cpu(), &opts, 1e-12, 40).expect("solve");
    assert!(r.converged);
    let u = p.solution().to_vec().expect("u");
    for (k, v) in u.iter().enumerate() {
        let x = ((k % n) as f64 + 0.5) / n as f64;
        assert!((v - (1.0 + x)).abs() < 1e-9, "cell {k}: {v} vs {}", 1.0 + x);
    }
}

#[test]
fn bad_options_are_errors() {
    let p = problem(64, Bc::Dirichlet);
    let dev = Device::cpu();
    let bad_omega = CycleOptions::new(CycleKind::V, Smoother::Jacobi { omega: 2.0 }, 1, 1);
    assert!(matches!(
        p.cycle(&dev, &bad_omega),
        Err(crate::Error::Multigrid(MultigridError::Omega(_)))
    ));
    let no_sweeps = CycleOptions::new(CycleKind::V, Smoother::RedBlack, 0, 0);
    assert!(p.cycle(&dev, &no_sweeps).is_err());
    let ok = CycleOptions::new(CycleKind::V, Smoother::RedBlack, 1, 1);
    assert!(p.solve(&dev, &ok, 1e-6, 0).is_err());
    assert!(p.solve(&dev, &ok, 0.0, 5).is_err());
    assert!(p.fmg(&dev, &ok, 0).is_err());
    assert!(Poisson::<f32>::new(16, 16, 1, Bc::Neumann, f64::NAN).is_err());
    assert!(Poisson::<f32>::new(16, 16, 9, Bc::Neumann, 1.0).is_err());
    // Dirichlet needs even sizes on every level but the coarsest.
    assert!(matches!(
        Poisson::<f32>::new(48, 40, 5, Bc::Dirichlet, 1.0),
        Err(crate::Error::Multigrid(MultigridError::NotDivisible { .. }))
    ));
    assert!(Poisson::<f32>::new(48, 40, 4, Bc::Dirichlet, 1.0).is_ok());
    assert!(Poisson::<f32>::new(47, 40, 5, Bc::Neumann, 1.0).is_ok());
    assert!("x".parse::<CycleKind>().is_err());
}

/// A Neumann problem with large flat areas and sharp steps, as the
/// log-luminance of such an image gives: `f = A v` for `v` a field of flat
/// rectangles, rounded to `f32`, on a grid with odd sizes on several levels
/// as real images have. Returned with its solution, solved in `f64` to
/// round-off (the solution of the `f32` right-hand side, not `v`: rounding
/// `f` moves the smoothest modes of the solution by up to about 1e-4).
fn steps_problem(w: usize, h: usize) -> (Poisson<f32>, Vec<f64>) {
    let mut v = vec![0.0f64; w * h];
    let mut state = 0x9e37_79b9_7f4a_7c15u64;
    let mut next = |n: usize| {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        (state % n as u64) as usize
    };
    for _ in 0..6 {
        let (x0, y0) = (next(w), next(h));
        let (x1, y1) = ((x0 + 1 + next(w / 3)).min(w), (y0 + 1 + next(h / 3)).min(h));
        let value = next(1000) as f64 / 100.0 - 5.0;
        for y in y0..y1 {
            v[y * w + x0..y * w + x1].fill(value);
        }
    }
    let levels = Poisson::<f32>::default_levels(w, h, Bc::Neumann);
    let p = Poisson::<f32>::new(w, h, levels, Bc::Neumann, 1.0).expect("problem");
    let exact = Poisson::<f64>::new(w, h, levels, Bc::Neumann, 1.0).expect("problem");
    {
        let (rhs, rhs64) = (p.rhs(), exact.rhs());
        let (mut f, mut f64_) = (rhs.write().expect("rhs"), rhs64.write().expect("rhs"));
        for y in 0..h {
            for x in 0..w {
                let c = v[y * w + x];
                let inside = [(-1, 0), (1, 0), (0, -1), (0, 1)]
                    .into_iter()
                    .map(|(dx, dy)| (x as i64 + dx, y as i64 + dy))
                    .filter(|&(nx, ny)| nx >= 0 && ny >= 0 && nx < w as i64 && ny < h as i64);
                let sum: f64 = inside
                    .map(|(nx, ny)| c - v[ny as usize * w + nx as usize])
                    .sum();
                f[y * w + x] = sum as f32;
                f64_[y * w + x] = f64::from(sum as f32);
            }
        }
    }
    let opts = CycleOptions::new(CycleKind::V, Smoother::RedBlack, 2, 2);
    let r = exact
        .solve(&Device::cpu(), &opts, 1e-13, 80)
        .expect("solve");
    assert!(r.converged, "{r:?}");
    (p, exact.solution().to_vec().expect("u"))
}

fn max_error_from(p: &Poisson<f32>, exact: &[f64]) -> f64 {
    let u = p.solution().to_vec().expect("u");
    u.iter()
        .zip(exact)
        .map(|(&a, &b)| (f64::from(a) - b).abs())
        .fold(0.0, f64::max)
}

/// Sets the solution of `p` to `exact` plus a smooth mode of amplitude
/// `amplitude` spanning the grid (the error a residual test misses).
fn set_smoothly_wrong(p: &Poisson<f32>, exact: &[f64], amplitude: f64) {
    let (w, img) = (p.solution().width(), p.solution());
    let mut u = img.write().expect("u");
    for (k, v) in u.iter_mut().enumerate() {
        let x = ((k % w) as f64 + 0.5) / w as f64;
        *v = (exact[k] + amplitude * (std::f64::consts::PI * x).cos()) as f32;
    }
}

#[test]
fn the_error_rule_holds_where_a_residual_rule_passes_a_wrong_answer() {
    let opts = CycleOptions::new(CycleKind::V, Smoother::RedBlack, 2, 2).fused(true);
    let dev = Device::cpu();
    for (w, h) in [(301, 155), (257, 129)] {
        let (p, exact) = steps_problem(w, h);
        // A smooth error of 0.1 in a log-luminance (a 10 % change of
        // brightness) leaves a residual far below 1e-3 of the right-hand
        // side's: the residual rule accepts it without a cycle.
        set_smoothly_wrong(&p, &exact, 0.1);
        let r = p.solve(&dev, &opts, 1e-3, 30).expect("solve");
        let residual_rule_error = max_error_from(&p, &exact);
        assert!(r.converged && r.cycles == 0, "{w}x{h}: {r:?}");
        assert!(residual_rule_error > 0.05, "{w}x{h}: {residual_rule_error}");
        // The error rule reaches its tolerance from that answer and from
        // full multigrid, and the estimate is within the factor the
        // module docs state.
        for start in ["wrong", "fmg"] {
            if start == "wrong" {
                set_smoothly_wrong(&p, &exact, 0.1);
            } else {
                p.fmg(&dev, &opts, 1).expect("fmg");
            }
            let r = p.solve_to_error(&dev, &opts, 1e-3, 30).expect("solve");
            let error = max_error_from(&p, &exact);
            let estimate = r.error_estimate.expect("estimate");
            assert!(r.converged && estimate <= 1e-3, "{w}x{h} {start}: {r:?}");
            assert!(error <= 1e-3, "{w}x{h} {start}: error {error}: {r:?}");
            // Below about 1e-4 the f32 round-off of a solution of this
            // size, not the cycles, sets the error.
            assert!(
                error <= 2.0 * estimate + 1e-4,
                "{w}x{h} {start}: error {error}: {r:?}"
            );
        }
    }
}

#[test]
fn the_error_rule_runs_at_least_two_cycles_and_stops_at_its_limit() {
    let dev = Device::cpu();
    let opts = CycleOptions::new(CycleKind::V, Smoother::RedBlack, 2, 2);
    let (p, _) = steps_problem(64, 40);
    // The exact coarse solve on a grid this small: every cycle after the
    // first changes (almost) nothing, but two still run.
    let r = p.solve_to_error(&dev, &opts, 1.0, 30).expect("solve");
    assert_eq!(r.cycles, stopping::MIN_CYCLES, "{r:?}");
    // An unreachable tolerance in f32 ends at the cycle limit, unconverged.
    let r = p.solve_to_error(&dev, &opts, 1e-12, 5).expect("solve");
    assert_eq!((r.cycles, r.converged), (5, false), "{r:?}");
    assert!(p.solve_to_error(&dev, &opts, 0.0, 5).is_err());
    assert!(p.solve_to_error(&dev, &opts, 1e-3, 0).is_err());
}

#[test]
fn odd_sizes_converge_as_fast_as_even_ones() {
    // Coarsening an odd size leaves a narrower last cell, which the coarse
    // operator, restriction and prolongation account for (module docs).
    let opts = CycleOptions::new(CycleKind::V, Smoother::RedBlack, 2, 2).fused(true);
    for (w, h) in [(128, 96), (127, 33), (301, 155), (161, 219), (437, 161)] {
        let levels = Poisson::<f64>::default_levels(w, h, Bc::Neumann);
        let p = Poisson::<f64>::new(w, h, levels, Bc::Neumann, 1.0).expect("problem");
        for (k, v) in p.rhs().write().expect("rhs").iter_mut().enumerate() {
            *v = ((k * 37) % 11) as f64 - 5.0;
        }
        super::manufactured::random_guess(&p.solution(), 7).expect("guess");
        let r = p.solve(&Device::cpu(), &opts, 1e-10, 30).expect("solve");
        let rate = convergence_factor(&r.residuals).expect("residuals");
        // Measured: 0.015 to 0.017 on all five; with equal coarse cells
        // padded past odd edges the odd ones took 0.044 to 0.090.
        assert!(rate <= 0.03, "{w}x{h}: {rate} per cycle: {r:?}");
    }
}

/// Two cycles of `opts` from the same random guess, blocked and not:
/// the solutions, and the levels of the blocked cycles' blocked launches.
fn blocked_and_unblocked(
    w: usize,
    h: usize,
    bc: Bc,
    opts: &CycleOptions,
) -> (Vec<f32>, Vec<f32>, Vec<usize>) {
    let (plain, blocked, launches) = blocked_launches(w, h, bc, opts);
    let levels = launches
        .iter()
        .filter(|(k, _)| k.ends_with("(blocked)"))
        .map(|&(_, l)| l)
        .collect();
    (plain, blocked, levels)
}

/// [`blocked_and_unblocked`] with every launch of the blocked cycles, as
/// `(kernel, level)`.
fn blocked_launches(
    w: usize,
    h: usize,
    bc: Bc,
    opts: &CycleOptions,
) -> (Vec<f32>, Vec<f32>, Vec<(String, usize)>) {
    let dev = Device::cpu();
    let run = |blocked: bool| {
        let levels = Poisson::<f32>::default_levels(w, h, bc);
        let p = Poisson::<f32>::new(w, h, levels, bc, 1.0 / w as f64).expect("problem");
        fill_rhs(bc, &p.rhs()).expect("rhs");
        super::manufactured::random_guess(&p.solution(), 5).expect("guess");
        let opts = opts.clone().blocked(blocked);
        let mut launches = Vec::new();
        for _ in 0..2 {
            let trace = p.cycle(&dev, &opts).expect("cycle");
            launches.extend(trace.launches().map(|l| (l.kernel.clone(), l.level)));
        }
        (p.solution().to_vec().expect("solution"), launches)
    };
    let (plain, none) = run(false);
    assert!(
        !none.iter().any(|(k, _)| k.ends_with("(blocked)")),
        "{opts:?}: blocked launches unasked"
    );
    let (blocked, levels) = run(true);
    (plain, blocked, levels)
}

#[test]
fn blocked_cycles_equal_unblocked_ones_bit_for_bit() {
    // 723x363: odd, so level 1 (362x182) has narrower last cells and is
    // still large enough to run blocked; 520x264 halves evenly.
    let grids = [(723, 363, Bc::Neumann), (520, 264, Bc::Dirichlet)];
    let cycles = [
        CycleOptions::new(CycleKind::V, JACOBI, 2, 2).fused(true),
        CycleOptions::new(CycleKind::W, JACOBI, 1, 3),
        CycleOptions::new(CycleKind::V, Smoother::RedBlack, 2, 1).fused(true),
        // Seven stages after the correction: split into two pipelines.
        CycleOptions::new(CycleKind::W, Smoother::RedBlack, 3, 3),
        CycleOptions::new(CycleKind::F, Smoother::RedBlack, 0, 2),
    ];
    for (w, h, bc) in grids {
        for opts in &cycles {
            let (plain, blocked, launches) = blocked_launches(w, h, bc, opts);
            let at = |level: usize, what: &dyn Fn(&str) -> bool| {
                launches.iter().any(|(k, l)| *l == level && what(k))
            };
            let blocked_at = |level| at(level, &|k| k.ends_with("(blocked)"));
            assert!(blocked_at(0), "{w}x{h} {opts:?}: finest level not blocked");
            if w % 2 == 1 {
                assert!(blocked_at(1), "{w}x{h} {opts:?}: level 1 not blocked");
            }
            // Fused and with pre-smoothing, the residual and restriction
            // join the last pre-smoothing pipeline of a blocked level.
            if opts.fused && opts.pre > 0 {
                for level in [0, 1].into_iter().filter(|&l| blocked_at(l)) {
                    let joined =
                        |k: &str| k.contains("+ResidualRestrict") && k.ends_with("(blocked)");
                    let alone = |k: &str| k.starts_with("ResidualRestrict");
                    assert!(
                        at(level, &joined),
                        "{w}x{h} {opts:?}: level {level} not joined"
                    );
                    assert!(
                        !at(level, &alone),
                        "{w}x{h} {opts:?}: level {level} restricts alone"
                    );
                }
            }
            let differ = plain
                .iter()
                .zip(&blocked)
                .filter(|(a, b)| a.to_bits() != b.to_bits())
                .count();
            assert_eq!(differ, 0, "{w}x{h} {bc:?} {opts:?}: {differ} cells differ");
        }
    }
}

#[test]
fn small_levels_and_recorded_cycles_run_unblocked() {
    // 131x71 and 257x129: every level below the blocked size.
    for (w, h) in [(131, 71), (257, 129)] {
        let opts = CycleOptions::new(CycleKind::V, Smoother::RedBlack, 2, 2);
        let (plain, blocked, levels) = blocked_and_unblocked(w, h, Bc::Neumann, &opts);
        assert!(levels.is_empty(), "{w}x{h}: blocked at levels {levels:?}");
        assert_eq!(plain, blocked, "{w}x{h}");
    }
    // A recorded cycle keeps single launches.
    let opts = CycleOptions::new(CycleKind::V, JACOBI, 2, 2).graph(true);
    let (plain, blocked, levels) = blocked_and_unblocked(520, 264, Bc::Dirichlet, &opts);
    assert!(levels.is_empty(), "recorded: blocked at levels {levels:?}");
    assert_eq!(plain, blocked);
}

#[test]
fn blocked_full_multigrid_equals_unblocked() {
    let (w, h, bc) = (723, 363, Bc::Neumann);
    let opts = CycleOptions::new(CycleKind::V, Smoother::RedBlack, 2, 2).fused(true);
    let run = |blocked: bool| {
        let levels = Poisson::<f32>::default_levels(w, h, bc);
        let p = Poisson::<f32>::new(w, h, levels, bc, 1.0 / w as f64).expect("problem");
        fill_rhs(bc, &p.rhs()).expect("rhs");
        p.fmg(&Device::cpu(), &opts.clone().blocked(blocked), 1)
            .expect("fmg");
        p.solution().to_vec().expect("solution")
    };
    assert_eq!(run(false), run(true));
}
