//! The wgpu backend (Mesa's lavapipe in CI) against the evaluator: every
//! variant family its printer covers (boundary regions on/off, 1/4/8 pixels
//! per thread, literal and constant-memory masks, `u8` and `u16` mask
//! coefficients), `u8` outputs packed in words, `f64` where the adapter has
//! `SHADER_F64`, and the refusal of texture memory. `wgpu_variants` checks
//! local tiles.
//!
//! Prints a skip line when no adapter is present, unless
//! `HIPACC_REQUIRE_WGPU` is set (as `.ci/test` does), which makes a missing
//! adapter a failure.

#![cfg(feature = "wgpu")]

mod gpu_support;

use hipacc::prelude::*;
use hipacc::Device;
use hipacc_codegen::{Config, ConfigOverride, MemoryKind};
use hipacc_core::ir::eval::evaluate_kernel;

/// The families the WGSL printer covers: accessors in global memory.
fn printed(c: &Config) -> bool {
    c.memory
        .iter()
        .all(|m| matches!(m, MemoryKind::Global | MemoryKind::ReadOnly))
}

/// Pixels from the device and from the evaluator.
type Pair<T> = (Vec<T>, Vec<T>);

/// The kernel on `device` and on the evaluator over a `w x h` output.
fn both<K: Kernel>(
    device: &Device,
    kernel: &K,
    (w, h): (usize, usize),
) -> hipacc::Result<Pair<K::Output>> {
    let got = Image::<K::Output>::new(w, h).unwrap();
    let want = Image::<K::Output>::new(w, h).unwrap();
    evaluate_kernel(kernel, &IterationSpace::full(&want)).unwrap();
    kernel.execute(device, &IterationSpace::full(&got))?;
    Ok((got.to_vec().unwrap(), want.to_vec().unwrap()))
}

#[test]
fn the_device_reports_its_backend_and_limits() {
    let Some(d) = gpu_support::wgpu() else { return };
    assert_eq!(d.kind(), hipacc::BackendKind::Wgpu);
    assert!(d.name().starts_with("wgpu "), "{}", d.name());
    assert!(d.target().is_some());
    assert_eq!(Device::from_name("wgpu").unwrap().kind(), d.kind());
}

#[test]
fn variant_families_match_the_evaluator() {
    if let Some(d) = gpu_support::wgpu() {
        gpu_support::check_all(&d, false, printed);
    }
}

#[test]
fn constant_memory_masks_match_the_evaluator() {
    if let Some(d) = gpu_support::wgpu() {
        gpu_support::check_all(&d, true, printed);
    }
}

#[derive(Kernel)]
#[kernel(output = u8)]
struct Invert {
    input: Accessor<u8>,
    bias: u8,
}

#[kernel_body]
impl Invert {
    fn kernel(&self) -> u8 {
        (255 - self.input.at(0, 0)) + self.bias
    }
}

/// Neighbouring invocations share the words of a `u8` output: every pixel
/// of odd widths must land, and pixels outside the iteration space (the
/// other bytes of the edge words) must stay.
#[test]
fn u8_outputs_packed_in_words_keep_their_neighbours() {
    let Some(d) = gpu_support::wgpu() else { return };
    for (w, h) in [(1, 1), (3, 2), (127, 33)] {
        let input = gpu_support::u8_image(w, h, 7);
        let k = Invert {
            input: Accessor::new(&input),
            bias: 3,
        };
        let (got, want) = both(&d, &k, (w, h)).unwrap();
        assert_eq!(got, want, "{w}x{h}");
    }
}

#[derive(Kernel)]
#[kernel(output = f64)]
struct Blend {
    a: Accessor<f64>,
    b: Accessor<f64>,
    t: f64,
}

#[kernel_body]
impl Blend {
    fn kernel(&self) -> f64 {
        self.a.at(-1, 0) * (1.0 - self.t) + self.b.at(0, 1) * self.t
    }
}

