//! Gradient-domain HDR compression (Fattal, Lischinski, Werman 2002), every
//! per-pixel and stencil stage a DSL kernel on the chosen device.
//!
//! 1. Luminance `Y` (Rec. 709 weights) and its range `[lo, hi]` (global
//!    min/max reductions).
//! 2. `H = ln(100 (Y - lo) / (hi - lo) + 1e-4)`.
//! 3. A Gaussian pyramid of `H`: `[1 2 1]/4` blur then 2x2 mean, while the
//!    shorter side is at least 8 pixels (as pfstmo_fattal02 builds it; our
//!    levels round odd sizes up, its levels round them down).
//! 4. Gradient magnitudes per level (central differences over `2^(k+1)`)
//!    and their means (reductions).
//! 5. Attenuation `φ_k = ((|∇H_k| + noise) / (α · mean_k))^(β - 1)`,
//!    combined from the coarsest level down: `Φ_k = blur(up(Φ_{k+1})) φ_k`,
//!    `φ_k` left out on the `detail_level` finest levels.
//! 6. The attenuated gradients `G = ∇H · Φ` (forward differences) and the
//!    right-hand side `-div G`, in one kernel.
//! 7. `-ΔU = -div G` with zero-flux (pure Neumann) boundaries, solved by
//!    [`hipacc::multigrid`]: full multigrid, then cycles until the error in
//!    `U` estimated from their corrections reaches the tolerance
//!    ([`DEFAULT_TOL`]; a residual test passes on visibly wrong solutions
//!    of images with flat areas and sharp steps, see
//!    [`hipacc::multigrid::stopping`]).
//! 8. `L = exp(γ U)` normalised between its black-point and white-point
//!    percentiles (histogram of `U`), clamped below at 0.
//! 9. Colour `(C / Y)^s · L`, then display encoding: clamped to `[0, 1]`
//!    and raised to `1 / 2.2` (or the sRGB curve); none for linear output.
//!
//! The defaults are pfstmo_fattal02's (alpha 1, beta 0.9, saturation 0.8,
//! noise 0.002, detail level 3, black point 0.1 %, white point 0.5 %,
//! gamma 0.8). Differences from it: the gradient field uses the zero-flux
//! boundary of the cell-centred solver (pfstmo's DCT solver mirrors about
//! the edge pixel and adjusts the first row and column instead), and odd
//! pyramid sizes round up. Neither is visible away from the edges.

use super::kernels::*;
use hipacc::core::ir;
use hipacc::multigrid::{Bc, CycleKind, CycleOptions, Poisson, Smoother};
use hipacc::prelude::*;
use hipacc::reduce;
use hipacc::Result;
use std::cell::RefCell;
use std::time::Instant;

/// Tone-mapping parameters.
#[derive(Clone, Debug, PartialEq)]
pub struct Params {
    /// Gradient threshold as a multiple of the level's mean gradient.
    pub alpha: f32,
    /// Attenuation exponent (below 1 compresses).
    pub beta: f32,
    /// Colour saturation exponent.
    pub saturation: f32,
    /// Gradient magnitude treated as noise.
    pub noise: f32,
    /// Finest levels whose own attenuation is left out.
    pub detail_level: usize,
    /// Percentage of pixels mapped to black.
    pub black_point: f32,
    /// Percentage of pixels mapped to white.
    pub white_point: f32,
    /// Luminance gamma after compression.
    pub gamma: f32,
    /// The cycle of the Poisson solver.
    pub cycle: CycleKind,
    /// The largest error in `U` (log luminance, max norm) the solver stops
    /// at, as estimated from its corrections ([`hipacc::multigrid::stopping`]).
    pub tol: f64,
    /// Most cycles after full multigrid.
    pub max_cycles: usize,
}

impl Default for Params {
    fn default() -> Params {
        Params {
            alpha: 1.0,
            beta: 0.9,
            saturation: 0.8,
            noise: 0.002,
            detail_level: 3,
            black_point: 0.1,
            white_point: 0.5,
            gamma: 0.8,
            cycle: CycleKind::V,
            tol: DEFAULT_TOL,
            max_cycles: 30,
        }
    }
}

