//! The pyramid workload of PERF.md on the native CPU backend: Burt-Adelson
//! decomposition (all Laplacian levels stored) plus reconstruction of a
//! 4096x4096 `f32` image with 11 levels, as the `pyramid` example runs it.
//!
//! Prints the median milliseconds of decomposition, reconstruction and both
//! over `HIPACC_BENCH_RUNS` runs (default 7) after one warm-up run, and the
//! ratio to OpenCV's pyrDown/pyrUp pipeline measured on this kind of machine
//! (84 ms, PERF.md; a Python script measures OpenCV side by side).
//! `HIPACC_PYRAMID_SIZE` and `HIPACC_PYRAMID_LEVELS` change the workload.

use anyhow::{Context, Result};
use hipacc::Device;
use hipacc_examples::pyramid::{test_image, BurtAdelson};
use std::time::Instant;

/// OpenCV 5 pyrDown/pyrUp on the reference machine (PERF.md), ms.
const OPENCV_MS: f64 = 84.0;

fn env_usize(name: &str, default: usize) -> Result<usize> {
    match std::env::var(name) {
        Ok(v) => v.trim().parse().with_context(|| format!("{name}={v}")),
        Err(_) => Ok(default),
    }
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() -> Result<()> {
    // `cargo bench` passes `--bench`; a filter that excludes us skips the run.
    if std::env::args()
        .skip(1)
        .any(|a| !a.starts_with('-') && !"pyramid".contains(&a))
    {
        return Ok(());
    }
    let size = env_usize("HIPACC_PYRAMID_SIZE", 4096)?;
    let levels = env_usize("HIPACC_PYRAMID_LEVELS", 11)?;
    let runs = env_usize("HIPACC_BENCH_RUNS", 7)?.max(1);
    let dev = Device::cpu();
    let work = BurtAdelson::new(&test_image(size)?, levels)?;
    let (mut down, mut up) = (Vec::new(), Vec::new());
    for i in 0..=runs {
        let t0 = Instant::now();
        work.decompose(&dev)?;
        let t1 = Instant::now();
        work.reconstruct(&dev)?;
        let t2 = Instant::now();
        if i > 0 {
            down.push((t1 - t0).as_secs_f64() * 1e3);
            up.push((t2 - t1).as_secs_f64() * 1e3);
        }
    }
    let total = median(down.iter().zip(&up).map(|(a, b)| a + b).collect());
    let ratio = if (size, levels) == (4096, 11) {
        format!(", {:.2}x OpenCV's {OPENCV_MS} ms", total / OPENCV_MS)
    } else {
        String::new()
    };
    println!(
        "pyramid {size}x{size}/{levels} cpu: {total:.2} ms median \
         (decompose {:.2} ms, reconstruct {:.2} ms), max error {:e}{ratio}",
        median(down),
        median(up),
        work.max_reconstruction_error()?,
    );
    Ok(())
}
