//! The CUDA backend on a GPU: every variant family against the evaluator,
//! residency and timing. Prints `[SKIP] cuda: <reason>` without a GPU.

mod gpu_support;

use gpu_support::every;
use hipacc::prelude::*;
use hipacc::{BackendKind, Device};

fn device() -> Option<Device> {
    gpu_support::cuda()
}

#[test]
fn variant_families_match_the_evaluator() {
    if let Some(d) = device() {
        gpu_support::check_all(&d, false, every);
    }
}

#[test]
fn constant_memory_masks_match_the_evaluator() {
    if let Some(d) = device() {
        gpu_support::check_all(&d, true, every);
    }
}

#[test]
fn auto_prefers_cuda_and_launches_are_timed() {
    let Some(d) = device() else { return };
    if std::env::var_os(hipacc::BACKEND_ENV).is_none() {
        assert_eq!(Device::auto().unwrap().kind(), BackendKind::Cuda);
    }
    let c = gpu_support::cases(256, 128, false);
    let out = Image::<f32>::new(256, 128).unwrap();
    c.jacobi[0]
        .1
        .execute(&d, &IterationSpace::full(&out))
        .unwrap();
    let t = d.last_launch_time().expect("a launch was timed");
    assert!(t.as_nanos() > 0);
}

/// Rectangles move alone between host and device (`cuMemcpy2D`); see
/// `gpu_support::check_rect_transfers`.
#[test]
fn rectangles_move_alone_and_the_image_stays_on_the_device() {
    let Some(d) = device() else { return };
    gpu_support::check_rect_transfers(&d);
}
