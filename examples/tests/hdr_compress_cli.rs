//! `hdr-compress`'s command line: the input is never overwritten, batch
//! mode (with its progress bar on a terminal only), standard output, flags
//! with negative values, `--help`, and signals while writing. Every input
//! is generated here.

mod cli_support;

use cli_support::{bin, run};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// A colour PFM (`PF`, little-endian, rows bottom to top) of a scene with
/// a bright patch; `seed` varies it.
fn write_pfm(path: &Path, w: usize, h: usize, seed: usize) {
    let mut bytes = format!("PF\n{w} {h}\n-1.0\n").into_bytes();
    for y in (0..h).rev() {
        for x in 0..w {
            let v = 0.01
                + ((x * 13 + y * 7 + seed) % 50) as f32 * 20.0
                + if x > w / 2 && y < h / 4 { 5e4 } else { 0.0 };
            for c in [v, 0.8 * v, 0.6 * v] {
                bytes.extend_from_slice(&c.to_le_bytes());
            }
        }
    }
    std::fs::write(path, bytes).expect("write pfm");
}

/// Every file under `dir`, recursively, sorted.
fn files_in(dir: &Path) -> Vec<PathBuf> {
    let mut v = Vec::new();
    for e in std::fs::read_dir(dir).expect("dir") {
        let p = e.expect("entry").path();
        if p.is_dir() && !p.is_symlink() {
            v.extend(files_in(&p));
        }
        v.push(p);
    }
    v.sort();
    v
}

fn temporaries(dir: &Path) -> Vec<PathBuf> {
    files_in(dir)
        .into_iter()
        .filter(|p| {
            let name = p.file_name().map(|n| n.to_string_lossy().into_owned());
            name.is_some_and(|n| n.ends_with(".tmp") || n.ends_with(".probe"))
        })
        .collect()
}

/// Every file of `dir` with its bytes (directories with none).
fn snapshot(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    files_in(dir)
        .into_iter()
        .map(|p| {
            let bytes = if p.is_file() {
                std::fs::read(&p).expect("read")
            } else {
                vec![]
            };
            (p, bytes)
        })
        .collect()
}

/// Fails with one line on stderr containing `expect`, a non-zero exit and
/// no file created or changed.
fn refused(args: &[&str], dir: &Path, expect: &str) {
    let before = snapshot(dir);
    let out = run(args, dir);
    let err = stderr(&out);
    assert!(!out.status.success(), "{args:?} succeeded");
    assert_eq!(err.trim_end().lines().count(), 1, "{args:?}: {err}");
    assert!(err.contains(expect), "{args:?}: `{err}` lacks `{expect}`");
    assert!(!err.contains("panicked"), "{err}");
    let after = snapshot(dir);
    assert!(before == after, "{args:?} created or changed a file");
}

#[test]
fn the_input_is_never_overwritten_however_its_path_is_spelled() {
    let dir = tempfile::tempdir().expect("tempdir");
    let d = dir.path();
    write_pfm(&d.join("src.pfm"), 24, 16, 0);
    let out = run(&["src.pfm", "-o", "c.exr"], d);
    assert!(out.status.success(), "{}", stderr(&out));
    std::fs::create_dir(d.join("sub")).expect("mkdir");
    let absolute = d.join("c.exr").display().to_string();
    let mut spellings = vec![
        "c.exr".to_string(),
        "./c.exr".to_string(),
        absolute,
        "sub/../c.exr".to_string(),
    ];
    #[cfg(unix)]
    {
        std::os::unix::fs::symlink(d.join("c.exr"), d.join("link.exr")).expect("symlink");
        spellings.push("link.exr".into());
    }
    for o in &spellings {
        refused(&["c.exr", "-o", o], d, "refusing to overwrite");
        refused(
            &["c.exr", "-o", "fine.png", "--before", o],
            d,
            "refusing to overwrite",
        );
        refused(
            &[o, "--out-dir", ".", "--format", "exr"],
            d,
            "refusing to overwrite",
        );
    }
    // Through another spelling of the input, and the default output name.
    refused(&["./c.exr", "--format", "exr"], d, "refusing to overwrite");
    // Decided before the input is read: a file that is no image at all is
    // refused as the output, not as an input.
    std::fs::write(d.join("junk.exr"), b"not an image").expect("write");
    refused(
        &["junk.exr", "-o", "./junk.exr"],
        d,
        "refusing to overwrite",
    );
    refused(
        &["junk.exr", "--out-dir", ".", "--format", "exr"],
        d,
        "refusing to overwrite",
    );
    // Two outputs that are one file.
    refused(
        &["src.pfm", "-o", "same.png", "--before", "./same.png"],
        d,
        "the same file",
    );
}

