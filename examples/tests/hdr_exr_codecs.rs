//! PXR24, B44, B44A, DWAA and DWAB in luminance/chroma (subsampled) OpenEXR
//! files, read by the project's own decoders (`hdr::exr::{pxr24, b44}`) and
//! the `exr` crate's DWA codec (`hdr::exr::dwa`), checked three independent
//! ways (DWA the first only):
//! - against files written by the OpenEXR library (tests/data, from
//!   `make_luma_chroma.py`), each with a ZIP twin holding the samples that
//!   OpenEXR itself decodes from it;
//! - against the `exr` crate, which writes and reads these compressions for
//!   channels sampled at every pixel: both decoders must agree on the same
//!   bytes, from its encoder and from the test encoder;
//! - round trips through the test encoders (`testdata::{pxr24, b44}`) on
//!   generated files with subsampled, offset, partial-block layouts; the
//!   B44 encoder and decoder are each pinned to hand-computed blocks in
//!   their unit tests.

use exr::prelude::f16;
use hipacc::core::{Image, Rgba};
use hipacc_examples::hdr::exr::b44;
use hipacc_examples::hdr::exr::header::{self, SampleType};
use hipacc_examples::hdr::exr::planes::{self, Plane};
use hipacc_examples::hdr::exr::subsampled;
use hipacc_examples::hdr::exr::testdata::{self, pxr24::float_to_24, Channel, Compression, Spec};
use hipacc_examples::hdr::input;
use std::path::Path;

fn fixture(name: &str) -> Vec<u8> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data")
        .join(name);
    std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// Every channel as the project's reader decodes it (any sampling).
fn own_planes(bytes: &[u8]) -> Vec<Plane> {
    let header = header::parse(bytes, 1 << 16, 1 << 28).unwrap();
    subsampled::read_subsampled(bytes, &header).unwrap()
}

fn compression(bytes: &[u8]) -> u8 {
    header::parse(bytes, 1 << 16, 1 << 28).unwrap().compression
}

fn pixels(image: &Image<Rgba<f32>>) -> Vec<[f32; 4]> {
    image
        .to_vec()
        .unwrap()
        .iter()
        .map(|p| [p.r, p.g, p.b, p.a])
        .collect()
}

fn decode(bytes: &[u8]) -> Vec<[f32; 4]> {
    pixels(&input::decode(bytes, None).unwrap().image)
}

/// Bit-exact equality of two sets of planes (NaN-safe, -0 != 0).
fn assert_same_planes(a: &[Plane], b: &[Plane], what: &str) {
    assert_eq!(a.len(), b.len(), "{what}");
    for (p, q) in a.iter().zip(b) {
        assert_eq!(
            (&p.name, p.width, p.height, p.x_sampling, p.y_sampling),
            (&q.name, q.width, q.height, q.x_sampling, q.y_sampling),
            "{what}"
        );
        for (i, (x, y)) in p.samples.iter().zip(&q.samples).enumerate() {
            assert_eq!(
                x.to_bits(),
                y.to_bits(),
                "{what}: channel {} sample {i}: {x} vs {y}",
                p.name
            );
        }
    }
}

#[test]
fn openexr_written_lossy_files_match_what_openexr_decodes() {
    let cases = [
        ("half_pxr24", 5),
        ("float_pxr24", 5),
        ("half_b44", 6),
        ("float_b44", 6),
        ("half_b44a", 7),
        ("float_b44a", 7),
        ("half_b44_plinear", 6),
        ("half_dwaa", 8),
        ("float_dwaa", 8),
        ("half_dwab", 9),
        ("float_dwab", 9),
    ];
    for (name, code) in cases {
        let file = fixture(&format!("luma_chroma_{name}.exr"));
        let twin = fixture(&format!("luma_chroma_{name}_decoded_zip.exr"));
        assert_eq!(compression(&file), code, "{name}");
        let header = header::parse(&file, 1 << 16, 1 << 28).unwrap();
        let linear = header.channels.iter().all(|c| c.p_linear);
        assert_eq!(linear, name.ends_with("plinear"), "{name}");
        // The samples, bit for bit, then the reconstructed pixels.
        assert_same_planes(&own_planes(&file), &own_planes(&twin), name);
        let (a, b) = (decode(&file), decode(&twin));
        assert_eq!(a.len(), 42 * 70, "{name}");
        assert_eq!(a, b, "{name}");
        assert!(a.iter().any(|p| (p[0] - p[2]).abs() > 0.05), "{name}: grey");
    }
    // B44A stored the flat areas in 3 bytes a block.
    assert!(fixture("luma_chroma_half_b44a.exr").len() < fixture("luma_chroma_half_b44.exr").len());
}

