//! Tests of the Radiance reader on pictures written by a small encoder here.

use super::*;

/// A deterministic byte stream (xorshift64).
struct Bytes(u64);

impl Bytes {
    fn next(&mut self) -> u8 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 >> 24) as u8
    }
}

/// RGBE pixels with runs (for the run-length encoder) and literals, never
/// the old-style repeat pattern `1 1 1 n`.
fn test_pixels(n: usize, seed: u64) -> Vec<[u8; 4]> {
    let mut rng = Bytes(seed | 1);
    let mut out = Vec::with_capacity(n);
    while out.len() < n {
        let px = [
            rng.next() | 2,
            rng.next(),
            rng.next(),
            100 + rng.next() % 60,
        ];
        let repeat = if rng.next().is_multiple_of(3) {
            1 + usize::from(rng.next()) % 200
        } else {
            1
        };
        for _ in 0..repeat.min(n - out.len()) {
            out.push(px);
        }
    }
    out
}

fn header(extra: &str, resolution: &str) -> Vec<u8> {
    format!("#?RADIANCE\n{extra}FORMAT=32-bit_rle_rgbe\n\n{resolution}\n").into_bytes()
}

fn encode_flat(pixels: &[[u8; 4]]) -> Vec<u8> {
    pixels.iter().flatten().copied().collect()
}

/// New-style run-length encoding of scanlines of `width` pixels.
fn encode_rle(pixels: &[[u8; 4]], width: usize) -> Vec<u8> {
    let mut out = Vec::new();
    for line in pixels.chunks(width) {
        out.extend_from_slice(&[2, 2, (width >> 8) as u8, (width & 0xff) as u8]);
        for c in 0..4 {
            let values: Vec<u8> = line.iter().map(|p| p[c]).collect();
            encode_channel(&values, &mut out);
        }
    }
    out
}

fn encode_channel(values: &[u8], out: &mut Vec<u8>) {
    let mut i = 0;
    let mut literal_start = 0;
    let flush = |from: usize, to: usize, out: &mut Vec<u8>| {
        for chunk in values[from..to].chunks(128) {
            out.push(chunk.len() as u8);
            out.extend_from_slice(chunk);
        }
    };
    while i < values.len() {
        let run = values[i..]
            .iter()
            .take(127)
            .take_while(|&&v| v == values[i])
            .count();
        if run >= 3 {
            flush(literal_start, i, out);
            out.extend_from_slice(&[128 + run as u8, values[i]]);
            i += run;
            literal_start = i;
        } else {
            i += 1;
        }
    }
    flush(literal_start, values.len(), out);
}

fn expected(px: [u8; 4]) -> [f32; 3] {
    to_rgb(px, 1.0)
}

fn file(extra: &str, resolution: &str, data: &[u8]) -> Vec<u8> {
    let mut bytes = header(extra, resolution);
    bytes.extend_from_slice(data);
    bytes
}

#[test]
fn decodes_values_as_pfsin_does() {
    let px = [
        [128, 64, 32, 129],
        [200, 100, 50, 130],
        [255, 1, 0, 0],
        [1, 2, 3, 136],
    ];
    let pic = decode(&file("", "-Y 1 +X 4", &encode_flat(&px))).unwrap();
    assert_eq!((pic.width, pic.height), (4, 1));
    assert_eq!(
        pic.pixels,
        vec![
            [1.0, 0.5, 0.25],
            [3.125, 1.5625, 0.78125],
            [0.0, 0.0, 0.0],
            [1.0, 2.0, 3.0]
        ]
    );
}

#[test]
fn flat_and_rle_decode_alike() {
    for (w, h) in [
        (8, 3),
        (37, 5),
        (127, 2),
        (128, 2),
        (300, 4),
        (1, 9),
        (7, 7),
    ] {
        let px = test_pixels(w * h, (w * 31 + h) as u64);
        let res = format!("-Y {h} +X {w}");
        let want: Vec<[f32; 3]> = px.iter().map(|&p| expected(p)).collect();
        let flat = decode(&file("", &res, &encode_flat(&px))).unwrap();
        assert_eq!(flat.pixels, want, "flat {w}x{h}");
        if (8..=0x7fff).contains(&w) {
            let rle = encode_rle(&px, w);
            assert!(rle.len() < 4 * w * h, "the encoder compresses");
            let pic = decode(&file("", &res, &rle)).unwrap();
            assert_eq!(pic.pixels, want, "rle {w}x{h}");
        }
    }
}