#[test]
fn batch_mode_goes_past_bad_files_and_summarises() {
    let dir = tempfile::tempdir().expect("tempdir");
    let d = dir.path();
    let inputs = d.join("in");
    std::fs::create_dir(&inputs).expect("mkdir");
    for (i, name) in ["a.pfm", "b.PFM", "c.pfm"].iter().enumerate() {
        write_pfm(&inputs.join(name), 20 + i, 12, i);
    }
    std::fs::write(inputs.join("broken.hdr"), b"#?RADIANCE\nnot really").expect("write");
    std::fs::write(inputs.join("notes.txt"), b"skipped: not an HDR extension").expect("write");

    let out = run(&["in", "--out-dir", "out", "--jobs", "2"], d);
    let err = stderr(&out);
    assert!(
        !out.status.success(),
        "a failed file makes the exit non-zero"
    );
    assert!(
        err.contains("4 files") && err.contains("3 done, 1 refused"),
        "{err}"
    );
    assert!(err.contains("refused: in/broken.hdr:"), "{err}");
    assert_eq!(err.trim_end().lines().count(), 2, "{err}");
    let mut printed: Vec<&str> = std::str::from_utf8(&out.stdout)
        .expect("utf8")
        .lines()
        .collect();
    printed.sort();
    assert_eq!(printed, ["out/a.png", "out/b.png", "out/c.png"]);
    let written: Vec<String> = std::fs::read_dir(d.join("out"))
        .expect("out")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .collect::<std::collections::BTreeSet<_>>()
        .into_iter()
        .collect();
    assert_eq!(written, ["a.png", "b.png", "c.png"]);
    let (w, h) = image::image_dimensions(d.join("out/b.png")).expect("png");
    assert_eq!((w, h), (21, 12));
    assert!(temporaries(d).is_empty());

    // Overlapping the stages of consecutive files (the default) gives the
    // same files.
    let out = run(&["in", "--out-dir", "st"], d);
    let err = stderr(&out);
    assert!(!out.status.success());
    assert!(
        err.contains("stages overlapped") && err.contains("3 done, 1 refused"),
        "{err}"
    );
    for name in ["a.png", "b.png", "c.png"] {
        let staged = std::fs::read(d.join("st").join(name)).expect("staged");
        let files = std::fs::read(d.join("out").join(name)).expect("files");
        assert!(staged == files, "{name} differs between the strategies");
    }
    assert!(!d.join("st/broken.png").exists());

    // One file at a time gives the same bytes as two at a time.
    let out = run(
        &["in/a.pfm", "in/c.pfm", "--out-dir", "one", "--jobs", "1"],
        d,
    );
    assert!(out.status.success(), "{}", stderr(&out));
    for name in ["a.png", "c.png"] {
        let one = std::fs::read(d.join("one").join(name)).expect("one");
        let two = std::fs::read(d.join("out").join(name)).expect("two");
        assert!(one == two, "{name} differs between --jobs 1 and 2");
    }
}

#[test]
fn batch_json_gives_one_object_per_file() {
    let dir = tempfile::tempdir().expect("tempdir");
    let d = dir.path();
    write_pfm(&d.join("x.pfm"), 16, 10, 1);
    std::fs::write(d.join("bad.pfm"), b"PF\n4 4\n-1.0\nshort").expect("write");
    let out = run(
        &[
            "x.pfm",
            "bad.pfm",
            "--out-dir",
            "o",
            "--format",
            "exr",
            "--json",
        ],
        d,
    );
    assert!(!out.status.success());
    let lines: Vec<serde_json::Value> = std::str::from_utf8(&out.stdout)
        .expect("utf8")
        .lines()
        .map(|l| serde_json::from_str(l).expect("one JSON object per line"))
        .collect();
    assert_eq!(lines.len(), 2, "{lines:?}");
    let good = lines.iter().find(|v| v["input"] == "x.pfm").expect("x.pfm");
    assert_eq!(good["output"], "o/x.exr");
    assert!(good["ms"]["solve"].as_f64().is_some() && good.get("error").is_none());
    let bad = lines
        .iter()
        .find(|v| v["input"] == "bad.pfm")
        .expect("bad.pfm");
    assert!(
        bad["error"].as_str().expect("error").contains("bad.pfm"),
        "{bad}"
    );
    assert!(d.join("o/x.exr").is_file() && !d.join("o/bad.exr").exists());
}