/// A luminance/chroma file of `w` x `h` whose data window starts at (-6, 4),
/// with a float alpha (stored uncompressed by B44) and a flat square.
fn generated(w: usize, h: usize, luma: SampleType) -> Spec {
    let rgb: Vec<[f32; 3]> = (0..w * h)
        .map(|i| {
            let (x, y) = ((i % w) as f32, (i / w) as f32);
            if x < 16.0 && y < 16.0 {
                return [2.0, 1.0, 0.5];
            }
            [
                1.0 + 0.5 * (x / 7.0).sin() + y / 20.0,
                0.8 + 0.3 * (y / 5.0).cos(),
                0.6 + 0.2 * ((x + y) / 9.0).sin() + x / 30.0,
            ]
        })
        .collect();
    let mut s = testdata::luminance_chroma(&rgb, w, h, luma);
    s.data_window = testdata::window(-6, 4, w, h);
    s.display_window = s.data_window;
    let alpha = (0..w * h).map(|i| (i % 11) as f32 / 10.0).collect();
    s.channels.push(Channel::float("A", alpha));
    s
}

fn with(s: &Spec, compression: Compression) -> Vec<u8> {
    testdata::write(&Spec {
        compression,
        ..s.clone()
    })
}

#[test]
fn generated_pxr24_files_are_lossless_but_for_floats_24_bits() {
    // 42 x 38: blocks of 16, 16 and 6 rows; chroma 21 x 19.
    for luma in [SampleType::Half, SampleType::Float] {
        let mut s = generated(42, 38, luma);
        // A uint channel, with differences that wrap around.
        let ids = (0..42 * 38)
            .map(|i| ((i * 7919) % 4093) as f32 * 1e6)
            .collect();
        s.channels.push(Channel {
            sample_type: SampleType::Uint,
            ..Channel::float("id", ids)
        });
        let file = with(&s, Compression::Pxr24);
        assert!(file.len() < with(&s, Compression::None).len() / 2);
        // The reference: the same samples, floats cut to 24 bits, stored raw.
        let mut cut = s.clone();
        for c in &mut cut.channels {
            if c.sample_type == SampleType::Float {
                c.samples = c
                    .samples
                    .iter()
                    .map(|&v| f32::from_bits(float_to_24(v) << 8))
                    .collect();
            }
        }
        let reference = with(&cut, Compression::None);
        assert_same_planes(
            &own_planes(&file),
            &own_planes(&reference),
            &format!("{luma:?}"),
        );
        assert_eq!(decode(&file), decode(&reference), "{luma:?}");
    }
}

