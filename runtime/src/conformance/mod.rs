//! The conformance suite: one set of checks, written once, that every
//! backend must pass, comparing each launch with the evaluator
//! ([`evaluate_kernel`](hipacc_core::ir::eval::evaluate_kernel)).
//!
//! A backend's test crate instantiates it with one line; the device
//! expression returns a `Result`, and an `Err` (backend absent) makes every
//! test print `[SKIP] <backend>: <reason>` and pass:
//!
//! ```text
//! hipacc::conformance_suite!(cpu, Ok::<_, hipacc::Error>(hipacc::Device::cpu()));
//! hipacc::conformance_suite!(opencl, hipacc::Device::from_name("opencl"));
//! ```
//!
//! # What is covered
//!
//! - Every boundary mode x image sizes 1x1, 1x7, 2x3, 5x17, 64x64, 127x33
//!   and 512x300 x footprints 1x1, 3x3, 5x5, 1x9, 9x1 and 15x15 (wider than
//!   the small images) x pixel types `u8`, `i32`, `f32`, `f64` and
//!   `Rgba<f32>` (module `boundaries`). `Undefined` allows no read outside the
//!   accessor's region, and the first column of an iteration space reads
//!   the region's column `min_dx`, so it is checked only where all offsets
//!   are non-negative, over the largest such space (possibly none).
//! - `reduce`, `convolve` and `iterate` with each of Sum, Min, Max and Prod
//!   (module `operators`); regions of interest of the iteration space and of
//!   accessors, and two accessors in one kernel (module `regions`); offsets
//!   computed from parameters, constant asymmetric offsets with the
//!   coordinates, and vector lanes (module `offsets`).
//! - Every pixel of the output image is compared, also those outside the
//!   iteration space (both outputs start as the same sentinel).
//!
//! # Tolerance
//!
//! Integers must match exactly. A float lane `a` must satisfy
//! `|a - e| <= (n + 4) · ε · max(|e|, 1)` against the evaluator's `e`,
//! where `n` is the number of values the kernel combines per pixel (the
//! window's positions) and `ε` the type's machine epsilon.
//!
//! Why this bound: the evaluator and the backends compute the same
//! expression tree in the same precision and order (reductions in row-major
//! order, no reassociation). The remaining freedom is contraction of
//! `a * b + c` into a fused multiply-add (OpenCL and CUDA compilers do it by
//! default; a fused step skips one rounding) and native math functions of a
//! few ulp. For `n` combined terms two such evaluations differ by at most
//! about `n · ε · Σ|terms|` (the classic `γ_n` bound of recursive
//! summation); every kernel of the suite adds non-negative terms, so
//! `Σ|terms| = |e|`, and the `+ 4` covers the few operations around the
//! reduction. Why a real bug cannot pass: float inputs are multiples of
//! 1/16 in `[0.5, 1.5)` and mask coefficients small integers, so sums,
//! minima and maxima are exact in `f32` and `f64` and a wrong, missing or
//! extra read changes a result by at least 1/16, while the bound is below
//! 0.04 for the largest result (15x15 window, `|e| <= 1350`, `f32`);
//! products run over values `1 + k/64`, where one wrong factor changes the
//! result by over 1.5 % against a bound of about 1e-6.

mod boundaries;
mod harness;
mod kernels;
mod offsets;
mod operators;
mod pixel;
mod regions;

use crate::Device;
use harness::Run;
use hipacc_core::Rgba;

