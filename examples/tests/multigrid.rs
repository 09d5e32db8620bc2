//! Smoke tests of the `multigrid` binary on small grids: the JSON report,
//! the plot, and bad input.

use std::process::Command;

fn multigrid(args: &[&str]) -> (bool, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_multigrid"))
        .args(args)
        .output()
        .expect("the multigrid binary runs");
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn field(json: &str, name: &str) -> f64 {
    let key = format!("\"{name}\":");
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

/// V(2,2) weighted Jacobi on 64x64, fused: the report has every field
/// the binary documents, converges at the textbook rate (at most 0.20 per
/// cycle) and writes its plot.
#[test]
fn json_report_and_plot() {
    let dir = std::env::temp_dir().join(format!("hipacc-multigrid-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let plot = dir.join("residuals.svg");
    let (ok, out, err) = multigrid(&[
        "--size",
        "64",
        "--smoother",
        "jacobi",
        "--fused",
        "--json",
        "--plot",
        plot.to_str().unwrap(),
    ]);
    assert!(ok, "{err}");
    for key in [
        "size",
        "levels",
        "cycle",
        "smoother",
        "pre",
        "post",
        "bc",
        "backend",
        "residuals",
        "convergence_factor",
        "error_vs_exact",
        "ms_per_cycle",
    ] {
        assert!(out.contains(&format!("\"{key}\":")), "{key} in {out}");
    }
    assert_eq!(field(&out, "size"), 64.0);
    let rho = field(&out, "convergence_factor");
    assert!(rho > 0.0 && rho <= 0.20, "convergence factor {rho}");
    let svg = std::fs::read_to_string(&plot).unwrap();
    assert!(
        svg.starts_with("<svg") || svg.starts_with("<?xml"),
        "{svg:.80}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn bad_input_is_a_clear_error() {
    for (args, needle) in [
        (
            &["--size", "64", "--smoother", "jacobi", "--omega", "2.5"][..],
            "omega",
        ),
        (&["--size", "64", "--omega", "0"][..], "omega"),
        (&["--size", "64", "--max-cycles", "0"][..], "--max-cycles"),
        (&["--size", "64", "--cycle", "x"][..], "cycle"),
        (&["--size", "64", "--smoother", "sor"][..], "sor"),
        (&["--size", "100", "--levels", "9"][..], "at most 8"),
        (&["--size", "0"][..], "--size"),
        (&["--size", "64", "--backend", "vulkan"][..], "vulkan"),
        (&["--size", "64", "--gather-at", "8"][..], "mpirun"),
    ] {
        let (ok, out, err) = multigrid(args);
        assert!(!ok, "{args:?}: {out}");
        assert!(err.contains(needle), "{args:?}: {err}");
        assert!(!err.contains("panicked"), "{args:?}: {err}");
    }
}

/// A plot path in a missing directory is refused without leaving a file.
#[test]
fn unwritable_plot_is_an_error() {
    let missing = std::env::temp_dir()
        .join(format!("hipacc-multigrid-missing-{}", std::process::id()))
        .join("plot.svg");
    let (ok, _, err) = multigrid(&["--size", "32", "--plot", missing.to_str().unwrap()]);
    assert!(!ok);
    assert!(
        err.contains("plot") || err.contains("No such file"),
        "{err}"
    );
    assert!(!missing.exists());
}
