//! Runs the `filters` binary on generated images and checks its outputs
//! against straightforward host loops, and that every bad input fails with a
//! message, a non-zero exit and no output file.

use hipacc::core::io;
use hipacc::prelude::*;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const BIN: &str = env!("CARGO_BIN_EXE_filters");

const BOUNDARIES: [&str; 6] = [
    "clamp",
    "repeat",
    "mirror",
    "mirror-interior",
    "undefined",
    "constant:0.25",
];

fn filters(args: &[&str]) -> Output {
    Command::new(BIN)
        .args(args)
        .env_remove("HIPACC_BACKEND")
        .output()
        .expect("the filters binary runs")
}

fn path_str(p: &Path) -> &str {
    p.to_str().expect("temporary paths are UTF-8")
}

/// A generated input: a 16-bit gray PNG (so values are exact multiples of
/// 1/65535) of `w x h`, and its pixels as the binary reads them.
fn png_input(dir: &Path, w: u32, h: u32) -> (PathBuf, Vec<f32>) {
    let buf = image::ImageBuffer::from_fn(w, h, |x, y| {
        let v = (x * 7919 + y * 104_729 + x * y * 31) % 65536;
        image::Luma([v as u16])
    });
    let path = dir.join(format!("in-{w}x{h}.png"));
    buf.save(&path).expect("writing the input");
    let px = buf.pixels().map(|p| f32::from(p.0[0]) / 65535.0).collect();
    (path, px)
}

/// A host image with boundary handling on every read.
struct Host<'a> {
    px: &'a [f32],
    w: usize,
    h: usize,
    boundary: Boundary<f32>,
}

impl Host<'_> {
    fn at(&self, x: i64, y: i64) -> f32 {
        let mode = self.boundary.mode();
        match (mode.remap(x, self.w as i64), mode.remap(y, self.h as i64)) {
            (Some(x), Some(y)) => self.px[y as usize * self.w + x as usize],
            _ => match self.boundary {
                Boundary::Constant(c) => c,
                _ => panic!("test bug: undefined read at ({x}, {y})"),
            },
        }
    }

    /// The filter at every pixel; with `Undefined`, 0 where the window leaves
    /// the image.
    fn apply(&self, filter: &str, size: usize) -> Vec<f32> {
        let r = match filter {
            "sobel" | "laplace" => 1,
            "box" => size as i64 / 2,
            _ => 2,
        };
        let (w, h) = (self.w as i64, self.h as i64);
        let mut out = Vec::with_capacity(self.px.len());
        for y in 0..h {
            for x in 0..w {
                let inside = x >= r && y >= r && x + r < w && y + r < h;
                if self.boundary == Boundary::Undefined && !inside {
                    out.push(0.0);
                    continue;
                }
                out.push(self.pixel(filter, size, x, y));
            }
        }
        out
    }

    fn pixel(&self, filter: &str, size: usize, x: i64, y: i64) -> f32 {
        let u = |dx: i64, dy: i64| f64::from(self.at(x + dx, y + dy));
        let binomial = [1.0, 4.0, 6.0, 4.0, 1.0];
        let v = match filter {
            "gaussian5" => (-2..=2i64)
                .flat_map(|dy| (-2..=2i64).map(move |dx| (dx, dy)))
                .map(|(dx, dy)| {
                    binomial[(dx + 2) as usize] * binomial[(dy + 2) as usize] / 256.0 * u(dx, dy)
                })
                .sum(),
            "box" => {
                let r = size as i64 / 2;
                let s: f64 = (-r..=r)
                    .flat_map(|dy| (-r..=r).map(move |dx| (dx, dy)))
                    .map(|(dx, dy)| u(dx, dy))
                    .sum();
                s / (size * size) as f64
            }
            "sobel" => {
                let gx = u(1, -1) + 2.0 * u(1, 0) + u(1, 1) - u(-1, -1) - 2.0 * u(-1, 0) - u(-1, 1);
                let gy = u(-1, 1) + 2.0 * u(0, 1) + u(1, 1) - u(-1, -1) - 2.0 * u(0, -1) - u(1, -1);
                (gx * gx + gy * gy).sqrt()
            }
            "laplace" => u(-1, 0) + u(1, 0) + u(0, -1) + u(0, 1) - 4.0 * u(0, 0),
            "bilateral" => {
                let (ss, sr) = (2.0f64, 0.1f64);
                let c = u(0, 0);
                let (mut num, mut den) = (0.0, 0.0);
                for dy in -2..=2i64 {
                    for dx in -2..=2i64 {
                        let q = u(dx, dy);
                        let d2 = (dx * dx + dy * dy) as f64;
                        let wgt = (-d2 / (2.0 * ss * ss) - (q - c).powi(2) / (2.0 * sr * sr)).exp();
                        num += wgt * q;
                        den += wgt;
                    }
                }
                num / den
            }
            other => panic!("test bug: filter {other}"),
        };
        v as f32
    }
}

