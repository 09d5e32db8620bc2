//! The OpenCL backend's device handling: discovery and selection errors,
//! limits, residency of images, the kernel cache and timing. Prints a skip
//! line when no OpenCL device is present.

mod gpu_support;

use gpu_support::{f32_image, Jacobi};
use hipacc::prelude::*;
use hipacc::{BackendKind, Device};
use hipacc_codegen::ConfigOverride;

fn device() -> Option<Device> {
    match Device::opencl() {
        Ok(d) => Some(d),
        Err(e) => {
            println!("[SKIP] opencl: {e}");
            None
        }
    }
}

fn jacobi(sol: &Image<f32>, rhs: &Image<f32>) -> Jacobi {
    Jacobi {
        sol: Accessor::new(sol).with_boundary(Boundary::Clamp),
        rhs: Accessor::new(rhs).with_boundary(Boundary::Clamp),
        omega: 0.8,
    }
}

/// Every pixel within a few ulp (relative to the magnitude, at least 1).
fn assert_close(got: &[f32], want: &[f32], width: usize) {
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        let tol = 4.0 * f32::EPSILON * g.abs().max(w.abs()).max(1.0);
        assert!(
            (g - w).abs() <= tol,
            "pixel ({}, {}): {g} vs {w}",
            i % width,
            i / width
        );
    }
}

#[test]
fn unknown_backend_names_the_choices() {
    let err = Device::from_name("vulkan").unwrap_err().to_string();
    assert!(err.contains("vulkan") && err.contains("opencl"), "{err}");
}

#[test]
fn auto_never_prefers_a_cpu_opencl_device_over_the_native_backend() {
    let Some(d) = device() else { return };
    if d.is_gpu() || std::env::var_os(hipacc::BACKEND_ENV).is_some() || Device::cuda().is_ok() {
        println!("[SKIP] opencl: an OpenCL GPU, CUDA or HIPACC_BACKEND decides auto here");
        return;
    }
    assert_eq!(Device::auto().unwrap().kind(), BackendKind::Cpu);
    assert_eq!(
        Device::from_name("opencl").unwrap().kind(),
        BackendKind::OpenCl
    );
}

#[test]
fn an_override_beyond_the_device_limits_is_rejected() {
    let Some(d) = device() else { return };
    let (sol, rhs) = (f32_image(64, 64, 1), f32_image(64, 64, 2));
    let out = Image::<f32>::new(64, 64).unwrap();
    let huge = d.with_override(ConfigOverride::parse("block=8192x8").unwrap());
    let err = jacobi(&sol, &rhs)
        .execute(&huge, &IterationSpace::full(&out))
        .unwrap_err()
        .to_string();
    assert!(err.contains("8192x8") && err.contains("maximum"), "{err}");
}

/// Rectangles move alone between host and device (OpenCL's strided
/// copies); see `gpu_support::check_rect_transfers`.
#[test]
fn rectangles_move_alone_and_the_image_stays_on_the_device() {
    let Some(d) = device() else { return };
    gpu_support::check_rect_transfers(&d);
}

