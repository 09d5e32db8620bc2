//! `user-kernels`: kernels a user writes that the suite does not cover,
//! each beside a baseline, on 2048x2048 images, medians of timed calls.
//!
//! ```text
//! cargo run --release -p hipacc-benches --bin user-kernels [-- --runs N]
//! ```
//!
//! - point operators with `powf` and `ln` (a tone curve, a log scale) and
//!   a threshold with `if`, against the same per-pixel Rust in a rayon loop;
//! - a `u8` image read as `f32`, against a rayon loop;
//! - a 3x3 mask `convolve` (not rank 1) through each boundary mode, against
//!   `Clamp`, and on `f64` and `Rgba<f32>` pixels (2 and 4 times the bytes);
//! - a 5x5 box sum written with `for` loops, against the same sum as a
//!   `Domain` `reduce`;
//! - upsampling by two through an interpolating accessor (`Nearest`,
//!   `Linear`), against a hand-written Rust loop that samples with the
//!   same `f64` arithmetic (its output is checked equal, bit for bit).
//!
//! The ratio column is each row's median over its baseline's.

use anyhow::{bail, ensure, Context, Result};
use hipacc::prelude::*;
use hipacc_benches::local::DomainSum;
use hipacc_benches::workload::{pattern_image, SIZE};
use rayon::prelude::*;
use std::time::Instant;

#[derive(Kernel)]
#[kernel(output = f32)]
struct Gamma {
    input: Accessor<f32>,
    g: f32,
}

#[kernel_body]
impl Gamma {
    fn kernel(&self) -> f32 {
        self.input().powf(self.g)
    }
}

#[derive(Kernel)]
#[kernel(output = f32)]
struct LogScale {
    input: Accessor<f32>,
    k: f32,
}

#[kernel_body]
impl LogScale {
    fn kernel(&self) -> f32 {
        (self.input() + 1.0).ln() * self.k
    }
}

#[derive(Kernel)]
#[kernel(output = f32)]
struct Threshold {
    input: Accessor<f32>,
    t: f32,
}

#[kernel_body]
impl Threshold {
    fn kernel(&self) -> f32 {
        let v = self.input();
        if v > self.t {
            v * 2.0
        } else {
            0.0
        }
    }
}

#[derive(Kernel)]
#[kernel(output = f32)]
struct ToFloat {
    input: Accessor<u8>,
}

#[kernel_body]
impl ToFloat {
    fn kernel(&self) -> f32 {
        self.input() as f32 * 0.003921569
    }
}

#[derive(Kernel)]
#[kernel(output = f32)]
struct Blur3 {
    input: Accessor<f32>,
    mask: Mask<f32, 3, 3>,
}

#[kernel_body]
impl Blur3 {
    fn kernel(&self) -> f32 {
        convolve(&self.mask, Sum, |dx, dy| {
            self.mask.at(dx, dy) * self.input.at(dx, dy)
        })
    }
}

#[derive(Kernel)]
#[kernel(output = f64)]
struct Blur3F64 {
    input: Accessor<f64>,
    mask: Mask<f64, 3, 3>,
}

#[kernel_body]
impl Blur3F64 {
    fn kernel(&self) -> f64 {
        convolve(&self.mask, Sum, |dx, dy| {
            self.mask.at(dx, dy) * self.input.at(dx, dy)
        })
    }
}

#[derive(Kernel)]
#[kernel(output = Rgba<f32>)]
struct Blur3Rgba {
    input: Accessor<Rgba<f32>>,
    mask: Mask<f32, 3, 3>,
}

#[kernel_body]
impl Blur3Rgba {
    fn kernel(&self) -> Rgba<f32> {
        convolve(&self.mask, Sum, |dx, dy| {
            self.mask.at(dx, dy) * self.input.at(dx, dy)
        })
    }
}

#[derive(Kernel)]
#[kernel(output = f32)]
struct ForBox5 {
    input: Accessor<f32>,
}

#[kernel_body]
impl ForBox5 {
    fn kernel(&self) -> f32 {
        let mut acc = 0.0f32;
        for dy in -2..3 {
            for dx in -2..3 {
                acc += self.input.at(dx, dy);
            }
        }
        acc
    }
}

#[derive(Kernel)]
#[kernel(output = f32)]
struct Resample {
    input: Accessor<f32>,
}

#[kernel_body]
impl Resample {
    fn kernel(&self) -> f32 {
        self.input()
    }
}

/// The 3x3 mask (not rank 1).
const MASK3: [[f32; 3]; 3] = [[1.0, 2.0, 1.0], [2.0, 5.0, 2.0], [1.0, 2.0, 3.0]];

