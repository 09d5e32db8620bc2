//! Interpolating accessors against the evaluator, for any backend: every
//! interpolation mode with every boundary mode that reads outside, for
//! upsampling and downsampling by 2 and for non-integer ratios, with
//! offsets, on `f32`, `u8` and RGBA pixels, within a backend's
//! [`Tolerance`]; `Undefined` where every tap stays inside.

use hipacc::prelude::*;
use hipacc_core::ir::eval::evaluate_kernel;

/// How far a backend may be from the evaluator.
#[derive(Clone, Copy)]
pub(crate) struct Tolerance {
    /// `f32` results: this many ulp of the magnitude (at least 1).
    pub(crate) ulp: f32,
    /// `u8` results: this many levels.
    pub(crate) levels: u8,
}

fn close_f32(got: &[f32], want: &[f32], t: Tolerance, what: &str) {
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        let tol = t.ulp * f32::EPSILON * w.abs().max(1.0);
        assert!((g - w).abs() <= tol, "{what}: pixel {i}: {g} vs {w}");
    }
}

#[derive(Kernel)]
#[kernel(output = f32)]
struct Sample {
    input: Accessor<f32>,
}

#[kernel_body]
impl Sample {
    fn kernel(&self) -> f32 {
        self.input() + 0.5 * self.input.at(1, -1) - 0.25 * self.input.at(-2, 0)
    }
}

#[derive(Kernel)]
#[kernel(output = u8)]
struct SampleU8 {
    input: Accessor<u8>,
}

#[kernel_body]
impl SampleU8 {
    fn kernel(&self) -> u8 {
        self.input.at(0, 1)
    }
}

#[derive(Kernel)]
#[kernel(output = Rgba<f32>)]
struct SampleRgba {
    input: Accessor<Rgba<f32>>,
}

#[kernel_body]
impl SampleRgba {
    fn kernel(&self) -> Rgba<f32> {
        self.input() * 2.0
    }
}

const MODES: [Interpolation; 4] = [
    Interpolation::Nearest,
    Interpolation::Linear,
    Interpolation::Cubic,
    Interpolation::Lanczos3,
];

/// (accessor size, iteration space size).
const RATIOS: [((usize, usize), (usize, usize)); 5] = [
    ((8, 6), (16, 12)),  // up by 2
    ((16, 12), (8, 6)),  // down by 2
    ((13, 7), (20, 11)), // up by non-integer ratios
    ((20, 11), (13, 7)), // down by non-integer ratios
    ((9, 9), (9, 9)),    // same size
];

fn boundaries<T: Copy>(c: T) -> [Boundary<T>; 5] {
    [
        Boundary::Clamp,
        Boundary::Repeat,
        Boundary::Mirror,
        Boundary::MirrorInterior,
        Boundary::Constant(c),
    ]
}

/// See the module docs.
pub(crate) fn f32_matches_the_evaluator_on_all_modes_and_ratios(dev: &Device, t: Tolerance) {
    for ((aw, ah), (sw, sh)) in RATIOS {
        let input =
            Image::from_fn(aw, ah, |x, y| ((x * 7 + y * 13) % 11) as f32 * 0.37 - 1.0).unwrap();
        for mode in MODES {
            for b in boundaries(2.5f32) {
                let k = Sample {
                    input: Accessor::new(&input)
                        .with_boundary(b)
                        .with_interpolation(mode),
                };
                let got = Image::<f32>::new(sw, sh).unwrap();
                k.execute(dev, &IterationSpace::full(&got)).unwrap();
                let want = Image::<f32>::new(sw, sh).unwrap();
                evaluate_kernel(&k, &IterationSpace::full(&want)).unwrap();
                close_f32(
                    &got.to_vec().unwrap(),
                    &want.to_vec().unwrap(),
                    t,
                    &format!("{mode:?} {b:?} {aw}x{ah} -> {sw}x{sh}"),
                );
            }
        }
    }
}

/// See the module docs.
pub(crate) fn regions_and_offset_spaces_map_cell_centred(dev: &Device, t: Tolerance) {
    let input = Image::from_fn(30, 20, |x, y| (x + 30 * y) as f32).unwrap();
    for mode in MODES {
        let k = Sample {
            input: Accessor::new(&input)
                .with_region(Rect::new(4, 3, 11, 9))
                .with_boundary(Boundary::Mirror)
                .with_interpolation(mode),
        };
        let got = Image::<f32>::new(40, 30).unwrap();
        let space = IterationSpace::region(&got, Rect::new(5, 2, 23, 17)).unwrap();
        k.execute(dev, &space).unwrap();
        let want = Image::<f32>::new(40, 30).unwrap();
        let want_space = IterationSpace::region(&want, space.rect()).unwrap();
        evaluate_kernel(&k, &want_space).unwrap();
        assert!(want.to_vec().unwrap().iter().any(|&v| v != 0.0));
        close_f32(
            &got.to_vec().unwrap(),
            &want.to_vec().unwrap(),
            t,
            &format!("{mode:?}"),
        );
    }
}

