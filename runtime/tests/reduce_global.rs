//! Global reductions and histograms against straightforward host loops on
//! random images, including sizes that are not multiples of the row bands.

use hipacc::prelude::*;
use hipacc::{reduce, Device};

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

fn devices() -> Vec<Device> {
    let mut out = vec![Device::cpu()];
    match Device::opencl() {
        Ok(d) => out.push(d),
        Err(e) => println!("[SKIP] opencl: {e}"),
    }
    out
}

const SIZES: [(usize, usize); 6] = [(1, 1), (3, 2), (17, 5), (127, 33), (300, 257), (1000, 70)];

#[test]
fn sum_mean_min_max_match_host_loops() {
    let mut rng = Rng(0x1234_5678);
    for dev in devices() {
        for (w, h) in SIZES {
            let data: Vec<f32> = (0..w * h)
                .map(|_| (rng.unit() * 200.0 - 100.0) as f32)
                .collect();
            let img = Image::from_vec(w, h, data.clone()).unwrap();
            let host_sum: f64 = data.iter().map(|&v| v as f64).sum();
            let sum = reduce::sum(&dev, &img, None).unwrap();
            assert!(
                (sum - host_sum).abs() <= 1e-9 * (1.0 + host_sum.abs()),
                "{w}x{h}"
            );
            let mean = reduce::mean(&dev, &img, None).unwrap();
            assert!((mean - host_sum / (w * h) as f64).abs() < 1e-9, "{w}x{h}");
            let min = data.iter().copied().fold(f32::INFINITY, f32::min);
            let max = data.iter().copied().fold(f32::NEG_INFINITY, f32::max);
            assert_eq!(reduce::min(&dev, &img, None).unwrap(), min);
            assert_eq!(reduce::max(&dev, &img, None).unwrap(), max);
        }
    }
}

#[test]
fn regions_and_integer_pixels() {
    let mut rng = Rng(99);
    let (w, h) = (301, 123);
    let data: Vec<u16> = (0..w * h).map(|_| (rng.next() % 65536) as u16).collect();
    let img = Image::from_vec(w, h, data.clone()).unwrap();
    let r = Rect::new(7, 3, 250, 111);
    let inside = |i: usize| {
        let (x, y) = (i % w, i / w);
        x >= r.x && x < r.x + r.width && y >= r.y && y < r.y + r.height
    };
    let vals: Vec<u16> = (0..w * h).filter(|&i| inside(i)).map(|i| data[i]).collect();
    let dev = Device::cpu();
    let host: f64 = vals.iter().map(|&v| v as f64).sum();
    assert_eq!(reduce::sum(&dev, &img, Some(r)).unwrap(), host);
    assert_eq!(
        reduce::min(&dev, &img, Some(r)).unwrap(),
        *vals.iter().min().unwrap()
    );
    assert_eq!(
        reduce::max(&dev, &img, Some(r)).unwrap(),
        *vals.iter().max().unwrap()
    );
    let outside = Rect::new(300, 0, 2, 1);
    assert!(reduce::sum(&dev, &img, Some(outside)).is_err());
    // Vectors reduce lane-wise.
    let rgba = Image::from_fn(5, 4, |x, y| {
        Rgba::new(x as f32, -(y as f32), 1.0, (x * y) as f32)
    })
    .unwrap();
    assert_eq!(
        reduce::max(&dev, &rgba, None).unwrap(),
        Rgba::new(4.0, 0.0, 1.0, 12.0)
    );
}

#[test]
fn sum_of_a_large_f32_image_stays_accurate() {
    // 4096x4096 pixels of 0.1f32: an f32 accumulator is off by percents.
    let (w, h) = (4096, 4096);
    let img = Image::from_vec(w, h, vec![0.1f32; w * h]).unwrap();
    let exact = (w * h) as f64 * 0.1f32 as f64;
    let sum = reduce::sum(&Device::cpu(), &img, None).unwrap();
    assert!(((sum - exact) / exact).abs() < 1e-12, "{sum} vs {exact}");
}