fn main() {
    if let Err(e) = run() {
        eprintln!("user-kernels: error: {e:#}");
        std::process::exit(1);
    }
}

fn runs_arg() -> Result<usize> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.as_slice() {
        [] => Ok(9),
        [flag, n] if flag == "--runs" => {
            let n: usize = n.parse().with_context(|| format!("--runs {n}"))?;
            ensure!(
                n >= 3,
                "--runs {n}: at least 3 runs are needed for a median"
            );
            Ok(n)
        }
        _ => bail!("usage: user-kernels [--runs N]"),
    }
}

/// Times `f` (after one warm-up call): the median of `runs` calls, in ms.
fn median_ms(runs: usize, mut f: impl FnMut() -> Result<()>) -> Result<f64> {
    f()?;
    let mut t = Vec::with_capacity(runs);
    for _ in 0..runs {
        let start = Instant::now();
        f()?;
        t.push(start.elapsed().as_secs_f64() * 1e3);
    }
    t.sort_by(f64::total_cmp);
    Ok(t[runs / 2])
}

/// `f` as a call [`median_ms`] times.
fn infallible(mut f: impl FnMut()) -> impl FnMut() -> Result<()> {
    move || {
        f();
        Ok(())
    }
}

/// A point operator `f` over `src` into `dst`, in rayon chunks.
fn hand_point<S: Sync + Copy>(src: &[S], dst: &mut [f32], f: impl Fn(S) -> f32 + Sync) {
    dst.par_chunks_mut(64 * 1024)
        .zip(src.par_chunks(64 * 1024))
        .for_each(|(d, s)| d.iter_mut().zip(s).for_each(|(o, &i)| *o = f(i)));
}

/// Upsampling `src` (`w x h`) by two with Clamp, as an interpolating
/// accessor samples: cell-centred positions, `f64` weights, taps of
/// weight 0 skipped, rows weighed then summed.
fn hand_upsample(src: &[f32], w: usize, h: usize, dst: &mut [f32], linear: bool) {
    let taps = |o: usize, n: usize| -> ([usize; 2], [f64; 2], usize) {
        let p = (o as f64 + 0.5) * n as f64 / (2 * n) as f64 - 0.5;
        let clamp = |i: f64| (i.max(0.0) as usize).min(n - 1);
        if linear {
            let i0 = p.floor();
            let f = p - i0;
            ([clamp(i0), clamp(i0 + 1.0)], [1.0 - f, f], 2)
        } else {
            ([clamp((p + 0.5).floor()), 0], [1.0, 0.0], 1)
        }
    };
    let columns: Vec<_> = (0..2 * w).map(|x| taps(x, w)).collect();
    dst.par_chunks_mut(2 * w).enumerate().for_each(|(y, out)| {
        let (iy, wy, ny) = taps(y, h);
        for (o, &(ix, wx, nx)) in out.iter_mut().zip(&columns) {
            let mut acc = 0.0f64;
            for j in 0..ny {
                if wy[j] == 0.0 {
                    continue;
                }
                let mut row = 0.0f64;
                for i in 0..nx {
                    if wx[i] != 0.0 {
                        row += wx[i] * src[iy[j] * w + ix[i]] as f64;
                    }
                }
                acc += wy[j] * row;
            }
            *o = acc as f32;
        }
    });
}

