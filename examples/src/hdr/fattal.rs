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
//!    On the CPU, gamma encoding runs as AVX2 vector code of its own where
//!    the processor has it (`host_colour`): the kernel's per-pixel `powf`
//!    calls were the largest single cost of a run.
//!
//! The defaults are pfstmo_fattal02's (alpha 1, beta 0.9, saturation 0.8,
//! noise 0.002, detail level 3, black point 0.1 %, white point 0.5 %,
//! gamma 0.8). Differences from it: the gradient field uses the zero-flux
//! boundary of the cell-centred solver (pfstmo's DCT solver mirrors about
//! the edge pixel and adjusts the first row and column instead), and odd
//! pyramid sizes round up. Neither is visible away from the edges.

use super::kernels::*;
use hipacc::core::ir;
use hipacc::multigrid::{Bc, CycleKind, CycleOptions, Poisson, Smoother, SolveReport};
use hipacc::prelude::*;
use hipacc::reduce;
use hipacc::{BackendKind, Result};
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
    /// Record the solver's first cycle from each state and replay later
    /// ones ([`CycleOptions::graph`]): the same result, less host work per
    /// cycle.
    pub replay: bool,
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
            replay: false,
        }
    }
}

/// The default tolerance of the Poisson solve, in `U`. An error `δ` in `U`
/// scales a pixel's luminance by `exp(γ δ)`, so a display-encoded value `v`
/// (1/2.2 power) moves by about `v γ δ / 2.2 ≤ 0.36 δ` with the default
/// `γ = 0.8`, except just above the black point, where the normalisation
/// (`exp(γ U)` less its black-point value) and the display curve's steep
/// start multiply the change.
///
/// Measured on the four photographs of `../shared/hdr` (release build, the
/// stop against 30 more cycles, i.e. against `--tol 1e-6`):
///
/// | image | cycles | estimate | error in `U` | error / estimate | 8-bit output |
/// |---|---|---|---|---|---|
/// | CandleGlass.exr | 2 | 1.09e-3 | 1.25e-3 | 1.15 | 0.38 level |
/// | Desk.exr | 2 | 0.90e-3 | 1.25e-3 | 1.39 | 0.38 level |
/// | MtTamWest.exr | 2 | 0.97e-3 | 1.38e-3 | 1.42 | 0.43 level |
/// | memorial.hdr | 2 | 1.01e-3 | 1.39e-3 | 1.37 | 0.12 level |
///
/// ```sh
/// HIPACC_HDR_DIR=../shared/hdr cargo test --release -p hipacc-examples --lib \
///     stopping_rule -- --nocapture
/// ```
///
/// So `2e-3` keeps the 8-bit output within half a level of the exact solve
/// before rounding (the largest changes at the darkest pixels: MtTamWest's
/// 0.43 is at a pixel of 0.3 level; its 99.9th percentile is 0.03 level),
/// and the error in `U` within the factor of 1.7 over the estimate that
/// [`hipacc::multigrid::stopping`] states. That test asserts both on every
/// image it is given (and, without `HIPACC_HDR_DIR`, on flat-and-steps
/// charts, where the ratio is 1.00 and the output moves by 0.06 level).
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

/// Called once the Poisson solve has stopped, with the solver, the cycle
/// options and the solve's report (tests measure the error at the stop).
type AfterSolve<'a> = &'a dyn Fn(&Device, &Poisson<f32>, &CycleOptions, &SolveReport) -> Result<()>;

/// Runs kernels on a device, optionally recording their IR (for `--emit`).
struct Runner<'a> {
    dev: &'a Device,
    record: Option<RefCell<Vec<ir::Kernel>>>,
    after_solve: Option<AfterSolve<'a>>,
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
    let runner = Runner {
        dev,
        record: None,
        after_solve: None,
    };
    pipeline(&runner, input, params, encoding, progress)
}

