//! Global reductions and histograms on the device (OpenCL, CUDA, and with
//! the `wgpu` feature a wgpu adapter with `SHADER_F64`, such as lavapipe):
//! images that a kernel left on the device are reduced there, without a
//! read-back, and the results equal the host's (min, max, argmin, argmax
//! and histograms exactly, histograms wider than local memory included;
//! sums within the bound of two `f64` summation orders) on odd sizes for
//! `u8`, `f32`, `f64` and RGBA pixels.

mod gpu_support;

use hipacc::prelude::*;
use hipacc::{reduce, Device};
use hipacc_core::Pixel;

/// A small deterministic generator (xorshift64*).
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }
}

macro_rules! copy_kernel {
    ($name:ident, $t:ty) => {
        #[derive(Kernel)]
        #[kernel(output = $t)]
        struct $name {
            input: Accessor<$t>,
        }

        #[kernel_body]
        impl $name {
            fn kernel(&self) -> $t {
                self.input()
            }
        }
    };
}

copy_kernel!(CopyU8, u8);
copy_kernel!(CopyF32, f32);
copy_kernel!(CopyF64, f64);
copy_kernel!(CopyRgba, Rgba<u8>);

const SIZES: [(usize, usize); 7] = [
    (1, 1),
    (1, 29),
    (29, 1),
    (31, 17),
    (4097, 3),
    (509, 257),
    (2, 3),
];

/// The GPU devices present (OpenCL, CUDA, wgpu with its feature), each
/// missing one named by a `[SKIP]` line (a missing wgpu adapter fails under
/// `HIPACC_REQUIRE_WGPU`).
fn devices() -> Vec<Device> {
    let gpus = [gpu_support::opencl(), gpu_support::cuda()];
    #[cfg(feature = "wgpu")]
    let gpus = gpus.into_iter().chain([gpu_support::wgpu()]);
    gpus.into_iter().flatten().collect()
}

type Copy<T> = Box<dyn Fn(&Device, &Image<T>)>;

/// `data` as an image that a kernel wrote on `dev` (its host copy stale).
fn on_device<T: Pixel>(
    dev: &Device,
    w: usize,
    h: usize,
    data: Vec<T>,
    copy: impl Fn(Accessor<T>) -> Copy<T>,
) -> Image<T> {
    let src = Image::from_vec(w, h, data).unwrap();
    let out = Image::<T>::new(w, h).unwrap();
    copy(Accessor::new(&src))(dev, &out);
    assert!(
        !out.storage_read().host_valid,
        "the copy must stay on the device"
    );
    out
}

fn still_on_device<T: Pixel>(img: &Image<T>, what: &str) {
    assert!(
        !img.storage_read().host_valid,
        "{what} read the image back instead of running on the device"
    );
}

/// The bound on the difference of two `f64` summation orders of `v`.
fn sum_bound(v: &[f64]) -> f64 {
    let abs: f64 = v.iter().map(|x| x.abs()).sum();
    (v.len() as f64) * f64::EPSILON * abs + f64::MIN_POSITIVE
}

fn host_histogram(v: &[f64], bins: usize, lo: f64, hi: f64) -> Vec<u64> {
    let scale = bins as f64 / (hi - lo);
    let mut h = vec![0u64; bins];
    for &x in v {
        if x >= lo && x < hi {
            h[(((x - lo) * scale) as usize).min(bins - 1)] += 1;
        }
    }
    h
}

fn copy_u8(a: Accessor<u8>) -> Copy<u8> {
    Box::new(move |d, o| {
        CopyU8 { input: a.clone() }
            .execute(d, &IterationSpace::full(o))
            .unwrap()
    })
}

fn copy_f32(a: Accessor<f32>) -> Copy<f32> {
    Box::new(move |d, o| {
        CopyF32 { input: a.clone() }
            .execute(d, &IterationSpace::full(o))
            .unwrap()
    })
}

fn copy_f64(a: Accessor<f64>) -> Copy<f64> {
    Box::new(move |d, o| {
        CopyF64 { input: a.clone() }
            .execute(d, &IterationSpace::full(o))
            .unwrap()
    })
}

fn copy_rgba(a: Accessor<Rgba<u8>>) -> Copy<Rgba<u8>> {
    Box::new(move |d, o| {
        CopyRgba { input: a.clone() }
            .execute(d, &IterationSpace::full(o))
            .unwrap()
    })
}