fn run() -> Result<()> {
    let runs = runs_arg()?;
    let n = SIZE;
    let dev = Device::cpu();
    let input = pattern_image(n, n, 5)?;
    let src = input.to_vec()?;
    let out = Image::<f32>::new(n, n)?;
    let space = IterationSpace::full(&out);
    let mut dst = vec![0.0f32; n * n];
    let clamp = || Accessor::new(&input).with_boundary(Boundary::Clamp);
    let mut rows: Vec<(String, f64, f64)> = Vec::new();
    let mut row = |name: &str, ms: f64, base: f64| rows.push((name.to_string(), ms, base));

    let base = median_ms(
        runs,
        infallible(|| hand_point(&src, &mut dst, |v| v.powf(0.45))),
    )?;
    let ms = median_ms(runs, || {
        Ok(Gamma {
            input: clamp(),
            g: 0.45,
        }
        .execute(&dev, &space)?)
    })?;
    row("powf point operator / Rust loop", ms, base);
    let base = median_ms(
        runs,
        infallible(|| hand_point(&src, &mut dst, |v| (v + 1.0).ln() * 0.7)),
    )?;
    let ms = median_ms(runs, || {
        Ok(LogScale {
            input: clamp(),
            k: 0.7,
        }
        .execute(&dev, &space)?)
    })?;
    row("ln point operator / Rust loop", ms, base);
    let thr = |v: f32| if v > 0.5 { v * 2.0 } else { 0.0 };
    let base = median_ms(runs, infallible(|| hand_point(&src, &mut dst, thr)))?;
    let ms = median_ms(runs, || {
        Ok(Threshold {
            input: clamp(),
            t: 0.5,
        }
        .execute(&dev, &space)?)
    })?;
    row("threshold with if / Rust loop", ms, base);
    let bytes = Image::from_vec(n, n, src.iter().map(|v| (v * 255.0) as u8).collect())?;
    let byte_src = bytes.to_vec()?;
    let base = median_ms(
        runs,
        infallible(|| hand_point(&byte_src, &mut dst, |b| b as f32 * 0.003921569)),
    )?;
    let ms = median_ms(runs, || {
        Ok(ToFloat {
            input: Accessor::new(&bytes),
        }
        .execute(&dev, &space)?)
    })?;
    row("u8 to f32 / Rust loop", ms, base);

    let blur = |b: Boundary<f32>| -> Result<()> {
        let input = Accessor::new(&input).with_boundary(b);
        Ok(Blur3 {
            input,
            mask: Mask::fixed(MASK3)?,
        }
        .execute(&dev, &space)?)
    };
    let base = median_ms(runs, || blur(Boundary::Clamp))?;
    for (name, b) in [
        ("3x3 mask, Mirror / Clamp", Boundary::Mirror),
        ("3x3 mask, Repeat / Clamp", Boundary::Repeat),
        ("3x3 mask, Constant / Clamp", Boundary::Constant(0.0)),
    ] {
        row(name, median_ms(runs, || blur(b))?, base);
    }
    let wide = Image::from_fn(n, n, |x, y| src[y * n + x] as f64)?;
    let wide_out = Image::<f64>::new(n, n)?;
    let ms = median_ms(runs, || {
        let input = Accessor::new(&wide).with_boundary(Boundary::Clamp);
        let mask = Mask::fixed(MASK3.map(|r| r.map(f64::from)))?;
        Ok(Blur3F64 { input, mask }.execute(&dev, &IterationSpace::full(&wide_out))?)
    })?;
    row("3x3 mask, f64 / f32 (2x bytes)", ms, base);
    let colour = Image::from_fn(n, n, |x, y| {
        let v = src[y * n + x];
        Rgba::new(v, v * 0.5, v * 0.25, 1.0)
    })?;
    let colour_out = Image::<Rgba<f32>>::new(n, n)?;
    let ms = median_ms(runs, || {
        let input = Accessor::new(&colour).with_boundary(Boundary::Clamp);
        Ok(Blur3Rgba {
            input,
            mask: Mask::fixed(MASK3)?,
        }
        .execute(&dev, &IterationSpace::full(&colour_out))?)
    })?;
    row("3x3 mask, Rgba<f32> / f32 (4x bytes)", ms, base);

    let base = median_ms(runs, || {
        Ok(DomainSum {
            input: clamp(),
            window: Domain::new(5, 5)?,
        }
        .execute(&dev, &space)?)
    })?;
    let ms = median_ms(runs, || {
        Ok(ForBox5 { input: clamp() }.execute(&dev, &space)?)
    })?;
    row("5x5 sum with for loops / Domain reduce", ms, base);

    let coarse = pattern_image(n / 2, n / 2, 7)?;
    let coarse_src = coarse.to_vec()?;
    for (name, mode, linear) in [
        (
            "upsample x2 Nearest / Rust loop",
            Interpolation::Nearest,
            false,
        ),
        (
            "upsample x2 Linear / Rust loop",
            Interpolation::Linear,
            true,
        ),
    ] {
        let up = || -> Result<()> {
            let input = Accessor::new(&coarse)
                .with_interpolation(mode)
                .with_boundary(Boundary::Clamp);
            Ok(Resample { input }.execute(&dev, &space)?)
        };
        let base = median_ms(
            runs,
            infallible(|| hand_upsample(&coarse_src, n / 2, n / 2, &mut dst, linear)),
        )?;
        let ms = median_ms(runs, up)?;
        ensure!(
            out.to_vec()? == dst,
            "{name}: the kernel and the Rust loop differ"
        );
        row(name, ms, base);
    }

    println!("| kernel / baseline | hipacc-rs ms | baseline ms | ratio |");
    println!("|---|---:|---:|---:|");
    for (name, ms, base) in rows {
        println!("| {name} | {ms:.2} | {base:.2} | {:.2} |", ms / base);
    }
    Ok(())
}
