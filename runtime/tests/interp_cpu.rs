//! Interpolating accessors on the native CPU backend against the evaluator.
//! Both compute taps and weights with the same `f64` arithmetic
//! (`hipacc_core::interpolate`), so results must be identical.

mod interp_support;

use hipacc::Device;
use interp_support::Tolerance;

const EXACT: Tolerance = Tolerance {
    ulp: 0.0,
    levels: 0,
};

#[test]
fn f32_matches_the_evaluator_on_all_modes_and_ratios() {
    interp_support::f32_matches_the_evaluator_on_all_modes_and_ratios(&Device::cpu(), EXACT);
}

#[test]
fn regions_and_offset_spaces_map_cell_centred() {
    interp_support::regions_and_offset_spaces_map_cell_centred(&Device::cpu(), EXACT);
}

#[test]
fn u8_and_rgba_match_the_evaluator() {
    interp_support::u8_and_rgba_match_the_evaluator(&Device::cpu(), EXACT);
}

#[test]
fn known_values_of_upsampling_and_downsampling_by_two() {
    interp_support::known_values_of_upsampling_and_downsampling_by_two(&Device::cpu());
}

#[test]
fn undefined_reads_inside_match_the_evaluator() {
    interp_support::undefined_reads_inside_match_the_evaluator(&Device::cpu(), EXACT);
}
