//! Running the built `hdr-compress` binary from the integration tests.

// Each test file that includes this module uses a part of it.
#![allow(dead_code)]

use std::path::Path;
use std::process::{Command, Output};

/// The binary, not started yet.
pub(crate) fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_hdr-compress"))
}

/// Runs it with `args` in `dir` and collects its output.
pub(crate) fn run(args: &[&str], dir: &Path) -> Output {
    bin()
        .args(args)
        .current_dir(dir)
        .output()
        .expect("spawn hdr-compress")
}
