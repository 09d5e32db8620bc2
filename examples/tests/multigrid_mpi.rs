//! `mpirun -np N multigrid ... --json` (the `distributed` feature) reports
//! what the single-process `multigrid` reports for 1 to 4 ranks
//! (`HIPACC_MPI_RANKS` picks others), on odd (Neumann) and even sizes
//! with odd coarse levels, Dirichlet and Neumann, V-, W- and F-cycles, Jacobi and red-black smoothing, from
//! a random guess, zero and full multigrid, on the CPU and on OpenCL: the
//! same errors bit for bit
//! (the solutions are), the same number of cycles and the same residuals
//! to the rounding of their sums. A grid too small to split over the
//! ranks and the flags that run on one process only stop every rank with
//! one message and a non-zero status.

mod mpi_support;

use mpi_support::{rank_counts, text};
use serde_json::Value;
use std::process::{Command, Output};

/// `multigrid args` on this process alone.
fn single(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_multigrid"))
        .args(args)
        .output()
        .expect("spawn multigrid")
}

/// `multigrid args` under `mpirun` with `ranks` ranks.
fn mpirun(ranks: usize, args: &[&str]) -> Output {
    mpi_support::mpirun(env!("CARGO_BIN_EXE_multigrid"), ranks, args, None)
}

/// The one JSON object a successful run printed (rank 0 alone prints).
fn report(out: &Output, what: &str) -> Value {
    assert!(out.status.success(), "{what}: {}", text(out));
    serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{what}: not one JSON object ({e}): {}", text(out)))
}

fn numbers(v: &Value, what: &str) -> Vec<f64> {
    v.as_array()
        .unwrap_or_else(|| panic!("{what}: {v}"))
        .iter()
        .map(|x| x.as_f64().unwrap_or_else(|| panic!("{what}: {x}")))
        .collect()
}

/// The residual norms' relative tolerance on an `n x n` grid. The norms
/// are `sqrt(Σ r² / n²)` of bit-identical residuals, but one process sums
/// the squares in row-major chunks and the ranks each sum their block and
/// add the blocks' sums in rank order. A sum of `m` non-negative terms in
/// any order is within `(m - 1) u` of the exact sum (`u = 2⁻⁵³`), so two
/// orders differ by at most `2 m u = m ε` relative, and the square root
/// halves that; `m ε` leaves a factor of two.
fn residual_tolerance(n: usize) -> f64 {
    (n * n) as f64 * f64::EPSILON
}

/// Checks `got` (a run across `ranks` ranks) against the single-process
/// report `want` of the same options on an `n x n` grid.
fn check(want: &Value, got: &Value, n: usize, ranks: usize, what: &str) {
    let tol = residual_tolerance(n);
    let (r1, rn) = (
        numbers(&want["residuals"], what),
        numbers(&got["residuals"], what),
    );
    assert_eq!(
        r1.len(),
        rn.len(),
        "{what}: cycles differ: {r1:?} vs {rn:?}"
    );
    for (i, (a, b)) in r1.iter().zip(&rn).enumerate() {
        assert!(
            (a - b).abs() <= tol * a.abs(),
            "{what}: residual {i}: {a:e} on one process, {b:e} on {ranks} ranks (tolerance {tol:e} relative)"
        );
    }
    // A ratio of two residuals to a power at most 1: at most twice theirs.
    let (c1, cn) = (
        want["convergence_factor"].as_f64(),
        got["convergence_factor"].as_f64(),
    );
    match (c1, cn) {
        (Some(a), Some(b)) => assert!(
            (a - b).abs() <= 2.0 * tol * a,
            "{what}: convergence factor {a} vs {b}"
        ),
        _ => assert_eq!(c1, cn, "{what}: convergence factor"),
    }
    // The solutions are bit-identical, so their errors are.
    for key in ["error_vs_exact", "error_after_fmg"] {
        assert_eq!(want[key], got[key], "{what}: {key}");
    }
    for key in [
        "size",
        "levels",
        "cycle",
        "smoother",
        "bc",
        "precision",
        "start",
    ] {
        assert_eq!(want[key], got[key], "{what}: {key}");
    }
    assert_eq!(got["ranks"], ranks, "{what}: ranks");
    let shape = numbers(&got["process_grid"], what);
    assert_eq!(shape.len(), 2, "{what}: process grid");
    assert_eq!(shape[0] * shape[1], ranks as f64, "{what}: process grid");
    let levels = got["distributed_levels"]
        .as_u64()
        .expect("distributed_levels") as usize;
    assert_eq!(
        numbers(&got["exchange_ms_per_level"], what).len(),
        levels,
        "{what}: exchange per level"
    );
    assert!(
        got["ms_per_cycle"].as_f64().is_some(),
        "{what}: ms_per_cycle"
    );
    // Full multigrid is timed where it ran.
    assert_eq!(
        want["ms_fmg"].is_number(),
        got["ms_fmg"].is_number(),
        "{what}: ms_fmg"
    );
    assert_eq!(
        got["ms_fmg"].is_number(),
        got["start"] == "fmg",
        "{what}: ms_fmg"
    );
}

