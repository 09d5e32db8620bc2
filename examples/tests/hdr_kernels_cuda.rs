//! Every kernel of `hdr-compress`, the multigrid solver's included,
//! compiles with NVRTC for `compute_90` and assembles with `ptxas
//! -arch=sm_90` in the config the architecture model chooses for an H200.
//! Needs no GPU; prints a skip line when NVRTC or ptxas is absent.

use hipacc::codegen::{generate_batch, Config, Language, Target};
use hipacc::cuda::{assemble, compile_program, nvrtc_available, ptxas_path};
use hipacc_examples::hdr::{fattal, scene};

#[test]
fn every_hdr_kernel_compiles_and_assembles_for_sm_90() {
    if let Err(e) = nvrtc_available() {
        println!("[SKIP] cuda: {e}");
        return;
    }
    if ptxas_path().is_none() {
        println!("[SKIP] cuda: ptxas not found (pip install nvidia-cuda-nvcc-cu12, set HIPACC_NVCUDA_DIR)");
        return;
    }
    let target = Target::lookup("h200").expect("h200");
    let input = scene::demo_scene(64, 48).expect("scene");
    let kernels = fattal::kernel_irs(&input, &fattal::Params::default()).expect("irs");
    assert!(kernels.len() >= 15, "{} kernels", kernels.len());
    let configs: Vec<Config> = kernels
        .iter()
        .map(|k| Config::choose(k, target, Language::Cuda, None).expect("config"))
        .collect();
    let items: Vec<_> = kernels.iter().zip(&configs).collect();
    let program = generate_batch(&items, target, Language::Cuda).expect("generate");
    let ptx = compile_program(&program, "compute_90").expect("NVRTC");
    let report = assemble(&ptx, "sm_90").expect("ptxas");
    for info in &program.kernels {
        let r = report
            .iter()
            .find(|r| r.entry.contains(&info.entry))
            .unwrap_or_else(|| panic!("ptxas reported nothing for `{}`", info.entry));
        println!(
            "{:<60} {:>3} registers, {} spill bytes",
            info.entry,
            r.registers,
            r.spill_store_bytes + r.spill_load_bytes
        );
    }
}