#[test]
fn histogram_matches_host_binning() {
    let mut rng = Rng(7);
    for dev in devices() {
        for (w, h) in SIZES {
            let data: Vec<f32> = (0..w * h)
                .map(|_| (rng.unit() * 1.4 - 0.2) as f32)
                .collect();
            let img = Image::from_vec(w, h, data.clone()).unwrap();
            for bins in [1, 7, 256] {
                let got = reduce::histogram(&dev, &img, None, bins, 0.0, 1.0).unwrap();
                let mut want = vec![0u64; bins];
                for &v in &data {
                    let v = v as f64;
                    if (0.0..1.0).contains(&v) {
                        want[((v * bins as f64) as usize).min(bins - 1)] += 1;
                    }
                }
                assert_eq!(got, want, "{w}x{h} {bins} bins");
            }
        }
    }
    let bytes = Image::from_fn(256, 3, |x, _| x as u8).unwrap();
    let h = reduce::histogram(&Device::cpu(), &bytes, None, 256, 0.0, 256.0).unwrap();
    assert!(h.iter().all(|&c| c == 3));
}

/// `floor((v - lo) / (hi - lo) * bins)` for `v` in `[lo, hi)`, per pixel.
fn direct_histogram(values: &[f64], bins: usize, lo: f64, hi: f64) -> Vec<u64> {
    let mut want = vec![0u64; bins];
    let scale = bins as f64 / (hi - lo);
    for &v in values.iter().filter(|&&v| v >= lo && v < hi) {
        want[(((v - lo) * scale) as usize).min(bins - 1)] += 1;
    }
    want
}

/// 8- and 16-bit pixels are counted by value and then binned: the counts
/// of binning each pixel, for ranges cutting values, bins not dividing the
/// range, values outside it, regions and windows, on every size (sizes not
/// a multiple of the four interleaved tables included).
#[test]
fn narrow_integer_histograms_match_binning_each_pixel() {
    let mut rng = Rng(11);
    let ranges = [
        (256, 0.0, 256.0),
        (7, 0.0, 256.0),
        (10, 13.5, 200.25),
        (3, -50.0, 40.0),
    ];
    for dev in devices() {
        for (w, h) in SIZES {
            let bytes: Vec<u8> = (0..w * h).map(|_| rng.next() as u8).collect();
            let words: Vec<u16> = (0..w * h).map(|_| (rng.next() % 70_000) as u16).collect();
            let u8_img = Image::from_vec(w, h, bytes.clone()).unwrap();
            let u16_img = Image::from_vec(w, h, words.clone()).unwrap();
            let b: Vec<f64> = bytes.iter().map(|&v| f64::from(v)).collect();
            let s: Vec<f64> = words.iter().map(|&v| f64::from(v)).collect();
            for (bins, lo, hi) in ranges {
                let got = reduce::histogram(&dev, &u8_img, None, bins, lo, hi).unwrap();
                assert_eq!(
                    got,
                    direct_histogram(&b, bins, lo, hi),
                    "u8 {w}x{h} {bins} [{lo}, {hi})"
                );
            }
            for (bins, lo, hi) in [(1000, 0.0, 65536.0), (9, 100.5, 60000.0)] {
                let got = reduce::histogram(&dev, &u16_img, None, bins, lo, hi).unwrap();
                assert_eq!(
                    got,
                    direct_histogram(&s, bins, lo, hi),
                    "u16 {w}x{h} {bins}"
                );
            }
            let r = Rect::new(w / 3, h / 2, w - w / 3, h - h / 2);
            let inside: Vec<f64> = (r.y..r.y + r.height)
                .flat_map(|y| (r.x..r.x + r.width).map(move |x| y * w + x))
                .map(|i| b[i])
                .collect();
            let full = direct_histogram(&inside, 16, 0.0, 256.0);
            let got =
                reduce::histogram_window(&dev, &u8_img, Some(r), 16, 0.0, 256.0, 3..11).unwrap();
            assert_eq!(got, full[3..11], "u8 {w}x{h} region and window");
        }
    }
}

#[test]
fn bad_histograms_are_errors() {
    let img = Image::<f32>::new(4, 4).unwrap();
    let dev = Device::cpu();
    for (bins, lo, hi) in [
        (0, 0.0, 1.0),
        (4, 1.0, 1.0),
        (4, 0.0, f64::NAN),
        (4, 2.0, 1.0),
    ] {
        let err = reduce::histogram(&dev, &img, None, bins, lo, hi).unwrap_err();
        assert!(err.to_string().contains("histogram"), "{err}");
    }
}
