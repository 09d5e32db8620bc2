//! OpenEXR inputs a photographer meets, generated here: luminance-only,
//! single-channel, luminance/chroma (subsampled), XYZ chromaticities, deep,
//! multi-part, data windows larger than / offset from / disjoint with the
//! display window; and images piped through standard input.

use hipacc::core::{Image, Rgba};
use hipacc_examples::hdr::exr::header::{Chromaticities, SampleType};
use hipacc_examples::hdr::exr::testdata::{self, Channel, Compression, Spec, WindowCase};
use hipacc_examples::hdr::input::{self, Loaded};
use std::path::{Path, PathBuf};

fn write(dir: &Path, name: &str, bytes: &[u8]) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, bytes).unwrap();
    path
}

fn load(bytes: &[u8]) -> Loaded {
    let dir = tempfile::tempdir().unwrap();
    input::load(&write(dir.path(), "in.exr", bytes)).unwrap()
}

fn load_error(bytes: &[u8]) -> String {
    let dir = tempfile::tempdir().unwrap();
    let path = write(dir.path(), "in.exr", bytes);
    let err = input::load(&path).unwrap_err().to_string();
    assert!(!err.contains('\n'), "{err}");
    assert!(err.starts_with(&path.display().to_string()), "{err}");
    err
}

fn pixels(image: &Image<Rgba<f32>>) -> Vec<[f32; 4]> {
    image
        .to_vec()
        .unwrap()
        .iter()
        .map(|p| [p.r, p.g, p.b, p.a])
        .collect()
}

fn spec(w: usize, h: usize, channels: Vec<Channel>) -> Spec {
    let window = testdata::window(0, 0, w, h);
    Spec {
        data_window: window,
        display_window: window,
        channels,
        chromaticities: None,
        compression: Compression::Zip,
    }
}

/// A smooth, coloured test image with a luminance range of about 10.
fn smooth(w: usize, h: usize) -> Vec<[f32; 3]> {
    (0..h)
        .flat_map(|y| {
            (0..w).map(move |x| {
                let (x, y) = (x as f32, y as f32);
                [
                    1.0 + 0.5 * (x / 7.0).sin() + y / 20.0,
                    0.8 + 0.3 * (y / 5.0).cos(),
                    0.6 + 0.2 * ((x + y) / 9.0).sin() + x / 30.0,
                ]
            })
        })
        .collect()
}

#[test]
fn luminance_only_files_are_grey_with_their_alpha() {
    // Written by the exr crate: Y (half) and A (float), PIZ.
    use exr::prelude::*;
    let (w, h) = (5usize, 3usize);
    let ys: Vec<f16> = (0..w * h).map(|i| f16::from_f32(0.25 * i as f32)).collect();
    let alpha: Vec<f32> = (0..w * h).map(|i| i as f32 / 15.0).collect();
    let channels = vec![
        AnyChannel::new("Y", FlatSamples::F16(ys)),
        AnyChannel::new("A", FlatSamples::F32(alpha.clone())),
    ];
    let bytes = written_by_exr(channels, (w, h), exr::compression::Compression::PIZ);
    let loaded = load(&bytes);
    assert!(loaded.warnings.is_empty());
    for (i, p) in pixels(&loaded.image).iter().enumerate() {
        let y = 0.25 * i as f32;
        assert_eq!(*p, [y, y, y, alpha[i]], "pixel {i}");
    }
}

#[test]
fn single_channel_files_are_grey() {
    let values: Vec<f32> = (0..12).map(|i| 1.5f32.powi(i)).collect();
    for compression in [Compression::None, Compression::Rle, Compression::Zip] {
        let mut s = spec(4, 3, vec![Channel::float("luminance", values.clone())]);
        s.compression = compression;
        let loaded = load(&testdata::write(&s));
        let got = pixels(&loaded.image);
        for (i, v) in values.iter().enumerate() {
            assert_eq!(got[i], [*v, *v, *v, 1.0], "{compression:?} pixel {i}");
        }
    }
}

