//! The `hdr-compress` binary end to end: the demo scene, real files, and
//! every kind of bad input (clear one-line error, non-zero exit, no output
//! file left behind).

mod cli_support;

use cli_support::run;
use std::path::{Path, PathBuf};

/// A colour PFM (`PF`, little-endian, rows bottom to top).
fn write_pfm(path: &Path, w: usize, h: usize, pixel: impl Fn(usize, usize) -> [f32; 3]) {
    let mut bytes = format!("PF\n{w} {h}\n-1.0\n").into_bytes();
    for y in (0..h).rev() {
        for x in 0..w {
            for c in pixel(x, y) {
                bytes.extend_from_slice(&c.to_le_bytes());
            }
        }
    }
    std::fs::write(path, bytes).expect("write pfm");
}

fn scene(x: usize, y: usize) -> [f32; 3] {
    let v = 0.01 + ((x * 13 + y * 7) % 50) as f32 * 20.0 + if x > 20 && y < 8 { 5e4 } else { 0.0 };
    [v, 0.8 * v, 0.6 * v]
}

fn png_size(path: &Path) -> (u32, u32) {
    let img = image::open(path).expect("read output");
    (img.width(), img.height())
}

fn files_in(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<_> = std::fs::read_dir(dir)
        .expect("dir")
        .map(|e| e.expect("entry").path())
        .collect();
    v.sort();
    v
}

/// Every file of `dir` with its bytes.
fn snapshot(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    files_in(dir)
        .into_iter()
        .map(|p| {
            let bytes = std::fs::read(&p).unwrap_or_default();
            (p, bytes)
        })
        .collect()
}

/// Fails with one line on stderr, a non-zero exit, no new file (no output,
/// no temporary file) and every file as it was (the input unmodified).
fn refused(args: &[&str], dir: &Path, expect: &str) {
    let before = snapshot(dir);
    let out = run(args, dir);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{args:?} succeeded");
    assert_eq!(err.trim_end().lines().count(), 1, "{args:?}: {err}");
    assert!(err.contains(expect), "{args:?}: `{err}` lacks `{expect}`");
    assert!(!err.contains("panicked"), "{err}");
    let after = snapshot(dir);
    assert_eq!(
        after.iter().map(|f| &f.0).collect::<Vec<_>>(),
        before.iter().map(|f| &f.0).collect::<Vec<_>>(),
        "{args:?} left a file"
    );
    assert!(after == before, "{args:?} changed a file");
}

#[test]
fn the_demo_scene_runs_and_reports_json() {
    let dir = tempfile::tempdir().expect("tempdir");
    let out = run(&["--json"], dir.path());
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    for key in [
        "input", "width", "height", "backend", "ms_total", "cycles", "residual",
    ] {
        assert!(json.get(key).is_some(), "missing {key}: {json}");
    }
    assert!(json["ms"]["solve"].as_f64().is_some() && json["ms"]["tonemap"].as_f64().is_some());
    assert!(json["residual"].as_f64().expect("residual") <= 1e-3);
    assert_eq!(
        png_size(&dir.path().join("hdr-compress-demo.png")),
        (768, 512)
    );
}