/// The default tolerance of the Poisson solve, in `U`. An error `δ` in `U`
/// scales a pixel's luminance by `exp(γ δ)`, so a display-encoded value `v`
/// (1/2.2 power) moves by about `v γ δ / 2.2 ≤ 0.36 δ` with the default
/// `γ = 0.8`: `2e-3`, with the estimate's stated factor of 1.7, keeps 8-bit
/// output within a third of a quantisation step of the exact solve.
pub const DEFAULT_TOL: f64 = 2e-3;

/// How the output is encoded.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Encoding {
    /// Clamped to `[0, 1]`, raised to `1 / gamma` (2.2: a display gamma).
    Gamma(f32),
    /// Clamped to `[0, 1]`, the sRGB transfer curve.
    Srgb,
    /// Linear and unclamped (for OpenEXR).
    Linear,
}

/// The stages, in order, as reported in timings.
pub const STAGES: [&str; 9] = [
    "luminance",
    "log",
    "pyramid",
    "gradients",
    "attenuation",
    "divergence",
    "solve",
    "normalise",
    "colour",
];

/// What a run did.
#[derive(Clone, Debug)]
pub struct Report {
    /// Milliseconds per stage, in [`STAGES`] order.
    pub ms: Vec<(&'static str, f64)>,
    /// Pyramid levels.
    pub levels: usize,
    /// Solver cycles after full multigrid.
    pub cycles: usize,
    /// The solver's final relative residual.
    pub residual: f64,
    /// The solver's estimate of its max-norm error in `U` (log luminance).
    pub error_estimate: f64,
    /// Whether the estimate reached the tolerance within the cycle limit.
    pub converged: bool,
    /// Whether the input had any dynamic range (`false`: constant image,
    /// rendered uniformly).
    pub flat: bool,
}

/// Runs kernels on a device, optionally recording their IR (for `--emit`).
struct Runner<'a> {
    dev: &'a Device,
    record: Option<RefCell<Vec<ir::Kernel>>>,
}

impl Runner<'_> {
    fn run<K: Kernel>(&self, k: K, out: &Image<K::Output>) -> Result<()> {
        if let Some(rec) = &self.record {
            let ir = k.ir()?;
            let mut list = rec.borrow_mut();
            if !list.iter().any(|r| r.stable_hash() == ir.stable_hash()) {
                list.push(ir);
            }
        }
        k.execute(self.dev, &IterationSpace::full(out))
    }
}

fn clamped<T: hipacc::core::Pixel>(img: &Image<T>) -> Accessor<T> {
    Accessor::new(img).with_boundary(Boundary::Clamp)
}

/// The number of Gaussian levels pfstmo_fattal02 uses: halving while the
/// shorter side is at least 8 (at least 1).
pub fn pyramid_levels(width: usize, height: usize) -> usize {
    let mut mins = width.min(height);
    let mut levels = 0;
    while mins >= 8 {
        levels += 1;
        mins /= 2;
    }
    levels.max(1).min(hipacc::max_depth(width, height))
}

/// Tone-maps `input` (linear RGB, alpha ignored) into a new image.
pub fn tone_map(
    dev: &Device,
    input: &Image<Rgba<f32>>,
    params: &Params,
    encoding: Encoding,
    progress: &dyn Fn(&str),
) -> Result<(Image<Rgba<f32>>, Report)> {
    let runner = Runner { dev, record: None };
    pipeline(&runner, input, params, encoding, progress)
}

