//! Interpolating accessors on OpenCL against the evaluator. The generated
//! code computes taps and weights in `double` with the evaluator's
//! formulas; the OpenCL compiler may contract a multiply-add into a fused
//! one and its `sin` may differ in the last bit, so `f32` results agree to
//! 2 ulp and `u8` results exactly except at a rounding tie (at most 1
//! apart). Prints a skip line without OpenCL.

mod interp_support;

use hipacc::Device;
use interp_support::Tolerance;

const GPU: Tolerance = Tolerance {
    ulp: 2.0,
    levels: 1,
};

fn device() -> Option<Device> {
    match Device::opencl() {
        Ok(d) => Some(d),
        Err(e) => {
            println!("[SKIP] opencl: {e}");
            None
        }
    }
}

#[test]
fn f32_matches_the_evaluator_on_all_modes_and_ratios() {
    if let Some(d) = device() {
        interp_support::f32_matches_the_evaluator_on_all_modes_and_ratios(&d, GPU);
    }
}

#[test]
fn regions_and_offset_spaces_map_cell_centred() {
    if let Some(d) = device() {
        interp_support::regions_and_offset_spaces_map_cell_centred(&d, GPU);
    }
}

#[test]
fn u8_and_rgba_match_the_evaluator() {
    if let Some(d) = device() {
        interp_support::u8_and_rgba_match_the_evaluator(&d, GPU);
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
        interp_support::undefined_reads_inside_match_the_evaluator(&d, GPU);
    }
}
