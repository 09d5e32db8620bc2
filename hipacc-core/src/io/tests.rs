use super::*;
use image::{ImageBuffer, Luma, Rgb};
use std::sync::atomic::AtomicUsize;

/// A fresh directory under the system's temporary directory, removed on drop.
struct TempDir(PathBuf);

impl TempDir {
    fn new() -> TempDir {
        static N: AtomicUsize = AtomicUsize::new(0);
        let dir = std::env::temp_dir().join(format!(
            "hipacc-io-test-{}-{}",
            std::process::id(),
            N.fetch_add(1, Ordering::Relaxed)
        ));
        std::fs::create_dir_all(&dir).unwrap();
        TempDir(dir)
    }
    fn path(&self, name: &str) -> PathBuf {
        self.0.join(name)
    }
    /// The names of all files in the directory, sorted.
    fn files(&self) -> Vec<String> {
        let mut v: Vec<String> = std::fs::read_dir(&self.0)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        v.sort();
        v
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Values that exercise exactness: negatives, > 1, tiny, non-dyadic.
fn sample() -> Image<f32> {
    Image::from_fn(7, 5, |x, y| {
        (x as f32 - 2.0) * 0.371 + (y as f32) * 1.7e-3 + if x == 6 { 1e-30 } else { 0.0 }
    })
    .unwrap()
}

fn message(e: Error) -> String {
    match e {
        Error::ImageFile { message, .. } => message,
        other => panic!("expected an ImageFile error, got {other:?}"),
    }
}

#[test]
fn exr_round_trip_is_exact_and_every_channel_holds_luminance() {
    let dir = TempDir::new();
    let p = dir.path("a.exr");
    let img = sample();
    save_luminance(&img, &p).unwrap();
    assert_eq!(
        load_luminance(&p).unwrap().to_vec().unwrap(),
        img.to_vec().unwrap()
    );
    let rgba = load_rgba(&p).unwrap().to_vec().unwrap();
    for (px, v) in rgba.iter().zip(img.to_vec().unwrap()) {
        assert_eq!((px.r, px.g, px.b), (v, v, v));
    }
    assert_eq!(dir.files(), ["a.exr"]);
}

#[test]
fn pfm_round_trip_is_exact_and_upside_down_on_disk() {
    let dir = TempDir::new();
    let p = dir.path("a.pfm");
    let img = sample();
    img.save(&p).unwrap();
    assert_eq!(
        Image::<f32>::load(&p).unwrap().to_vec().unwrap(),
        img.to_vec().unwrap()
    );
    let bytes = std::fs::read(&p).unwrap();
    let header = b"Pf\n7 5\n-1.0\n";
    assert_eq!(&bytes[..header.len()], header);
    // The first stored row is the image's bottom row.
    let first = f32::from_le_bytes(bytes[header.len()..header.len() + 4].try_into().unwrap());
    assert_eq!(first, img.get(0, 4).unwrap());
}

#[test]
fn rgba_round_trips() {
    let dir = TempDir::new();
    let img = Image::from_fn(3, 4, |x, y| {
        Rgba::new(x as f32 * 0.3, y as f32 * 0.2, 0.125, 0.5 + x as f32 * 0.1)
    })
    .unwrap();
    let exr = dir.path("c.exr");
    img.save(&exr).unwrap();
    assert_eq!(
        load_rgba(&exr).unwrap().to_vec().unwrap(),
        img.to_vec().unwrap()
    );
    let pfm = dir.path("c.pfm");
    img.save(&pfm).unwrap();
    let back = load_rgba(&pfm).unwrap().to_vec().unwrap();
    for (a, b) in back.iter().zip(img.to_vec().unwrap()) {
        assert_eq!(*a, Rgba::new(b.r, b.g, b.b, 1.0));
    }
    let png = dir.path("c.png");
    img.save(&png).unwrap();
    let back = load_rgba(&png).unwrap().to_vec().unwrap();
    for (a, b) in back.iter().zip(img.to_vec().unwrap()) {
        let q = |v: f32| f32::from(to_u16(v)) / 65535.0;
        assert_eq!(*a, b.map(q));
    }
}

#[test]
fn png_is_16_bit_gray_clamped_and_rounded() {
    let dir = TempDir::new();
    let p = dir.path("b.png");
    let img = Image::from_vec(5, 1, vec![-0.5f32, 0.0, 0.3, 1.0, 7.0]).unwrap();
    save_luminance(&img, &p).unwrap();
    let decoded = image::open(&p).unwrap();
    let DynamicImage::ImageLuma16(buf) = decoded else {
        panic!("expected 16-bit gray, got {:?}", decoded.color());
    };
    let raw: Vec<u16> = buf.pixels().map(|p| p.0[0]).collect();
    assert_eq!(raw, [0, 0, (0.3f32 * 65535.0).round() as u16, 65535, 65535]);
    let back = load_luminance(&p).unwrap().to_vec().unwrap();
    assert_eq!(back[2], f32::from(raw[2]) / 65535.0);
}

#[test]
fn integer_inputs_are_scaled_and_weighted() {
    let dir = TempDir::new();
    let gray8 = dir.path("g8.png");
    ImageBuffer::from_fn(3, 2, |x, y| Luma([(x * 100 + y) as u8]))
        .save(&gray8)
        .unwrap();
    let l = load_luminance(&gray8).unwrap();
    assert_eq!(l.get(2, 1).unwrap(), 201.0 / 255.0);
    let rgba = load_rgba(&gray8).unwrap();
    assert_eq!(
        rgba.get(2, 1).unwrap(),
        Rgba::new(201.0 / 255.0, 201.0 / 255.0, 201.0 / 255.0, 1.0)
    );

    let rgb8 = dir.path("c8.bmp");
    ImageBuffer::from_fn(2, 2, |x, _| Rgb([255u8, 0, if x == 0 { 0 } else { 255 }]))
        .save(&rgb8)
        .unwrap();
    let l = load_luminance(&rgb8).unwrap();
    assert_eq!(l.get(0, 0).unwrap(), 0.2126);
    assert_eq!(l.get(1, 0).unwrap(), 0.2126 + 0.0722);

    let rgb16 = dir.path("c16.png");
    ImageBuffer::from_fn(1, 1, |_, _| Rgb([65535u16, 65535, 0]))
        .save(&rgb16)
        .unwrap();
    let l = load_luminance(&rgb16).unwrap();
    assert_eq!(l.get(0, 0).unwrap(), 0.2126 + 0.7152);
}

#[test]
fn corrupt_inputs_are_clear_errors() {
    let dir = TempDir::new();
    let good = dir.path("good.png");
    save_luminance(&sample(), &good).unwrap();
    let bytes = std::fs::read(&good).unwrap();
    let truncated = dir.path("truncated.png");
    std::fs::write(&truncated, &bytes[..bytes.len() / 2]).unwrap();
    let m = message(load_luminance(&truncated).unwrap_err());
    assert!(m.contains("not a valid PNG file"), "{m}");

    // Deterministic noise (xorshift) with image extensions.
    let mut s = 0x2545_f491_4f6c_dd1du64;
    let noise: Vec<u8> = (0..4096)
        .map(|_| {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            s as u8
        })
        .collect();
    for ext in ["png", "jpg", "exr", "tif", "hdr", "pfm"] {
        let p = dir.path(&format!("noise.{ext}"));
        std::fs::write(&p, &noise).unwrap();
        let m = message(load_luminance(&p).unwrap_err());
        assert!(
            m.contains("not a valid") || m.contains("unsupported"),
            ".{ext}: {m}"
        );
        assert!(load_rgba(&p).is_err());
    }
    let p = dir.path("noise.dat");
    std::fs::write(&p, &noise).unwrap();
    let m = message(load_luminance(&p).unwrap_err());
    assert!(m.starts_with("unsupported image format"), "{m}");

    let empty = dir.path("empty.png");
    std::fs::write(&empty, b"").unwrap();
    assert_eq!(
        message(load_luminance(&empty).unwrap_err()),
        "the file is empty"
    );

    let m = message(load_luminance(dir.path("missing.png")).unwrap_err());
    assert!(m.starts_with("cannot read"), "{m}");
}

#[test]
fn pfm_headers_are_checked_before_allocating() {
    let dir = TempDir::new();
    let cases: [(&[u8], &str); 5] = [
        (b"Pf\n100000 100000\n-1.0\n\0\0\0\0", "truncated"),
        (b"Pf\n0 3\n-1.0\n", "not a positive integer"),
        (b"PF\n2 x\n-1.0\n", "not a positive integer"),
        (b"Pf\n1 1\nzero\n\0\0\0\0", "scale"),
        (b"Pf\n1 1", "truncated header"),
    ];
    for (i, (bytes, want)) in cases.iter().enumerate() {
        let p = dir.path(&format!("bad{i}.pfm"));
        std::fs::write(&p, bytes).unwrap();
        let m = message(load_luminance(&p).unwrap_err());
        assert!(
            m.starts_with("not a valid PFM file") && m.contains(want),
            "{m}"
        );
    }
    let m = message(
        load_luminance({
            let p = dir.path("sig.pfm");
            std::fs::write(&p, b"P6\n1 1\n255\n\0\0\0").unwrap();
            p
        })
        .unwrap_err(),
    );
    assert!(m.contains("bad signature"), "{m}");
}

#[test]
fn pfm_reads_big_endian_colour() {
    let dir = TempDir::new();
    let p = dir.path("be.pfm");
    let mut bytes = b"PF\n1 2\n1.0\n".to_vec();
    for v in [1.0f32, 0.0, 0.0, 0.0, 1.0, 0.0] {
        bytes.extend(v.to_be_bytes());
    }
    std::fs::write(&p, bytes).unwrap();
    // Bottom row first: red is the bottom pixel, green the top one.
    let l = load_luminance(&p).unwrap().to_vec().unwrap();
    assert_eq!(l, [0.7152, 0.2126]);
}

#[test]
fn bad_outputs_leave_no_file() {
    let dir = TempDir::new();
    let img = sample();
    for name in ["out.jpg", "out.xyz", "out"] {
        let m = message(save_luminance(&img, dir.path(name)).unwrap_err());
        assert!(m.contains(".exr, .png or .pfm"), "{m}");
    }
    let m = message(save_luminance(&img, dir.path("no/such/dir/out.png")).unwrap_err());
    assert!(m.starts_with("cannot write"), "{m}");
    // A directory in the way of the rename: the temporary file is removed.
    std::fs::create_dir(dir.path("taken.exr")).unwrap();
    std::fs::write(dir.path("taken.exr/x"), b"").unwrap();
    assert!(save_luminance(&img, dir.path("taken.exr")).is_err());
    assert_eq!(dir.files(), ["taken.exr"]);
}

#[test]
fn saving_replaces_an_existing_file() {
    let dir = TempDir::new();
    let p = dir.path("x.pfm");
    std::fs::write(&p, b"old").unwrap();
    save_luminance(&sample(), &p).unwrap();
    assert_eq!(
        load_luminance(&p).unwrap().to_vec().unwrap(),
        sample().to_vec().unwrap()
    );
    assert_eq!(dir.files(), ["x.pfm"]);
}
