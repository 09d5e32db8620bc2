//! Assembling PTX with `ptxas -v` and reading the resources it reports:
//! registers, shared memory, stack and spills per kernel. Needs no GPU.
//!
//! `ptxas` is found in `$HIPACC_NVCUDA_DIR/nvidia/cuda_nvcc/bin` (the
//! `nvidia-cuda-nvcc-cu12` wheel), `/opt/nvcuda/nvidia/cuda_nvcc/bin`, then
//! on `PATH`. Keep it at the same major version as NVRTC.

use super::nvrtc::nvcuda_dirs;
use crate::{BackendKind, Error, Result};
use hipacc_codegen::Program;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicU64, Ordering};

/// What `ptxas -v` reports for one kernel.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct KernelResources {
    /// The entry function's name.
    pub entry: String,
    /// Registers per thread.
    pub registers: u32,
    /// Static shared memory per block, in bytes.
    pub shared_bytes: u32,
    /// Stack frame per thread, in bytes.
    pub stack_bytes: u32,
    /// Bytes of register spill stores.
    pub spill_store_bytes: u32,
    /// Bytes of register spill loads.
    pub spill_load_bytes: u32,
}

/// The `ptxas` to use, if any.
pub fn ptxas_path() -> Option<PathBuf> {
    for dir in nvcuda_dirs() {
        let p = dir.join("nvidia/cuda_nvcc/bin/ptxas");
        if p.is_file() {
            return Some(p);
        }
    }
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|d| d.join("ptxas"))
        .find(|p| p.is_file())
}

/// Assembles `ptx` for a real architecture such as `sm_90` and returns the
/// resources of every kernel, in the order ptxas reports them.
pub fn assemble(ptx: &str, arch: &str) -> Result<Vec<KernelResources>> {
    let ptxas = ptxas_path().ok_or_else(|| Error::BackendUnavailable {
        backend: BackendKind::Cuda,
        reason: "ptxas not found: pip install nvidia-cuda-nvcc-cu12 and set HIPACC_NVCUDA_DIR \
                 to the install directory, or put the CUDA toolkit's bin on PATH"
            .into(),
    })?;
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let stem = std::env::temp_dir().join(format!(
        "hipacc-ptxas-{}-{}",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    ));
    let input = stem.with_extension("ptx");
    let output = stem.with_extension("cubin");
    let io = |e: std::io::Error| Error::Config(format!("ptxas: {}: {e}", input.display()));
    std::fs::write(&input, ptx).map_err(io)?;
    let run = Command::new(&ptxas)
        .arg(format!("-arch={arch}"))
        .arg("-v")
        .arg(&input)
        .arg("-o")
        .arg(&output)
        .output();
    let _ = std::fs::remove_file(&output);
    let run = run.map_err(|e| Error::Config(format!("running {}: {e}", ptxas.display())))?;
    let log =
        String::from_utf8_lossy(&run.stderr).into_owned() + &String::from_utf8_lossy(&run.stdout);
    if !run.status.success() {
        return Err(Error::Compile {
            kernel: "(ptx)".into(),
            device: format!("ptxas {arch}"),
            source_path: kept(&input),
            log,
        });
    }
    let _ = std::fs::remove_file(&input);
    Ok(parse(&log))
}

/// Compiles `program` with NVRTC for `compute_{sm}` and assembles it with
/// ptxas for `sm_{sm}`: the resources of each of its kernels, in the
/// program's order. Needs no GPU.
///
/// ```no_run
/// use hipacc::cuda::assemble_program;
/// use hipacc_codegen::{generate, Config, Language, Target};
/// # fn check(kernel: &hipacc::core::ir::Kernel) -> Result<(), Box<dyn std::error::Error>> {
/// let target = Target::lookup("h200")?;
/// let config = Config::choose(kernel, target, Language::Cuda, None)?;
/// let program = generate(kernel, &config, target, Language::Cuda)?;
/// for k in assemble_program(&program, 90)? {
///     println!("{}: {} registers, {} bytes smem", k.entry, k.registers, k.shared_bytes);
/// }
/// # Ok(()) }
/// ```
pub fn assemble_program(program: &Program, sm: u32) -> Result<Vec<KernelResources>> {
    let ptx = super::compile_program(program, &format!("compute_{sm}"))?;
    let report = assemble(&ptx, &format!("sm_{sm}"))?;
    program
        .kernels
        .iter()
        .map(|info| {
            report
                .iter()
                .find(|r| r.entry.contains(&info.entry))
                .cloned()
                .ok_or_else(|| {
                    Error::Config(format!("ptxas reported nothing for `{}`", info.entry))
                })
        })
        .collect()
}

fn kept(path: &Path) -> String {
    path.display().to_string()
}

/// Parses `ptxas -v` output.
fn parse(log: &str) -> Vec<KernelResources> {
    let mut out: Vec<KernelResources> = Vec::new();
    for line in log.lines() {
        if let Some(rest) = line.split("Compiling entry function '").nth(1) {
            let entry = rest.split('\'').next().unwrap_or_default().to_string();
            out.push(KernelResources {
                entry,
                ..Default::default()
            });
            continue;
        }
        let Some(cur) = out.last_mut() else { continue };
        if line.contains("bytes stack frame") {
            cur.stack_bytes = number_before(line, "bytes stack frame");
            cur.spill_store_bytes = number_before(line, "bytes spill stores");
            cur.spill_load_bytes = number_before(line, "bytes spill loads");
        } else if line.contains("Used") && line.contains("registers") {
            cur.registers = number_before(line, "registers");
            cur.shared_bytes = number_before(line, "bytes smem");
        }
    }
    out
}

/// The integer right before `unit` in `line` (0 when absent).
fn number_before(line: &str, unit: &str) -> u32 {
    line.find(unit)
        .and_then(|at| line[..at].split_whitespace().last())
        .and_then(|n| {
            n.trim_start_matches(|c: char| !c.is_ascii_digit())
                .parse()
                .ok()
        })
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_ptxas_verbose_output() {
        let log = "ptxas info    : 0 bytes gmem\n\
ptxas info    : Compiling entry function 'k_a' for 'sm_90'\n\
ptxas info    : Function properties for k_a\n\
    8 bytes stack frame, 4 bytes spill stores, 12 bytes spill loads\n\
ptxas info    : Used 31 registers, 2112 bytes smem, 400 bytes cmem[0]\n\
ptxas info    : Compiling entry function 'k_b' for 'sm_90'\n\
ptxas info    : Function properties for k_b\n\
    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n\
ptxas info    : Used 8 registers, 380 bytes cmem[0]\n";
        let r = parse(log);
        assert_eq!(r.len(), 2);
        assert_eq!(
            r[0],
            KernelResources {
                entry: "k_a".into(),
                registers: 31,
                shared_bytes: 2112,
                stack_bytes: 8,
                spill_store_bytes: 4,
                spill_load_bytes: 12,
            }
        );
        assert_eq!((r[1].registers, r[1].shared_bytes), (8, 0));
    }
}
