//! Writing generated sources to files: `HIPACC_DUMP_DIR` support for the
//! runtime, and offline emission for the example binaries'
//! `--emit DIR [--target NAME]` (no device needed).

use crate::arch::Target;
use crate::config::Config;
use crate::emit::{generate_batch, Language, Program};
use crate::{Error, Result};
use hipacc_core::ir::Kernel;
use std::path::{Path, PathBuf};

/// The environment variable naming the dump directory.
pub const DUMP_DIR_VAR: &str = "HIPACC_DUMP_DIR";

/// Writes `source` as `DIR/<kernel>__<variant>.<cl|cu>` (creating `DIR`) and
/// returns the path. Names are sanitised to `[A-Za-z0-9_-]`.
pub fn dump(
    dir: &Path,
    kernel: &str,
    variant: &str,
    language: Language,
    source: &str,
) -> Result<PathBuf> {
    std::fs::create_dir_all(dir).map_err(|source| Error::Io {
        path: dir.display().to_string(),
        source,
    })?;
    let clean = |s: &str| -> String {
        s.chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                    c
                } else {
                    '_'
                }
            })
            .collect()
    };
    let path = dir.join(format!(
        "{}__{}.{}",
        clean(kernel),
        clean(variant),
        language.extension()
    ));
    std::fs::write(&path, source).map_err(|source| Error::Io {
        path: path.display().to_string(),
        source,
    })?;
    Ok(path)
}

/// Dumps a program when `HIPACC_DUMP_DIR` is set: one file named by its
/// first kernel and variant (a batch is one source). Returns the path written.
pub fn dump_from_env(program: &Program) -> Result<Option<PathBuf>> {
    let Some(dir) = std::env::var_os(DUMP_DIR_VAR).filter(|d| !d.is_empty()) else {
        return Ok(None);
    };
    let Some(first) = program.kernels.first() else {
        return Ok(None);
    };
    let variant = if program.kernels.len() == 1 {
        first.config.key()
    } else {
        format!(
            "{}_and_{}_more",
            first.config.key(),
            program.kernels.len() - 1
        )
    };
    let kernel = format!("{}_{}", first.kernel_name, program.target);
    dump(
        Path::new(&dir),
        &kernel,
        &variant,
        program.language,
        &program.source,
    )
    .map(Some)
}

/// The targets named by a `--target` argument: `None` or `all` is every
/// target; otherwise one name (`list` is for the caller to print
/// [`Target::list_text`]).
pub fn targets_from_arg(arg: Option<&str>) -> Result<Vec<&'static Target>> {
    match arg {
        None | Some("all") => Ok(Target::all().iter().collect()),
        Some(name) => Target::lookup(name).map(|t| vec![t]),
    }
}

/// Offline emission: for each target, each language it supports and each
/// kernel, writes the variant the heuristics choose (with `HIPACC_CONFIG`
/// applied when `overrides_from_env`) to `DIR/<target>/<kernel>.<cl|cu>`,
/// and the WGSL of every kernel to `DIR/<target>/<kernel>.wgsl`; returns
/// the files written.
pub fn emit_offline(
    dir: &Path,
    kernels: &[Kernel],
    targets: &[&'static Target],
    overrides_from_env: bool,
) -> Result<Vec<PathBuf>> {
    let overrides = if overrides_from_env {
        crate::ConfigOverride::from_env()?
    } else {
        None
    };
    let mut written = Vec::new();
    for target in targets {
        let tdir = dir.join(target.name);
        for &language in target.languages.iter().chain([&Language::Wgsl]) {
            for k in kernels {
                let config = Config::choose(k, target, language, overrides.as_ref())?;
                let program = generate_batch(&[(k, &config)], target, language)?;
                written.push(dump(
                    &tdir,
                    &k.name,
                    &config.key(),
                    language,
                    &program.source,
                )?);
            }
        }
    }
    Ok(written)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_kernels as tk;

    /// What wgpu would do with an emitted file: parse and validate.
    fn validate_wgsl(f: &Path, text: &str) {
        let module = naga::front::wgsl::parse_str(text)
            .unwrap_or_else(|e| panic!("{}: {}", f.display(), e.emit_to_string(text)));
        naga::valid::Validator::new(
            naga::valid::ValidationFlags::all(),
            naga::valid::Capabilities::all(),
        )
        .validate(&module)
        .unwrap_or_else(|e| panic!("{}: {}", f.display(), e.emit_to_string(text)));
    }

    #[test]
    fn offline_emission_writes_every_target_and_language() {
        let dir = std::env::temp_dir().join(format!("hipacc-codegen-emit-{}", std::process::id()));
        let kernels = [tk::jacobi(), tk::convolve(5, 5)];
        let files = emit_offline(&dir, &kernels, &targets_from_arg(None).unwrap(), false).unwrap();
        let per_target: usize = Target::all().iter().map(|t| t.languages.len() + 1).sum();
        assert_eq!(files.len(), per_target * kernels.len());
        let mut wgsl = 0;
        for f in &files {
            let text = std::fs::read_to_string(f).unwrap();
            assert!(text.contains("hipacc_body_"), "{}", f.display());
            if f.extension().unwrap() == "wgsl" {
                validate_wgsl(f, &text);
                wgsl += 1;
            }
        }
        assert_eq!(wgsl, Target::all().len() * kernels.len());
        assert!(files
            .iter()
            .any(|f| f.starts_with(dir.join("h200")) && f.extension().unwrap() == "cu"));
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn offline_wgsl_of_interpolating_reads_validates() {
        // Interpolation computes in `f64`: a target that has it.
        let dir =
            std::env::temp_dir().join(format!("hipacc-codegen-interp-{}", std::process::id()));
        let mut resample = tk::jacobi();
        resample.accessors[0].interpolation = hipacc_core::Interpolation::Lanczos3;
        let files = emit_offline(
            &dir,
            &[resample],
            &targets_from_arg(Some("pocl")).unwrap(),
            false,
        )
        .unwrap();
        let wgsl: Vec<&PathBuf> = files
            .iter()
            .filter(|f| f.extension().unwrap() == "wgsl")
            .collect();
        assert_eq!(wgsl.len(), 1);
        let text = std::fs::read_to_string(wgsl[0]).unwrap();
        assert!(text.contains("fn hipacc_taps_lanczos3("), "{text}");
        validate_wgsl(wgsl[0], &text);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn target_argument() {
        assert_eq!(targets_from_arg(Some("pocl")).unwrap()[0].name, "pocl");
        assert_eq!(
            targets_from_arg(Some("all")).unwrap().len(),
            Target::all().len()
        );
        let e = targets_from_arg(Some("voodoo")).unwrap_err().to_string();
        assert!(e.contains("voodoo") && e.contains("h100"), "{e}");
    }
}