#[test]
fn mixed_rle_and_flat_scanlines() {
    let w = 20;
    let px = test_pixels(w * 2, 5);
    let mut data = encode_rle(&px[..w], w);
    data.extend(encode_flat(&px[w..]));
    let pic = decode(&file("", "-Y 2 +X 20", &data)).unwrap();
    let want: Vec<[f32; 3]> = px.iter().map(|&p| expected(p)).collect();
    assert_eq!(pic.pixels, want);
}

#[test]
fn header_lines_in_any_order() {
    let px = test_pixels(16, 3);
    let data = encode_rle(&px, 16);
    let mut bytes = b"VIEW= -vtv -vh 90\n#?RADIANCE\npflip -v\nFORMAT=32-bit_rle_rgbe\n".to_vec();
    bytes.extend_from_slice(b"\n-Y 1 +X 16\n");
    bytes.extend_from_slice(&data);
    let pic = decode(&bytes).unwrap();
    assert_eq!(pic.pixels[3], expected(px[3]));
    let crlf = [
        b"#?RGBE\r\nFORMAT=32-bit_rle_rgbe\r\n\r\n-Y 1 +X 16\r\n".as_slice(),
        &data,
    ]
    .concat();
    assert_eq!(decode(&crlf).unwrap(), pic);
    let unformatted = [b"#?RADIANCE\n\n-Y 1 +X 16\n".as_slice(), &data].concat();
    assert_eq!(decode(&unformatted).unwrap(), pic);
}

#[test]
fn exposure_divides_values() {
    let px = [[128, 64, 32, 129]];
    let once = decode(&file("EXPOSURE=2\n", "-Y 1 +X 1", &encode_flat(&px))).unwrap();
    assert_eq!(once.pixels, vec![[0.5, 0.25, 0.125]]);
    let twice = file(
        "EXPOSURE= 2\nEXPOSURE=4e0\n",
        "-Y 1 +X 1",
        &encode_flat(&px),
    );
    assert_eq!(
        decode(&twice).unwrap().pixels,
        vec![[0.125, 0.0625, 0.03125]]
    );
    for bad in [
        "EXPOSURE=0\n",
        "EXPOSURE=-1\n",
        "EXPOSURE=abc\n",
        "EXPOSURE=inf\n",
    ] {
        let err = decode(&file(bad, "-Y 1 +X 1", &encode_flat(&px))).unwrap_err();
        assert!(matches!(err, RgbeError::Header(_)), "{bad}: {err}");
    }
}

#[test]
fn refuses_xyze_and_unknown_formats() {
    let bytes = b"#?RADIANCE\nFORMAT=32-bit_rle_xyze\n\n-Y 1 +X 1\n\x80\x80\x80\x80".to_vec();
    let err = decode(&bytes).unwrap_err();
    assert_eq!(err, RgbeError::UnsupportedFormat("32-bit_rle_xyze".into()));
    assert!(
        err.to_string().contains("only 32-bit_rle_rgbe is read"),
        "{err}"
    );
}

#[test]
fn every_orientation() {
    // 3 wide, 2 high; pixel value = 10 * row + col in the red channel.
    let value = |row: usize, col: usize| [(10 * row + col + 2) as u8, 0, 0, 136];
    type Place = fn(usize, usize) -> (usize, usize);
    let cases: [(&str, Place); 8] = [
        ("-Y 2 +X 3", |i, j| (i, j)),
        ("+Y 2 +X 3", |i, j| (1 - i, j)),
        ("-Y 2 -X 3", |i, j| (i, 2 - j)),
        ("+Y 2 -X 3", |i, j| (1 - i, 2 - j)),
        ("+X 3 -Y 2", |i, j| (j, i)),
        ("+X 3 +Y 2", |i, j| (1 - j, i)),
        ("-X 3 -Y 2", |i, j| (j, 2 - i)),
        ("-X 3 +Y 2", |i, j| (1 - j, 2 - i)),
    ];
    for (res, place) in cases {
        let columns = res.starts_with(['+', '-']) && res.as_bytes()[1] == b'X';
        let (scanlines, length) = if columns { (3, 2) } else { (2, 3) };
        let mut data = Vec::new();
        for i in 0..scanlines {
            for j in 0..length {
                let (row, col) = place(i, j);
                data.extend_from_slice(&value(row, col));
            }
        }
        let pic = decode(&file("", res, &data)).unwrap();
        assert_eq!((pic.width, pic.height), (3, 2), "{res}");
        for row in 0..2 {
            for col in 0..3 {
                assert_eq!(
                    pic.pixels[row * 3 + col],
                    expected(value(row, col)),
                    "{res} at ({col}, {row})"
                );
            }
        }
    }
}