/// See the module docs.
pub(crate) fn u8_and_rgba_match_the_evaluator(dev: &Device, t: Tolerance) {
    for ((aw, ah), (sw, sh)) in RATIOS {
        let bytes = Image::from_fn(aw, ah, |x, y| ((x * 37 + y * 91) % 256) as u8).unwrap();
        let rgba = Image::from_fn(aw, ah, |x, y| {
            Rgba::new(x as f32, y as f32, (x * y) as f32, 1.0)
        })
        .unwrap();
        for mode in MODES {
            for b in boundaries(200u8) {
                let k = SampleU8 {
                    input: Accessor::new(&bytes)
                        .with_boundary(b)
                        .with_interpolation(mode),
                };
                let got = Image::<u8>::new(sw, sh).unwrap();
                k.execute(dev, &IterationSpace::full(&got)).unwrap();
                let want = Image::<u8>::new(sw, sh).unwrap();
                evaluate_kernel(&k, &IterationSpace::full(&want)).unwrap();
                let (g, w) = (got.to_vec().unwrap(), want.to_vec().unwrap());
                assert!(
                    g.iter().zip(&w).all(|(a, b)| a.abs_diff(*b) <= t.levels),
                    "{mode:?} {b:?}: {g:?} vs {w:?}"
                );
            }
            for b in boundaries(Rgba::splat(-1.0f32)) {
                let k = SampleRgba {
                    input: Accessor::new(&rgba)
                        .with_boundary(b)
                        .with_interpolation(mode),
                };
                let got = Image::<Rgba<f32>>::new(sw, sh).unwrap();
                k.execute(dev, &IterationSpace::full(&got)).unwrap();
                let want = Image::<Rgba<f32>>::new(sw, sh).unwrap();
                evaluate_kernel(&k, &IterationSpace::full(&want)).unwrap();
                let lanes = |v: Vec<Rgba<f32>>| -> Vec<f32> {
                    v.iter().flat_map(|p| [p.r, p.g, p.b, p.a]).collect()
                };
                close_f32(
                    &lanes(got.to_vec().unwrap()),
                    &lanes(want.to_vec().unwrap()),
                    t,
                    &format!("{mode:?} {b:?}"),
                );
            }
        }
    }
}

#[derive(Kernel)]
#[kernel(output = f32)]
struct Centre {
    input: Accessor<f32>,
}

#[kernel_body]
impl Centre {
    fn kernel(&self) -> f32 {
        self.input()
    }
}

/// `Undefined` promises values only for reads inside the accessor: the
/// reads whose taps of non-zero weight all stay inside, at offset 0.
/// `Nearest` maps every output pixel to a pixel of the region at any
/// ratio; `Linear` stays inside when the accessor is at least as large as
/// the space (its positions then lie in `[0, size - 1]`).
pub(crate) fn undefined_reads_inside_match_the_evaluator(dev: &Device, t: Tolerance) {
    let mut checked = 0;
    for ((aw, ah), (sw, sh)) in RATIOS {
        let input =
            Image::from_fn(aw, ah, |x, y| ((x * 5 + y * 17) % 13) as f32 * 0.41 - 2.0).unwrap();
        let mut modes = vec![Interpolation::Nearest];
        if aw >= sw && ah >= sh {
            modes.push(Interpolation::Linear);
        }
        for mode in modes {
            let k = Centre {
                input: Accessor::new(&input)
                    .with_boundary(Boundary::Undefined)
                    .with_interpolation(mode),
            };
            let got = Image::<f32>::new(sw, sh).unwrap();
            k.execute(dev, &IterationSpace::full(&got)).unwrap();
            let want = Image::<f32>::new(sw, sh).unwrap();
            evaluate_kernel(&k, &IterationSpace::full(&want)).unwrap();
            close_f32(
                &got.to_vec().unwrap(),
                &want.to_vec().unwrap(),
                t,
                &format!("{mode:?} Undefined {aw}x{ah} -> {sw}x{sh}"),
            );
            checked += 1;
        }
    }
    assert_eq!(checked, 8);
}

/// See the module docs.
pub(crate) fn known_values_of_upsampling_and_downsampling_by_two(dev: &Device) {
    let coarse = Image::from_vec(2, 1, vec![0.0f32, 4.0]).unwrap();
    let run = |mode, b: Boundary<f32>, src: &Image<f32>, w: usize| {
        let out = Image::<f32>::new(w, 1).unwrap();
        #[derive(Kernel)]
        #[kernel(output = f32)]
        struct Plain {
            input: Accessor<f32>,
        }
        #[kernel_body]
        impl Plain {
            fn kernel(&self) -> f32 {
                self.input()
            }
        }
        Plain {
            input: Accessor::new(src).with_boundary(b).with_interpolation(mode),
        }
        .execute(dev, &IterationSpace::full(&out))
        .unwrap();
        out.to_vec().unwrap()
    };
    // Fine pixel centres sit at coarse positions -0.25, 0.25, 0.75, 1.25.
    assert_eq!(
        run(Interpolation::Linear, Boundary::Clamp, &coarse, 4),
        [0.0, 1.0, 3.0, 4.0]
    );
    assert_eq!(
        run(Interpolation::Nearest, Boundary::Clamp, &coarse, 4),
        [0.0, 0.0, 4.0, 4.0]
    );
    assert_eq!(
        run(Interpolation::Linear, Boundary::Constant(8.0), &coarse, 4),
        [2.0, 1.0, 3.0, 5.0]
    );
    // Downsampling by 2 with Linear averages pixel pairs.
    let fine = Image::from_vec(4, 1, vec![1.0f32, 3.0, 10.0, 20.0]).unwrap();
    assert_eq!(
        run(Interpolation::Linear, Boundary::Clamp, &fine, 2),
        [2.0, 15.0]
    );
}
