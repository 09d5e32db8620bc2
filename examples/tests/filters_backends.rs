//! Backend parity and offline emission of the `filters` binary:
//! `--backend opencl` gives the output of `--backend cpu` for every filter
//! and boundary mode (skipped, with a printed line, without an OpenCL
//! device), and `--emit` writes OpenCL and CUDA sources without a device.

use hipacc::core::io;
use hipacc::Device;
use std::path::Path;
use std::process::{Command, Output};

const BIN: &str = env!("CARGO_BIN_EXE_filters");

const FILTERS: [&str; 5] = ["gaussian5", "box", "sobel", "laplace", "bilateral"];

const BOUNDARIES: [&str; 6] = [
    "clamp",
    "repeat",
    "mirror",
    "mirror-interior",
    "undefined",
    "constant:0.25",
];

/// Output agreement between backends: `|opencl - cpu| <= TOL * (1 + |cpu|)`.
/// Both compute in f32 over at most 25 window positions of values in
/// `[0, 1]`; the device may contract multiply-adds and its `exp`/`sqrt`
/// may differ from Rust's by a few ulps: 1e-5 is about 80 ulps at 1.
const TOL: f32 = 1e-5;

fn filters(args: &[&str]) -> Output {
    Command::new(BIN)
        .args(args)
        .env_remove("HIPACC_BACKEND")
        .env_remove("HIPACC_CONFIG")
        .output()
        .expect("the filters binary runs")
}

fn path_str(p: &Path) -> &str {
    p.to_str().expect("temporary paths are UTF-8")
}

fn assert_success(out: &Output, what: &str) {
    assert!(
        out.status.success(),
        "{what}: exit {:?}\nstderr: {}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
}

/// A 16-bit gray PNG of `w x h` with values spread over `[0, 1]`.
fn png_input(dir: &Path, w: u32, h: u32) -> std::path::PathBuf {
    let buf = image::ImageBuffer::from_fn(w, h, |x, y| {
        image::Luma([((x * 7919 + y * 104_729 + x * y * 31) % 65536) as u16])
    });
    let path = dir.join(format!("in-{w}x{h}.png"));
    buf.save(&path).expect("writing the input");
    path
}

fn run_filter(filter: &str, boundary: &str, backend: &str, input: &Path, out: &Path) -> Vec<f32> {
    let what = format!("{filter} {boundary} on {backend}");
    let args = [
        filter,
        "--boundary",
        boundary,
        "--backend",
        backend,
        path_str(input),
        path_str(out),
    ];
    assert_success(&filters(&args), &what);
    io::load_luminance(out).unwrap().to_vec().unwrap()
}

#[test]
fn opencl_matches_cpu_for_every_filter_and_boundary() {
    // About 60 program builds in as many processes: minutes on PoCL when
    // cold. Opt in with HIPACC_SLOW_OPENCL=1 (the test command does);
    // `filters.rs` runs a reduced matrix by default.
    if std::env::var_os("HIPACC_SLOW_OPENCL").is_none() {
        println!(
            "[SKIP] opencl: full filter x boundary matrix; set HIPACC_SLOW_OPENCL=1 to run it"
        );
        return;
    }
    if let Err(e) = Device::opencl() {
        println!("[SKIP] opencl: {e}");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    // 37x29 has interior blocks and every border region; 6x5 is smaller
    // than two blocks and than the 5x5 window (the fallback variant).
    for (w, h) in [(37, 29), (6, 5)] {
        let input = png_input(dir.path(), w, h);
        for filter in FILTERS {
            for b in BOUNDARIES {
                let out_cpu = dir.path().join(format!("{filter}-{b}-{w}-cpu.pfm"));
                let out_cl = dir.path().join(format!("{filter}-{b}-{w}-cl.pfm"));
                let cpu = run_filter(filter, b, "cpu", &input, &out_cpu);
                let cl = run_filter(filter, b, "opencl", &input, &out_cl);
                assert_eq!(cpu.len(), cl.len());
                for (i, (c, g)) in cpu.iter().zip(&cl).enumerate() {
                    assert!(
                        (g - c).abs() <= TOL * (1.0 + c.abs()),
                        "{filter} {b} {w}x{h}: pixel ({}, {}): opencl {g}, cpu {c}",
                        i % w as usize,
                        i / w as usize
                    );
                }
            }
        }
    }
}

#[test]
fn emit_writes_opencl_cuda_and_wgsl_sources_without_a_device() {
    let dir = tempfile::tempdir().unwrap();
    let emit = dir.path().join("src");
    let out = filters(&["--emit", path_str(&emit)]);
    assert_success(&out, "--emit");
    let listed = String::from_utf8_lossy(&out.stdout).to_string();
    let files: Vec<&str> = listed.lines().collect();
    for ext in ["cl", "cu"] {
        assert!(
            files.iter().any(|f| f.ends_with(&format!(".{ext}"))),
            "no .{ext} file in {listed}"
        );
    }
    for f in &files {
        let text = std::fs::read_to_string(f).unwrap();
        assert!(text.contains("hipacc_body_"), "{f}");
    }
    // Every filter's kernel for the h200 target, in CUDA.
    for kernel in ["Gaussian5", "BoxMean", "Sobel", "Laplace", "Bilateral"] {
        assert!(
            files
                .iter()
                .any(|f| f.contains("h200") && f.contains(kernel) && f.ends_with(".cu")),
            "{kernel} for h200 missing in {listed}"
        );
    }

    // One filter, one target: PoCL speaks OpenCL (not CUDA); WGSL is
    // printed for every target.
    let one = dir.path().join("one");
    let args = [
        "sobel",
        "--boundary",
        "mirror",
        "--emit",
        path_str(&one),
        "--target",
        "pocl",
    ];
    let out = filters(&args);
    assert_success(&out, "--emit --target pocl");
    let mut names: Vec<_> = std::fs::read_dir(one.join("pocl"))
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    names.sort();
    assert_eq!(names.len(), 2, "{names:?}");
    assert!(names.iter().all(|n| n.starts_with("Sobel__")), "{names:?}");
    assert!(
        names[0].ends_with(".cl") && names[1].ends_with(".wgsl"),
        "{names:?}"
    );
    assert_eq!(std::fs::read_dir(&one).unwrap().count(), 1);

    let out = filters(&["--target", "list"]);
    assert_success(&out, "--target list");
    let text = String::from_utf8_lossy(&out.stdout);
    for name in ["fermi", "h200", "pocl", "amd-gcn"] {
        assert!(text.contains(name), "{name} missing in {text}");
    }

    let out = filters(&["--emit", path_str(&emit), "--target", "voodoo"]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("voodoo"));
}