/// The IR of every kernel a run launches, the Poisson solver's included
/// (run on the CPU on `input`), for emitting sources.
pub fn kernel_irs(input: &Image<Rgba<f32>>, params: &Params) -> Result<Vec<ir::Kernel>> {
    let dev = Device::cpu();
    let runner = Runner {
        dev: &dev,
        record: Some(RefCell::new(Vec::new())),
        after_solve: None,
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
        thresholds.push(params.alpha * level_mean(dev, &gk)? as f32);
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

    // V(2,1): two smoothing sweeps before the coarse correction, one
    // after. On the test photographs the two cycles the stopping rule
    // needs leave an error estimate of about 1e-3, half the default
    // tolerance (V(2,2): about 4e-4), for three quarters of the smoothing;
    // a larger estimate would cost more cycles, never a wrong stop.
    let opts = CycleOptions::new(params.cycle, Smoother::RedBlack, 2, 1)
        .fused(true)
        .graph(params.replay);
    poisson.fmg(dev, &opts, 1)?;
    let report = poisson.solve_to_error(dev, &opts, params.tol, params.max_cycles)?;
    if let Some(after_solve) = r.after_solve {
        after_solve(dev, &poisson, &opts, &report)?;
    }
    lap("solve")?;

    let u = poisson.solution();
    let (ulo, uhi) = percentiles(dev, &u, params.black_point, params.white_point)?;
    lap("normalise")?;

    let colour = colour_kernel((input, &y, &u), params, encoding, (ulo, uhi), scale);
    // On the CPU the stage runs as vector code of its own where it can
    // (see `host_colour`), except when the kernel is being recorded.
    let on_host = if r.record.is_none() && dev.kind() == BackendKind::Cpu {
        host_colour::colour(&colour, input, &y, &u)?
    } else {
        None
    };
    let out = match on_host {
        Some(out) => out,
        None => {
            let out = Image::<Rgba<f32>>::new(w, h)?;
            r.run(colour, &out)?;
            out
        }
    };
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

/// The mean of a gradient level, its threshold's scale. On the host the
/// order-independent [`reduce::exact_mean`]: a run split across ranks
/// takes the same bits from its blocks ([`distributed`]), so the two
/// thresholds, and outputs, are identical. On a GPU the device's own sum.
fn level_mean(dev: &Device, level: &Image<f32>) -> Result<f64> {
    if on_device::reduces_on_device(dev) {
        reduce::mean(dev, level, None)
    } else {
        reduce::exact_mean(level, None)
    }
}

/// The colour stage's kernel on the input colours, their luminance and
/// the solution (`rgb`, `y`, `u`), with the solution's black and white
/// points `(ulo, uhi)` and the luminance scale.
fn colour_kernel(
    (rgb, y, u): (&Image<Rgba<f32>>, &Image<f32>, &Image<f32>),
    params: &Params,
    encoding: Encoding,
    (ulo, uhi): (f32, f32),
    scale: f32,
) -> Colour {
    let (llo, lhi) = ((params.gamma * ulo).exp(), (params.gamma * uhi).exp());
    let (encode, srgb, inv_display_gamma) = match encoding {
        Encoding::Gamma(g) => (1, 0, 1.0 / g),
        Encoding::Srgb => (1, 1, 1.0),
        Encoding::Linear => (0, 0, 1.0),
    };
    Colour {
        rgb: Accessor::new(rgb),
        y: Accessor::new(y),
        u: Accessor::new(u),
        gamma: params.gamma,
        lo: llo,
        inv_range: if lhi > llo { 1.0 / (lhi - llo) } else { 0.0 },
        saturation: params.saturation,
        inv_display_gamma,
        encode,
        srgb,
        scale,
    }
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

/// Bins of the histogram the percentiles are located in.
const BINS: usize = 1 << 16;
/// Fine bins per coarse bin: the histogram is counted in two passes.
const FINE: usize = 1 << 6;

/// The `black` % and `100 - white` % percentiles of `u` (the values of
/// those ranks in sorted order, as pfstmo takes them), located in a
/// 65536-bin histogram over `[min, max]` and interpolated inside the bin.
///
/// The histogram is counted in two passes: 1024 coarse bins of 64 bins
/// each, then the 64 bins of the two coarse bins that hold the ranks. One
/// pass of 65536 bins needs half a megabyte of counts per task, which the
/// allocator maps fresh and the first write faults in page by page: that
/// cost more than counting the pixels. The coarse bin of a value is its
/// fine bin divided by 64, exactly (the bin width scales by a power of
/// two), so the result is the one-pass result, bit for bit.
fn percentiles(dev: &Device, u: &Image<f32>, black: f32, white: f32) -> Result<(f32, f32)> {
    let range = (
        reduce::min(dev, u, None)? as f64,
        reduce::max(dev, u, None)? as f64,
    );
    locate_percentiles(
        range,
        (black, white),
        |lo, top| reduce::histogram(dev, u, None, BINS / FINE, lo, top),
        |lo, top, coarse_bins| {
            if on_device::reduces_on_device(dev) {
                on_device::fine_counts(dev, u, lo, top, coarse_bins)
            } else {
                fine_counts(u, lo, top, coarse_bins)
            }
        },
    )
}

/// The percentiles of [`percentiles`] from the range `(lo, hi)` of the
/// values and their counts: `coarse(lo, top)` the [`BINS`]` / `[`FINE`]
/// coarse bins over `[lo, top)`, `fine(lo, top, [a, b])` the fine bins of
/// coarse bins `a` and `b`. Whoever counts (one device, or the ranks of a
/// distributed image), the same counts give the same bits.
fn locate_percentiles<E>(
    (lo, hi): (f64, f64),
    (black, white): (f32, f32),
    coarse: impl FnOnce(f64, f64) -> std::result::Result<Vec<u64>, E>,
    fine: impl FnOnce(f64, f64, [usize; 2]) -> std::result::Result<[[u64; FINE]; 2], E>,
) -> std::result::Result<(f32, f32), E> {
    if hi <= lo {
        return Ok((lo as f32, hi as f32));
    }
    // Widen the top so the maximum falls inside the last bin.
    let top = hi + (hi - lo) * 1e-6;
    let coarse = coarse(lo, top)?;
    let n: u64 = coarse.iter().sum();
    // The value of rank floor(fraction * n) in sorted order.
    let rank = |fraction: f64| ((fraction * n as f64) as u64).min(n.saturating_sub(1));
    let ranks = [
        rank(0.01 * f64::from(black)),
        rank(1.0 - 0.01 * f64::from(white)),
    ];
    // The coarse bin holding each rank, and the count below it.
    let located = ranks.map(|rank| {
        let mut seen = 0u64;
        for (i, &c) in coarse.iter().enumerate() {
            if seen + c > rank {
                return (i, seen);
            }
            seen += c;
        }
        (coarse.len() - 1, seen)
    });
    let fine = fine(lo, top, [located[0].0, located[1].0])?;
    let value = |k: usize| -> f32 {
        let ((bin, mut seen), rank) = (located[k], ranks[k]);
        for (j, &c) in fine[k].iter().enumerate() {
            if seen + c > rank {
                let inside = (rank - seen) as f64 + 0.5;
                let i = bin * FINE + j;
                let v = lo + (top - lo) * (i as f64 + inside / c as f64) / BINS as f64;
                return v as f32;
            }
            seen += c;
        }
        hi as f32
    };
    Ok((value(0), value(1)))
}

/// The counts of the 64 fine bins of each of two coarse bins, with the
/// bin of a value computed as [`reduce::histogram`] computes it for
/// [`BINS`] bins over `[lo, top)`.
fn fine_counts(u: &Image<f32>, lo: f64, top: f64, bins: [usize; 2]) -> Result<[[u64; FINE]; 2]> {
    let scale = BINS as f64 / (top - lo);
    let mut counts = [[0u64; FINE]; 2];
    for &v in u.read()?.iter() {
        let v = f64::from(v);
        if v >= lo && v < top {
            let b = (((v - lo) * scale) as usize).min(BINS - 1);
            for (k, &bin) in bins.iter().enumerate() {
                if b / FINE == bin {
                    counts[k][b % FINE] += 1;
                }
            }
        }
    }
    Ok(counts)
}

#[cfg(target_arch = "x86_64")]
mod host_colour;
#[cfg(target_arch = "x86_64")]
mod lanes;
/// Elsewhere the colour stage is always the kernel.
#[cfg(not(target_arch = "x86_64"))]
mod host_colour {
    use crate::hdr::kernels::Colour;
    use hipacc::prelude::*;

    pub(super) fn colour(
        _: &Colour,
        _: &Image<Rgba<f32>>,
        _: &Image<f32>,
        _: &Image<f32>,
    ) -> hipacc::Result<Option<Image<Rgba<f32>>>> {
        Ok(None)
    }
}
#[cfg(feature = "distributed")]
pub mod distributed;
mod on_device;

#[cfg(test)]
mod tests;