#[test]
fn luminance_chroma_files_reconstruct_the_source_rgb() {
    let (w, h) = (64, 48);
    let source = smooth(w, h);
    // The largest relative change of a channel between neighbours.
    let step = (0..w * h)
        .flat_map(|i| [i + 1, i + w].map(move |j| (i, j)))
        .filter(|&(i, j)| j < w * h && (j == i + w || j % w != 0))
        .flat_map(|(i, j)| (0..3).map(move |c| (i, j, c)))
        .map(|(i, j, c)| (source[i][c] - source[j][c]).abs() / source[i][c])
        .fold(0f32, f32::max);
    for compression in [Compression::None, Compression::Rle, Compression::Zip] {
        let mut s = testdata::luminance_chroma(&source, w, h, SampleType::Float);
        s.compression = compression;
        let got = pixels(&load(&testdata::write(&s)).image);
        let mut worst_inside = 0f32;
        let mut worst = 0f32;
        for y in 0..h {
            for x in 0..w {
                let i = y * w + x;
                let err = (0..3)
                    .map(|c| (got[i][c] - source[i][c]).abs() / source[i][c])
                    .fold(0f32, f32::max);
                worst = worst.max(err);
                // The filter reaches 13 pixels; inside that margin it sees
                // only true samples.
                if (14..w - 14).contains(&x) && (14..h - 14).contains(&y) {
                    worst_inside = worst_inside.max(err);
                }
            }
        }
        // Inside: the interpolating filter's error on this smooth chroma
        // is below 0.1%. Near the edges the stored samples are repeated
        // past the border (as OpenEXR does), an error of at most one
        // pixel's change of the source: 1.5x the largest such change.
        assert!(
            worst_inside < 1e-3,
            "{compression:?}: inside {worst_inside}"
        );
        assert!(
            worst < 1.5 * step,
            "{compression:?}: near the edges {worst} vs {step}"
        );
    }
    // Stored at even coordinates, with the chroma exact there: even
    // pixels come back to rounding.
    let s = testdata::luminance_chroma(&source, w, h, SampleType::Float);
    let got = pixels(&load(&testdata::write(&s)).image);
    for c in 0..3 {
        let i = 20 * w + 30;
        let err = (got[i][c] - source[i][c]).abs() / source[i][c];
        assert!(err < 1e-5, "channel {c}: {err}");
    }
    // Half samples: add half's rounding (2^-11 relative, through Y and
    // chroma) to the interior bound.
    let s = testdata::luminance_chroma(&source, w, h, SampleType::Half);
    let got = pixels(&load(&testdata::write(&s)).image);
    let i = 25 * w + 31;
    for c in 0..3 {
        assert!(
            (got[i][c] - source[i][c]).abs() < 3e-3 * source[i][c],
            "half {c}"
        );
    }
}

#[test]
fn grey_luminance_chroma_is_exact() {
    // Zero chroma: OpenEXR's special case gives r = g = b = Y exactly.
    let (w, h) = (6, 4);
    let grey: Vec<[f32; 3]> = (0..w * h).map(|i| [i as f32 + 0.5; 3]).collect();
    let mut s = testdata::luminance_chroma(&grey, w, h, SampleType::Float);
    // OpenEXR's writer stores r = g = b as Y = g with zero chroma.
    s.channels[0].samples = grey.iter().map(|p| p[0]).collect();
    for chroma in &mut s.channels[1..] {
        chroma.samples.iter_mut().for_each(|v| *v = 0.0);
    }
    let got = pixels(&load(&testdata::write(&s)).image);
    for (i, p) in grey.iter().enumerate() {
        assert_eq!(got[i], [p[0], p[0], p[0], 1.0]);
    }
}

