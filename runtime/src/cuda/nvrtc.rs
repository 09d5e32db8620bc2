//! Compiling generated CUDA C to PTX with NVRTC (needs no GPU and no driver).

use super::probe;
use crate::gpu::dump;
use crate::{Error, Result};
use cudarc::nvrtc::{compile_ptx_with_opts, CompileError, CompileOptions};
use hipacc_codegen::Program;

/// Compiles a generated CUDA program to PTX for a virtual architecture such
/// as `compute_90`.
///
/// Contraction of `a * b + c` into fused multiply-adds is off (`--fmad=false`)
/// so results round as the evaluator's do. A failed compile is
/// [`Error::Compile`] with NVRTC's log and the path of the saved source.
pub fn compile_program(program: &Program, arch: &str) -> Result<String> {
    probe::nvrtc()?;
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