/// The IR of every kernel a run launches, the Poisson solver's included
/// (run on the CPU on `input`), for emitting sources.
pub fn kernel_irs(input: &Image<Rgba<f32>>, params: &Params) -> Result<Vec<ir::Kernel>> {
    let dev = Device::cpu();
    let runner = Runner {
        dev: &dev,
        record: Some(RefCell::new(Vec::new())),
    };
    pipeline(&runner, input, params, Encoding::Gamma(2.2), &|_| {})?;
    let mut irs = runner.record.map(RefCell::into_inner).unwrap_or_default();
    let (w, h) = (input.width(), input.height());
    let solver = Poisson::<f32>::new(
        w,
        h,
        Poisson::<f32>::default_levels(w, h, Bc::Neumann),
        Bc::Neumann,
        1.0,
    )?;
    irs.extend(solver.kernel_irs()?);
    Ok(irs)
}

fn pipeline(
    r: &Runner<'_>,
    input: &Image<Rgba<f32>>,
    params: &Params,
    encoding: Encoding,
    progress: &dyn Fn(&str),
) -> Result<(Image<Rgba<f32>>, Report)> {
    let dev = r.dev;
    let (w, h) = (input.width(), input.height());
    let mut ms = Vec::new();
    let mut clock = Instant::now();
    let mut lap = |name: &'static str| -> Result<()> {
        dev.synchronize()?;
        ms.push((name, clock.elapsed().as_secs_f64() * 1e3));
        progress(name);
        clock = Instant::now();
        Ok(())
    };

    let y = Image::<f32>::new(w, h)?;
    let luminance = |scale: f32| -> Result<(f32, f32)> {
        r.run(
            Luminance {
                rgb: Accessor::new(input),
                scale,
            },
            &y,
        )?;
        Ok((reduce::min(dev, &y, None)?, reduce::max(dev, &y, None)?))
    };
    let (mut lo, mut hi) = luminance(1.0)?;
    let scale = normalising_scale(hi);
    if scale != 1.0 {
        (lo, hi) = luminance(scale)?;
    }
    lap("luminance")?;

    let flat = hi <= lo;
    let levels = pyramid_levels(w, h);
    let g = Pyramid::<f32>::zeros(w, h, levels)?;
    r.run(
        LogLuminance {
            y: Accessor::new(&y),
            lo,
            scale: if flat { 0.0 } else { 100.0 / (hi - lo) },
        },
        &g.level(0)?,
    )?;
    lap("log")?;

    for k in 1..levels {
        r.run(
            Decimate {
                fine: clamped(&g.level(k - 1)?),
            },
            &g.level(k)?,
        )?;
    }
    lap("pyramid")?;

    let grads = Pyramid::<f32>::like(&g)?;
    let mut thresholds = Vec::with_capacity(levels);
    for k in 0..levels {
        let gk = grads.level(k)?;
        r.run(
            GradientMagnitude {
                h: clamped(&g.level(k)?),
                inv_divider: 1.0 / (1u64 << (k + 1)) as f32,
            },
            &gk,
        )?;
        thresholds.push(params.alpha * reduce::mean(dev, &gk, None)? as f32);
    }
    lap("gradients")?;

    let fi = Pyramid::<f32>::like(&g)?;
    let coarsest = levels - 1;
    r.run(
        Attenuation {
            grad: Accessor::new(&grads.level(coarsest)?),
            a: thresholds[coarsest],
            noise: params.noise,
            beta: params.beta,
        },
        &fi.level(coarsest)?,
    )?;
    for k in (0..coarsest).rev() {
        r.run(
            PropagateAttenuation {
                coarse: clamped(&fi.level(k + 1)?),
                grad: Accessor::new(&grads.level(k)?),
                a: thresholds[k],
                noise: params.noise,
                beta: params.beta,
                apply: i32::from(k >= params.detail_level),
            },
            &fi.level(k)?,
        )?;
    }
    lap("attenuation")?;

    let solver_levels = Poisson::<f32>::default_levels(w, h, Bc::Neumann);
    let poisson = Poisson::<f32>::new(w, h, solver_levels, Bc::Neumann, 1.0)?;
    r.run(
        NegDivergence {
            h: clamped(&g.level(0)?),
            fi: clamped(&fi.level(0)?),
        },
        &poisson.rhs(),
    )?;
    lap("divergence")?;

    let opts = CycleOptions::new(params.cycle, Smoother::RedBlack, 2, 2).fused(true);
    poisson.fmg(dev, &opts, 1)?;
    let report = poisson.solve_to_error(dev, &opts, params.tol, params.max_cycles)?;
    lap("solve")?;

    let u = poisson.solution();
    let (ulo, uhi) = percentiles(dev, &u, params.black_point, params.white_point)?;
    let (llo, lhi) = ((params.gamma * ulo).exp(), (params.gamma * uhi).exp());
    lap("normalise")?;

    let out = Image::<Rgba<f32>>::new(w, h)?;
    let (encode, srgb, inv_display_gamma) = match encoding {
        Encoding::Gamma(g) => (1, 0, 1.0 / g),
        Encoding::Srgb => (1, 1, 1.0),
        Encoding::Linear => (0, 0, 1.0),
    };
    r.run(
        Colour {
            rgb: Accessor::new(input),
            y: Accessor::new(&y),
            u: Accessor::new(&u),
            gamma: params.gamma,
            lo: llo,
            inv_range: if lhi > llo { 1.0 / (lhi - llo) } else { 0.0 },
            saturation: params.saturation,
            inv_display_gamma,
            encode,
            srgb,
            scale,
        },
        &out,
    )?;
    lap("colour")?;

    Ok((
        out,
        Report {
            ms,
            levels,
            cycles: report.cycles,
            residual: report.relative_residual,
            error_estimate: report.error_estimate.unwrap_or(f64::INFINITY),
            converged: report.converged,
            flat,
        },
    ))
}

