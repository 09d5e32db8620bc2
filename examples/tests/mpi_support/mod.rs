//! Running the built binaries under `mpirun` from the integration tests.

// Each test file that includes this module uses a part of it.
#![allow(dead_code)]

use std::path::Path;
use std::process::{Command, Output};

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

/// `exe args` under `mpirun` with `ranks` ranks (oversubscribed where
/// needed), in `dir` when given.
pub(crate) fn mpirun(exe: &str, ranks: usize, args: &[&str], dir: Option<&Path>) -> Output {
    let mut cmd = Command::new("mpirun");
    cmd.args(["--oversubscribe", "-np", &ranks.to_string()])
        .arg(exe)
        .args(args)
        .env("OMPI_ALLOW_RUN_AS_ROOT", "1")
        .env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1");
    if let Some(dir) = dir {
        cmd.current_dir(dir);
    }
    cmd.output()
        .expect("mpirun (Open MPI's `openmpi-bin`) must be installed")
}

/// Everything a run printed, standard output first.
pub(crate) fn text(out: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}
