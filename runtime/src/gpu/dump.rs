//! Writing generated sources: every program to `HIPACC_DUMP_DIR` when it is
//! set, and a program that failed to build to a file the error names.

use hipacc_codegen::Program;
use std::path::PathBuf;

/// The environment variable naming the dump directory.
pub(crate) const DUMP_ENV: &str = "HIPACC_DUMP_DIR";

/// The file name of a program: its first kernel's entry (kernel name and
/// variant key), a count when it batches more, and the dialect's extension.
pub(crate) fn file_name(program: &Program) -> String {
    let stem = match program.kernels.as_slice() {
        [] => "empty".to_string(),
        [one] => one.entry.clone(),
        [first, rest @ ..] => format!("{}_and_{}_more", first.entry, rest.len()),
    };
    format!("{stem}.{}", program.language.extension())
}

/// The program's kernels for messages: the first entry, and how many more.
pub(crate) fn kernel_names(program: &Program) -> String {
    match program.kernels.as_slice() {
        [] => "(no kernel)".to_string(),
        [one] => one.entry.clone(),
        [first, rest @ ..] => format!("{} (and {} more variants)", first.entry, rest.len()),
    }
}

/// Writes `program` to `HIPACC_DUMP_DIR` if set. A dump that cannot be
/// written is reported on stderr and does not fail the launch.
pub(crate) fn dump_if_requested(program: &Program) {
    let Some(dir) = std::env::var_os(DUMP_ENV).filter(|d| !d.is_empty()) else {
        return;
    };
    let dir = PathBuf::from(dir);
    if let Err(e) = write(&dir, program) {
        eprintln!(
            "hipacc: cannot write generated source to {}: {e}",
            dir.display()
        );
    }
}

/// Writes the source of a program that failed to build and returns the path
/// (the dump directory when set, else a `hipacc` folder in the temporary
/// directory); on failure the returned text says why instead.
pub(crate) fn save_failed(program: &Program) -> String {
    let dir = std::env::var_os(DUMP_ENV)
        .filter(|d| !d.is_empty())
        .map(PathBuf::from)
        .unwrap_or_else(|| std::env::temp_dir().join("hipacc"));
    match write(&dir, program) {
        Ok(path) => path.display().to_string(),
        Err(e) => format!("(not saved: {}: {e})", dir.display()),
    }
}

fn write(dir: &std::path::Path, program: &Program) -> std::io::Result<PathBuf> {
    std::fs::create_dir_all(dir)?;
    let path = dir.join(file_name(program));
    std::fs::write(&path, &program.source)?;
    Ok(path)
}