#[test]
fn u8_reductions_and_histograms_on_the_device_equal_the_host() {
    for dev in devices() {
        u8_reductions_and_histograms_on(dev);
    }
}

fn u8_reductions_and_histograms_on(dev: Device) {
    let mut rng = Rng(0x5eed);
    for (w, h) in SIZES {
        let data: Vec<u8> = (0..w * h).map(|_| (rng.next() % 256) as u8).collect();
        let img = on_device(&dev, w, h, data.clone(), copy_u8);
        let sum = reduce::sum(&dev, &img, None).unwrap();
        let min = reduce::min(&dev, &img, None).unwrap();
        let max = reduce::max(&dev, &img, None).unwrap();
        let h256 = reduce::histogram(&dev, &img, None, 256, 0.0, 256.0).unwrap();
        let h10 = reduce::histogram(&dev, &img, None, 10, 20.0, 200.0).unwrap();
        let window =
            reduce::histogram_window(&dev, &img, None, 4096, 0.0, 256.0, 1000..1700).unwrap();
        still_on_device(&img, "u8 reductions");
        let v: Vec<f64> = data.iter().map(|&p| f64::from(p)).collect();
        assert_eq!(
            sum,
            v.iter().sum::<f64>(),
            "{w}x{h}: integer sums are exact"
        );
        assert_eq!(min, *data.iter().min().unwrap(), "{w}x{h}");
        assert_eq!(max, *data.iter().max().unwrap(), "{w}x{h}");
        assert_eq!(h256, host_histogram(&v, 256, 0.0, 256.0), "{w}x{h}");
        assert_eq!(h10, host_histogram(&v, 10, 20.0, 200.0), "{w}x{h}");
        assert_eq!(
            window,
            host_histogram(&v, 4096, 0.0, 256.0)[1000..1700],
            "{w}x{h}: a window of a histogram too large for one launch"
        );
        // The same on the CPU device (the host path).
        let host = Image::from_vec(w, h, data).unwrap();
        let cpu = Device::cpu();
        assert_eq!(reduce::min(&cpu, &host, None).unwrap(), min);
        assert_eq!(reduce::max(&cpu, &host, None).unwrap(), max);
        assert_eq!(
            reduce::histogram(&cpu, &host, None, 256, 0.0, 256.0).unwrap(),
            h256
        );
    }
}

#[test]
fn float_reductions_on_the_device_equal_the_host() {
    for dev in devices() {
        float_reductions_on(dev);
    }
}

fn float_reductions_on(dev: Device) {
    let mut rng = Rng(0xf10a7);
    for (w, h) in SIZES {
        let f: Vec<f32> = (0..w * h)
            .map(|_| (rng.unit() * 1.4 - 0.2) as f32 * 1e3)
            .collect();
        let img = on_device(&dev, w, h, f.clone(), copy_f32);
        let g: Vec<f64> = (0..w * h).map(|_| rng.unit() * 3.0 - 1.0).collect();
        let img64 = on_device(&dev, w, h, g.clone(), copy_f64);
        let v: Vec<f64> = f.iter().map(|&p| f64::from(p)).collect();
        let sum = reduce::sum(&dev, &img, None).unwrap();
        assert!(
            (sum - v.iter().sum::<f64>()).abs() <= sum_bound(&v),
            "{w}x{h}"
        );
        let sum64 = reduce::sum(&dev, &img64, None).unwrap();
        assert!(
            (sum64 - g.iter().sum::<f64>()).abs() <= sum_bound(&g),
            "{w}x{h}"
        );
        assert_eq!(
            reduce::min(&dev, &img, None).unwrap(),
            f.iter().copied().fold(f32::NAN, f32::min)
        );
        assert_eq!(
            reduce::max(&dev, &img64, None).unwrap(),
            g.iter().copied().fold(f64::NAN, f64::max)
        );
        assert_eq!(
            reduce::min(&dev, &img64, None).unwrap(),
            g.iter().copied().fold(f64::NAN, f64::min)
        );
        for bins in [1, 7, 1000] {
            assert_eq!(
                reduce::histogram(&dev, &img, None, bins, -100.0, 1000.0).unwrap(),
                host_histogram(&v, bins, -100.0, 1000.0),
                "{w}x{h}, {bins} bins"
            );
            assert_eq!(
                reduce::histogram(&dev, &img64, None, bins, -0.5, 0.5).unwrap(),
                host_histogram(&g, bins, -0.5, 0.5),
                "{w}x{h}, {bins} bins"
            );
        }
        still_on_device(&img, "f32 reductions");
        still_on_device(&img64, "f64 reductions");
    }
}