#[test]
fn batch_mistakes_are_refused_before_any_work() {
    let dir = tempfile::tempdir().expect("tempdir");
    let d = dir.path();
    std::fs::create_dir_all(d.join("p")).expect("mkdir");
    std::fs::create_dir_all(d.join("q")).expect("mkdir");
    std::fs::create_dir_all(d.join("empty")).expect("mkdir");
    write_pfm(&d.join("p/a.pfm"), 8, 8, 0);
    write_pfm(&d.join("q/a.pfm"), 8, 8, 1);
    refused(
        &["p/a.pfm", "q/a.pfm", "--out-dir", "out"],
        d,
        "p/a.pfm and q/a.pfm would both be written to out/a.png",
    );
    refused(&["p/a.pfm", "q/a.pfm"], d, "--out-dir");
    refused(&["p"], d, "is a directory; give --out-dir");
    refused(&["empty", "--out-dir", "out"], d, "no HDR file");
    refused(
        &["p", "--out-dir", "out", "-o", "x.png"],
        d,
        "exclude each other",
    );
    refused(&["p", "--out-dir", "p/a.pfm"], d, "not a directory");
    refused(
        &["p", "--out-dir", "out", "--jobs", "0"],
        d,
        "--jobs must be at least 1",
    );
    refused(
        &[
            "p",
            "--out-dir",
            "out",
            "--parallel",
            "stages",
            "--jobs",
            "2",
        ],
        d,
        "--jobs applies to --parallel files",
    );
}

#[test]
fn dash_o_dash_writes_the_image_alone_to_stdout() {
    let dir = tempfile::tempdir().expect("tempdir");
    let d = dir.path();
    write_pfm(&d.join("s.pfm"), 19, 11, 2);
    for (format, magic) in [
        ("png", &b"\x89PNG"[..]),
        ("jpg", b"\xff\xd8"),
        ("exr", b"v/1\x01"),
    ] {
        let out = run(&["s.pfm", "-o", "-", "--format", format, "--json"], d);
        assert!(out.status.success(), "{format}: {}", stderr(&out));
        assert!(out.stdout.starts_with(magic), "{format}: not the image");
        let img = image::load_from_memory(&out.stdout).expect("decode stdout");
        assert_eq!((img.width(), img.height()), (19, 11), "{format}");
        // The report goes to stderr; no file is written.
        assert!(
            stderr(&out).contains("\"output\":\"-\""),
            "{}",
            stderr(&out)
        );
    }
    let out = run(&["s.pfm", "-o", "-", "--format", "png"], d);
    let file = run(&["s.pfm", "-o", "file.png"], d);
    assert!(out.status.success() && file.status.success());
    assert!(out.stdout == std::fs::read(d.join("file.png")).expect("file"));
    std::fs::remove_file(d.join("file.png")).expect("rm");
    refused(&["s.pfm", "-o", "-"], d, "--format");
    assert!(
        files_in(d).len() == 1,
        "only the input remains: {:?}",
        files_in(d)
    );
}

#[test]
fn negative_numbers_reach_the_programs_own_checks() {
    let dir = tempfile::tempdir().expect("tempdir");
    let d = dir.path();
    write_pfm(&d.join("g.pfm"), 8, 8, 0);
    for (flag, value, message) in [
        ("--alpha", "-1", "--alpha must be positive, got -1"),
        ("--beta", "-0.5", "--beta must be positive"),
        ("--gamma", "-2", "--gamma must be positive"),
        ("--saturation", "-1", "--saturation must be at least 0"),
        ("--noise", "-1e-3", "--noise must be at least 0"),
        ("--black-point", "-1", "percentages"),
        ("--tol", "-1e-3", "--tol must be in (0, 1)"),
        (
            "--detail-level",
            "-2",
            "--detail-level must be at least 0, got -2",
        ),
        ("--quality", "-5", "--quality must be 1 to 100, got -5"),
        ("--bits", "-8", "--bits must be 8 or 16, got -8"),
    ] {
        refused(&["g.pfm", "-o", "o.png", flag, value], d, message);
    }
}

#[test]
fn an_output_directory_is_named_as_one() {
    let dir = tempfile::tempdir().expect("tempdir");
    let d = dir.path();
    write_pfm(&d.join("g.pfm"), 8, 8, 0);
    std::fs::create_dir(d.join("results")).expect("mkdir");
    refused(&["g.pfm", "-o", "results"], d, "results: is a directory");
    refused(
        &["g.pfm", "-o", "g.png", "--before", "results"],
        d,
        "is a directory",
    );
}