/// Small odd and even sizes over the solver's options: each case's
/// `--gather-at` keeps levels distributed (the 64 of the default would
/// gather these grids whole onto rank 0) but for the last, which checks
/// the default.
#[test]
fn every_rank_count_reports_the_single_process_figures() {
    // (options, --gather-at under mpirun)
    let cases = [
        (
            "--size 36 --levels 3 --bc dirichlet --cycle v --smoother rbgs",
            "4",
        ),
        (
            "--size 37 --levels 4 --bc neumann --cycle w --smoother jacobi",
            "0",
        ),
        (
            "--size 64 --bc neumann --cycle v --smoother rbgs --start fmg",
            "8",
        ),
        (
            "--size 64 --bc dirichlet --cycle w --smoother jacobi --start zero --fused",
            "16",
        ),
        (
            "--size 37 --bc neumann --cycle f --smoother rbgs --pre 1 --post 3",
            "4",
        ),
        (
            "--size 64 --bc dirichlet --cycle f --smoother jacobi --omega 0.7 --start fmg",
            "",
        ),
    ];
    for (case, gather) in cases {
        let mut args: Vec<&str> = case.split_whitespace().collect();
        let n: usize = args[1].parse().expect("size");
        args.extend(["--precision", "f64", "--max-cycles", "8", "--json"]);
        let what = args.join(" ");
        let want = report(&single(&args), &what);
        if !gather.is_empty() {
            args.extend(["--gather-at", gather]);
        }
        for ranks in rank_counts() {
            let got = report(&mpirun(ranks, &args), &format!("{ranks} ranks: {what}"));
            check(&want, &got, n, ranks, &format!("{ranks} ranks, {what}"));
            if !gather.is_empty() {
                assert!(
                    got["distributed_levels"].as_u64() > Some(0),
                    "{what}: nothing distributed: {got}"
                );
            }
        }
    }
}

/// Every rank's levels on its OpenCL device (PoCL in CI) report what one
/// process on OpenCL reports. A skip line where no OpenCL device is found.
#[test]
fn every_rank_count_on_opencl_reports_the_single_process_opencl_figures() {
    if let Err(e) = hipacc::Device::opencl() {
        println!("[SKIP] opencl: {e}");
        return;
    }
    for case in [
        "--size 64 --bc dirichlet --cycle v --smoother rbgs --fused",
        "--size 37 --bc neumann --cycle w --smoother jacobi --start fmg",
    ] {
        let mut args: Vec<&str> = case.split_whitespace().collect();
        let n: usize = args[1].parse().expect("size");
        args.extend(["--precision", "f32", "--max-cycles", "4", "--json"]);
        args.extend(["--backend", "opencl"]);
        let what = args.join(" ");
        let want = report(&single(&args), &what);
        args.extend(["--gather-at", "8"]);
        for ranks in rank_counts() {
            let got = report(&mpirun(ranks, &args), &format!("{ranks} ranks: {what}"));
            check(&want, &got, n, ranks, &format!("{ranks} ranks, {what}"));
            assert_eq!(want["backend"], got["backend"], "{what}: backend");
        }
    }
}

/// The run stops where its residual reaches `--tol`, as on one process.
#[test]
fn the_tolerance_stops_after_the_single_process_cycle() {
    let args = ["--size", "37", "--bc", "neumann", "--tol", "1e-6", "--json"];
    let want = report(&single(&args), "single");
    let cycles = numbers(&want["residuals"], "single").len() - 1;
    assert!(cycles < 20, "--tol 1e-6 stops before --max-cycles: {want}");
    let mut args = args.to_vec();
    args.extend(["--gather-at", "8"]);
    for ranks in rank_counts() {
        let got = report(&mpirun(ranks, &args), &format!("{ranks} ranks"));
        check(
            &want,
            &got,
            37,
            ranks,
            &format!("{ranks} ranks, --tol 1e-6"),
        );
    }
}

/// A grid too small for the ranks and flags that do not apply across
/// ranks: one message, from rank 0, and a non-zero status.
#[test]
fn bad_use_stops_every_rank_with_one_message() {
    // At least two ranks, so that a 1x1 grid cannot be split.
    let ranks = rank_counts().into_iter().max().unwrap_or(2).max(2);
    let cases: [(&[&str], &str); 5] = [
        (&["--size", "1", "--levels", "1"], "too small to split"),
        (&["--size", "32", "--graph"], "--graph"),
        (&["--size", "32", "--backend", "vulkan"], "vulkan"),
        (&["--size", "32", "--levels", "9"], "at most"),
        (&["--size", "32", "--smoother", "sor"], "sor"),
    ];
    for (args, says) in cases {
        let out = mpirun(ranks, args);
        let all = text(&out);
        assert!(!out.status.success(), "{args:?}: {all}");
        assert!(!all.contains("panicked"), "{args:?}: {all}");
        let messages: Vec<&str> = all
            .lines()
            .filter(|l| l.starts_with("multigrid: ") || l.starts_with("error: "))
            .collect();
        assert_eq!(messages.len(), 1, "{args:?}: {all}");
        assert!(all.contains(says), "{args:?}: {all}");
    }
}