#[test]
fn nan_regions_and_rgba_on_the_device() {
    for dev in devices() {
        nan_regions_and_rgba_on(dev);
    }
}

fn nan_regions_and_rgba_on(dev: Device) {
    let mut rng = Rng(0xabc);
    let (w, h) = (37, 23);
    // NaN is ignored unless every pixel is NaN.
    let f: Vec<f32> = (0..w * h)
        .map(|i| {
            if i % 3 == 0 {
                f32::NAN
            } else {
                rng.unit() as f32 - 0.5
            }
        })
        .collect();
    let img = on_device(&dev, w, h, f.clone(), copy_f32);
    let finite = f.iter().copied().filter(|v| !v.is_nan());
    assert_eq!(
        reduce::min(&dev, &img, None).unwrap(),
        finite.clone().fold(f32::INFINITY, f32::min)
    );
    assert_eq!(
        reduce::max(&dev, &img, None).unwrap(),
        finite.fold(f32::NEG_INFINITY, f32::max)
    );
    // A region: columns 3..7 of rows 2..10.
    let r = Rect::new(3, 2, 4, 8);
    let inside: Vec<f32> = (r.y..r.y + r.height)
        .flat_map(|y| (r.x..r.x + r.width).map(move |x| (x, y)))
        .map(|(x, y)| f[y * w + x])
        .collect();
    assert_eq!(
        reduce::max(&dev, &img, Some(r)).unwrap(),
        inside.iter().copied().fold(f32::NAN, f32::max)
    );
    let iv: Vec<f64> = inside.iter().map(|&p| f64::from(p)).collect();
    assert_eq!(
        reduce::histogram(&dev, &img, Some(r), 5, -0.5, 0.5).unwrap(),
        host_histogram(&iv, 5, -0.5, 0.5)
    );
    let nan = on_device(&dev, 3, 2, vec![f32::NAN; 6], copy_f32);
    assert!(reduce::min(&dev, &nan, None).unwrap().is_nan());
    still_on_device(&img, "NaN reductions");
    // RGBA reduces lane-wise.
    for (w, h) in SIZES {
        let data: Vec<Rgba<u8>> = (0..w * h)
            .map(|_| {
                let b = rng.next().to_le_bytes();
                Rgba::new(b[0], b[1], b[2], b[3])
            })
            .collect();
        let img = on_device(&dev, w, h, data.clone(), copy_rgba);
        let min = reduce::min(&dev, &img, None).unwrap();
        let max = reduce::max(&dev, &img, None).unwrap();
        still_on_device(&img, "RGBA reductions");
        let lanes = |p: &Rgba<u8>| [p.r, p.g, p.b, p.a];
        for l in 0..4 {
            let lane = data.iter().map(|p| lanes(p)[l]);
            assert_eq!(
                lanes(&min)[l],
                lane.clone().min().unwrap(),
                "{w}x{h} lane {l}"
            );
            assert_eq!(lanes(&max)[l], lane.max().unwrap(), "{w}x{h} lane {l}");
        }
    }
}

/// The first index of the smallest (`max`: largest) non-NaN value, or 0
/// when every value is NaN: argmin / argmax by their definition.
fn reference_arg(v: &[f64], max: bool) -> usize {
    let numbers = v.iter().copied().filter(|x| !x.is_nan());
    let extreme = if max {
        numbers.fold(f64::NEG_INFINITY, f64::max)
    } else {
        numbers.fold(f64::INFINITY, f64::min)
    };
    v.iter().position(|&x| x == extreme).unwrap_or(0)
}

