//! Smoke tests of the `pyramid` binary on small inputs: reconstruction
//! error, launch counts, the DOT and timing outputs, and bad input.

use std::process::Command;

fn pyramid(args: &[&str]) -> (bool, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_pyramid"))
        .args(args)
        .output()
        .expect("the pyramid binary runs");
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn field(json: &str, name: &str) -> f64 {
    let key = format!("\"{name}\": ");
    let start = json
        .find(&key)
        .unwrap_or_else(|| panic!("{name} in {json}"))
        + key.len();
    let rest = &json[start..];
    let end = rest.find([',', '}']).unwrap_or(rest.len());
    rest[..end]
        .trim()
        .parse()
        .unwrap_or_else(|_| panic!("{name} in {json}"))
}

#[test]
fn json_reports_an_exact_reconstruction() {
    for (size, levels) in [("67", "5"), ("64", "7"), ("1", "1")] {
        let (ok, out, err) = pyramid(&[
            "--size",
            size,
            "--levels",
            levels,
            "--backend",
            "cpu",
            "--runs",
            "1",
            "--json",
        ]);
        assert!(ok, "{err}");
        assert!(field(&out, "max_reconstruction_error") < 1e-5, "{out}");
        let levels: f64 = levels.parse().unwrap();
        assert_eq!(field(&out, "levels"), levels);
        // Per level above the coarsest: a downsample and two two-pass
        // expands; plus one copy in each traversal.
        assert_eq!(field(&out, "kernel_launches"), 5.0 * (levels - 1.0) + 2.0);
        assert!(out.contains("\"backend\": \"cpu\""), "{out}");
    }
}

#[test]
fn dot_and_timings_describe_the_schedule() {
    let dir = tempfile::tempdir().unwrap();
    let dot = dir.path().join("schedule.dot");
    let (ok, out, err) = pyramid(&[
        "--size",
        "40",
        "--levels",
        "4",
        "--backend",
        "cpu",
        "--runs",
        "1",
        "--timings",
        "--dot",
        dot.to_str().unwrap(),
    ]);
    assert!(ok, "{err}");
    assert!(
        out.contains("Downsample") && out.contains("Expand"),
        "{out}"
    );
    let text = std::fs::read_to_string(&dot).unwrap();
    assert!(text.starts_with("digraph"), "{text}");
    // Two V-shaped traversals over 4 levels: 2 x 7 synchronisation points.
    assert_eq!(text.matches("shape=circle").count(), 1);
    assert_eq!(
        text.lines()
            .filter(|l| l.contains("[label=\"") && !l.contains("->"))
            .count(),
        14
    );
}

#[test]
fn bad_input_is_a_clear_error() {
    for (args, needle) in [
        (&["--size", "16", "--levels", "0"][..], "at least 1 level"),
        (&["--size", "16", "--levels", "9"][..], "at most 5"),
        (&["--size", "0"][..], "--size"),
        (&[][..], "--size"),
        (&["--size", "16", "--backend", "vulkan"][..], "vulkan"),
    ] {
        let (ok, _, err) = pyramid(args);
        assert!(!ok, "{args:?}");
        assert!(err.contains(needle), "{args:?}: {err}");
    }
}

/// The OpenCL backend builds the same Laplacian pyramid and reconstruction
/// as the CPU: within 1e-5, the rounding of sums of at most 25 products of
/// values in [0, 1] done in another order (OpenCL may contract to FMA).
#[test]
fn opencl_builds_the_pyramids_of_the_cpu() {
    use hipacc::Device;
    use hipacc_examples::pyramid::{test_image, BurtAdelson};
    let cl = match Device::opencl() {
        Ok(d) => d,
        Err(e) => {
            println!("[SKIP] opencl: {e}");
            return;
        }
    };
    let image = test_image(67).unwrap();
    let levels = 5;
    let (cpu, gpu) = (
        BurtAdelson::new(&image, levels).unwrap(),
        BurtAdelson::new(&image, levels).unwrap(),
    );
    for (work, dev) in [(&cpu, Device::cpu()), (&gpu, cl)] {
        work.decompose(&dev).unwrap();
        work.reconstruct(&dev).unwrap();
    }
    for k in 0..levels {
        let (a, b) = (
            cpu.l.level(k).unwrap().to_vec().unwrap(),
            gpu.l.level(k).unwrap().to_vec().unwrap(),
        );
        let diff = a
            .iter()
            .zip(&b)
            .map(|(x, y)| (x - y).abs())
            .fold(0.0, f32::max);
        assert!(diff <= 1e-5, "level {k}: opencl and cpu differ by {diff}");
    }
    let error = gpu.max_reconstruction_error().unwrap();
    assert!(error < 1e-5, "opencl reconstruction error {error}");
}
