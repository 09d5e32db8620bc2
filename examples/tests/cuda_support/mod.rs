//! Compiling a batch of kernels to CUDA for an H200 without a GPU: NVRTC
//! for `compute_90`, then `ptxas -arch=sm_90` in the config the
//! architecture model chooses.

use hipacc::codegen::{generate_batch, Config, Language, Target};
use hipacc::core::ir::Kernel;
use hipacc::cuda::{assemble_program, nvrtc_available, ptxas_path};

/// Compiles and assembles `kernels` as one program and prints each entry's
/// registers and spills; prints a skip line and returns when NVRTC or
/// ptxas is absent.
pub(crate) fn assemble_for_h200(kernels: &[Kernel]) {
    if let Err(e) = nvrtc_available() {
        println!("[SKIP] cuda: {e}");
        return;
    }
    if ptxas_path().is_none() {
        println!("[SKIP] cuda: ptxas not found (pip install nvidia-cuda-nvcc-cu12, set HIPACC_NVCUDA_DIR)");
        return;
    }
    let target = Target::lookup("h200").expect("h200");
    let configs: Vec<Config> = kernels
        .iter()
        .map(|k| Config::choose(k, target, Language::Cuda, None).expect("config"))
        .collect();
    let items: Vec<_> = kernels.iter().zip(&configs).collect();
    let program = generate_batch(&items, target, Language::Cuda).expect("generate");
    let report = assemble_program(&program, 90).expect("NVRTC and ptxas");
    for (info, r) in program.kernels.iter().zip(&report) {
        println!(
            "{:<60} {:>3} registers, {} spill bytes",
            info.entry,
            r.registers,
            r.spill_store_bytes + r.spill_load_bytes
        );
    }
}
