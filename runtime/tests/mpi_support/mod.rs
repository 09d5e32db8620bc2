//! Test binaries that launch themselves under `mpirun`: run plainly, the
//! binary starts one `mpirun` per rank count and mode; under `mpirun`, it
//! is one rank of the check. Rank 0 compares gathered results bit for bit
//! and a difference aborts every rank with a nonzero status.

#![allow(dead_code)]

use hipacc::distributed::mpi::topology::SimpleCommunicator;
use hipacc::distributed::mpi::traits::*;
use hipacc::distributed::DistImage;
use hipacc::Image;
use std::process::Command;

/// The environment variable that tells a rank which check to run.
const MODE_ENV: &str = "HIPACC_DIST_TEST_MODE";

/// The mode this process runs as one rank of, or `None` when it was not
/// started by `mpirun`.
pub(crate) fn rank_mode() -> Option<String> {
    std::env::var_os("OMPI_COMM_WORLD_SIZE")?;
    Some(std::env::var(MODE_ENV).unwrap_or_default())
}

/// The rank counts to run: `HIPACC_MPI_RANKS` (comma-separated), or 1 to 4.
pub(crate) fn rank_counts() -> Vec<usize> {
    std::env::var("HIPACC_MPI_RANKS")
        .unwrap_or_else(|_| "1,2,3,4".into())
        .split(',')
        .map(|r| {
            r.trim()
                .parse()
                .expect("HIPACC_MPI_RANKS: comma-separated rank counts")
        })
        .collect()
}

/// Runs this binary under `mpirun` with `ranks` ranks (oversubscribed if
/// needed) in `mode`: whether it exited successfully, and its output.
pub(crate) fn mpirun(ranks: usize, mode: &str) -> (bool, String) {
    let exe = std::env::current_exe().expect("test binary");
    let out = Command::new("mpirun")
        .args(["--oversubscribe", "-np", &ranks.to_string()])
        .arg(&exe)
        .env(MODE_ENV, mode)
        .env("OMPI_ALLOW_RUN_AS_ROOT", "1")
        .env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
        .output()
        .expect("mpirun (Open MPI's `openmpi-bin`) must be installed");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.success(), text)
}

/// A deterministic pattern of values in about `[-9, 18]`, different per
/// `seed`.
pub(crate) fn pattern(seed: u32) -> impl Fn(usize, usize) -> f32 {
    move |x, y| {
        let h = (x as u32).wrapping_mul(2654435761) ^ (y as u32).wrapping_mul(40503) ^ seed;
        (h % 1000) as f32 / 37.0 - 9.0
    }
}

/// Counts checks; any failed check aborts every rank.
pub(crate) struct Checker<'w> {
    pub(crate) world: &'w SimpleCommunicator,
    pub(crate) checks: usize,
}

impl Checker<'_> {
    /// Rank 0 compares the gathered result with the reference bit for bit.
    pub(crate) fn same(&mut self, what: &str, expected: &Image<f32>, got: &DistImage<f32>) {
        let gathered = got.gather(0).expect("gather");
        if let Some(g) = gathered {
            let (e, g) = (expected.to_vec().expect("read"), g.to_vec().expect("read"));
            if let Some(i) = (0..e.len()).find(|&i| e[i].to_bits() != g[i].to_bits()) {
                let w = expected.width();
                eprintln!(
                    "MISMATCH {what} with {} ranks at ({}, {}): expected {}, got {}",
                    self.world.size(),
                    i % w,
                    i / w,
                    e[i],
                    g[i]
                );
                self.world.abort(1);
            }
        }
        self.checks += 1;
    }

    /// Every rank checks its own copy of an all-reduced result.
    pub(crate) fn equal(&mut self, what: &str, expected: &[u64], got: &[u64]) {
        if expected != got {
            eprintln!(
                "MISMATCH {what} with {} ranks on rank {}: expected {expected:?}, got {got:?}",
                self.world.size(),
                self.world.rank()
            );
            self.world.abort(1);
        }
        self.checks += 1;
    }

    /// Every rank checks a result within a relative `tolerance`.
    pub(crate) fn close(&mut self, what: &str, expected: f64, got: f64, tolerance: f64) {
        if (expected - got).abs() > tolerance * expected.abs().max(1.0) {
            eprintln!("MISMATCH {what}: expected {expected}, got {got}");
            self.world.abort(1);
        }
        self.checks += 1;
    }

    /// Every rank checks `|got - expected| <= bound |expected|`.
    pub(crate) fn relative(&mut self, what: &str, expected: f64, got: f64, bound: f64) {
        if (expected - got).abs() > bound * expected.abs() {
            eprintln!(
                "MISMATCH {what}: expected {expected:e}, got {got:e} (bound {bound:e} relative)"
            );
            self.world.abort(1);
        }
        self.checks += 1;
    }

    /// Rank 0 checks `max |got - expected| <= bound max |expected|`.
    pub(crate) fn near(
        &mut self,
        what: &str,
        expected: &Image<f32>,
        got: &DistImage<f32>,
        bound: f64,
    ) {
        if let Some(g) = got.gather(0).expect("gather") {
            let (e, g) = (expected.to_vec().expect("read"), g.to_vec().expect("read"));
            let size = e.iter().fold(0.0f64, |m, &v| m.max((v as f64).abs()));
            let diff = e
                .iter()
                .zip(&g)
                .fold(0.0f64, |m, (&a, &b)| m.max((a as f64 - b as f64).abs()));
            if diff > bound * size {
                eprintln!("MISMATCH {what}: differs by {diff:e}, largest value {size:e}");
                self.world.abort(1);
            }
        }
        self.checks += 1;
    }

    /// Fails every rank with `message` (printed once, by rank 0).
    pub(crate) fn fail(&self, message: &str) -> ! {
        eprintln!("MISMATCH {message}");
        self.world.abort(1)
    }
}
