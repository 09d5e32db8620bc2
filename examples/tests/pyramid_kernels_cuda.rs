//! Every kernel of the `pyramid` workload compiles with NVRTC for
//! `compute_90` and assembles with `ptxas -arch=sm_90` in the config the
//! architecture model chooses for an H200. Needs no GPU; prints a skip line
//! when NVRTC or ptxas is absent.

mod cuda_support;

use hipacc_examples::pyramid::{test_image, BurtAdelson};

#[test]
fn every_pyramid_kernel_compiles_and_assembles_for_sm_90() {
    let work = BurtAdelson::new(&test_image(67).expect("image"), 4).expect("pyramids");
    let kernels = work.kernel_irs().expect("irs");
    assert_eq!(kernels.len(), 4);
    cuda_support::assemble_for_h200(&kernels);
}