/// Argmin and argmax of `img` (holding `data`, seen as `v`) on `dev` and
/// of a host copy on the CPU, against [`reference_arg`], value bits too.
fn check_args<T: Pixel + PartialOrd + std::fmt::Debug>(
    dev: &Device,
    img: &Image<T>,
    data: &[T],
    v: &[f64],
    what: &str,
) {
    let host = Image::from_vec(img.width(), img.height(), data.to_vec()).unwrap();
    for max in [false, true] {
        let i = reference_arg(v, max);
        let expected = (data[i], i);
        for (d, image) in [(dev, img), (&Device::cpu(), &host)] {
            let got = if max {
                reduce::argmax(d, image, None).unwrap()
            } else {
                reduce::argmin(d, image, None).unwrap()
            };
            assert_eq!(
                (format!("{:?}", got.0), got.1),
                (format!("{:?}", expected.0), expected.1),
                "{what} on {}: arg{}",
                d.name(),
                if max { "max" } else { "min" }
            );
        }
    }
}

#[test]
fn argmin_argmax_and_wide_histograms_on_the_device_equal_the_host() {
    for dev in devices() {
        args_and_wide_histograms_on(dev);
    }
}

fn args_and_wide_histograms_on(dev: Device) {
    let mut rng = Rng(0xa6a);
    for (w, h) in SIZES {
        // Few distinct values: ties everywhere.
        let bytes: Vec<u8> = (0..w * h).map(|_| (rng.next() % 8) as u8 * 30).collect();
        let img = on_device(&dev, w, h, bytes.clone(), copy_u8);
        let v: Vec<f64> = bytes.iter().map(|&p| f64::from(p)).collect();
        check_args(&dev, &img, &bytes, &v, &format!("u8 {w}x{h}"));
        let wide = reduce::histogram(&dev, &img, None, 4096, 0.0, 256.0).unwrap();
        assert_eq!(wide, host_histogram(&v, 4096, 0.0, 256.0), "u8 {w}x{h}");
        still_on_device(&img, "u8 argmin, argmax and 4096 bins");

        // NaN, signed zeros and repeated values.
        let f: Vec<f32> = (0..w * h)
            .map(|_| match rng.next() % 6 {
                0 => f32::NAN,
                1 => -0.0,
                2 => 0.0,
                _ => (rng.next() % 5) as f32 - 2.0,
            })
            .collect();
        let img = on_device(&dev, w, h, f.clone(), copy_f32);
        let v: Vec<f64> = f.iter().map(|&p| f64::from(p)).collect();
        check_args(&dev, &img, &f, &v, &format!("f32 {w}x{h}"));
        let wide = reduce::histogram(&dev, &img, None, 5003, -2.5, 2.5).unwrap();
        assert_eq!(wide, host_histogram(&v, 5003, -2.5, 2.5), "f32 {w}x{h}");
        still_on_device(&img, "f32 argmin, argmax and 5003 bins");

        let g: Vec<f64> = (0..w * h).map(|_| rng.unit() * 2.0 - 1.0).collect();
        let img = on_device(&dev, w, h, g.clone(), copy_f64);
        check_args(&dev, &img, &g, &g, &format!("f64 {w}x{h}"));
        let window =
            reduce::histogram_window(&dev, &img, None, 1 << 16, -1.0, 1.0, 1000..40000).unwrap();
        assert_eq!(
            window,
            host_histogram(&g, 1 << 16, -1.0, 1.0)[1000..40000],
            "f64 {w}x{h}"
        );
        still_on_device(&img, "f64 argmin, argmax and a window of 39000 bins");
    }
    // Every pixel NaN: the first one.
    let nan = on_device(&dev, 3, 2, vec![f32::NAN; 6], copy_f32);
    let (value, index) = reduce::argmax(&dev, &nan, None).unwrap();
    assert!(value.is_nan() && index == 0);
    // A region: indices are row-major within it.
    let data: Vec<u8> = (0..7 * 5).map(|i| (i * 37 % 101) as u8).collect();
    let img = on_device(&dev, 7, 5, data.clone(), copy_u8);
    let r = Rect::new(2, 1, 4, 3);
    let inside: Vec<f64> = (1..4)
        .flat_map(|y| (2..6).map(move |x| (x, y)))
        .map(|(x, y)| f64::from(data[y * 7 + x]))
        .collect();
    let i = reference_arg(&inside, false);
    assert_eq!(
        reduce::argmin(&dev, &img, Some(r)).unwrap(),
        (inside[i] as u8, i)
    );
}