#[test]
fn luminance_chroma_with_other_compressions_is_refused_by_name() {
    let (w, h) = (4, 4);
    let s = testdata::luminance_chroma(&smooth(w, h), w, h, SampleType::Half);
    let mut bytes = testdata::write(&Spec {
        compression: Compression::None,
        ..s
    });
    let name = b"compression\0compression\0";
    let at = bytes.windows(name.len()).position(|x| x == name).unwrap() + name.len() + 4;
    for (code, name) in [(10, "HTJ2K256"), (11, "HTJ2K32")] {
        bytes[at] = code;
        let err = load_error(&bytes);
        assert!(
            err.contains(&format!("with {name} are not supported")),
            "{err}"
        );
    }
}

/// A fixture written by the OpenEXR library (tests/data/make_luma_chroma.py).
fn fixture(name: &str) -> Vec<u8> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data")
        .join(name);
    std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

#[test]
fn luminance_chroma_piz_files_match_their_zip_twins() {
    // Y half or float, RY and BY half sampled 2x2, 40x70: three PIZ blocks.
    for kind in ["half", "float"] {
        let piz = load(&fixture(&format!("luma_chroma_{kind}_piz.exr")));
        let zip = load(&fixture(&format!("luma_chroma_{kind}_zip.exr")));
        let (a, b) = (pixels(&piz.image), pixels(&zip.image));
        assert_eq!((piz.image.width(), piz.image.height()), (40, 70));
        assert_eq!(a, b, "{kind}");
        // Colour, not grey: the chroma planes were read.
        assert!(a.iter().any(|p| (p[0] - p[2]).abs() > 0.05), "{kind}");
    }
}

#[test]
fn corrupt_piz_blocks_are_errors_or_pixels_never_panics() {
    let good = fixture("luma_chroma_float_piz.exr");
    for at in (400..good.len()).step_by(97) {
        let mut bytes = good.clone();
        bytes[at] ^= 0x5a;
        let dir = tempfile::tempdir().unwrap();
        let path = write(dir.path(), "in.exr", &bytes);
        if let Err(e) = input::load(&path) {
            assert!(!e.to_string().contains('\n'), "{e}");
        }
    }
}

/// CIE XYZ as RGB: primaries (1,0), (0,1), (0,0), equal-energy white.
const XYZ: Chromaticities = Chromaticities {
    primaries: [[1.0, 0.0], [0.0, 1.0], [0.0, 0.0]],
    white: [1.0 / 3.0, 1.0 / 3.0],
};

#[test]
fn xyz_files_come_out_in_rec709() {
    // Rec.709 red (1, 0, 0) is XYZ (0.4124, 0.2126, 0.0193) under D65
    // (IEC 61966-2-1); an XYZ file's white is equal-energy, so the file
    // holds that colour Bradford-adapted from D65 to E (matrix by the
    // published Bradford cone responses, computed below). Together with
    // white, it must come back as Rec.709 (1, 0, 0) and (1, 1, 1).
    let bradford = [
        [0.8951, 0.2664, -0.1614],
        [-0.7502, 1.7135, 0.0367],
        [0.0389, -0.0685, 1.0296],
    ];
    let inverse = [
        [0.986_993, -0.147_054, 0.159_963],
        [0.432_305, 0.518_360, 0.049_291],
        [-0.008_529, 0.040_043, 0.968_487],
    ];
    let mul = |m: &[[f64; 3]; 3], v: [f64; 3]| {
        [0, 1, 2].map(|i| m[i][0] * v[0] + m[i][1] * v[1] + m[i][2] * v[2])
    };
    let (d65, e) = ([0.95047, 1.0, 1.08883], [1.0, 1.0, 1.0]);
    let (cone_d65, cone_e) = (mul(&bradford, d65), mul(&bradford, e));
    let cone = mul(&bradford, [0.4124, 0.2126, 0.0193]);
    let red_in_e = mul(
        &inverse,
        [0, 1, 2].map(|i| cone[i] * cone_e[i] / cone_d65[i]),
    );
    let red = red_in_e.map(|v| v as f32);
    let mut s = testdata::rgb(
        testdata::window(0, 0, 2, 1),
        testdata::window(0, 0, 2, 1),
        &[red, [1.0, 1.0, 1.0]],
    );
    s.chromaticities = Some(XYZ);
    let got = pixels(&load(&testdata::write(&s)).image);
    for (p, want) in got.iter().zip([[1.0, 0.0, 0.0], [1.0, 1.0, 1.0]]) {
        for c in 0..3 {
            assert!((p[c] - want[c]).abs() < 2e-3, "{got:?}");
        }
    }
}

