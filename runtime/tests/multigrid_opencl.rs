//! The multigrid solver on OpenCL (PoCL in CI): the same convergence as on
//! the CPU, and the same solution. Prints a skip line when no OpenCL device
//! is present.

use hipacc::multigrid::{
    convergence_factor, manufactured, Bc, CycleKind, CycleOptions, Poisson, Smoother,
};
use hipacc::Device;

fn device() -> Option<Device> {
    match Device::opencl() {
        Ok(d) => Some(d),
        Err(e) => {
            println!("[SKIP] opencl: {e}");
            None
        }
    }
}

/// Cycles from the same random guess; returns the residual history and
/// the solution.
fn solve(dev: &Device, bc: Bc, opts: &CycleOptions) -> (Vec<f64>, Vec<f32>) {
    let n = 64;
    let levels = Poisson::<f32>::default_levels(n, n, bc);
    let p = Poisson::<f32>::new(n, n, levels, bc, 1.0 / n as f64).expect("problem");
    manufactured::fill_rhs(bc, &p.rhs()).expect("rhs");
    manufactured::random_guess(&p.solution(), 3).expect("guess");
    let report = p.solve(dev, opts, 1e-5, 12).expect("solve");
    (report.residuals, p.solution().to_vec().expect("solution"))
}

#[test]
fn cycles_converge_as_on_the_cpu() {
    let Some(ocl) = device() else { return };
    let cpu = Device::cpu();
    let cases = [
        CycleOptions::new(CycleKind::V, Smoother::Jacobi { omega: 0.8 }, 2, 2),
        CycleOptions::new(CycleKind::W, Smoother::Jacobi { omega: 0.8 }, 2, 2).fused(true),
        CycleOptions::new(CycleKind::V, Smoother::RedBlack, 1, 1).fused(true),
        CycleOptions::new(CycleKind::F, Smoother::RedBlack, 2, 2),
    ];
    for opts in &cases {
        for bc in [Bc::Dirichlet, Bc::Neumann] {
            let (r_cpu, u_cpu) = solve(&cpu, bc, opts);
            let (r_ocl, u_ocl) = solve(&ocl, bc, opts);
            let (f_cpu, f_ocl) = (
                convergence_factor(&r_cpu).expect("cpu"),
                convergence_factor(&r_ocl).expect("opencl"),
            );
            // f32 kernels compiled by different compilers (FMA contraction):
            // the histories agree to a few per cent, the solutions to the
            // tolerance the solve reached.
            assert!(
                (f_cpu - f_ocl).abs() < 0.01,
                "{opts:?} {bc:?}: {f_cpu} vs {f_ocl}"
            );
            assert!(f_ocl < 0.15, "{opts:?} {bc:?}: {f_ocl}");
            let scale = u_cpu.iter().fold(0.0f32, |m, v| m.max(v.abs()));
            let diff = u_cpu
                .iter()
                .zip(&u_ocl)
                .fold(0.0f32, |m, (a, b)| m.max((a - b).abs()));
            assert!(diff <= 1e-4 * scale, "{opts:?} {bc:?}: {diff} of {scale}");
        }
    }
}

#[test]
fn full_multigrid_reaches_the_discretisation_error() {
    let Some(ocl) = device() else { return };
    let opts = CycleOptions::new(CycleKind::V, Smoother::RedBlack, 2, 2).fused(true);
    for bc in [Bc::Dirichlet, Bc::Neumann] {
        let n = 128;
        let levels = Poisson::<f32>::default_levels(n, n, bc);
        let fmg = Poisson::<f32>::new(n, n, levels, bc, 1.0 / n as f64).expect("problem");
        manufactured::fill_rhs(bc, &fmg.rhs()).expect("rhs");
        fmg.fmg(&ocl, &opts, 1).expect("fmg");
        let exact = Poisson::<f64>::new(n, n, levels, bc, 1.0 / n as f64).expect("problem");
        manufactured::fill_rhs(bc, &exact.rhs()).expect("rhs");
        exact
            .solve(&Device::cpu(), &opts, 1e-12, 40)
            .expect("solve");
        let (e_fmg, e_disc) = (
            manufactured::max_error(bc, &fmg.solution()).expect("error"),
            manufactured::max_error(bc, &exact.solution()).expect("error"),
        );
        assert!(
            e_fmg <= 2.0 * e_disc,
            "{bc:?}: FMG {e_fmg} vs discrete {e_disc}"
        );
    }
}

#[test]
fn blocked_cycles_run_as_unblocked_ones() {
    // A device runs each sweep as its own launch: asking for blocked sweeps
    // changes nothing there, bit for bit, on a grid large enough that the
    // CPU would block its finest levels.
    let Some(ocl) = device() else { return };
    let cases = [
        CycleOptions::new(CycleKind::V, Smoother::Jacobi { omega: 0.8 }, 2, 2).fused(true),
        CycleOptions::new(CycleKind::W, Smoother::RedBlack, 2, 1),
    ];
    let (w, h) = (520, 264);
    let run = |bc: Bc, opts: &CycleOptions| {
        let levels = Poisson::<f32>::default_levels(w, h, bc);
        let p = Poisson::<f32>::new(w, h, levels, bc, 1.0 / w as f64).expect("problem");
        manufactured::fill_rhs(bc, &p.rhs()).expect("rhs");
        manufactured::random_guess(&p.solution(), 3).expect("guess");
        for _ in 0..2 {
            p.cycle(&ocl, opts).expect("cycle");
        }
        p.solution().to_vec().expect("solution")
    };
    for opts in &cases {
        for bc in [Bc::Dirichlet, Bc::Neumann] {
            let plain = run(bc, opts);
            let blocked = run(bc, &opts.clone().blocked(true));
            assert_eq!(plain, blocked, "{opts:?} {bc:?}");
        }
    }
}