#[test]
fn generated_b44_files_keep_flat_blocks_exact_and_smooth_ones_close() {
    // 42 x 70: blocks of 32, 32 and 6 rows; chroma 21 x 35, so partial
    // 4x4 blocks at the right and at the bottom of every block of rows.
    let s = generated(42, 70, SampleType::Half);
    let raw = with(&s, Compression::None);
    let exact = own_planes(&raw);
    for compression in [Compression::B44, Compression::B44a] {
        let file = with(&s, compression);
        let planes = own_planes(&file);
        for (p, q) in planes.iter().zip(&exact) {
            for (i, (v, e)) in p.samples.iter().zip(&q.samples).enumerate() {
                let (x, y) = (i % p.width, i / p.width);
                let what = format!("{compression:?} {} ({x}, {y})", p.name);
                let flat = x * p.x_sampling < 16 && y * p.y_sampling < 16;
                if p.name == "A" || flat {
                    // Float alpha is stored raw; flat blocks come back exact.
                    assert_eq!(v, e, "{what}");
                } else {
                    // B44 keeps each difference between neighbours of a
                    // 4x4 block in 6 bits: with `range` the spread of the
                    // block's ordered 16-bit forms, the step is at most
                    // about range / 31, the error half of it.
                    let ordered = |v: f32| i32::from(b44::to_ordered(f16::from_f32(v).to_bits()));
                    let block: Vec<i32> = (0..16)
                        .map(|k| (4 * (x / 4) + k % 4, 4 * (y / 4) + k / 4))
                        .filter(|&(bx, by)| bx < p.width && by < p.height)
                        .map(|(bx, by)| ordered(q.samples[by * p.width + bx]))
                        .collect();
                    let range = block.iter().max().unwrap() - block.iter().min().unwrap();
                    let error = (ordered(*v) - ordered(*e)).abs();
                    assert!(error <= range / 16 + 1, "{what}: {v} vs {e}, range {range}");
                }
            }
        }
        let pixels = decode(&file);
        assert_eq!(
            pixels[0],
            decode(&raw)[0],
            "{compression:?}: the flat corner"
        );
    }
    // B44A spends 3 bytes on each of the flat corner's blocks, B44 14.
    assert!(with(&s, Compression::B44a).len() < with(&s, Compression::B44).len());
}

#[test]
fn b44_plinear_channels_are_stored_as_exp_of_their_values() {
    // pLinear halves go through exp(h / 8) before packing and 8 ln(h)
    // after: the quantisation steps follow the values' size, not their
    // logarithm's.
    let (w, h) = (8, 4);
    let values: Vec<f32> = (0..w * h)
        .map(|i| {
            if i % w < 4 {
                3.5
            } else {
                -1.0 + (i % w + i / w) as f32 / 4.0
            }
        })
        .collect();
    let window = testdata::window(0, 0, w, h);
    let s = Spec {
        data_window: window,
        display_window: window,
        channels: vec![Channel {
            sample_type: SampleType::Half,
            p_linear: true,
            ..Channel::float("Y", values.clone())
        }],
        chromaticities: None,
        compression: Compression::B44a,
    };
    let mut file = with(&s, Compression::B44a);
    let got = own_planes(&file)[0].samples.clone();
    for (i, (&v, &g)) in values.iter().zip(&got).enumerate() {
        // Flat blocks: the two conversions' rounding only. Others: B44's
        // error on exp(v / 8) (a few thousandths), times 8 / exp(v / 8).
        let tolerance = if i % w < 4 { 2e-3 } else { 0.04 };
        assert!((g - v).abs() < tolerance, "sample {i}: {g} vs {v}");
    }
    // The stored values are exp(v / 8): read as not pLinear, that is what
    // comes back.
    let flag = b"Y\0\x01\0\0\0\x01";
    let at = file.windows(flag.len()).position(|x| x == flag).unwrap() + flag.len() - 1;
    file[at] = 0;
    let stored = own_planes(&file)[0].samples.clone();
    for (i, (&v, &g)) in values.iter().zip(&stored).enumerate() {
        let e = (v / 8.0).exp();
        assert!(
            (g - e).abs() < 5e-3 * e,
            "sample {i}: {g} vs exp({v} / 8) = {e}"
        );
    }
}

/// A full-resolution file written by the `exr` crate.
fn exr_crate_file(compression: exr::compression::Compression) -> Vec<u8> {
    use exr::prelude::*;
    let (w, h) = (23usize, 37usize);
    let smooth = |i: usize, k: f32| {
        let (x, y) = ((i % w) as f32, (i / w) as f32);
        if x < 8.0 && y < 8.0 {
            k
        } else {
            k * (1.0 + 0.4 * (x / 3.0 + k).sin() * (y / 4.0).cos()) - 0.3
        }
    };
    let half = |k: f32| FlatSamples::F16((0..w * h).map(|i| f16::from_f32(smooth(i, k))).collect());
    let channel = |name: &str, sample_data, quantize_linearly| AnyChannel {
        name: name.into(),
        sample_data,
        quantize_linearly,
        sampling: Vec2(1, 1),
    };
    let channels = AnyChannels::sort(SmallVec::from_vec(vec![
        channel("Y", half(1.5), false),
        channel("P", half(0.7), true),
        channel(
            "Z",
            FlatSamples::F32((0..w * h).map(|i| smooth(i, 1e5)).collect()),
            false,
        ),
        channel(
            "U",
            FlatSamples::U32((0..w * h).map(|i| (i * 2_654_435_761) as u32).collect()),
            false,
        ),
    ]));
    let encoding = Encoding {
        compression,
        blocks: Blocks::ScanLines,
        line_order: LineOrder::Increasing,
    };
    let layer = Layer::new((w, h), LayerAttributes::default(), encoding, channels);
    let mut bytes = std::io::Cursor::new(Vec::new());
    Image::from_layer(layer)
        .write()
        .non_parallel()
        .to_buffered(&mut bytes)
        .unwrap();
    bytes.into_inner()
}