#[test]
fn rec709_chromaticities_leave_values_untouched() {
    let values = [[0.1f32, 7.0, 3.25], [1e-3, 2e4, 0.5]];
    let mut s = testdata::rgb(
        testdata::window(0, 0, 2, 1),
        testdata::window(0, 0, 2, 1),
        &values,
    );
    s.chromaticities = Some(Chromaticities {
        primaries: [[0.64, 0.33], [0.30, 0.60], [0.15, 0.06]],
        white: [0.3127, 0.3290],
    });
    let got = pixels(&load(&testdata::write(&s)).image);
    assert_eq!(got, values.map(|[r, g, b]| [r, g, b, 1.0]));
}

#[test]
fn deep_files_are_refused_by_name() {
    let err = load_error(&testdata::deep_header());
    assert!(err.ends_with("deep data is not supported"), "{err}");
}

#[test]
fn multi_part_files_are_refused_by_name() {
    use exr::prelude::*;
    let layer = |name: &str| {
        Layer::new(
            (2, 2),
            LayerAttributes::named(name),
            Encoding::default(),
            SpecificChannels::rgb(|_: Vec2<usize>| (0.5f32, 0.25f32, 1.0f32)),
        )
    };
    let image = exr::image::Image::from_layers(
        ImageAttributes::new(IntegerBounds::from_dimensions((2, 2))),
        SmallVec::from_vec(vec![layer("left"), layer("right")]),
    );
    let mut bytes = std::io::Cursor::new(Vec::new());
    image.write().to_buffered(&mut bytes).unwrap();
    let err = load_error(&bytes.into_inner());
    assert!(err.ends_with("multi-part files are not supported"), "{err}");
}

#[test]
fn every_stored_pixel_loads_whatever_the_display_window() {
    let (w, h) = (40, 24);
    for case in [
        WindowCase::Same,
        WindowCase::Larger,
        WindowCase::Offset,
        WindowCase::Disjoint,
    ] {
        let (data, _) = testdata::windows(case, w, h);
        let (dw, dh) = (data.width() as usize, data.height() as usize);
        let loaded = load(&testdata::flat_steps_file(case, w, h));
        assert_eq!(
            (loaded.image.width(), loaded.image.height()),
            (dw, dh),
            "{case:?}"
        );
        let want = testdata::flat_steps(dw, dh);
        let got = pixels(&loaded.image);
        for (g, p) in got.iter().zip(&want) {
            assert_eq!(*g, [p[0], p[1], p[2], 1.0], "{case:?}");
        }
        if case == WindowCase::Disjoint {
            assert_eq!(loaded.warnings.len(), 1, "{:?}", loaded.warnings);
            assert!(loaded.warnings[0].contains("does not overlap the data window"));
        } else {
            assert!(
                loaded.warnings.is_empty(),
                "{case:?}: {:?}",
                loaded.warnings
            );
        }
    }
}

#[test]
fn the_flat_steps_chart_has_flat_areas_and_sharp_steps() {
    let chart = testdata::flat_steps(64, 32);
    let lum = |p: [f32; 3]| p[0] + p[1] + p[2];
    // Flat inside a patch, a step of more than 2x across a patch border.
    assert_eq!(chart[5 * 64 + 2], chart[5 * 64 + 5]);
    let (a, b) = (lum(chart[5 * 64 + 7]), lum(chart[5 * 64 + 8]));
    assert!(a.max(b) / a.min(b) > 2.0, "{a} {b}");
}

