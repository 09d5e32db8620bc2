//! Variant-family checks shared by the OpenCL and CUDA tests: a few kernels
//! (stencil with two accessors, static and dynamic masks, row-only and
//! column-only footprints, `u8` and RGBA pixels) run on a device under every
//! variant family the device's target allows (boundary regions on/off, each
//! memory kind, 1/4/8 pixels per thread, literal/constant masks), for every
//! boundary mode and several sizes, and compared with the evaluator on
//! every pixel: exactly for integers, within 4 ulp-ish relative error for
//! floats.

#![allow(dead_code)]

use hipacc::prelude::*;
use hipacc::Device;
use hipacc_codegen::Config;
use hipacc_core::ir::eval::evaluate_kernel;

/// The OpenCL device, or `None` after printing `[SKIP] opencl: <reason>`.
pub(crate) fn opencl() -> Option<Device> {
    match Device::opencl() {
        Ok(d) => Some(d),
        Err(e) => {
            println!("[SKIP] opencl: {e}");
            None
        }
    }
}

/// The wgpu device, or `None` after printing `[SKIP] wgpu: <reason>`; with
/// `HIPACC_REQUIRE_WGPU` set (as in CI) a missing adapter is a failure, so
/// it cannot pass as a skip.
#[cfg(feature = "wgpu")]
pub(crate) fn wgpu() -> Option<Device> {
    match Device::wgpu() {
        Ok(d) => Some(d),
        Err(e) if std::env::var_os("HIPACC_REQUIRE_WGPU").is_some() => {
            panic!("HIPACC_REQUIRE_WGPU is set and the wgpu backend is unavailable: {e}")
        }
        Err(e) => {
            println!("[SKIP] wgpu: {e}");
            None
        }
    }
}

/// The CUDA device, or `None` after printing `[SKIP] cuda: <reason>`.
pub(crate) fn cuda() -> Option<Device> {
    match Device::cuda() {
        Ok(d) => Some(d),
        Err(e) => {
            println!("[SKIP] cuda: {e}");
            None
        }
    }
}

#[derive(Kernel)]
#[kernel(output = f32)]
pub(crate) struct Jacobi {
    pub(crate) sol: Accessor<f32>,
    pub(crate) rhs: Accessor<f32>,
    pub(crate) omega: f32,
}

#[kernel_body]
impl Jacobi {
    fn kernel(&self) -> f32 {
        let nb = self.sol.at(-1, 0) + self.sol.at(1, 0) + self.sol.at(0, -1) + self.sol.at(0, 1);
        (1.0 - self.omega) * self.sol() + self.omega * 0.25 * (self.rhs() + nb)
    }
}

#[derive(Kernel)]
#[kernel(output = f32)]
pub(crate) struct Gauss {
    pub(crate) input: Accessor<f32>,
    pub(crate) mask: Mask<f32>,
}

#[kernel_body]
impl Gauss {
    fn kernel(&self) -> f32 {
        convolve(&self.mask, Sum, |dx, dy| {
            self.mask.at(dx, dy) * self.input.at(dx, dy)
        })
    }
}

#[derive(Kernel)]
#[kernel(output = u8)]
pub(crate) struct RowBlur {
    pub(crate) input: Accessor<u8>,
}

#[kernel_body]
impl RowBlur {
    fn kernel(&self) -> u8 {
        let s = self.input.at(-2, 0) as i32
            + self.input.at(-1, 0) as i32 * 2
            + self.input() as i32 * 4
            + self.input.at(1, 0) as i32 * 2
            + self.input.at(2, 0) as i32;
        (s / 10) as u8
    }
}

#[derive(Kernel)]
#[kernel(output = Rgba<f32>)]
pub(crate) struct ColumnRgba {
    pub(crate) input: Accessor<Rgba<f32>>,
}