fn boundary(name: &str) -> Boundary<f32> {
    match name {
        "clamp" => Boundary::Clamp,
        "repeat" => Boundary::Repeat,
        "mirror" => Boundary::Mirror,
        "mirror-interior" => Boundary::MirrorInterior,
        "undefined" => Boundary::Undefined,
        "constant:0.25" => Boundary::Constant(0.25),
        other => panic!("test bug: boundary {other}"),
    }
}

fn assert_success(out: &Output, what: &str) {
    assert!(
        out.status.success(),
        "{what}: exit {:?}\nstderr: {}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
}

fn assert_close(got: &[f32], want: &[f32], tol: f32, what: &str) {
    assert_eq!(got.len(), want.len(), "{what}: size");
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        // f32 sums of at most 25 terms of magnitude <= 1 (the reference
        // computes in f64): a few ulps of the largest partial sum.
        assert!(
            (g - w).abs() <= tol * (1.0 + w.abs()),
            "{what}: pixel {i}: got {g}, want {w}"
        );
    }
}

const FILTERS: [&str; 5] = ["gaussian5", "box", "sobel", "laplace", "bilateral"];

/// Runs each `(filter, boundary)` of `cases` on `backend` and compares with
/// the host loops within `tol` (relative to 1 + |value|).
fn check_filters(backend: &str, cases: &[(&str, &str)], tol: f32) {
    let dir = tempfile::tempdir().unwrap();
    // 7x5 is narrower than twice the 5x5 window: reads wrap more than once.
    for (w, h) in [(23, 17), (7, 5)] {
        let (input, px) = png_input(dir.path(), w, h);
        for &(filter, b) in cases {
            let what = format!("{filter} {b} {w}x{h} on {backend}");
            let out = dir.path().join(format!("{filter}-{b}-{w}.pfm"));
            let args = [filter, "--boundary", b, "--backend", backend];
            let run = filters(&[&args[..], &[path_str(&input), path_str(&out)]].concat());
            assert_success(&run, &what);
            let got = io::load_luminance(&out).unwrap().to_vec().unwrap();
            let host = Host {
                px: &px,
                w: w as usize,
                h: h as usize,
                boundary: boundary(b),
            };
            // bilateral divides two sums of 25 exponentials.
            let tol = if filter == "bilateral" {
                2.0 * tol
            } else {
                tol
            };
            assert_close(&got, &host.apply(filter, 3), tol, &what);
        }
    }
}

#[test]
fn every_filter_and_boundary_matches_the_host_loops() {
    let cases: Vec<(&str, &str)> = FILTERS
        .iter()
        .flat_map(|&f| BOUNDARIES.iter().map(move |&b| (f, b)))
        .collect();
    // f32 sums of at most 25 terms of magnitude <= 1 against f64 loops, and
    // Rust's `exp`/`sqrt`: a few ulps of the largest partial sum.
    check_filters("cpu", &cases, 1e-5);
}

/// On the GPU backends present: every filter with `clamp` and `laplace`
/// with every boundary (each pair is a program build, which takes seconds
/// to minutes on PoCL; the full matrix is the CPU test's and the
/// conformance suite's).
#[test]
fn gpu_backends_match_the_host_loops_when_present() {
    let cases: Vec<(&str, &str)> = FILTERS
        .iter()
        .map(|&f| (f, "clamp"))
        .chain(
            BOUNDARIES
                .iter()
                .filter(|&&b| b != "clamp")
                .map(|&b| ("laplace", b)),
        )
        .collect();
    for backend in ["opencl", "cuda"] {
        match Device::from_name(backend) {
            // The device's `exp`/`sqrt` may differ from Rust's by a few ulps.
            Ok(_) => check_filters(backend, &cases, 1e-4),
            Err(e) => println!("skipping the {backend} backend: {e}"),
        }
    }
}

