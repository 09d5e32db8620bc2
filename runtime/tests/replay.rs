//! Multigrid cycles recorded and replayed against the same cycles as plain
//! launches: bit for bit, in both alternating states, for every cycle
//! shape, on the CPU and every GPU backend present (OpenCL runs on PoCL;
//! CUDA prints `[SKIP] cuda: <reason>` without a GPU).

mod gpu_support;

use hipacc::multigrid::{manufactured, Bc, CycleKind, CycleOptions, Poisson, Smoother};
use hipacc::{Device, Trace};

/// The CPU and the GPU devices present.
fn devices() -> Vec<Device> {
    std::iter::once(Device::cpu())
        .chain(gpu_support::opencl())
        .chain(gpu_support::cuda())
        .collect()
}

fn problem(w: usize, h: usize, levels: usize, bc: Bc) -> Poisson<f32> {
    let p = Poisson::<f32>::new(w, h, levels, bc, 1.0 / w as f64).expect("problem");
    manufactured::fill_rhs(bc, &p.rhs()).expect("rhs");
    manufactured::random_guess(&p.solution(), 3).expect("guess");
    p
}

fn replayed(trace: &Trace) -> bool {
    trace.kernel_launches() > 0
        && trace
            .launches()
            .all(|l| l.variant.ends_with("graph replay") && l.elapsed.is_zero())
}

#[test]
fn replayed_cycles_match_plain_cycles_bit_for_bit() {
    for d in devices() {
        replayed_cycles_match_plain_cycles_on(&d);
    }
}

fn replayed_cycles_match_plain_cycles_on(d: &Device) {
    let jacobi = Smoother::Jacobi { omega: 0.8 };
    let cases = [
        (CycleKind::V, jacobi, true, Bc::Dirichlet, 128, 96, 5),
        (
            CycleKind::V,
            Smoother::RedBlack,
            false,
            Bc::Dirichlet,
            128,
            96,
            5,
        ),
        (CycleKind::W, jacobi, false, Bc::Dirichlet, 64, 64, 4),
        (
            CycleKind::F,
            Smoother::RedBlack,
            true,
            Bc::Dirichlet,
            64,
            64,
            4,
        ),
        (
            CycleKind::V,
            Smoother::RedBlack,
            true,
            Bc::Neumann,
            67,
            45,
            4,
        ),
    ];
    for (kind, smoother, fused, bc, w, h, levels) in cases {
        let opts = CycleOptions::new(kind, smoother, 2, 1).fused(fused);
        let plain = problem(w, h, levels, bc);
        let graph = problem(w, h, levels, bc);
        let what = format!(
            "{}: {kind} {smoother:?} fused {fused} {bc} {w}x{h}",
            d.name()
        );
        for cycle in 0..5 {
            let ref_trace = plain.cycle(d, &opts).expect("plain cycle");
            let trace = graph
                .cycle(d, &opts.clone().graph(true))
                .expect("graph cycle");
            assert!(!replayed(&ref_trace), "{what}: a plain cycle was replayed");
            assert_eq!(
                trace.kernel_launches(),
                ref_trace.kernel_launches(),
                "{what}"
            );
            // Two states may alternate, each recorded once: from the third
            // cycle on every cycle is a replay.
            if cycle >= 2 {
                assert!(replayed(&trace), "{what}: cycle {cycle} was not replayed");
            }
            let (a, b) = (
                plain.solution().to_vec().expect("plain"),
                graph.solution().to_vec().expect("graph"),
            );
            assert!(
                a.iter().zip(&b).all(|(x, y)| x.to_bits() == y.to_bits()),
                "{what}: cycle {cycle} differs"
            );
        }
    }
}

#[test]
fn a_replay_sees_a_solution_the_host_changed() {
    for d in devices() {
        a_replay_sees_a_solution_the_host_changed_on(&d);
    }
}

fn a_replay_sees_a_solution_the_host_changed_on(d: &Device) {
    let opts = CycleOptions::new(CycleKind::V, Smoother::RedBlack, 2, 2);
    let plain = problem(64, 64, 4, Bc::Dirichlet);
    let graph = problem(64, 64, 4, Bc::Dirichlet);
    for cycle in 0..4 {
        if cycle == 3 {
            // A new guess written on the host must be uploaded before the
            // replayed launches read it.
            manufactured::random_guess(&plain.solution(), 11).expect("guess");
            manufactured::random_guess(&graph.solution(), 11).expect("guess");
        }
        plain.cycle(d, &opts).expect("plain");
        let trace = graph.cycle(d, &opts.clone().graph(true)).expect("graph");
        if cycle == 3 {
            assert!(replayed(&trace), "cycle {cycle} was not replayed");
        }
        assert_eq!(
            plain.solution().to_vec().expect("plain"),
            graph.solution().to_vec().expect("graph"),
            "cycle {cycle} on {}",
            d.name()
        );
    }
}

#[test]
fn solving_with_replays_converges_like_plain_launches() {
    for d in devices() {
        solving_with_replays_converges_on(&d);
    }
}

fn solving_with_replays_converges_on(d: &Device) {
    let opts = CycleOptions::new(CycleKind::V, Smoother::RedBlack, 2, 2).fused(true);
    let plain = problem(256, 256, 6, Bc::Dirichlet);
    let graph = problem(256, 256, 6, Bc::Dirichlet);
    let a = plain.solve(d, &opts, 1e-6, 30).expect("plain solve");
    let b = graph
        .solve(d, &opts.clone().graph(true), 1e-6, 30)
        .expect("graph solve");
    let name = d.name();
    assert_eq!(a.residuals, b.residuals, "{name}");
    assert_eq!(a.converged, b.converged, "{name}");
    let (first, last) = (b.residuals[0], b.residuals[b.residuals.len() - 1]);
    assert!(last < 1e-3 * first, "{b:?}");
}

#[test]
fn replays_and_plain_launches_on_two_threads_stay_apart() {
    for d in devices() {
        replays_and_plain_launches_on_two_threads_stay_apart_on(&d);
    }
}

/// One thread records and replays cycles (capturing a graph on CUDA) while
/// another launches plain cycles on the same device: each gets the bits it
/// gets alone. A capture must take only its own thread's launches.
fn replays_and_plain_launches_on_two_threads_stay_apart_on(d: &Device) {
    let opts = CycleOptions::new(CycleKind::V, Smoother::RedBlack, 2, 1);
    let cycles = |graph: bool| {
        let p = problem(64, 48, 4, Bc::Dirichlet);
        for _ in 0..5 {
            p.cycle(d, &opts.clone().graph(graph)).expect("cycle");
        }
        p.solution().to_vec().expect("solution")
    };
    let want = cycles(false);
    std::thread::scope(|s| {
        let threads = [true, false].map(|graph| {
            let (cycles, want) = (&cycles, &want);
            s.spawn(move || {
                for round in 0..12 {
                    let got = cycles(graph);
                    assert!(
                        got.iter()
                            .zip(want)
                            .all(|(a, b)| a.to_bits() == b.to_bits()),
                        "{}: round {round}, replayed {graph}: differs from a lone run",
                        d.name()
                    );
                }
            })
        });
        for t in threads {
            t.join().expect("thread");
        }
    });
}