#[kernel_body]
impl ColumnRgba {
    fn kernel(&self) -> Rgba<f32> {
        (self.input.at(0, -1) + self.input() + self.input.at(0, 1)) * 0.5
    }
}

/// The boundary modes checked, for pixel type `T` (with a constant).
pub(crate) fn modes<T: hipacc_core::Pixel>(constant: T) -> Vec<Boundary<T>> {
    vec![
        Boundary::Clamp,
        Boundary::Repeat,
        Boundary::Mirror,
        Boundary::MirrorInterior,
        Boundary::Constant(constant),
    ]
}

/// Output sizes: one pixel (fallback), narrower than a block, several blocks.
pub(crate) const SIZES: [(usize, usize); 4] = [(1, 1), (5, 3), (67, 33), (130, 70)];

fn hash(x: usize, y: usize, salt: u32) -> u32 {
    let mut h = (x as u32).wrapping_mul(0x9e37_79b1) ^ (y as u32).wrapping_mul(0x85eb_ca77) ^ salt;
    h ^= h >> 15;
    h = h.wrapping_mul(0x2c1b_3c6d);
    h ^ (h >> 13)
}

pub(crate) fn f32_image(w: usize, h: usize, salt: u32) -> Image<f32> {
    Image::from_fn(w, h, |x, y| (hash(x, y, salt) % 1000) as f32 / 100.0 - 5.0).unwrap()
}

pub(crate) fn u8_image(w: usize, h: usize, salt: u32) -> Image<u8> {
    Image::from_fn(w, h, |x, y| (hash(x, y, salt) % 256) as u8).unwrap()
}

pub(crate) fn rgba_image(w: usize, h: usize, salt: u32) -> Image<Rgba<f32>> {
    Image::from_fn(w, h, |x, y| {
        let v = |s| (hash(x, y, salt + s) % 1000) as f32 / 50.0;
        Rgba::new(v(0), v(1), v(2), v(3))
    })
    .unwrap()
}

/// Per-pixel comparison with the evaluator's output.
pub(crate) trait Close: Copy + std::fmt::Debug {
    fn close(self, other: Self) -> bool;
}
impl Close for u8 {
    fn close(self, other: u8) -> bool {
        self == other
    }
}
impl Close for f32 {
    fn close(self, other: f32) -> bool {
        (self - other).abs() <= 4.0 * f32::EPSILON * self.abs().max(other.abs()).max(1.0)
    }
}
impl Close for Rgba<f32> {
    fn close(self, o: Rgba<f32>) -> bool {
        self.r.close(o.r) && self.g.close(o.g) && self.b.close(o.b) && self.a.close(o.a)
    }
}

/// Collects failures of many checks; panics listing them at the end.
#[derive(Default)]
pub(crate) struct Report {
    pub(crate) checks: usize,
    pub(crate) failures: Vec<String>,
}

impl Report {
    /// Runs `kernel` on `device` with `config` over the whole `w x h`
    /// output, and on the evaluator, and compares every pixel.
    pub(crate) fn check<K>(
        &mut self,
        device: &Device,
        config: &Config,
        kernel: &K,
        (w, h): (usize, usize),
        what: &str,
    ) where
        K: Kernel,
        K::Output: Close,
    {
        self.check_in(device, config, kernel, (w, h), Rect::full(w, h), what);
    }