/// Expands to a module `$name` of `#[test]` functions, one per suite
/// function of [`conformance`](crate::conformance), each run on the device
/// that `$device` (an expression of type `Result<Device, E>`, `E:
/// Display`) returns. If it returns `Err`, each test prints
/// `[SKIP] $name: <reason>` and passes.
#[macro_export]
macro_rules! conformance_suite {
    ($name:ident, $device:expr) => {
        mod $name {
            #[allow(unused_imports)]
            use super::*;

            fn device() -> ::std::option::Option<$crate::Device> {
                match $device {
                    ::std::result::Result::Ok(device) => ::std::option::Option::Some(device),
                    ::std::result::Result::Err(reason) => {
                        ::std::println!("[SKIP] {}: {}", ::std::stringify!($name), reason);
                        ::std::option::Option::None
                    }
                }
            }

            $crate::conformance_suite!(@tests
                boundaries_u8, boundaries_i32, boundaries_f32, boundaries_f64,
                boundaries_rgba_f32, operators_f32, operators_i32, regions,
                two_accessors, computed_offsets, stencils, vectors
            );
        }
    };
    (@tests $($test:ident),*) => {
        $(
            #[test]
            fn $test() {
                if let ::std::option::Option::Some(device) = device() {
                    $crate::conformance::$test(&device);
                }
            }
        )*
    };
}

/// Every mode x size x footprint, `u8` pixels, including `512x300`.
pub fn boundaries_u8(device: &Device) {
    Run::suite(device, "boundaries_u8", |run| {
        boundaries::matrix::<u8>(run, true);
    });
}

/// Every mode x size x footprint, `i32` pixels (without `512x300`).
pub fn boundaries_i32(device: &Device) {
    Run::suite(device, "boundaries_i32", |run| {
        boundaries::matrix::<i32>(run, false);
    });
}

/// Every mode x size x footprint, `f32` pixels, including `512x300`.
pub fn boundaries_f32(device: &Device) {
    Run::suite(device, "boundaries_f32", |run| {
        boundaries::matrix::<f32>(run, true);
    });
}

/// Every mode x size x footprint, `f64` pixels (without `512x300`).
pub fn boundaries_f64(device: &Device) {
    Run::suite(device, "boundaries_f64", |run| {
        boundaries::matrix::<f64>(run, false);
    });
}

/// Every mode x size x footprint, `Rgba<f32>` pixels (without `512x300`).
pub fn boundaries_rgba_f32(device: &Device) {
    Run::suite(device, "boundaries_rgba_f32", |run| {
        boundaries::matrix::<Rgba<f32>>(run, false);
    });
}

/// `reduce`, `convolve` and `iterate` with Sum, Min, Max, Prod over `f32`.
pub fn operators_f32(device: &Device) {
    Run::suite(device, "operators_f32", |run| {
        operators::f32_operators(run);
    });
}

/// `reduce`, `convolve` and `iterate` with Sum, Min, Max, Prod over `i32`.
pub fn operators_i32(device: &Device) {
    Run::suite(device, "operators_i32", |run| {
        operators::i32_operators(run);
    });
}

/// Regions of interest of the iteration space and of accessors, every
/// mode, `f32`, `u8` and `Rgba<f32>`.
pub fn regions(device: &Device) {
    Run::suite(device, "regions", |run| {
        regions::regions::<f32>(run);
        regions::regions::<u8>(run);
        regions::regions::<Rgba<f32>>(run);
    });
}

/// Two accessors with different boundaries and regions in one kernel.
pub fn two_accessors(device: &Device) {
    Run::suite(device, "two_accessors", |run| {
        regions::two_accessors(run);
    });
}

/// Offsets computed from parameters, every pixel type and mode.
pub fn computed_offsets(device: &Device) {
    Run::suite(device, "computed_offsets", |run| {
        offsets::computed_offsets::<u8>(run);
        offsets::computed_offsets::<i32>(run);
        offsets::computed_offsets::<f32>(run);
        offsets::computed_offsets::<f64>(run);
        offsets::computed_offsets::<Rgba<f32>>(run);
    });
}

/// Constant asymmetric offsets and coordinates, every pixel type and mode.
pub fn stencils(device: &Device) {
    Run::suite(device, "stencils", |run| {
        offsets::stencil::<u8>(run);
        offsets::stencil::<i32>(run);
        offsets::stencil::<f32>(run);
        offsets::stencil::<f64>(run);
        offsets::stencil::<Rgba<f32>>(run);
    });
}

/// Vector lane access and construction, every mode.
pub fn vectors(device: &Device) {
    Run::suite(device, "vectors", |run| {
        offsets::vectors(run);
    });
}