#[test]
fn bad_resolution_lines() {
    for res in [
        "",
        "-Y 2",
        "-Y 2 +Y 3",
        "-Z 2 +X 3",
        "-Y -2 +X 3",
        "-Y 2 +X 3.5",
        "Y 2 X 3",
    ] {
        let err = decode(&file("", res, &[0; 64])).unwrap_err();
        assert!(
            matches!(err, RgbeError::Resolution { .. }),
            "`{res}`: {err}"
        );
    }
}

#[test]
fn old_style_repeats() {
    let a = [10, 20, 30, 130];
    let b = [40, 50, 60, 131];
    // a, repeat 2, repeat 1 << 8: 1 + 2 + 256 pixels of a, then b.
    let data = [a, [1, 1, 1, 2], [1, 1, 1, 1], b].concat();
    let pic = decode(&file("", "-Y 1 +X 260", &data)).unwrap();
    assert!(pic.pixels[..259].iter().all(|&p| p == expected(a)));
    assert_eq!(pic.pixels[259], expected(b));
}

#[test]
fn corrupt_runs_are_errors() {
    let a = [10, 20, 30, 130];
    let cases: [(&str, Vec<u8>); 4] = [
        ("-Y 1 +X 4", [[1, 1, 1, 2], a, a, a].concat()),
        ("-Y 1 +X 4", [a, [1, 1, 1, 9]].concat()),
        (
            "-Y 1 +X 9",
            [
                a,
                [1, 1, 1, 0],
                [1, 1, 1, 0],
                [1, 1, 1, 0],
                [1, 1, 1, 0],
                [1, 1, 1, 0],
            ]
            .concat(),
        ),
        // Run-length header announcing 9 pixels in a scanline of 8.
        ("-Y 1 +X 8", [vec![2, 2, 0, 9], vec![0; 40]].concat()),
    ];
    for (res, data) in cases {
        let err = decode(&file("", res, &data)).unwrap_err();
        assert!(
            matches!(err, RgbeError::Corrupt { scanline: 0, .. }),
            "{err}"
        );
    }
    // A run of 100 in a scanline of 8.
    let data = [vec![2, 2, 0, 8, 128 + 100, 7], vec![0; 64]].concat();
    let err = decode(&file("", "-Y 1 +X 8", &data)).unwrap_err();
    assert!(err.to_string().contains("overruns"), "{err}");
}

#[test]
fn refuses_absurd_sizes_before_allocating() {
    let cases = [
        ("-Y 70000 +X 10", "a side exceeds"),
        ("-Y 10 +X 99999999999999999999999", "a side exceeds"),
        ("-Y 60000 +X 60000", "more than"),
        ("-Y 1000 +X 1000", "scanlines need at least"),
        ("-Y 0 +X 10", "no pixels"),
    ];
    for (res, reason) in cases {
        let err = decode(&file("", res, &[0; 64])).unwrap_err();
        assert!(matches!(err, RgbeError::TooLarge { .. }), "{res}: {err}");
        assert!(err.to_string().contains(reason), "{res}: {err}");
    }
}

#[test]
fn empty_and_foreign_files() {
    assert_eq!(decode(b"").unwrap_err(), RgbeError::Empty);
    for bytes in [
        b"P6\n2 2\n255\n".as_slice(),
        b"\x89PNG\r\n\x1a\n",
        b"#?RADIANCE\nFORMAT=32-bit_rle_rgbe\n",
        b"no newline at all",
    ] {
        let err = decode(bytes).unwrap_err();
        assert!(matches!(err, RgbeError::NotRadiance(_)), "{err}");
    }
}