/// The power of two that brings a largest luminance `hi` to `[0.5, 1)`
/// when it lies outside `[2^-64, 2^64]` (1 inside, and for an image without
/// light). The method is independent of scale: `H` normalises `Y` by its
/// range and colour enters as `C / Y`, and multiplying by a power of two is
/// exact in floating point, so an image and its scaled copy give the same
/// bits wherever neither over- nor underflows. Images far outside the
/// normal range (a photograph times 1e-38 has subnormal pixels, times 1e38
/// overflows `(hi - lo)` reciprocals) are brought back into it first.
fn normalising_scale(hi: f32) -> f32 {
    const LIMIT: f32 = 18_446_744_073_709_551_616.0; // 2^64
    if hi.is_nan() || hi <= 0.0 || (1.0 / LIMIT..=LIMIT).contains(&hi) {
        return 1.0;
    }
    // hi = m 2^e with m in [0.5, 1): the scale is 2^-e, within the powers
    // of two f32 holds (2^-128 is subnormal but exact, and maps the largest
    // f32 below 1; a subnormal hi is scaled by 2^126 at most, into
    // [2^-23, 1)). An overflowed luminance is scaled as the largest f32.
    let e = if hi.is_finite() {
        hi.log2().floor() as i32 + 1
    } else {
        128
    };
    2f64.powi(-e.clamp(-126, 128)) as f32
}