    /// [`Report::check`] over the iteration space `space` of the `w x h`
    /// output; every pixel is compared, those outside `space` keep the
    /// sentinel on both sides.
    pub(crate) fn check_in<K>(
        &mut self,
        device: &Device,
        config: &Config,
        kernel: &K,
        (w, h): (usize, usize),
        space: Rect,
        what: &str,
    ) where
        K: Kernel,
        K::Output: Close,
    {
        self.checks += 1;
        let label = format!("{} {what} {w}x{h} [{config}]", K::NAME);
        let sentinel = || Image::<K::Output>::new(w, h).unwrap();
        let (actual, expected) = (sentinel(), sentinel());
        let region = |img: &Image<K::Output>| IterationSpace::region(img, space).unwrap();
        if let Err(e) = evaluate_kernel(kernel, &region(&expected)) {
            self.failures.push(format!("{label}: evaluator: {e}"));
            return;
        }
        let dev = device.with_config(config);
        if let Err(e) = kernel.execute(&dev, &region(&actual)) {
            self.failures.push(format!("{label}: {e}"));
            return;
        }
        let (a, e) = (actual.to_vec().unwrap(), expected.to_vec().unwrap());
        let bad: Vec<usize> = (0..w * h).filter(|&i| !a[i].close(e[i])).collect();
        if let Some(&i) = bad.first() {
            self.failures.push(format!(
                "{label}: {} pixels differ, first ({}, {}): expected {:?}, got {:?}",
                bad.len(),
                i % w,
                i / w,
                e[i],
                a[i]
            ));
        }
    }

    /// Panics with the failures, if any.
    pub(crate) fn finish(self, device: &Device) {
        println!("{}: {} variant checks", device.name(), self.checks);
        if !self.failures.is_empty() {
            let shown: Vec<&String> = self.failures.iter().take(15).collect();
            panic!(
                "{} of {} checks failed on {}:\n{}",
                self.failures.len(),
                self.checks,
                device.name(),
                shown
                    .iter()
                    .map(|s| s.as_str())
                    .collect::<Vec<_>>()
                    .join("\n")
            );
        }
    }
}

/// Which variant families a run covers.
pub(crate) type Filter = fn(&Config) -> bool;

/// Every family.
pub(crate) fn every(_: &Config) -> bool {
    true
}

/// The variant families of `kernel` on the device's target that `keep`
/// keeps, thinned to a covering set: each memory kind the target allows at
/// one pixel per thread, and 4 and 8 pixels per thread on global memory,
/// each mask handling, and both boundary schemes across the set: regions
/// at 4 pixels per thread, generic at 8. Kernels with masks run
/// coarsened variants generic only: PoCL needs minutes to compile a 5x5
/// literal mask unrolled over 9 regions and 4 or 8 rows.
/// (Every family costs a driver compile per kernel: seconds each on PoCL.)
pub(crate) fn families<K: Kernel>(device: &Device, kernel: &K, keep: Filter) -> Vec<Config> {
    let ir = kernel.ir().unwrap();
    let target = device.target().expect("a GPU device has a target");
    covering(Config::families(&ir, target), keep, !ir.masks.is_empty())
}

fn covering(all: Vec<Config>, keep: Filter, masks: bool) -> Vec<Config> {
    use hipacc_codegen::{BoundaryScheme, MemoryKind, PixelsPerThread};
    let wanted = |c: &Config| {
        c.pixels_per_thread == PixelsPerThread::One
            || c.memory.iter().all(|m| *m == MemoryKind::Global)
    };
    let candidates: Vec<Config> = all.into_iter().filter(|c| keep(c) && wanted(c)).collect();
    let mut keys = Vec::new();
    for c in &candidates {
        let key = (c.memory.clone(), c.pixels_per_thread, c.masks);
        if !keys.contains(&key) {
            keys.push(key);
        }
    }
    keys.iter()
        .enumerate()
        .filter_map(|(j, key)| {
            let same = |c: &&Config| (c.memory.clone(), c.pixels_per_thread, c.masks) == *key;
            let scheme = match key.1 {
                PixelsPerThread::One => BoundaryScheme::ALL[j % 2],
                PixelsPerThread::Four if !masks => BoundaryScheme::Regions,
                _ => BoundaryScheme::Generic,
            };
            candidates
                .iter()
                .filter(same)
                .find(|c| c.boundary == scheme)
                .or_else(|| candidates.iter().find(same))
                .cloned()
        })
        .collect()
}