#[test]
fn files_of_each_output_format_keep_the_input_size() {
    let dir = tempfile::tempdir().expect("tempdir");
    let input = dir.path().join("in.pfm");
    write_pfm(&input, 41, 23, scene);
    for (name, extra) in [
        ("a.png", vec![]),
        ("b.png", vec!["--bits", "16"]),
        ("c.jpg", vec!["--quality", "80"]),
        ("d.exr", vec![]),
    ] {
        let mut args = vec!["in.pfm", "-o", name];
        args.extend(extra);
        let out = run(&args, dir.path());
        assert!(
            out.status.success(),
            "{name}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert_eq!(png_size(&dir.path().join(name)), (41, 23), "{name}");
        assert_eq!(String::from_utf8_lossy(&out.stdout), format!("{name}\n"));
    }
}

#[test]
fn a_run_names_the_files_it_wrote() {
    let dir = tempfile::tempdir().expect("tempdir");
    let input = dir.path().join("scene.pfm");
    write_pfm(&input, 17, 9, scene);
    let out = run(&["scene.pfm", "--before", "lin.png"], dir.path());
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(String::from_utf8_lossy(&out.stdout), "lin.png\nscene.png\n");
    for name in ["lin.png", "scene.png"] {
        assert_eq!(png_size(&dir.path().join(name)), (17, 9), "{name}");
    }
}

#[test]
fn tiny_images_work() {
    let dir = tempfile::tempdir().expect("tempdir");
    for (w, h) in [(1, 1), (2, 3)] {
        let input = dir.path().join(format!("t{w}x{h}.pfm"));
        write_pfm(&input, w, h, scene);
        let out = run(&[input.to_str().expect("utf8"), "-o", "t.png"], dir.path());
        assert!(
            out.status.success(),
            "{w}x{h}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert_eq!(png_size(&dir.path().join("t.png")), (w as u32, h as u32));
    }
}

#[test]
fn invalid_pixels_are_repaired_with_one_warning() {
    let dir = tempfile::tempdir().expect("tempdir");
    let input = dir.path().join("nan.pfm");
    write_pfm(&input, 30, 20, |x, y| match (x, y) {
        (3, 4) => [f32::NAN, 1.0, 1.0],
        (10, 10) => [f32::INFINITY; 3],
        (20, 5) => [-5.0, 2.0, 2.0],
        _ => scene(x, y),
    });
    let out = run(&["nan.pfm", "-o", "out.png"], dir.path());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    assert!(
        err.contains("warning") && err.contains("repaired 3 pixels"),
        "{err}"
    );
    let img = image::open(dir.path().join("out.png"))
        .expect("out")
        .to_rgb8();
    // No artefact spreads: the repaired pixels look like their neighbours.
    let (p, q) = (img.get_pixel(3, 4), img.get_pixel(4, 4));
    assert!(
        p.0.iter().zip(q.0).all(|(a, b)| a.abs_diff(b) < 60),
        "{p:?} vs {q:?}"
    );
}

#[test]
fn bad_input_is_refused_clearly() {
    let dir = tempfile::tempdir().expect("tempdir");
    let d = dir.path();
    write_pfm(&d.join("good.pfm"), 16, 16, scene);
    std::fs::write(d.join("empty.hdr"), b"").expect("write");
    std::fs::write(
        d.join("random.hdr"),
        (0..4096u32)
            .map(|i| (i.wrapping_mul(2654435761) >> 13) as u8)
            .collect::<Vec<_>>(),
    )
    .expect("write");
    std::fs::write(
        d.join("random.exr"),
        (0..4096u32)
            .map(|i| (i.wrapping_mul(2246822519) >> 11) as u8)
            .collect::<Vec<_>>(),
    )
    .expect("write");
    std::fs::write(
        d.join("huge.hdr"),
        b"#?RADIANCE\nFORMAT=32-bit_rle_rgbe\n\n-Y 2000000000 +X 2000000000\n",
    )
    .expect("write");
    let mut truncated = b"#?RADIANCE\nFORMAT=32-bit_rle_rgbe\n\n-Y 64 +X 64\n".to_vec();
    truncated.extend_from_slice(&[128; 300]);
    std::fs::write(d.join("truncated.hdr"), truncated).expect("write");
    write_pfm(&d.join("black.pfm"), 8, 8, |_, _| [0.0; 3]);
    std::fs::write(d.join("notes.txt"), b"not an image").expect("write");

    refused(&["missing.hdr"], d, "missing.hdr");
    refused(&["empty.hdr", "-o", "o.png"], d, "empty");
    refused(&["random.hdr", "-o", "o.png"], d, "random.hdr");
    refused(&["random.exr", "-o", "o.png"], d, "random.exr");
    refused(&["huge.hdr", "-o", "o.png"], d, "huge.hdr");
    refused(&["truncated.hdr", "-o", "o.png"], d, "truncated.hdr");
    refused(&["black.pfm", "-o", "o.png"], d, "no dynamic range");
    refused(&["notes.txt", "-o", "o.png"], d, "notes.txt");
    refused(&["good.pfm", "-o", "o.bmp"], d, "o.bmp");
    refused(&["good.pfm", "-o", "no/such/dir/o.png"], d, "o.png");
    refused(&["good.pfm", "-o", "o.png", "--beta", "0"], d, "--beta");
    refused(
        &[
            "good.pfm",
            "-o",
            "o.png",
            "--white-point",
            "99",
            "--black-point",
            "5",
        ],
        d,
        "percentages",
    );
}

#[test]
fn opencl_output_matches_the_cpu() {
    if let Err(e) = hipacc::Device::opencl() {
        println!("[SKIP] opencl: {e}");
        return;
    }
    let dir = tempfile::tempdir().expect("tempdir");
    write_pfm(&dir.path().join("in.pfm"), 57, 33, scene);
    for backend in ["cpu", "opencl"] {
        let out = run(
            &[
                "in.pfm",
                "-o",
                &format!("{backend}.png"),
                "--backend",
                backend,
            ],
            dir.path(),
        );
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{backend}: {err}");
        // The OpenCL compiler's "N warnings generated." must not reach the
        // user: the generated C compiles without warnings.
        assert!(
            !err.contains("warning"),
            "{backend} printed warnings: {err}"
        );
    }
    let cpu = image::open(dir.path().join("cpu.png"))
        .expect("cpu")
        .to_rgb8();
    let ocl = image::open(dir.path().join("opencl.png"))
        .expect("opencl")
        .to_rgb8();
    // f32 kernels from two compilers: at most a couple of 8-bit levels apart.
    let worst = cpu
        .pixels()
        .zip(ocl.pixels())
        .flat_map(|(a, b)| {
            a.0.iter()
                .zip(b.0)
                .map(|(x, y)| x.abs_diff(y))
                .collect::<Vec<_>>()
        })
        .max();
    assert!(worst.expect("pixels") <= 2, "max difference {worst:?}");
}

/// A multi-part OpenEXR file (two RGB parts), written by the `exr` crate.
fn multi_part_exr() -> Vec<u8> {
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
    image.write().to_buffered(&mut bytes).expect("write");
    bytes.into_inner()
}

#[test]
fn bad_openexr_files_are_refused_naming_the_file_and_the_reason() {
    use hipacc_examples::hdr::exr::header::SampleType;
    use hipacc_examples::hdr::exr::testdata::{self, Compression, Spec};
    let dir = tempfile::tempdir().expect("tempdir");
    let d = dir.path();
    let rgb: Vec<[f32; 3]> = (0..16 * 12).map(|i| [1.0 + i as f32, 2.0, 3.0]).collect();
    let luma_chroma = testdata::luminance_chroma(&rgb, 16, 12, SampleType::Half);
    let set_compression = |mut bytes: Vec<u8>, code: u8| {
        let name = b"compression\0compression\0";
        let at = bytes
            .windows(name.len())
            .position(|x| x == name)
            .expect("attribute");
        bytes[at + name.len() + 4] = code;
        bytes
    };
    let b44 = testdata::write(&Spec {
        compression: Compression::B44,
        ..luma_chroma.clone()
    });
    let mut corrupt_b44 = b44.clone();
    let end = corrupt_b44.len();
    corrupt_b44[end - 20..].fill(0xff);
    let raw = testdata::write(&Spec {
        compression: Compression::None,
        ..luma_chroma
    });
    let cases: Vec<(&str, Vec<u8>, &str)> = vec![
        (
            "deep.exr",
            testdata::deep_header(),
            "deep data is not supported",
        ),
        (
            "parts.exr",
            multi_part_exr(),
            "multi-part files are not supported",
        ),
        (
            "htj2k.exr",
            set_compression(raw.clone(), 10),
            "with HTJ2K256 are not supported",
        ),
        ("short.exr", b44[..b44.len() - 30].to_vec(), "truncated"),
        ("corrupt.exr", corrupt_b44, "corrupt block"),
        (
            "magic.exr",
            b"v/1\x01\x02\0\0\0".to_vec(),
            "not a valid OpenEXR file",
        ),
    ];
    for (name, bytes, _) in &cases {
        std::fs::write(d.join(name), bytes).expect("write");
    }
    for (name, _, reason) in &cases {
        refused(&[name, "-o", "o.png"], d, &format!("{name}: "));
        refused(&[name, "-o", "o.png"], d, reason);
    }
}

#[test]
fn a_display_window_missing_the_data_window_is_said_and_the_pixels_mapped() {
    use hipacc_examples::hdr::exr::testdata::{flat_steps_file, WindowCase};
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::write(
        dir.path().join("away.exr"),
        flat_steps_file(WindowCase::Disjoint, 24, 16),
    )
    .expect("write");
    let out = run(&["away.exr", "-o", "o.png"], dir.path());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    assert!(
        err.contains("warning") && err.contains("away.exr") && err.contains("does not overlap"),
        "{err}"
    );
    assert_eq!(png_size(&dir.path().join("o.png")), (24, 16));
}

#[test]
fn denormal_input_maps_like_the_same_image_at_normal_scale() {
    let dir = tempfile::tempdir().expect("tempdir");
    // 2^-136: the scene's values from 0.01 to 5e4 become 1.1e-43 to 5.7e-37;
    // all below 1000 (most pixels) fall under f32's smallest normal number,
    // 1.2e-38, and keep 6 to 16 bits.
    let k = 2f32.powi(-136);
    write_pfm(&dir.path().join("normal.pfm"), 40, 24, scene);
    write_pfm(&dir.path().join("tiny.pfm"), 40, 24, |x, y| {
        scene(x, y).map(|v| v * k)
    });
    for name in ["normal", "tiny"] {
        let out = run(
            &[&format!("{name}.pfm"), "-o", &format!("{name}.png")],
            dir.path(),
        );
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success() && err.is_empty(), "{name}: {err}");
    }
    let a = image::open(dir.path().join("normal.png"))
        .expect("normal")
        .to_rgb8();
    let b = image::open(dir.path().join("tiny.png"))
        .expect("tiny")
        .to_rgb8();
    let worst = a
        .as_raw()
        .iter()
        .zip(b.as_raw())
        .map(|(x, y)| x.abs_diff(*y))
        .max()
        .expect("pixels");
    // Their lost bits move an 8-bit value by one level at most.
    assert!(worst <= 1, "max difference {worst}");
}