/// The `black` % and `100 - white` % percentiles of `u` (the values of
/// those ranks in sorted order, as pfstmo takes them), located in a
/// 65536-bin histogram over `[min, max]` and interpolated inside the bin.
fn percentiles(dev: &Device, u: &Image<f32>, black: f32, white: f32) -> Result<(f32, f32)> {
    let (lo, hi) = (
        reduce::min(dev, u, None)? as f64,
        reduce::max(dev, u, None)? as f64,
    );
    if hi <= lo {
        return Ok((lo as f32, hi as f32));
    }
    const BINS: usize = 1 << 16;
    // Widen the top so the maximum falls inside the last bin.
    let top = hi + (hi - lo) * 1e-6;
    let hist = reduce::histogram(dev, u, None, BINS, lo, top)?;
    let n: u64 = hist.iter().sum();
    let at = |fraction: f64| -> f32 {
        // The value of rank floor(fraction * n) in sorted order.
        let rank = ((fraction * n as f64) as u64).min(n.saturating_sub(1));
        let mut seen = 0u64;
        for (i, &c) in hist.iter().enumerate() {
            if seen + c > rank {
                let inside = (rank - seen) as f64 + 0.5;
                let v = lo + (top - lo) * (i as f64 + inside / c as f64) / BINS as f64;
                return v as f32;
            }
            seen += c;
        }
        hi as f32
    };
    Ok((
        at(0.01 * f64::from(black)),
        at(1.0 - 0.01 * f64::from(white)),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Pseudo-random positive RGB with a wide range.
    fn hdr_image(w: usize, h: usize) -> Image<Rgba<f32>> {
        Image::from_fn(w, h, |x, y| {
            let k = (x * 31 + y * 17) as f32;
            let v = (0.37 * k).sin().abs() * 1000.0 + 0.01;
            Rgba::new(v, 0.5 * v + 0.1, 0.25 * v + 0.2, 1.0)
        })
        .expect("image")
    }

    fn close(a: &[f32], b: &[f32], tol: f32) {
        assert_eq!(a.len(), b.len());
        for (i, (x, y)) in a.iter().zip(b).enumerate() {
            assert!(
                (x - y).abs() <= tol * (1.0 + y.abs()),
                "pixel {i}: {x} vs {y}"
            );
        }
    }

    fn clamp_at(v: &[f32], w: usize, h: usize, x: i64, y: i64) -> f32 {
        let x = x.clamp(0, w as i64 - 1) as usize;
        let y = y.clamp(0, h as i64 - 1) as usize;
        v[y * w + x]
    }

    #[test]
    fn each_stage_matches_a_host_computation() {
        let dev = Device::cpu();
        let (w, h) = (13, 9);
        let input = hdr_image(w, h);
        let rgb = input.to_vec().expect("pixels");
        let run = |k: &dyn Fn(&Image<f32>) -> Result<()>, ow, oh| {
            let out = Image::<f32>::new(ow, oh).expect("out");
            k(&out).expect("kernel");
            out.to_vec().expect("out")
        };
        // Luminance and log luminance.
        let y = Image::<f32>::new(w, h).expect("y");
        Luminance {
            rgb: Accessor::new(&input),
            scale: 1.0,
        }
        .execute(&dev, &IterationSpace::full(&y))
        .expect("lum");
        let want_y: Vec<f32> = rgb
            .iter()
            .map(|p| 0.2126 * p.r + 0.7152 * p.g + 0.0722 * p.b)
            .collect();
        close(&y.to_vec().expect("y"), &want_y, 1e-6);
        let (lo, hi) = (
            want_y.iter().copied().fold(f32::MAX, f32::min),
            want_y.iter().copied().fold(f32::MIN, f32::max),
        );
        let hv = run(
            &|o| {
                LogLuminance {
                    y: Accessor::new(&y),
                    lo,
                    scale: 100.0 / (hi - lo),
                }
                .execute(&dev, &IterationSpace::full(o))
            },
            w,
            h,
        );
        let want_h: Vec<f32> = want_y
            .iter()
            .map(|v| (100.0 * (v - lo) / (hi - lo) + 1e-4).ln())
            .collect();
        close(&hv, &want_h, 1e-5);
        let himg = Image::from_vec(w, h, want_h.clone()).expect("h");
        // Blur [1 2 1]/4 then 2x2 mean, clamped.
        let (cw, ch) = (w.div_ceil(2), h.div_ceil(2));
        let dec = run(
            &|o| {
                Decimate {
                    fine: clamped(&himg),
                }
                .execute(&dev, &IterationSpace::full(o))
            },
            cw,
            ch,
        );
        let blur = |x: i64, y: i64| {
            let mut s = 0.0;
            for (j, wy) in [(-1, 1.0), (0, 2.0), (1, 1.0)] {
                for (i, wx) in [(-1, 1.0), (0, 2.0), (1, 1.0)] {
                    s += wx * wy * clamp_at(&want_h, w, h, x + i, y + j);
                }
            }
            s / 16.0
        };
        let mut want_dec = Vec::new();
        for yc in 0..ch as i64 {
            for xc in 0..cw as i64 {
                // Past an odd edge the blur reads clamped pixels.
                want_dec.push(
                    0.25 * (blur(2 * xc, 2 * yc)
                        + blur(2 * xc + 1, 2 * yc)
                        + blur(2 * xc, 2 * yc + 1)
                        + blur(2 * xc + 1, 2 * yc + 1)),
                );
            }
        }
        close(&dec, &want_dec, 1e-5);
        // Gradient magnitude at level 1 (divider 4).
        let gm = run(
            &|o| {
                GradientMagnitude {
                    h: clamped(&himg),
                    inv_divider: 0.25,
                }
                .execute(&dev, &IterationSpace::full(o))
            },
            w,
            h,
        );
        let mut want_g = Vec::new();
        for yy in 0..h as i64 {
            for xx in 0..w as i64 {
                let gx = (clamp_at(&want_h, w, h, xx + 1, yy)
                    - clamp_at(&want_h, w, h, xx - 1, yy))
                    / 4.0;
                let gy = (clamp_at(&want_h, w, h, xx, yy + 1)
                    - clamp_at(&want_h, w, h, xx, yy - 1))
                    / 4.0;
                want_g.push((gx * gx + gy * gy).sqrt());
            }
        }
        close(&gm, &want_g, 1e-5);
        // Attenuation propagated from a coarse level, applied here.
        let gimg = Image::from_vec(w, h, want_g.clone()).expect("g");
        let coarse = Image::from_vec(cw, ch, want_dec.clone()).expect("c");
        let (a, noise, beta) = (0.3f32, 0.002f32, 0.9f32);
        let fi = run(
            &|o| {
                PropagateAttenuation {
                    coarse: clamped(&coarse),
                    grad: Accessor::new(&gimg),
                    a,
                    noise,
                    beta,
                    apply: 1,
                }
                .execute(&dev, &IterationSpace::full(o))
            },
            w,
            h,
        );
        let mut want_fi = Vec::new();
        for yy in 0..h as i64 {
            for xx in 0..w as i64 {
                let up = |x: i64, y: i64| {
                    let (x, y) = (x.clamp(0, w as i64 - 1), y.clamp(0, h as i64 - 1));
                    want_dec[(y / 2) as usize * cw + (x / 2) as usize]
                };
                let mut s = 0.0;
                for (j, wy) in [(-1, 1.0), (0, 2.0), (1, 1.0)] {
                    for (i, wx) in [(-1, 1.0), (0, 2.0), (1, 1.0)] {
                        s += wx * wy * up(xx + i, yy + j);
                    }
                }
                let g = want_g[yy as usize * w + xx as usize].max(1e-4);
                want_fi.push(s / 16.0 * ((g + noise) / a).powf(beta - 1.0));
            }
        }
        close(&fi, &want_fi, 1e-5);
        // The right-hand side -div(∇H Φ).
        let fimg = Image::from_vec(w, h, want_fi.clone()).expect("fi");
        let div = run(
            &|o| {
                NegDivergence {
                    h: clamped(&himg),
                    fi: clamped(&fimg),
                }
                .execute(&dev, &IterationSpace::full(o))
            },
            w,
            h,
        );
        let gx = |x: i64, y: i64| {
            if x < 0 || x + 1 >= w as i64 {
                return 0.0;
            }
            (clamp_at(&want_h, w, h, x + 1, y) - clamp_at(&want_h, w, h, x, y))
                * 0.5
                * (clamp_at(&want_fi, w, h, x + 1, y) + clamp_at(&want_fi, w, h, x, y))
        };
        let gy = |x: i64, y: i64| {
            if y < 0 || y + 1 >= h as i64 {
                return 0.0;
            }
            (clamp_at(&want_h, w, h, x, y + 1) - clamp_at(&want_h, w, h, x, y))
                * 0.5
                * (clamp_at(&want_fi, w, h, x, y + 1) + clamp_at(&want_fi, w, h, x, y))
        };
        let mut want_div = Vec::new();
        for yy in 0..h as i64 {
            for xx in 0..w as i64 {
                want_div.push(-(gx(xx, yy) - gx(xx - 1, yy) + gy(xx, yy) - gy(xx, yy - 1)));
            }
        }
        close(&div, &want_div, 1e-4);
    }

    #[test]
    fn the_colour_stage_matches_the_formula() {
        let dev = Device::cpu();
        let input = hdr_image(5, 4);
        let rgb = input.to_vec().expect("rgb");
        let y: Vec<f32> = rgb
            .iter()
            .map(|p| 0.2126 * p.r + 0.7152 * p.g + 0.0722 * p.b)
            .collect();
        let u: Vec<f32> = (0..20).map(|i| i as f32 * 0.1 - 1.0).collect();
        let (yimg, uimg) = (
            Image::from_vec(5, 4, y.clone()).expect("y"),
            Image::from_vec(5, 4, u.clone()).expect("u"),
        );
        let out = Image::<Rgba<f32>>::new(5, 4).expect("out");
        let (gamma, lo, hi, s) = (0.8f32, 0.6f32, 2.0f32, 0.8f32);
        Colour {
            rgb: Accessor::new(&input),
            y: Accessor::new(&yimg),
            u: Accessor::new(&uimg),
            gamma,
            lo,
            inv_range: 1.0 / (hi - lo),
            saturation: s,
            inv_display_gamma: 1.0 / 2.2,
            encode: 1,
            srgb: 0,
            scale: 1.0,
        }
        .execute(&dev, &IterationSpace::full(&out))
        .expect("colour");
        let got = out.to_vec().expect("out");
        for i in 0..20 {
            let l = (((gamma * u[i]).exp() - lo) / (hi - lo)).max(0.0);
            let enc = |c: f32| ((c / y[i]).powf(s) * l).clamp(0.0, 1.0).powf(1.0 / 2.2);
            close(
                &[got[i].r, got[i].g, got[i].b],
                &[enc(rgb[i].r), enc(rgb[i].g), enc(rgb[i].b)],
                1e-5,
            );
        }
    }

    #[test]
    fn the_solve_reaches_its_tolerance_and_the_output_keeps_the_size() {
        let dev = Device::cpu();
        for (w, h) in [(1, 1), (2, 3), (37, 21), (96, 64)] {
            let params = Params::default();
            let (out, report) = tone_map(
                &dev,
                &hdr_image(w, h),
                &params,
                Encoding::Gamma(2.2),
                &|_| {},
            )
            .expect("tone map");
            assert_eq!((out.width(), out.height()), (w, h));
            assert!(
                report.converged && report.error_estimate <= params.tol,
                "{w}x{h}: {report:?}"
            );
            let px = out.to_vec().expect("out");
            assert!(
                px.iter()
                    .all(|p| [p.r, p.g, p.b].iter().all(|c| (0.0..=1.0).contains(c))),
                "{w}x{h}"
            );
        }
    }

    #[test]
    fn percentiles_match_sorting() {
        let dev = Device::cpu();
        let v: Vec<f32> = (0..1000)
            .map(|i| ((i * 7919) % 1000) as f32 * 0.01 - 3.0)
            .collect();
        let img = Image::from_vec(40, 25, v.clone()).expect("img");
        let (lo, hi) = percentiles(&dev, &img, 1.0, 5.0).expect("percentiles");
        let mut s = v.clone();
        s.sort_by(f32::total_cmp);
        assert!((lo - s[10]).abs() < 1e-3, "{lo} vs {}", s[10]);
        assert!((hi - s[950]).abs() < 1e-3, "{hi} vs {}", s[950]);
    }

    #[test]
    fn pyramid_levels_follow_the_short_side() {
        assert_eq!(pyramid_levels(512, 768), 7);
        assert_eq!(pyramid_levels(7, 100), 1);
        assert_eq!(pyramid_levels(1, 1), 1);
        assert_eq!(pyramid_levels(16, 16), 2);
    }
}