/// One instance of each test kernel per boundary mode, on `w x h` inputs.
pub(crate) struct Cases {
    pub(crate) jacobi: Vec<(String, Jacobi)>,
    pub(crate) gauss: Vec<(String, Gauss)>,
    pub(crate) row: Vec<(String, RowBlur)>,
    pub(crate) column: Vec<(String, ColumnRgba)>,
}

pub(crate) fn cases(w: usize, h: usize, dynamic_mask: bool) -> Cases {
    let g = [1.0f32, 4.0, 6.0, 4.0, 1.0];
    let mut mask = Mask::separable(&g, &g).unwrap();
    if dynamic_mask {
        mask = mask.dynamic();
    }
    let sol = f32_image(w, h, 1);
    let rhs = f32_image(w, h, 2);
    let bytes = u8_image(w, h, 3);
    let rgba = rgba_image(w, h, 4);
    Cases {
        jacobi: modes(0.5f32)
            .into_iter()
            .map(|b| {
                let k = Jacobi {
                    sol: Accessor::new(&sol).with_boundary(b),
                    rhs: Accessor::new(&rhs).with_boundary(b),
                    omega: 0.8,
                };
                (format!("{:?}", b.mode()), k)
            })
            .collect(),
        gauss: modes(1.5f32)
            .into_iter()
            .map(|b| {
                let k = Gauss {
                    input: Accessor::new(&sol).with_boundary(b),
                    mask: mask.clone(),
                };
                (format!("{:?} dynamic={dynamic_mask}", b.mode()), k)
            })
            .collect(),
        row: modes(200u8)
            .into_iter()
            .map(|b| {
                (
                    format!("{:?}", b.mode()),
                    RowBlur {
                        input: Accessor::new(&bytes).with_boundary(b),
                    },
                )
            })
            .collect(),
        column: modes(Rgba::new(1.0f32, 2.0, 3.0, 4.0))
            .into_iter()
            .map(|b| {
                (
                    format!("{:?}", b.mode()),
                    ColumnRgba {
                        input: Accessor::new(&rgba).with_boundary(b),
                    },
                )
            })
            .collect(),
    }
}

/// Runs each case under every family of the covering set, each family with
/// one boundary mode (rotating through the modes) at one small and one large
/// size (rotating through [`SIZES`]). Every kernel used is built first, all
/// in one program (one driver build).
pub(crate) fn check_all(device: &Device, dynamic_mask: bool, keep: Filter) {
    let all: Vec<Cases> = SIZES
        .iter()
        .map(|&(w, h)| cases(w, h, dynamic_mask))
        .collect();
    let mut turn = 0usize;
    // (kernel kind, mode, config): one kernel instance per mode and size.
    let mut plan: Vec<(usize, usize, Config)> = Vec::new();
    let kinds: [(usize, usize, Vec<Config>); 4] = [
        (
            0,
            all[0].jacobi.len(),
            families(device, &all[0].jacobi[0].1, keep),
        ),
        (
            1,
            all[0].gauss.len(),
            families(device, &all[0].gauss[0].1, keep),
        ),
        (
            2,
            all[0].row.len(),
            families(device, &all[0].row[0].1, keep),
        ),
        (
            3,
            all[0].column.len(),
            families(device, &all[0].column[0].1, keep),
        ),
    ];
    for (kind, modes, configs) in kinds {
        if dynamic_mask && kind != 1 {
            continue;
        }
        for cfg in configs {
            turn += 1;
            plan.push((kind, turn % modes, cfg));
        }
    }
    let ir_of = |c: &Cases, kind: usize, mode: usize| match kind {
        0 => c.jacobi[mode].1.ir().unwrap(),
        1 => c.gauss[mode].1.ir().unwrap(),
        2 => c.row[mode].1.ir().unwrap(),
        _ => c.column[mode].1.ir().unwrap(),
    };
    let irs: Vec<_> = plan
        .iter()
        .map(|(k, m, _)| ir_of(&all[0], *k, *m))
        .collect();
    let items: Vec<_> = irs
        .iter()
        .zip(&plan)
        .map(|(ir, (_, _, c))| (ir, c))
        .collect();
    if let Err(e) = device.precompile(&items) {
        panic!("building {} variants failed: {e}", items.len());
    }
    let mut report = Report::default();
    for (i, (kind, mode, cfg)) in plan.iter().enumerate() {
        for s in [i % 2, 2 + (i / 2) % 2] {
            let c = &all[s];
            match kind {
                0 => report.check(
                    device,
                    cfg,
                    &c.jacobi[*mode].1,
                    SIZES[s],
                    &c.jacobi[*mode].0,
                ),
                1 => report.check(device, cfg, &c.gauss[*mode].1, SIZES[s], &c.gauss[*mode].0),
                2 => report.check(device, cfg, &c.row[*mode].1, SIZES[s], &c.row[*mode].0),
                _ => report.check(
                    device,
                    cfg,
                    &c.column[*mode].1,
                    SIZES[s],
                    &c.column[*mode].0,
                ),
            }
        }
    }
    report.finish(device);
}