#[test]
fn images_stay_on_the_device_until_the_host_reads() {
    let Some(d) = device() else { return };
    let (sol, rhs) = (f32_image(96, 40, 1), f32_image(96, 40, 2));
    let (a, b) = (
        Image::<f32>::new(96, 40).unwrap(),
        Image::<f32>::new(96, 40).unwrap(),
    );
    jacobi(&sol, &rhs)
        .execute(&d, &IterationSpace::full(&a))
        .unwrap();
    {
        let s = a.storage_read();
        assert!(
            !s.host_valid && s.device_valid,
            "the output must stay on the device"
        );
    }
    // Chained on the device: `a` is read there without a round trip.
    jacobi(&a, &rhs)
        .execute(&d, &IterationSpace::full(&b))
        .unwrap();
    assert!(
        !a.storage_read().host_valid,
        "reading `a` on the device downloaded it"
    );
    let mut expected_a = Image::<f32>::new(96, 40).unwrap();
    hipacc_core::ir::eval::evaluate_kernel(&jacobi(&sol, &rhs), &IterationSpace::full(&expected_a))
        .unwrap();
    let expected_b = Image::<f32>::new(96, 40).unwrap();
    hipacc_core::ir::eval::evaluate_kernel(
        &jacobi(&expected_a, &rhs),
        &IterationSpace::full(&expected_b),
    )
    .unwrap();
    let (got, want) = (b.to_vec().unwrap(), expected_b.to_vec().unwrap());
    assert!(b.storage_read().host_valid);
    // Two chained launches: the first's rounding differences propagate.
    for (i, (g, w)) in got.iter().zip(&want).enumerate() {
        assert!(
            (g - w).abs() <= 1e-5 * w.abs().max(1.0),
            "pixel {i}: {g} vs {w}"
        );
    }
    // A host write makes the device copy stale; the next launch uploads it.
    expected_a = f32_image(96, 40, 9);
    a.copy_from_slice(&expected_a.to_vec().unwrap()).unwrap();
    assert!(!a.storage_read().device_valid);
    jacobi(&a, &rhs)
        .execute(&d, &IterationSpace::full(&b))
        .unwrap();
    let want = Image::<f32>::new(96, 40).unwrap();
    hipacc_core::ir::eval::evaluate_kernel(
        &jacobi(&expected_a, &rhs),
        &IterationSpace::full(&want),
    )
    .unwrap();
    assert_close(&b.to_vec().unwrap(), &want.to_vec().unwrap(), 96);
}

#[test]
fn a_region_of_interest_keeps_the_other_output_pixels() {
    let Some(d) = device() else { return };
    let (sol, rhs) = (f32_image(70, 50, 3), f32_image(70, 50, 4));
    let out = Image::from_vec(70, 50, vec![-7.0f32; 70 * 50]).unwrap();
    let want = Image::from_vec(70, 50, vec![-7.0f32; 70 * 50]).unwrap();
    let roi = Rect::new(9, 5, 40, 33);
    jacobi(&sol, &rhs)
        .execute(&d, &IterationSpace::region(&out, roi).unwrap())
        .unwrap();
    hipacc_core::ir::eval::evaluate_kernel(
        &jacobi(&sol, &rhs),
        &IterationSpace::region(&want, roi).unwrap(),
    )
    .unwrap();
    assert_close(&out.to_vec().unwrap(), &want.to_vec().unwrap(), 70);
}

#[test]
fn the_output_may_not_be_an_input() {
    let Some(d) = device() else { return };
    let (sol, rhs) = (f32_image(16, 16, 1), f32_image(16, 16, 2));
    let err = jacobi(&sol, &rhs)
        .execute(&d, &IterationSpace::full(&sol))
        .unwrap_err()
        .to_string();
    assert!(err.contains("sol"), "{err}");
}

#[test]
fn compiled_kernels_are_cached_and_launches_timed() {
    let Some(d) = device() else { return };
    let (sol, rhs) = (f32_image(33, 17, 5), f32_image(33, 17, 6));
    let out = Image::<f32>::new(33, 17).unwrap();
    let fixed = d.with_override(ConfigOverride::parse("block=16x8,ppt=1").unwrap());
    jacobi(&sol, &rhs)
        .execute(&fixed, &IterationSpace::full(&out))
        .unwrap();
    let (hits, _) = fixed.kernel_cache_stats();
    jacobi(&sol, &rhs)
        .execute(&fixed, &IterationSpace::full(&out))
        .unwrap();
    assert!(
        fixed.kernel_cache_stats().0 > hits,
        "the second launch must hit the cache"
    );
    assert!(fixed.last_launch_time().is_some());
    let ir = jacobi(&sol, &rhs).ir().unwrap();
    let config = fixed.config_for(&ir).unwrap();
    assert_eq!((config.block.x, config.block.y), (16, 8));
}
