//! `mpirun -np N hdr-compress IN -o OUT` (the `distributed` feature)
//! writes the single-process run's PNG, byte for byte, for 1 to 4 ranks
//! (`HIPACC_MPI_RANKS` picks others), on an odd-sized Radiance file, on
//! the CPU and with `--backend opencl` on every rank; a
//! missing or corrupt input, or one too small to split over the ranks,
//! stops every rank with one message, a non-zero status and no output
//! file.

mod cli_support;
mod mpi_support;

use cli_support::run;
use mpi_support::{rank_counts, text};
use std::path::Path;
use std::process::Output;

/// `hdr-compress args` under `mpirun` with `ranks` ranks, in `dir`.
fn mpirun(ranks: usize, args: &[&str], dir: &Path) -> Output {
    mpi_support::mpirun(env!("CARGO_BIN_EXE_hdr-compress"), ranks, args, Some(dir))
}

/// A 131x71 scene over six orders of magnitude (a bright window, a
/// gradient, textured shadow), as a Radiance file written by the `image`
/// crate's encoder.
fn write_scene(path: &Path) {
    write_hdr(path, 131, 71);
}

/// The scene of [`write_scene`] at `w x h`.
fn write_hdr(path: &Path, w: usize, h: usize) {
    use image::codecs::hdr::HdrEncoder;
    let pixels: Vec<image::Rgb<f32>> = (0..w * h)
        .map(|i| {
            let (x, y) = (i % w, i / w);
            let window = (90..120).contains(&x) && (10..40).contains(&y);
            let base = if window {
                4000.0
            } else {
                0.01 + 0.5 * x as f32 / w as f32
            };
            let texture = 1.0 + 0.3 * (((x * 7 + y * 13) % 17) as f32 / 17.0);
            image::Rgb([
                base * texture,
                base * 0.8,
                base * (0.5 + y as f32 / h as f32),
            ])
        })
        .collect();
    let file = std::fs::File::create(path).expect("create the input");
    HdrEncoder::new(std::io::BufWriter::new(file))
        .encode(&pixels, w, h)
        .expect("encode the input");
}

#[test]
fn every_rank_count_writes_the_single_process_png() {
    let dir = tempfile::tempdir().expect("temp dir");
    let d = dir.path();
    write_scene(&d.join("scene.hdr"));
    let single = run(&["scene.hdr", "-o", "single.png"], d);
    assert!(single.status.success(), "{}", text(&single));
    let expected = std::fs::read(d.join("single.png")).expect("single-process output");
    for ranks in rank_counts() {
        let name = format!("ranks{ranks}.png");
        let out = mpirun(ranks, &["scene.hdr", "-o", &name], d);
        assert!(out.status.success(), "{ranks} ranks: {}", text(&out));
        // Rank 0 alone names the file it wrote.
        assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), name);
        let got = std::fs::read(d.join(&name)).expect("distributed output");
        assert!(
            got == expected,
            "{ranks} ranks: the PNG differs from the single-process one"
        );
    }
}

/// The same with every rank's blocks on its OpenCL device (PoCL in CI):
/// the single-process run on OpenCL gives the expected PNG. A skip line
/// where no OpenCL device is found.
#[test]
fn every_rank_count_on_opencl_writes_the_single_process_opencl_png() {
    if let Err(e) = hipacc::Device::opencl() {
        println!("[SKIP] opencl: {e}");
        return;
    }
    let dir = tempfile::tempdir().expect("temp dir");
    let d = dir.path();
    write_scene(&d.join("scene.hdr"));
    let opencl = ["--backend", "opencl"];
    let single = run(&["scene.hdr", "-o", "single.png", opencl[0], opencl[1]], d);
    assert!(single.status.success(), "{}", text(&single));
    let expected = std::fs::read(d.join("single.png")).expect("single-process output");
    for ranks in rank_counts() {
        let name = format!("ranks{ranks}.png");
        let out = mpirun(ranks, &["scene.hdr", "-o", &name, opencl[0], opencl[1]], d);
        assert!(out.status.success(), "{ranks} ranks: {}", text(&out));
        let got = std::fs::read(d.join(&name)).expect("distributed output");
        assert!(
            got == expected,
            "{ranks} ranks on OpenCL: the PNG differs from the single-process one"
        );
    }
}

#[test]
fn a_bad_input_stops_every_rank_with_one_message_and_no_output() {
    let dir = tempfile::tempdir().expect("temp dir");
    let d = dir.path();
    std::fs::write(d.join("broken.hdr"), b"#?RADIANCE\nnot really").expect("write");
    write_hdr(&d.join("dot.hdr"), 1, 1);
    // At least two ranks, so that the 1x1 image cannot be split.
    let ranks = rank_counts().into_iter().max().unwrap_or(2).max(2);
    let inputs = [
        ("missing.hdr", "missing.hdr"),
        ("broken.hdr", "broken.hdr"),
        ("dot.hdr", "too small to split"),
    ];
    for (input, says) in inputs {
        let out = mpirun(ranks, &[input, "-o", "out.png"], d);
        let all = text(&out);
        assert!(!out.status.success(), "{input}: {all}");
        let messages: Vec<&str> = all
            .lines()
            .filter(|l| l.starts_with("hdr-compress: "))
            .collect();
        assert_eq!(messages.len(), 1, "{input}: {all}");
        assert!(messages[0].contains(says), "{input}: {all}");
        let left: Vec<_> = std::fs::read_dir(d)
            .expect("list")
            .map(|e| e.expect("entry").file_name())
            .filter(|n| n != "broken.hdr" && n != "dot.hdr")
            .collect();
        assert!(left.is_empty(), "{input}: files left behind: {left:?}");
    }
}
