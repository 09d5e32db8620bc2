//! Interpolating accessors on wgpu (Mesa's lavapipe in CI) against the
//! evaluator, with the checks of the OpenCL test: every mode with every
//! boundary mode that reads outside, up- and downsampling by 2 and by odd,
//! non-integer ratios, regions and offset spaces, `f32`, `u8` and RGBA
//! pixels, and `Undefined` where every tap stays inside.
//!
//! # Tolerance
//!
//! The generated WGSL computes positions, weights and sums in `f64` with
//! the evaluator's formulas and order. WGSL has no `sin` of an `f64`, so
//! the Lanczos kernel's `sin(pi t)` is a Taylor series after an exact
//! reduction of `t`, a few `f64` ulp from `f64::sin`; weights computed in
//! `f32` instead would be off by about `1e-7` relative, several `f32` ulp
//! of a result. `f64` errors of a few ulp vanish when a result is rounded
//! to `f32`, except where the evaluator's sum cancels to a residue near 0
//! (`3e-16` against an exact 0 on lavapipe): so `f32` results must lie
//! within 1 `f32` ulp of `max(|e|, 1)` of the evaluator's `e` (lavapipe
//! meets it; the OpenCL test allows 2 for its native `sin`). `u8` results
//! may differ by 1 only at a rounding tie, which a driver whose `f64`
//! division is not correctly rounded (Vulkan allows that) could land on
//! either side of; lavapipe matches them exactly.
//!
//! An adapter without `SHADER_F64` must refuse interpolating kernels with
//! the typed error instead of running them in `f32`; that refusal is what
//! is checked there.
//!
//! Prints a skip line when no adapter is present, unless
//! `HIPACC_REQUIRE_WGPU` is set (as `.ci/test` does), which makes a missing
//! adapter a failure.

#![cfg(feature = "wgpu")]

mod gpu_support;
mod interp_support;

use hipacc::prelude::*;
use hipacc::Device;
use interp_support::Tolerance;

const WGPU: Tolerance = Tolerance {
    ulp: 1.0,
    levels: 1,
};

#[derive(Kernel)]
#[kernel(output = f32)]
struct Resample {
    input: Accessor<f32>,
}

#[kernel_body]
impl Resample {
    fn kernel(&self) -> f32 {
        self.input()
    }
}

/// The wgpu device if it runs interpolating kernels; `None` when it has no
/// `f64` and refuses them with [`hipacc::Error::UnsupportedType`], as it
/// must (any other error fails).
fn device() -> Option<Device> {
    let d = gpu_support::wgpu()?;
    let input = Image::<f32>::new(4, 4).unwrap();
    let out = Image::<f32>::new(8, 8).unwrap();
    let k = Resample {
        input: Accessor::new(&input).with_interpolation(Interpolation::Linear),
    };
    match k.execute(&d, &IterationSpace::full(&out)) {
        Ok(()) => Some(d),
        Err(e @ hipacc::Error::UnsupportedType { .. }) => {
            println!("[SKIP] wgpu: {e}");
            None
        }
        Err(e) => panic!("not the typed refusal of f64: {e}"),
    }
}

#[test]
fn f32_matches_the_evaluator_on_all_modes_and_ratios() {
    if let Some(d) = device() {
        interp_support::f32_matches_the_evaluator_on_all_modes_and_ratios(&d, WGPU);
    }
}

#[test]
fn regions_and_offset_spaces_map_cell_centred() {
    if let Some(d) = device() {
        interp_support::regions_and_offset_spaces_map_cell_centred(&d, WGPU);
    }
}

#[test]
fn u8_and_rgba_match_the_evaluator() {
    if let Some(d) = device() {
        interp_support::u8_and_rgba_match_the_evaluator(&d, WGPU);
    }
}

#[test]
fn known_values_of_upsampling_and_downsampling_by_two() {
    if let Some(d) = device() {
        interp_support::known_values_of_upsampling_and_downsampling_by_two(&d);
    }
}

#[test]
fn undefined_reads_inside_match_the_evaluator() {
    if let Some(d) = device() {
        interp_support::undefined_reads_inside_match_the_evaluator(&d, WGPU);
    }
}
