//! Every variant family on the wgpu backend (lavapipe in CI) against the
//! evaluator: the weighted window over odd sizes, footprints from 3x3 to
//! 9x9 and one wider than the images, in every boundary mode (`Undefined`
//! with the window shifted to non-negative offsets, over the pixels whose
//! window stays inside the image), under plain,
//! region, tiled, region-and-tiled and coarsened variants; then the shared
//! variant-family checks (two accessors, static and dynamic masks, `u8`
//! rows and RGBA columns in tiles). Needs the crate's `wgpu` feature;
//! prints a skip line when no adapter is present, unless
//! `HIPACC_REQUIRE_WGPU` is set.

#![cfg(feature = "wgpu")]

mod gpu_support;

use gpu_support::{Gauss, Report};
use hipacc::prelude::*;
use hipacc_codegen::{Config, ConfigOverride, Language, MemoryKind};

/// Plain, regions, tiles, regions and tiles, and rows per thread with and
/// without tiles.
const VARIANTS: [&str; 7] = [
    "boundary=generic,memory=global,ppt=1",
    "boundary=regions,memory=global,ppt=1",
    "boundary=generic,memory=local,ppt=1",
    "boundary=regions,memory=local,ppt=1",
    "boundary=regions,memory=local,ppt=4",
    "boundary=generic,memory=local,ppt=8",
    "boundary=regions,memory=global,ppt=8",
];

/// One pixel, narrower and shorter than a workgroup, several workgroups
/// with partial ones at the right and bottom.
const SIZES: [(usize, usize); 3] = [(1, 1), (3, 2), (127, 33)];

/// Square windows; 15 is wider than every image but the largest, whose
/// height it spans too.
const WINDOWS: [usize; 5] = [3, 5, 7, 9, 15];

/// Multiples of 1/16 in `[0.5, 1.5)`: with small integer coefficients every
/// window sum is exact in `f32`, so any wrong read shows.
fn input(w: usize, h: usize, salt: u32) -> Image<f32> {
    Image::from_fn(w, h, |x, y| {
        let mut v = (x as u32).wrapping_mul(0x9e37_79b1) ^ (y as u32).wrapping_mul(0x85eb_ca77);
        v ^= salt;
        v ^= v >> 15;
        v = v.wrapping_mul(0x2c1b_3c6d);
        0.5 + ((v ^ (v >> 13)) % 16) as f32 / 16.0
    })
    .unwrap()
}

/// How far [`ShiftedGauss`] moves its window: the widest window's radius,
/// so that every offset is non-negative.
const SHIFT: usize = 7;

/// The weighted window of [`Gauss`] moved by `SHIFT` pixels right and
/// down: a constant footprint (so tiles stage it) of non-negative offsets,
/// which `Undefined` can read from the first column of a space on.
#[derive(Kernel)]
#[kernel(output = f32)]
struct ShiftedGauss {
    input: Accessor<f32>,
    mask: Mask<f32>,
}

#[kernel_body]
impl ShiftedGauss {
    fn kernel(&self) -> f32 {
        convolve(&self.mask, Sum, |dx, dy| {
            self.mask.at(dx, dy) * self.input.at(dx + 7, dy + 7)
        })
    }
}

/// Coefficients 1..=5, different at neighbouring positions.
fn mask(n: usize) -> Mask<f32> {
    Mask::from_vec(n, n, (0..n * n).map(|i| (1 + i * 7 % 5) as f32).collect()).unwrap()
}

#[test]
fn windows_match_the_evaluator_in_every_variant() {
    let Some(d) = gpu_support::wgpu() else { return };
    let target = d.target().expect("a GPU device has a target");
    let mut report = Report::default();
    for (w, h) in SIZES {
        let image = input(w, h, (w * 31 + h) as u32);
        for n in WINDOWS {
            let variants = |ir: &hipacc_core::ir::Kernel| -> Vec<Config> {
                VARIANTS
                    .iter()
                    .map(|v| {
                        let o = ConfigOverride::parse(v).unwrap();
                        Config::choose(ir, target, Language::Wgsl, Some(&o)).unwrap()
                    })
                    .collect()
            };
            for b in gpu_support::modes(0.75f32) {
                let kernel = Gauss {
                    input: Accessor::new(&image).with_boundary(b),
                    mask: mask(n),
                };
                for config in variants(&kernel.ir().unwrap()) {
                    let what = format!("{:?} {n}x{n}", b.mode());
                    report.check(&d, &config, &kernel, (w, h), &what);
                }
            }
            // `Undefined` promises values only for reads inside the
            // accessor, and a space's first column reads its column of the
            // least offset: the window shifted to non-negative offsets
            // (`SHIFT - r ..= SHIFT + r`), over the pixels whose window
            // stays inside (none for images smaller than `SHIFT + r + 1`).
            let r = n / 2;
            if w > SHIFT + r && h > SHIFT + r {
                let kernel = ShiftedGauss {
                    input: Accessor::new(&image).with_boundary(Boundary::Undefined),
                    mask: mask(n),
                };
                let space = Rect::new(0, 0, w - SHIFT - r, h - SHIFT - r);
                for config in variants(&kernel.ir().unwrap()) {
                    let what = format!("Undefined {n}x{n} shifted by {SHIFT}");
                    report.check_in(&d, &config, &kernel, (w, h), space, &what);
                }
            }
        }
    }
    report.finish(&d);
}

/// The families WGSL prints: every one but texture memory.
fn printable(c: &Config) -> bool {
    !c.memory.contains(&MemoryKind::Texture)
}

#[test]
fn variant_families_match_the_evaluator() {
    if let Some(d) = gpu_support::wgpu() {
        gpu_support::check_all(&d, false, printable);
    }
}

#[test]
fn constant_memory_masks_match_the_evaluator() {
    if let Some(d) = gpu_support::wgpu() {
        gpu_support::check_all(&d, true, printable);
    }
}