#[test]
fn standard_input_is_read_and_named() {
    let s = testdata::rgb(
        testdata::window(0, 0, 2, 1),
        testdata::window(0, 0, 2, 1),
        &[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]],
    );
    let loaded = input::decode(&testdata::write(&s), None).unwrap();
    assert_eq!(pixels(&loaded.image)[1], [4.0, 5.0, 6.0, 1.0]);
    let err = input::decode(b"", None).unwrap_err().to_string();
    assert!(
        err.starts_with("standard input: ") && err.contains("empty"),
        "{err}"
    );
    let err = input::decode(b"hello", None).unwrap_err().to_string();
    assert!(
        err.starts_with("standard input: not a recognised image"),
        "{err}"
    );
    let mut pfm = b"PF\n2 1\n-1\n".to_vec();
    for v in [1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0] {
        pfm.extend_from_slice(&v.to_le_bytes());
    }
    let loaded = input::decode(&pfm, None).unwrap();
    assert_eq!(pixels(&loaded.image)[1], [4.0, 5.0, 6.0, 1.0]);
    let err = input::decode(&pfm[..12], None).unwrap_err().to_string();
    assert!(err.starts_with("standard input: "), "{err}");
    assert!(
        !err.contains(".pfm"),
        "the temporary file leaks into: {err}"
    );
}

#[test]
fn the_tone_mapper_reads_standard_input() {
    use std::io::Write;
    use std::process::{Command, Stdio};
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out.png");
    let bytes = testdata::write(&testdata::rgb(
        testdata::window(0, 0, 32, 24),
        testdata::window(0, 0, 32, 24),
        &smooth(32, 24),
    ));
    let mut child = Command::new(env!("CARGO_BIN_EXE_hdr-compress"))
        .arg("-")
        .arg("-o")
        .arg(&out)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(&bytes).unwrap();
    let result = child.wait_with_output().unwrap();
    assert!(
        result.status.success(),
        "{}",
        String::from_utf8_lossy(&result.stderr)
    );
    assert!(std::fs::metadata(&out).unwrap().len() > 0);
    // An empty standard input is a one-line error.
    let result = Command::new(env!("CARGO_BIN_EXE_hdr-compress"))
        .arg("-")
        .arg("-o")
        .arg(dir.path().join("empty.png"))
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&result.stderr);
    assert!(!result.status.success());
    assert!(stderr.contains("standard input is empty"), "{stderr}");
}

#[test]
fn luminance_chroma_in_an_offset_data_window_with_alpha() {
    let (w, h) = (20, 14);
    let mut s = testdata::luminance_chroma(&smooth(w, h), w, h, SampleType::Half);
    let alpha: Vec<f32> = (0..w * h).map(|i| (i % 7) as f32 / 7.0).collect();
    s.channels.push(Channel::float("A", alpha.clone()));
    let at_origin = pixels(&load(&testdata::write(&s)).image);
    s.data_window = testdata::window(-4, 6, w, h);
    s.compression = Compression::Rle;
    let moved = pixels(&load(&testdata::write(&s)).image);
    assert_eq!(at_origin, moved);
    assert!(moved.iter().zip(&alpha).all(|(p, a)| p[3] == *a));
}

#[test]
fn damaged_luminance_chroma_files_are_errors_not_panics() {
    let (w, h) = (18, 34);
    let s = testdata::luminance_chroma(&smooth(w, h), w, h, SampleType::Half);
    for compression in [
        Compression::None,
        Compression::Rle,
        Compression::Zip,
        Compression::Pxr24,
        Compression::B44,
        Compression::B44a,
    ] {
        let full = testdata::write(&Spec {
            compression,
            ..s.clone()
        });
        for len in (0..full.len()).step_by(5) {
            let err = input::decode(&full[..len], None).unwrap_err().to_string();
            assert!(!err.contains('\n'), "{err}");
        }
        // Flipped bytes anywhere: an image or a one-line error.
        for at in (0..full.len()).step_by(3) {
            let mut bytes = full.clone();
            bytes[at] ^= 0x5a;
            if let Err(e) = input::decode(&bytes, None) {
                assert!(!e.to_string().contains('\n'), "{e}");
            }
        }
    }
}

