//! `window-sizes`: one `iterate` body (a weighted mean whose weights
//! depend on the pixel, so no window sum separates) over masks of 5x5 and
//! 9x9, with the size in the mask's type and at run time, timed
//! alternately on 2048x2048 f32; medians, with the time per tap and pixel.
//!
//! ```text
//! cargo run --release -p hipacc-benches --bin window-sizes [-- --rounds N]
//! ```
//!
//! The four outputs of a size are first checked equal bit for bit: each
//! path runs the same f32 operations in the same order.

use anyhow::{bail, Context, Result};
use hipacc::prelude::*;
use hipacc_benches::workload::{pattern_image, SIZE};
use std::time::Instant;

/// `Σ w v / (Σ w + ε)` with `w = m(dx, dy) · |v|`.
macro_rules! weighted_mean {
    ($name:ident, $mask:ty) => {
        #[derive(Kernel)]
        #[kernel(output = f32)]
        struct $name {
            input: Accessor<f32>,
            mask: $mask,
        }

        #[kernel_body]
        impl $name {
            fn kernel(&self) -> f32 {
                let mut num = 0.0f32;
                let mut den = 0.0f32;
                iterate(&self.mask, |dx, dy| {
                    let v = self.input.at(dx, dy);
                    let w = self.mask.at(dx, dy) * v.abs();
                    num += w * v;
                    den += w;
                });
                num / (den + 1.0e-6)
            }
        }
    };
}

weighted_mean!(Typed5, Mask<f32, 5, 5>);
weighted_mean!(Typed9, Mask<f32, 9, 9>);
weighted_mean!(Runtime, Mask<f32>);

/// One timed launch.
type Launch<'a> = Box<dyn Fn() -> hipacc::Result<()> + 'a>;

fn main() {
    if let Err(e) = run() {
        eprintln!("window-sizes: error: {e:#}");
        std::process::exit(1);
    }
}

fn rounds_arg() -> Result<usize> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.as_slice() {
        [] => Ok(11),
        [flag, n] if flag == "--rounds" => {
            let n: usize = n.parse().with_context(|| format!("--rounds {n}"))?;
            if n < 3 {
                bail!("--rounds {n}: at least 3 rounds are needed for a median");
            }
            Ok(n)
        }
        _ => bail!("usage: window-sizes [--rounds N]"),
    }
}

/// Coefficient `i` (row-major) of the test masks: not rank 1.
fn coef(i: usize) -> f32 {
    (1 + (i * 7) % 11) as f32 / 50.0
}

fn fixed<const N: usize>() -> hipacc::Result<Mask<f32, N, N>> {
    Ok(Mask::fixed(std::array::from_fn(|r| {
        std::array::from_fn(|c| coef(r * N + c))
    }))?)
}

fn runtime(n: usize) -> hipacc::Result<Mask<f32>> {
    Ok(Mask::from_vec(n, n, (0..n * n).map(coef).collect())?)
}

fn run() -> Result<()> {
    let rounds = rounds_arg()?;
    let input = pattern_image(SIZE, SIZE, 7)?;
    let acc = || Accessor::new(&input).with_boundary(Boundary::Clamp);
    let dev = Device::cpu();
    let outs: Vec<Image<f32>> = (0..4)
        .map(|_| Image::new(SIZE, SIZE))
        .collect::<Result<_, _>>()?;
    let space = |i: usize| IterationSpace::full(&outs[i]);
    let (m5, m9, r5, r9) = (fixed::<5>()?, fixed::<9>()?, runtime(5)?, runtime(9)?);
    let runs: [(&str, usize, Launch<'_>); 4] = [
        (
            "5x5, size in the type",
            25,
            Box::new(|| {
                Typed5 {
                    input: acc(),
                    mask: m5.clone(),
                }
                .execute(&dev, &space(0))
            }),
        ),
        (
            "5x5, run-time size",
            25,
            Box::new(|| {
                Runtime {
                    input: acc(),
                    mask: r5.clone(),
                }
                .execute(&dev, &space(1))
            }),
        ),
        (
            "9x9, size in the type",
            81,
            Box::new(|| {
                Typed9 {
                    input: acc(),
                    mask: m9.clone(),
                }
                .execute(&dev, &space(2))
            }),
        ),
        (
            "9x9, run-time size",
            81,
            Box::new(|| {
                Runtime {
                    input: acc(),
                    mask: r9.clone(),
                }
                .execute(&dev, &space(3))
            }),
        ),
    ];
    for (name, _, f) in &runs {
        f().with_context(|| name.to_string())?;
    }
    for (a, b) in [(0, 1), (2, 3)] {
        let (x, y) = (outs[a].to_vec()?, outs[b].to_vec()?);
        if x.iter().zip(&y).any(|(p, q)| p.to_bits() != q.to_bits()) {
            bail!("`{}` and `{}` differ", runs[a].0, runs[b].0);
        }
    }
    let mut times = vec![Vec::new(); runs.len()];
    for r in 0..rounds {
        for i in 0..runs.len() {
            let i = (i + r) % runs.len();
            let t = Instant::now();
            (runs[i].2)()?;
            times[i].push(t.elapsed().as_secs_f64() * 1e3);
        }
    }
    println!("| mask | ms | ns per tap and pixel |");
    println!("|---|---:|---:|");
    for ((name, taps, _), mut t) in runs.iter().zip(times) {
        t.sort_by(f64::total_cmp);
        let ms = t[t.len() / 2];
        let per = ms * 1e6 / (*taps as f64 * (SIZE * SIZE) as f64);
        println!("| {name} | {ms:.2} | {per:.3} |");
    }
    Ok(())
}