/// `f64` runs in double precision where the adapter has `SHADER_F64`: a
/// sum that loses its low part in `f32` comes back exact.
#[test]
fn f64_runs_in_double_precision() {
    let Some(d) = gpu_support::wgpu() else { return };
    let (w, h) = (37, 11);
    let a = Image::from_fn(w, h, |x, y| 1.0e9 + (x * 3 + y) as f64 * 1.0e-3).unwrap();
    let b = Image::from_fn(w, h, |x, y| (x + y * 7) as f64 * 0.125 + 1.0e-7).unwrap();
    let k = Blend {
        a: Accessor::new(&a).with_boundary(Boundary::Mirror),
        b: Accessor::new(&b).with_boundary(Boundary::Constant(2.5)),
        t: 0.25,
    };
    match both(&d, &k, (w, h)) {
        Ok((got, want)) => {
            for (g, e) in got.iter().zip(want) {
                assert!((g - e).abs() <= e.abs() * 1e-15, "{g} vs {e}");
            }
        }
        Err(e) => assert!(
            matches!(e, hipacc::Error::UnsupportedType { .. }),
            "not the typed refusal of f64: {e}"
        ),
    }
}

#[derive(Kernel)]
#[kernel(output = f32)]
struct Box5 {
    input: Accessor<f32>,
    dom: Domain,
}

#[kernel_body]
impl Box5 {
    fn kernel(&self) -> f32 {
        reduce(&self.dom, Sum, |dx, dy| self.input.at(dx, dy))
    }
}

/// Texture memory, which neither the adapter's limits nor the printer
/// cover, is refused with an error that says so, never run as something
/// else.
#[test]
fn textures_are_refused_by_name() {
    let Some(d) = gpu_support::wgpu() else { return };
    let input = gpu_support::f32_image(20, 9, 5);
    let k = Box5 {
        input: Accessor::new(&input).with_boundary(Boundary::Clamp),
        dom: Domain::new(5, 5).unwrap(),
    };
    let textures = ConfigOverride::parse("memory=texture").unwrap();
    let e = both(&d.with_override(textures), &k, (20, 9))
        .unwrap_err()
        .to_string();
    assert!(e.contains("images"), "{e}");
    let (got, want) = both(&d, &k, (20, 9)).unwrap();
    for (g, e) in got.iter().zip(want) {
        assert!((g - e).abs() <= e.abs() * 1e-6 + 1e-6, "{g} vs {e}");
    }
}

#[derive(Kernel)]
#[kernel(output = u32)]
struct WeighU8 {
    input: Accessor<u8>,
    mask: Mask<u8>,
}

#[kernel_body]
impl WeighU8 {
    fn kernel(&self) -> u32 {
        convolve(&self.mask, Sum, |dx, dy| {
            self.mask.at(dx, dy) as u32 * self.input.at(dx, dy) as u32
        })
    }
}

#[derive(Kernel)]
#[kernel(output = u32)]
struct WeighU16 {
    input: Accessor<u16>,
    mask: Mask<u16>,
}

#[kernel_body]
impl WeighU16 {
    fn kernel(&self) -> u32 {
        convolve(&self.mask, Sum, |dx, dy| {
            self.mask.at(dx, dy) as u32 * self.input.at(dx, dy) as u32
        })
    }
}

