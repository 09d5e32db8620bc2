//! Compiling generated CUDA C to PTX with NVRTC (needs no GPU and no driver).
//!
//! cudarc loads `libnvrtc` on first use and panics when it is absent, so
//! [`nvrtc`] is called first and turns absence into
//! [`Error::BackendUnavailable`] saying how to install it. NVRTC is also
//! looked for in the directory of the pip wheels
//! (`nvidia-cuda-nvrtc-cu12`): `$HIPACC_NVCUDA_DIR/nvidia/cuda_nvrtc/lib`,
//! then `/opt/nvcuda/nvidia/cuda_nvrtc/lib`. Loading it from there by full
//! path makes the later load by name (`libnvrtc.so.12`) find the same
//! library, so no `LD_LIBRARY_PATH` is needed.

use super::probe::unavailable;
use crate::gpu::dump;
use crate::{Error, Result};
use cudarc::nvrtc::{compile_ptx_with_opts, CompileError, CompileOptions};
use hipacc_codegen::Program;
use std::path::PathBuf;
use std::sync::OnceLock;

/// Compiles a generated CUDA program to PTX for a virtual architecture such
/// as `compute_90`.
///
/// Contraction of `a * b + c` into fused multiply-adds is off (`--fmad=false`)
/// so results round as the evaluator's do. A failed compile is
/// [`Error::Compile`] with NVRTC's log and the path of the saved source.
pub fn compile_program(program: &Program, arch: &str) -> Result<String> {
    nvrtc()?;
    let options = CompileOptions {
        options: vec![format!("--gpu-architecture={arch}"), "--fmad=false".into()],
        name: Some(dump::file_name(program)),
        ..Default::default()
    };
    dump::dump_if_requested(program);
    match compile_ptx_with_opts(&program.source, options) {
        Ok(ptx) => Ok(ptx.to_src()),
        Err(e) => {
            let log = match e {
                CompileError::CompileError { nvrtc, log, .. } => {
                    format!("{nvrtc:?}\n{}", log.to_string_lossy())
                }
                other => format!("{other:?}"),
            };
            Err(Error::Compile {
                kernel: dump::kernel_names(program),
                device: format!("NVRTC {arch}"),
                source_path: dump::save_failed(program),
                log,
            })
        }
    }
}

/// The environment variable naming the directory that holds `nvidia/...`
/// from the `nvidia-cuda-nvrtc-cu12` / `nvidia-cuda-nvcc-cu12` wheels.
pub const NVCUDA_DIR_ENV: &str = "HIPACC_NVCUDA_DIR";

/// Where the wheels are installed when the variable is not set.
const DEFAULT_NVCUDA_DIR: &str = "/opt/nvcuda";

/// The wheel directories to search, in order.
pub(crate) fn nvcuda_dirs() -> Vec<PathBuf> {
    let mut dirs = Vec::new();
    if let Some(d) = std::env::var_os(NVCUDA_DIR_ENV).filter(|d| !d.is_empty()) {
        dirs.push(PathBuf::from(d));
    }
    dirs.push(PathBuf::from(DEFAULT_NVCUDA_DIR));
    dirs
}

/// `Ok` when NVRTC can be loaded (after preloading it from the wheel
/// directories if needed).
pub(crate) fn nvrtc() -> Result<()> {
    static PRESENT: OnceLock<bool> = OnceLock::new();
    let present = *PRESENT.get_or_init(|| {
        // SAFETY: only tries to dlopen NVRTC by its usual names.
        (unsafe { cudarc::nvrtc::sys::is_culib_present() }) || preload_nvrtc()
    });
    if present {
        Ok(())
    } else {
        Err(unavailable(
            "libnvrtc.so.12 not found: pip install nvidia-cuda-nvrtc-cu12 and set \
             HIPACC_NVCUDA_DIR to the install directory (or put nvidia/cuda_nvrtc/lib on \
             LD_LIBRARY_PATH), or install the CUDA toolkit",
        ))
    }
}

/// Loads `libnvrtc.so.12` by full path from the wheel directories and keeps
/// it loaded; true when cudarc can then find it.
fn preload_nvrtc() -> bool {
    static LIB: OnceLock<libloading::Library> = OnceLock::new();
    for dir in nvcuda_dirs() {
        let path = dir.join("nvidia/cuda_nvrtc/lib/libnvrtc.so.12");
        if !path.exists() {
            continue;
        }
        // SAFETY: NVRTC's initialisers have no preconditions.
        if let Ok(lib) = unsafe { libloading::Library::new(&path) } {
            let _ = LIB.set(lib);
            // SAFETY: as above; now resolves to the library just loaded.
            return unsafe { cudarc::nvrtc::sys::is_culib_present() };
        }
    }
    false
}

/// The NVRTC version, e.g. `12.9`.
pub(crate) fn nvrtc_version() -> Result<String> {
    nvrtc()?;
    let (mut major, mut minor) = (0, 0);
    // SAFETY: NVRTC is loaded (checked above); both pointers are valid.
    let status = unsafe { cudarc::nvrtc::sys::nvrtcVersion(&mut major, &mut minor) };
    if status != cudarc::nvrtc::sys::nvrtcResult::NVRTC_SUCCESS {
        return Err(unavailable(format!("nvrtcVersion failed: {status:?}")));
    }
    Ok(format!("{major}.{minor}"))
}
