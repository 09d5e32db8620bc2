//! The multigrid solver on the wgpu backend (lavapipe in CI): convergence
//! factors within 0.01 of the CPU's, and the same solution. Prints a skip
//! line when no adapter is present, unless `HIPACC_REQUIRE_WGPU` is set.

#![cfg(feature = "wgpu")]

mod gpu_support;

use hipacc::multigrid::{
    convergence_factor, manufactured, Bc, CycleKind, CycleOptions, Poisson, Smoother,
};
use hipacc::Device;

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
    let Some(gpu) = gpu_support::wgpu() else {
        return;
    };
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
            let (r_gpu, u_gpu) = solve(&gpu, bc, opts);
            let (f_cpu, f_gpu) = (
                convergence_factor(&r_cpu).expect("cpu"),
                convergence_factor(&r_gpu).expect("wgpu"),
            );
            println!("{opts:?} {bc:?}: convergence factor cpu {f_cpu:.4}, wgpu {f_gpu:.4}");
            assert!(
                (f_cpu - f_gpu).abs() < 0.01,
                "{opts:?} {bc:?}: {f_cpu} vs {f_gpu}"
            );
            let scale = u_cpu.iter().fold(0.0f32, |m, v| m.max(v.abs()));
            let diff = u_cpu
                .iter()
                .zip(&u_gpu)
                .fold(0.0f32, |m, (a, b)| m.max((a - b).abs()));
            assert!(diff <= 1e-4 * scale, "{opts:?} {bc:?}: {diff} of {scale}");
        }
    }
}
