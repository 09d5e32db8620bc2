//! Interpolating accessors on the native CPU backend against the evaluator.
//! Both compute taps and weights with the same `f64` arithmetic
//! (`hipacc_core::interpolate`; the CPU backend's taps from tables of it),
//! so results must be identical.

mod interp_support;

use hipacc::prelude::*;
use hipacc_core::ir::eval::evaluate_kernel;
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

#[derive(Kernel)]
#[kernel(output = f64)]
struct SampleF64 {
    input: Accessor<f64>,
}

#[kernel_body]
impl SampleF64 {
    fn kernel(&self) -> f64 {
        self.input.at(-1, 0) - 2.0 * self.input.at(0, 6)
    }
}

#[derive(Kernel)]
#[kernel(output = i32)]
struct SampleI32 {
    input: Accessor<i32>,
}

#[kernel_body]
impl SampleI32 {
    fn kernel(&self) -> i32 {
        self.input.at(1, 1)
    }
}

#[derive(Kernel)]
#[kernel(output = Rgba<u8>)]
struct SampleRgbaU8 {
    input: Accessor<Rgba<u8>>,
}

#[kernel_body]
impl SampleRgbaU8 {
    fn kernel(&self) -> Rgba<u8> {
        self.input.at(0, -1)
    }
}

/// Runs `k` on the CPU and in the evaluator over a `w x h` space and
/// compares every pixel.
fn same_as_evaluator<K: Kernel>(k: &K, w: usize, h: usize, what: &str)
where
    K::Output: PartialEq + std::fmt::Debug,
{
    let got = Image::<K::Output>::new(w, h).unwrap();
    k.execute(&Device::cpu(), &IterationSpace::full(&got))
        .unwrap();
    let want = Image::<K::Output>::new(w, h).unwrap();
    evaluate_kernel(k, &IterationSpace::full(&want)).unwrap();
    assert_eq!(got.to_vec().unwrap(), want.to_vec().unwrap(), "{what}");
}

/// The pixel types the shared tests leave out: `f64`, a signed integer
/// whose weighted sums round half away from zero and saturate, and RGBA of
/// bytes; taps read through tables at offsets beyond the tabulated ones
/// too (`at(0, 6)` is not, `at(-1, 0)` is), on every mode and boundary.
#[test]
fn f64_i32_and_rgba_u8_match_the_evaluator_bit_for_bit() {
    let modes = [
        Interpolation::Nearest,
        Interpolation::Linear,
        Interpolation::Cubic,
        Interpolation::Lanczos3,
    ];
    for ((aw, ah), (sw, sh)) in [((8, 6), (16, 12)), ((20, 11), (13, 7)), ((9, 9), (9, 9))] {
        let f = Image::from_fn(aw, ah, |x, y| ((x * 7 + y * 13) % 11) as f64 * 0.37 - 1.0).unwrap();
        let i = Image::from_fn(aw, ah, |x, y| {
            ((x * 37 + y * 91) % 23) as i32 * 1000 - 11_000
        })
        .unwrap();
        let big =
            Image::from_fn(aw, ah, |x, y| if (x + y) % 2 == 0 { i32::MAX } else { 0 }).unwrap();
        let c = Image::from_fn(aw, ah, |x, y| {
            Rgba::new((x * 40) as u8, (y * 25) as u8, ((x * y) % 256) as u8, 255)
        })
        .unwrap();
        for mode in modes {
            let what = format!("{mode:?} {aw}x{ah} -> {sw}x{sh}");
            for b in [Boundary::Clamp, Boundary::Mirror, Boundary::Constant(-3.5)] {
                let input = Accessor::new(&f).with_boundary(b).with_interpolation(mode);
                same_as_evaluator(&SampleF64 { input }, sw, sh, &what);
            }
            for img in [&i, &big] {
                for b in [
                    Boundary::Repeat,
                    Boundary::MirrorInterior,
                    Boundary::Constant(7),
                ] {
                    let input = Accessor::new(img).with_boundary(b).with_interpolation(mode);
                    same_as_evaluator(&SampleI32 { input }, sw, sh, &what);
                }
            }
            for b in [Boundary::Clamp, Boundary::Constant(Rgba::splat(9u8))] {
                let input = Accessor::new(&c).with_boundary(b).with_interpolation(mode);
                same_as_evaluator(&SampleRgbaU8 { input }, sw, sh, &what);
            }
        }
    }
}