#[test]
fn box_sizes() {
    let dir = tempfile::tempdir().unwrap();
    let (input, px) = png_input(dir.path(), 19, 12);
    for size in [1usize, 5, 7] {
        let out = dir.path().join(format!("box{size}.exr"));
        let n = size.to_string();
        let run = filters(&[
            "box",
            "--size",
            &n,
            "--boundary",
            "mirror",
            path_str(&input),
            path_str(&out),
        ]);
        assert_success(&run, &format!("box {size}"));
        let got = io::load_luminance(&out).unwrap().to_vec().unwrap();
        let host = Host {
            px: &px,
            w: 19,
            h: 12,
            boundary: Boundary::Mirror,
        };
        assert_close(&got, &host.apply("box", size), 1e-5, &format!("box {size}"));
    }
}

#[test]
fn png_output_is_16_bit_gray_of_the_clamped_result() {
    let dir = tempfile::tempdir().unwrap();
    let (input, px) = png_input(dir.path(), 16, 9);
    let out = dir.path().join("lap.png");
    let run = filters(&[
        "laplace",
        "--boundary",
        "clamp",
        path_str(&input),
        path_str(&out),
    ]);
    assert_success(&run, "laplace to png");
    let decoded = image::open(&out).unwrap();
    let image::DynamicImage::ImageLuma16(buf) = decoded else {
        panic!("expected 16-bit gray, got {:?}", decoded.color());
    };
    let want = Host {
        px: &px,
        w: 16,
        h: 9,
        boundary: Boundary::Clamp,
    }
    .apply("laplace", 3);
    for (p, w) in buf.pixels().zip(want) {
        let exact = f64::from(w.clamp(0.0, 1.0)) * 65535.0;
        assert!(
            (f64::from(p.0[0]) - exact).abs() <= 0.5 + 1e-2,
            "{} vs {exact}",
            p.0[0]
        );
    }
}

#[test]
fn demo_runs_without_an_input_file() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("demo.exr");
    let run = filters(&["sobel", "--boundary", "mirror", "--demo", path_str(&out)]);
    assert_success(&run, "demo");
    let img = io::load_luminance(&out).unwrap();
    assert_eq!((img.width(), img.height()), (512, 512));
    assert!(
        img.to_vec().unwrap().iter().any(|&v| v > 0.1),
        "the demo image has edges"
    );
}

/// Runs a failing command line (`{IN}`/`{OUT}` stand for paths) and checks
/// the failure is clean: non-zero exit, a message, no panic, no output file,
/// no temporary file left behind.
fn assert_rejected(args: &[&str], input: &Path, expect: &str) {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out.png");
    let args: Vec<&str> = args
        .iter()
        .map(|a| match *a {
            "{IN}" => path_str(input),
            "{OUT}" => path_str(&out),
            other => other,
        })
        .collect();
    let run = filters(&args);
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert!(!run.status.success(), "{args:?} succeeded");
    assert!(!stderr.contains("panicked"), "{args:?} panicked: {stderr}");
    assert!(
        stderr.contains(expect),
        "{args:?}: expected `{expect}` in: {stderr}"
    );
    let left: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
    assert!(left.is_empty(), "{args:?} left files: {left:?}");
}

