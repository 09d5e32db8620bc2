//! Masks whose values are known when a kernel is compiled become literals
//! of its generated source, with the window loop written out, and the
//! device compiles one variant per value set: a second launch with the same
//! coefficients reuses the compiled kernel, other coefficients compile a
//! new one, and a mask marked `dynamic()` is passed at launch instead (one
//! variant for all value sets). Checked on the generated source, on the
//! device's kernel cache counters and on the results (against the IR
//! evaluator). Prints a skip line when no OpenCL platform is present.

use hipacc::core::ir::evaluate_kernel;
use hipacc::prelude::*;
use hipacc_codegen::{generate, Language};

#[derive(Kernel)]
#[kernel(output = f32)]
struct Weighted {
    input: Accessor<f32>,
    mask: Mask<f32>,
}

#[kernel_body]
impl Weighted {
    fn kernel(&self) -> f32 {
        convolve(&self.mask, Sum, |dx, dy| {
            self.mask.at(dx, dy) * self.input.at(dx, dy)
        }) * 0.5
    }
}

fn device() -> Option<Device> {
    match Device::opencl() {
        Ok(d) => Some(d),
        Err(e) => {
            println!("[SKIP] opencl: {e}");
            None
        }
    }
}

/// A 3x3 mask whose centre is `centre` and whose other taps are distinct
/// binary fractions (so every literal is exact and easy to find).
fn mask(centre: f32) -> Mask<f32> {
    Mask::new([
        [0.125, 0.25, 0.375],
        [0.5, centre, 0.625],
        [0.75, 0.875, 1.125],
    ])
    .unwrap()
}

/// Runs `kernel` on `device` and checks it against the evaluator (within
/// 2 ulp-ish relative error: the device may contract multiply-adds).
fn run(device: &Device, kernel: &Weighted, (w, h): (usize, usize)) {
    let out = Image::<f32>::new(w, h).unwrap();
    kernel.execute(device, &IterationSpace::full(&out)).unwrap();
    let want = Image::<f32>::new(w, h).unwrap();
    evaluate_kernel(kernel, &IterationSpace::full(&want)).unwrap();
    for (i, (a, b)) in out
        .to_vec()
        .unwrap()
        .iter()
        .zip(want.to_vec().unwrap())
        .enumerate()
    {
        assert!(
            (a - b).abs() <= 2.5e-7 * b.abs().max(1.0),
            "pixel {i}: {a} vs the evaluator's {b}"
        );
    }
}

#[test]
fn literal_masks_compile_once_per_value_set() {
    let Some(device) = device() else { return };
    let (w, h) = (67, 45);
    let input = Image::from_fn(w, h, |x, y| ((x * 5 + y * 11) % 23) as f32).unwrap();
    let kernel = |mask: Mask<f32>| Weighted {
        input: Accessor::new(&input).with_boundary(Boundary::Mirror),
        mask,
    };

    // The generated source holds the coefficients as literals, one
    // position per window tap, and no mask argument.
    let ir = kernel(mask(3.0)).ir().unwrap();
    let config = device.config_for(&ir).unwrap();
    let target = device.target().unwrap();
    let source = generate(&ir, &config, target, Language::OpenCl)
        .unwrap()
        .source;
    for literal in ["0.125f", "0.875f", "1.125f", "3.0f"] {
        assert!(source.contains(literal), "{literal} missing:\n{source}");
    }
    assert!(source.contains("dx = 1, dy = 1"), "window not written out");
    assert!(
        !source.contains("msk_mask"),
        "a literal mask is no argument"
    );
    let other = generate(
        &kernel(mask(5.0)).ir().unwrap(),
        &config,
        target,
        Language::OpenCl,
    )
    .unwrap()
    .source;
    assert!(other.contains("5.0f") && !other.contains("3.0f"));

    // Same values: one compile, then cache hits; new values: a new compile.
    let (_, misses0) = device.kernel_cache_stats();
    run(&device, &kernel(mask(3.0)), (w, h));
    let (hits1, misses1) = device.kernel_cache_stats();
    assert!(misses1 > misses0, "the first value set compiles");
    run(&device, &kernel(mask(3.0)), (w, h));
    let (hits2, misses2) = device.kernel_cache_stats();
    assert_eq!(misses2, misses1, "the same value set compiles nothing");
    assert!(hits2 > hits1, "the same value set hits the cache");
    run(&device, &kernel(mask(5.0)), (w, h));
    let (_, misses3) = device.kernel_cache_stats();
    assert!(misses3 > misses2, "another value set compiles its variant");

    // A dynamic mask: one variant, coefficients passed at launch.
    run(&device, &kernel(mask(7.0).dynamic()), (w, h));
    let (_, misses4) = device.kernel_cache_stats();
    run(&device, &kernel(mask(9.0).dynamic()), (w, h));
    let (_, misses5) = device.kernel_cache_stats();
    assert_eq!(misses5, misses4, "a dynamic mask's values need no compile");
}