/// `u8` and `u16` mask coefficients, as literals and in constant memory
/// (packed in words like pixels there, so each coefficient's position in
/// its word matters): a 3x3 mask read at constant offsets and a 9x9 one
/// (81 positions, read in a loop through the coefficient helper), over odd
/// sizes with every boundary mode that reads outside, exactly as the
/// evaluator computes them.
#[test]
fn u8_and_u16_masks_literal_and_in_constant_memory_match_the_evaluator() {
    let Some(d) = gpu_support::wgpu() else { return };
    let constant = d.with_override(ConfigOverride::parse("mask=constant").unwrap());
    let (w, h) = (23, 13);
    let bytes = gpu_support::u8_image(w, h, 3);
    let words = Image::from_fn(w, h, |x, y| ((x * 5021 + y * 977) % 65536) as u16).unwrap();
    for size in [3usize, 9] {
        let coef = |i: usize| (i * 37 + size) % 251 + 1;
        let m8 = Mask::from_vec(
            size,
            size,
            (0..size * size).map(|i| coef(i) as u8).collect(),
        );
        let m16 = Mask::from_vec(
            size,
            size,
            (0..size * size).map(|i| (coef(i) * 199) as u16).collect(),
        );
        let (m8, m16) = (m8.unwrap(), m16.unwrap());
        for (dev, what) in [(&d, "literal"), (&constant, "constant")] {
            for (b8, b16) in [
                (Boundary::Clamp, Boundary::Clamp),
                (Boundary::Repeat, Boundary::Repeat),
                (Boundary::Mirror, Boundary::Mirror),
                (Boundary::MirrorInterior, Boundary::MirrorInterior),
                (Boundary::Constant(250u8), Boundary::Constant(60000u16)),
            ] {
                let mode = b8.mode();
                for dynamic in [false, true] {
                    let (k8, k16) = if dynamic {
                        (m8.clone().dynamic(), m16.clone().dynamic())
                    } else {
                        (m8.clone(), m16.clone())
                    };
                    let k = WeighU8 {
                        input: Accessor::new(&bytes).with_boundary(b8),
                        mask: k8,
                    };
                    let (got, want) = both(dev, &k, (w, h)).unwrap();
                    assert_eq!(got, want, "u8 {size}x{size} {what} {mode:?} {dynamic}");
                    let k = WeighU16 {
                        input: Accessor::new(&words).with_boundary(b16),
                        mask: k16,
                    };
                    let (got, want) = both(dev, &k, (w, h)).unwrap();
                    assert_eq!(got, want, "u16 {size}x{size} {what} {mode:?} {dynamic}");
                }
            }
        }
    }
}

#[derive(Kernel)]
#[kernel(output = f64)]
struct NanMinMax {
    input: Accessor<f64>,
    bound: f64,
}

#[kernel_body]
impl NanMinMax {
    fn kernel(&self) -> f64 {
        let v = self.input();
        v.min(self.bound) * 2.0 + v.max(-self.bound) + v.signum()
    }
}

/// `f64` `min` and `max` give the other operand for a NaN one and `signum`
/// keeps NaN, as Rust's do: these need a NaN test of `f64`, which a
/// comparison that the driver compiles as ordered (false for NaN) fails.
#[test]
fn f64_nan_is_told_apart_as_rust_does() {
    let Some(d) = gpu_support::wgpu() else { return };
    let (w, h) = (13, 5);
    let input = Image::from_fn(w, h, |x, y| {
        if (x + y) % 3 == 0 {
            f64::NAN
        } else {
            x as f64 - y as f64 * 0.5
        }
    })
    .unwrap();
    let k = NanMinMax {
        input: Accessor::new(&input),
        bound: 1.5,
    };
    match both(&d, &k, (w, h)) {
        Ok((got, want)) => {
            assert!(want.iter().any(|v| v.is_nan()) && want.iter().any(|v| !v.is_nan()));
            for (i, (g, e)) in got.iter().zip(&want).enumerate() {
                assert!(
                    g == e || (g.is_nan() && e.is_nan()),
                    "pixel {i}: {g} vs {e}"
                );
            }
        }
        Err(e) => assert!(
            matches!(e, hipacc::Error::UnsupportedType { .. }),
            "not the typed refusal of f64: {e}"
        ),
    }
}

/// Rectangles move alone between host and device (the backend's generic
/// whole-buffer form); see `gpu_support::check_rect_transfers`.
#[test]
fn rectangles_move_alone_and_the_image_stays_on_the_device() {
    let Some(d) = gpu_support::wgpu() else { return };
    gpu_support::check_rect_transfers(&d);
}