#[test]
fn bad_inputs_fail_cleanly() {
    let dir = tempfile::tempdir().unwrap();
    let (good, _) = png_input(dir.path(), 12, 10);
    let (tiny, _) = png_input(dir.path(), 3, 3);
    let missing = dir.path().join("missing.png");
    let noise = dir.path().join("noise.dat");
    std::fs::write(
        &noise,
        (0..2000u32)
            .map(|i| (i * 37 % 251) as u8)
            .collect::<Vec<_>>(),
    )
    .unwrap();
    let truncated = dir.path().join("truncated.png");
    let bytes = std::fs::read(&good).unwrap();
    std::fs::write(&truncated, &bytes[..bytes.len() / 2]).unwrap();
    let nan = dir.path().join("nan.pfm");
    let mut pfm = b"Pf\n2 1\n-1.0\n".to_vec();
    pfm.extend(0.5f32.to_le_bytes());
    pfm.extend(f32::NAN.to_le_bytes());
    std::fs::write(&nan, pfm).unwrap();

    let cases: [(&[&str], &Path, &str); 16] = [
        (
            &["box", "--boundary", "clamp", "{IN}", "{OUT}"],
            &missing,
            "cannot read",
        ),
        (
            &["box", "--boundary", "clamp", "{IN}", "{OUT}"],
            &noise,
            "unsupported image format",
        ),
        (
            &["box", "--boundary", "clamp", "{IN}", "{OUT}"],
            &truncated,
            "not a valid PNG",
        ),
        (
            &["box", "--boundary", "clamp", "{IN}", "{OUT}"],
            &nan,
            "NaN or infinite",
        ),
        (
            &["blur", "--boundary", "clamp", "{IN}", "{OUT}"],
            &good,
            "unknown filter `blur`",
        ),
        (
            &["box", "--boundary", "wrap", "{IN}", "{OUT}"],
            &good,
            "unknown boundary `wrap`",
        ),
        (
            &["box", "--boundary", "constant:x", "{IN}", "{OUT}"],
            &good,
            "not a finite number",
        ),
        (
            &["box", "--boundary", "constant:inf", "{IN}", "{OUT}"],
            &good,
            "not a finite number",
        ),
        (
            &["box", "--size", "4", "--boundary", "clamp", "{IN}", "{OUT}"],
            &good,
            "must be odd",
        ),
        (
            &["box", "--size", "0", "--boundary", "clamp", "{IN}", "{OUT}"],
            &good,
            "must be odd",
        ),
        (
            &["box", "--size", "x", "--boundary", "clamp", "{IN}", "{OUT}"],
            &good,
            "--size",
        ),
        (
            &[
                "sobel",
                "--size",
                "3",
                "--boundary",
                "clamp",
                "{IN}",
                "{OUT}",
            ],
            &good,
            "only the `box`",
        ),
        (
            &[
                "box",
                "--boundary",
                "clamp",
                "--backend",
                "gpu",
                "{IN}",
                "{OUT}",
            ],
            &good,
            "unknown backend",
        ),
        (
            &["gaussian5", "--boundary", "undefined", "{IN}", "{OUT}"],
            &tiny,
            "no pixel whose 5x5 window",
        ),
        (
            &["box", "--boundary", "clamp", "--demo", "{IN}", "{OUT}"],
            &good,
            "--demo takes only OUT",
        ),
        (
            &["box", "--boundary", "clamp", "{OUT}"],
            &good,
            "expected IN and OUT",
        ),
    ];
    for (args, input, expect) in cases {
        assert_rejected(args, input, expect);
    }
    // Unknown output formats: refused before any work, nothing written.
    for ext in ["jpg", "txt"] {
        let out = dir.path().join(format!("out.{ext}"));
        let run = filters(&[
            "box",
            "--boundary",
            "clamp",
            path_str(&good),
            path_str(&out),
        ]);
        assert!(!run.status.success());
        assert!(String::from_utf8_lossy(&run.stderr).contains("unsupported output extension"));
        assert!(!out.exists());
    }
    // An output in a missing directory.
    let out = dir.path().join("no/such/dir/out.exr");
    let run = filters(&[
        "box",
        "--boundary",
        "clamp",
        path_str(&good),
        path_str(&out),
    ]);
    assert!(!run.status.success());
    assert!(String::from_utf8_lossy(&run.stderr).contains("cannot write"));
}

/// A Radiance picture as old tools wrote it, with a `VIEW=` line before
/// the `#?RADIANCE` signature: it is read (as `hdr-compress` reads it),
/// its gray pixels as their values, and filtered like any other input.
#[test]
fn radiance_pictures_with_lines_before_the_signature_are_read() {
    let dir = tempfile::tempdir().unwrap();
    let (w, h) = (6usize, 5usize);
    // Gray RGBE pixels `m · 2^(128 - 136)`: exact in f32.
    let mantissas: Vec<u8> = (0..w * h).map(|i| 32 + (i * 37 % 200) as u8).collect();
    let mut bytes =
        format!("VIEW= -vtv -vh 90\n#?RADIANCE\nFORMAT=32-bit_rle_rgbe\n\n-Y {h} +X {w}\n")
            .into_bytes();
    for &m in &mantissas {
        bytes.extend([m, m, m, 128]);
    }
    let input = dir.path().join("old.hdr");
    std::fs::write(&input, bytes).unwrap();
    let out = dir.path().join("box.pfm");
    let run = filters(&[
        "box",
        "--boundary",
        "mirror",
        path_str(&input),
        path_str(&out),
    ]);
    assert_success(&run, "box on an old Radiance picture");
    let px: Vec<f32> = mantissas.iter().map(|&m| f32::from(m) / 256.0).collect();
    let host = Host {
        px: &px,
        w,
        h,
        boundary: Boundary::Mirror,
    };
    let got = io::load_luminance(&out).unwrap().to_vec().unwrap();
    assert_close(
        &got,
        &host.apply("box", 3),
        1e-5,
        "box on an old Radiance picture",
    );
}