/// `read_rects` and `write_rects` on an image that lives on the device
/// move their rectangles alone: the host copy stays stale, the pixels read
/// are the device's, and the pixels written reach the device while the
/// others keep the device's values. Every GPU backend: OpenCL and CUDA
/// with strided driver copies, wgpu with the generic whole-buffer form.
pub(crate) fn check_rect_transfers(d: &Device) {
    let (w, h) = (29, 11);
    let (sol, rhs) = (f32_image(w, h, 3), f32_image(w, h, 4));
    let (a, reference) = (Image::<f32>::new(w, h).unwrap(), Image::new(w, h).unwrap());
    for out in [&a, &reference] {
        let kernel = Jacobi {
            sol: Accessor::new(&sol).with_boundary(Boundary::Clamp),
            rhs: Accessor::new(&rhs).with_boundary(Boundary::Clamp),
            omega: 0.8,
        };
        kernel.execute(d, &IterationSpace::full(out)).unwrap();
    }
    let want = reference.to_vec().unwrap();
    let on_device = |a: &Image<f32>| {
        let s = a.storage_read();
        !s.host_valid && s.device_valid
    };
    assert!(on_device(&a));
    let read = Rect::new(3, 2, 5, 7);
    let got = a
        .read_rects(&[read], |px| {
            (read.y..read.y + read.height)
                .flat_map(|y| (read.x..read.x + read.width).map(move |x| px[y * w + x]))
                .collect::<Vec<_>>()
        })
        .unwrap();
    let want_at = |x: usize, y: usize| want[y * w + x];
    let expected: Vec<f32> = (read.y..read.y + read.height)
        .flat_map(|y| (read.x..read.x + read.width).map(move |x| want_at(x, y)))
        .collect();
    assert_eq!(got, expected);
    assert!(on_device(&a), "read_rects synced the whole image");
    // The bottom row and a right-hand strip become -1.
    let (row, strip) = (Rect::new(0, h - 1, w, 1), Rect::new(w - 4, 0, 4, h - 1));
    a.write_rects(&[row, strip], |px| {
        for r in [row, strip] {
            for y in r.y..r.y + r.height {
                px[y * w + r.x..y * w + r.x + r.width].fill(-1.0);
            }
        }
    })
    .unwrap();
    assert!(on_device(&a), "write_rects synced the whole image");
    let inside = |x: usize, y: usize| y == h - 1 || x >= w - 4;
    let after = a.to_vec().unwrap();
    for (i, (&g, &v)) in after.iter().zip(&want).enumerate() {
        let expected = if inside(i % w, i / w) { -1.0 } else { v };
        assert_eq!(g.to_bits(), expected.to_bits(), "pixel {i}");
    }
}