#[test]
fn a_short_file_claiming_a_huge_image_is_refused_before_decoding() {
    // 60000 x 4000 float RGB would take 2.9 GB; the file holds 2x2 pixels.
    let mut s = testdata::rgb(
        testdata::window(0, 0, 2, 2),
        testdata::window(0, 0, 2, 2),
        &[[1.0; 3]; 4],
    );
    s.compression = Compression::None;
    let mut bytes = testdata::write(&s);
    let name = b"dataWindow\0box2i\0";
    let at = bytes.windows(name.len()).position(|x| x == name).unwrap() + name.len() + 4;
    bytes[at + 8..at + 12].copy_from_slice(&59_999i32.to_le_bytes());
    bytes[at + 12..at + 16].copy_from_slice(&3_999i32.to_le_bytes());
    let err = load_error(&bytes);
    assert!(
        err.contains("truncated (the file ends before its table of 4000 blocks)"),
        "{err}"
    );
}

/// `channels` of `size` as the exr crate writes them, compressed so.
fn written_by_exr(
    channels: Vec<exr::prelude::AnyChannel<exr::prelude::FlatSamples>>,
    size: (usize, usize),
    compression: exr::compression::Compression,
) -> Vec<u8> {
    use exr::prelude::*;
    let layer = Layer::new(
        size,
        LayerAttributes::default(),
        Encoding {
            compression,
            ..Encoding::default()
        },
        AnyChannels::sort(SmallVec::from_vec(channels)),
    );
    let mut bytes = std::io::Cursor::new(Vec::new());
    exr::image::Image::from_layer(layer)
        .write()
        .to_buffered(&mut bytes)
        .unwrap();
    bytes.into_inner()
}

/// f32 channels named as a renderer writes them (`ViewLayer.Combined.R`,
/// ...).
fn layered(channels: Vec<(&str, Vec<f32>)>, w: usize, h: usize) -> Vec<u8> {
    use exr::prelude::*;
    let channels = channels
        .into_iter()
        .map(|(name, v)| AnyChannel::new(name, FlatSamples::F32(v)))
        .collect();
    written_by_exr(channels, (w, h), exr::compression::Compression::ZIP16)
}

#[test]
fn the_one_layer_holding_colour_is_the_image() {
    let (w, h) = (6, 4);
    let rgb = smooth(w, h);
    let plane = |c: usize| rgb.iter().map(|p| p[c]).collect::<Vec<f32>>();
    let alpha: Vec<f32> = (0..w * h).map(|i| i as f32 / 24.0).collect();
    let depth: Vec<f32> = (0..w * h).map(|i| 100.0 + i as f32).collect();
    let bytes = layered(
        vec![
            ("ViewLayer.Combined.R", plane(0)),
            ("ViewLayer.Combined.G", plane(1)),
            ("ViewLayer.Combined.B", plane(2)),
            ("ViewLayer.Combined.A", alpha.clone()),
            ("ViewLayer.Depth.Z", depth),
        ],
        w,
        h,
    );
    let loaded = load(&bytes);
    assert!(loaded.warnings.is_empty());
    for (i, p) in pixels(&loaded.image).iter().enumerate() {
        let [r, g, b] = rgb[i];
        assert_eq!(*p, [r, g, b, alpha[i]], "pixel {i}");
    }
    // Two layers of colour: neither is chosen, and the error names both.
    let two = layered(
        vec![
            ("diffuse.R", plane(0)),
            ("diffuse.G", plane(1)),
            ("diffuse.B", plane(2)),
            ("specular.Y", plane(1)),
        ],
        w,
        h,
    );
    let err = load_error(&two);
    assert!(err.contains("no colour channels"), "{err}");
    assert!(err.contains("the layers diffuse, specular"), "{err}");
}