#[test]
fn help_says_where_the_output_goes() {
    let out = bin().arg("--help").output().expect("spawn");
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(out.status.success());
    for phrase in [
        "current directory",
        ".png",
        "hdr-compress-demo.png",
        "--out-dir",
        "standard output",
    ] {
        assert!(text.contains(phrase), "--help lacks `{phrase}`:\n{text}");
    }
}

/// Starts a run that stalls while writing (the documented test hook
/// `HDR_COMPRESS_TEST_STALL_MS`), sends `signal` once its temporary file
/// exists, and checks that the process exits non-zero leaving no file.
#[cfg(unix)]
fn interrupt_while_writing(signal: &str, args: &[&str]) {
    let dir = tempfile::tempdir().expect("tempdir");
    let d = dir.path();
    write_pfm(&d.join("big.pfm"), 300, 200, 3);
    let mut child = bin()
        .args(args)
        .current_dir(d)
        .env("HDR_COMPRESS_TEST_STALL_MS", "60000")
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn");
    let start = Instant::now();
    while temporaries(d).is_empty() {
        assert!(
            start.elapsed() < Duration::from_secs(120),
            "no temporary file appeared"
        );
        if let Some(status) = child.try_wait().expect("wait") {
            panic!("{args:?} ended before writing: {status}");
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    let killed = Command::new("kill")
        .args([signal, &child.id().to_string()])
        .status()
        .expect("kill");
    assert!(killed.success());
    let out = child.wait_with_output().expect("wait");
    assert!(!out.status.success(), "{signal}: exit {:?}", out.status);
    assert!(
        stderr(&out).contains("stopped by signal"),
        "{}",
        stderr(&out)
    );
    assert_eq!(
        files_in(d),
        [d.join("big.pfm"), d.join("o")]
            .iter()
            .filter(|p| p.exists())
            .cloned()
            .collect::<Vec<_>>(),
        "{signal} left a file"
    );
}

#[cfg(unix)]
#[test]
fn a_signal_while_writing_leaves_no_temporary_file() {
    interrupt_while_writing("-TERM", &["big.pfm", "-o", "out.png", "--bits", "16"]);
    interrupt_while_writing("-INT", &["big.pfm", "-o", "out.exr"]);
    interrupt_while_writing("-TERM", &["big.pfm", "--out-dir", "o"]);
}

/// Runs `args` in `dir` under `script`, on a pseudo-terminal (stdout and
/// stderr both); `None` where `script` (util-linux) is missing.
#[cfg(unix)]
fn on_a_terminal(args: &[&str], dir: &Path) -> Option<Output> {
    let quote = |s: &str| format!("'{}'", s.replace('\'', "'\\''"));
    let command: Vec<String> = std::iter::once(env!("CARGO_BIN_EXE_hdr-compress"))
        .chain(args.iter().copied())
        .map(quote)
        .collect();
    Command::new("script")
        .args(["-qefc", &command.join(" "), "/dev/null"])
        .current_dir(dir)
        .env("COLUMNS", "120")
        .stdin(Stdio::null())
        .output()
        .ok()
}

#[cfg(unix)]
#[test]
fn the_progress_bar_shows_on_a_terminal_only() {
    let dir = tempfile::tempdir().expect("tempdir");
    let d = dir.path();
    std::fs::create_dir(d.join("in")).expect("mkdir");
    for (i, name) in ["a.pfm", "b.pfm"].iter().enumerate() {
        write_pfm(&d.join("in").join(name), 24, 16, i);
    }
    // `script` (util-linux, in Debian's essential bsdutils) gives the
    // program a pseudo-terminal; without it this check cannot run.
    let out = on_a_terminal(&["in", "--out-dir", "tty"], d)
        .expect("`script` (util-linux) runs the program on a pseudo-terminal");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}");
    assert!(text.contains("2/2 files"), "no bar on a terminal: {text:?}");
    assert!(text.contains("2 done, 0 refused"), "{text:?}");
    // Not a terminal: no bar, the summary alone on stderr.
    let out = run(&["in", "--out-dir", "piped"], d);
    let err = stderr(&out);
    assert!(out.status.success(), "{err}");
    assert!(!err.contains("files,") && !err.contains('\r'), "{err:?}");
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
}