#[test]
fn every_truncation_is_an_error() {
    let px = test_pixels(40 * 6, 11);
    for data in [encode_rle(&px, 40), encode_flat(&px)] {
        let full = file("", "-Y 6 +X 40", &data);
        assert!(decode(&full).is_ok());
        for len in 0..full.len() {
            assert!(decode(&full[..len]).is_err(), "prefix of {len} bytes");
        }
    }
}

#[test]
fn random_and_mutated_bytes_never_panic() {
    let mut rng = Bytes(0x9e37_79b9_7f4a_7c15);
    for _ in 0..200 {
        let len = usize::from(rng.next()) * 4;
        let noise: Vec<u8> = (0..len).map(|_| rng.next()).collect();
        assert!(decode(&noise).is_err());
        let _ = decode(&file("", "-Y 4 +X 16", &noise));
    }
    let px = test_pixels(16 * 4, 2);
    let good = file("", "-Y 4 +X 16", &encode_rle(&px, 16));
    for _ in 0..2000 {
        let mut bad = good.clone();
        for _ in 0..3 {
            let i = usize::from(rng.next()) * 7 % bad.len();
            bad[i] = rng.next();
        }
        let _ = decode(&bad);
    }
}

#[test]
fn to_image_has_alpha_one() {
    let px = [[128, 64, 32, 129], [0, 0, 0, 0]];
    let img = decode(&file("", "-Y 2 +X 1", &encode_flat(&px)))
        .unwrap()
        .to_image()
        .unwrap();
    assert_eq!((img.width(), img.height()), (1, 2));
    assert_eq!(img.get(0, 0).unwrap(), Rgba::new(1.0, 0.5, 0.25, 1.0));
    assert_eq!(img.get(0, 1).unwrap(), Rgba::new(0.0, 0.0, 0.0, 1.0));
}

/// An extra check on the real file when the shared images are present; the
/// tests above do not depend on it.
#[test]
fn memorial_when_present() {
    let path =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/hdr/memorial.hdr");
    let Ok(bytes) = std::fs::read(&path) else {
        eprintln!("[SKIP] {} is absent", path.display());
        return;
    };
    let pic = decode(&bytes).unwrap();
    assert_eq!((pic.width, pic.height), (512, 768));
    let lum: Vec<f32> = pic.pixels.iter().map(|p| p[0] + p[1] + p[2]).collect();
    assert!(lum.iter().all(|v| v.is_finite() && *v >= 0.0));
    let max = lum.iter().copied().fold(0.0, f32::max);
    let min = lum
        .iter()
        .copied()
        .filter(|&v| v > 0.0)
        .fold(f32::MAX, f32::min);
    assert!(max / min > 1e4, "dynamic range {}", max / min);
}

#[test]
fn exponents_scale_by_exact_powers_of_two() {
    for e in 1..=255u8 {
        let want = 2f64.powi(i32::from(e) - 136);
        assert_eq!(
            to_rgb([128, 1, 255, e], 1.0),
            [(128.0 * want) as f32, want as f32, (255.0 * want) as f32,]
        );
    }
    assert_eq!(to_rgb([9, 9, 9, 0], 1.0), [0.0; 3]);
}

#[test]
fn decode_image_has_the_pixels_of_decode() {
    // Large enough for several parallel conversion tasks, with an exposure
    // and a transposed orientation.
    let (w, h) = (300, 101);
    let px = test_pixels(w * h, 7);
    for res in [format!("-Y {h} +X {w}"), format!("+X {w} +Y {h}")] {
        let bytes = file("EXPOSURE=0.5\n", &res, &encode_flat(&px));
        let pic = decode(&bytes).unwrap();
        let img = decode_image(&bytes).unwrap();
        assert_eq!((img.width(), img.height()), (pic.width, pic.height));
        let want: Vec<Rgba<f32>> = pic
            .pixels
            .iter()
            .map(|&[r, g, b]| Rgba::new(r, g, b, 1.0))
            .collect();
        assert_eq!(img.to_vec().unwrap(), want, "{res}");
        assert!(want.iter().any(|p| p.r > 0.0));
    }
    let err = decode_image(&bytes_of_bad_header()).unwrap_err();
    assert!(err.contains("RADIANCE"), "{err}");
}

/// A file without a Radiance signature.
fn bytes_of_bad_header() -> Vec<u8> {
    b"P6\n1 1\n255\n\0\0\0".to_vec()
}
