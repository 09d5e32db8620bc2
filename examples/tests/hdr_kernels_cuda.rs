//! Every kernel of `hdr-compress`, the multigrid solver's included,
//! compiles with NVRTC for `compute_90` and assembles with `ptxas
//! -arch=sm_90` in the config the architecture model chooses for an H200.
//! Needs no GPU; prints a skip line when NVRTC or ptxas is absent.

mod cuda_support;

use hipacc_examples::hdr::{fattal, scene};

#[test]
fn every_hdr_kernel_compiles_and_assembles_for_sm_90() {
    let input = scene::demo_scene(64, 48).expect("scene");
    let kernels = fattal::kernel_irs(&input, &fattal::Params::default()).expect("irs");
    assert!(kernels.len() >= 15, "{} kernels", kernels.len());
    cuda_support::assemble_for_h200(&kernels);
}