#[test]
fn the_exr_crate_and_the_project_decode_the_same_bytes_alike() {
    use exr::compression::Compression as C;
    for (compression, ours) in [
        (C::PXR24, Compression::Pxr24),
        (C::B44, Compression::B44),
        (C::B44A, Compression::B44a),
    ] {
        // The crate's encoder, both decoders.
        let file = exr_crate_file(compression);
        let theirs = planes::read_flat(&file).unwrap();
        let mine = own_planes(&file);
        assert_same_planes(
            &mine,
            &theirs,
            &format!("{compression:?} written by the crate"),
        );
        // The test encoder, both decoders.
        let s = Spec {
            channels: theirs
                .iter()
                .map(|p| Channel {
                    sample_type: if p.name == "Z" {
                        SampleType::Float
                    } else if p.name == "U" {
                        SampleType::Uint
                    } else {
                        SampleType::Half
                    },
                    p_linear: p.name == "P",
                    ..Channel::float(&p.name, p.samples.clone())
                })
                .collect(),
            ..testdata::rgb(
                testdata::window(3, -5, 23, 37),
                testdata::window(0, 0, 23, 37),
                &[[0.0; 3]; 23 * 37],
            )
        };
        let file = with(&s, ours);
        assert_eq!(compression_code(compression), self::compression(&file));
        let theirs = planes::read_flat(&file).unwrap();
        assert_same_planes(
            &own_planes(&file),
            &theirs,
            &format!("{ours:?} written by the test"),
        );
    }
}

fn compression_code(c: exr::compression::Compression) -> u8 {
    use exr::compression::Compression as C;
    match c {
        C::PXR24 => 5,
        C::B44 => 6,
        C::B44A => 7,
        _ => unreachable!(),
    }
}

#[test]
fn damaged_pxr24_and_b44_files_are_one_line_errors_never_panics() {
    for name in [
        "half_pxr24",
        "float_pxr24",
        "half_b44",
        "float_b44a",
        "half_b44_plinear",
    ] {
        let good = fixture(&format!("luma_chroma_{name}.exr"));
        for at in (300..good.len()).step_by(37) {
            let mut bytes = good.clone();
            bytes[at] ^= 0x5a;
            if let Err(e) = input::decode(&bytes, None) {
                assert!(!e.to_string().contains('\n'), "{e}");
            }
        }
        for len in (300..good.len()).step_by(101) {
            let err = input::decode(&good[..len], None).unwrap_err().to_string();
            assert!(!err.contains('\n'), "{err}");
        }
    }
    // A B44 block with a byte too many is corrupt, not silently accepted.
    let s = generated(8, 8, SampleType::Half);
    let mut file = with(&s, Compression::B44);
    let header = header::parse(&file, 1 << 16, 1 << 28).unwrap();
    let offset = u64::from_le_bytes(file[header.end..header.end + 8].try_into().unwrap()) as usize;
    let size = u32::from_le_bytes(file[offset + 4..offset + 8].try_into().unwrap());
    file[offset + 4..offset + 8].copy_from_slice(&(size + 1).to_le_bytes());
    file.push(0);
    let err = input::decode(&file, None).unwrap_err().to_string();
    assert!(err.contains("B44 data longer than its blocks"), "{err}");
}
