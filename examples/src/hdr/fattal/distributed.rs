//! The tone map of an image split across MPI ranks (the `distributed`
//! feature): every stage of [`tone_map`](super::tone_map) on the ranks'
//! blocks, with the same kernels, giving the same bits as the
//! single-process run on the same device for any rank count.
//!
//! - Luminance, log luminance, the Gaussian pyramid, gradients,
//!   attenuation and divergence run through [`distributed::execute`] on a
//!   [`DistPyramid`] (the halos each kernel reads are exchanged, the clamp
//!   applied at the global edges only).
//! - Ranges are exact all-reduced minima and maxima; the gradient levels'
//!   means come from [`distributed::exact_sum`], the bits of the
//!   single-process [`reduce::exact_mean`](hipacc::reduce::exact_mean).
//! - The Poisson problem is a [`DistPoisson`], bit-identical to the
//!   single-process solver (its Neumann means exact as well), stopped by
//!   the same error estimate from exact maxima of the corrections.
//! - The percentiles come from histograms whose counts are summed exactly.
//! - The colour stage is per pixel: each rank runs the single-process
//!   stage (the vector code where it applies, else the kernel) on its own
//!   block.
//!
//! The pyramid must split over the ranks: a grid whose blocks would vanish
//! before the coarsest level is refused on every rank
//! ([`DistError::PyramidTooDeep`](hipacc::distributed::DistError::PyramidTooDeep)).

use super::{
    colour_kernel, host_colour, locate_percentiles, normalising_scale, pyramid_levels, Encoding,
    Params, Report, BINS, FINE,
};
use crate::hdr::kernels::*;
use hipacc::distributed::multigrid::DistPoisson;
use hipacc::distributed::{self, DistImage, DistPyramid, DistResult};
use hipacc::multigrid::{Bc, CycleOptions, Poisson, Smoother};
use hipacc::prelude::*;
use hipacc::BackendKind;
use std::time::Instant;

/// Levels of the Poisson hierarchy at most this many pixels on their
/// longer side are gathered onto rank 0 and solved there: below it the
/// halo exchanges cost more than the work they split.
const GATHER_AT: usize = 64;

/// Tone-maps the distributed image `input` (linear RGB, alpha ignored)
/// into a new distributed image on its grid, each rank's blocks on its
/// device `dev` (the CPU or a GPU backend). Collective: every rank calls
/// it with its block; every rank gets the report. The output equals
/// [`tone_map`](super::tone_map)'s on one process on the same kind of
/// device, bit for bit.
///
/// ```no_run
/// use hipacc::distributed::{self, DistImage, Grid};
/// use hipacc::prelude::*;
/// use hipacc_examples::hdr::fattal::{distributed::tone_map, Encoding, Params};
/// use std::rc::Rc;
///
/// let universe = distributed::initialize()?;
/// let grid = Rc::new(Grid::new(&universe.world(), 320, 200)?);
/// let hdr = DistImage::from_fn(&grid, |x, y| {
///     let v = if x > 160 { 1000.0 } else { 0.01 * (1 + y) as f32 };
///     Rgba::new(v, v * 0.8, v * 0.6, 1.0)
/// })?;
/// let (out, report) = tone_map(&Device::cpu(), &hdr, &Params::default(), Encoding::Gamma(2.2), &|_| {})?;
/// if let Some(image) = out.gather(0)? {
///     println!("{}x{} after {} cycles", image.width(), image.height(), report.cycles);
/// }
/// # Ok::<(), distributed::DistError>(())
/// ```
pub fn tone_map(
    dev: &Device,
    input: &DistImage<Rgba<f32>>,
    params: &Params,
    encoding: Encoding,
    progress: &dyn Fn(&str),
) -> DistResult<(DistImage<Rgba<f32>>, Report)> {
    let grid = input.grid();
    let (w, h) = (grid.width(), grid.height());
    let mut ms = Vec::new();
    let mut clock = Instant::now();
    let mut lap = |name: &'static str| {
        ms.push((name, clock.elapsed().as_secs_f64() * 1e3));
        progress(name);
        clock = Instant::now();
    };

    let y = DistImage::<f32>::new(grid)?;
    let luminance = |scale: f32| -> DistResult<(f32, f32)> {
        distributed::execute(dev, &y, |r| Luminance {
            rgb: r.accessor(input, Boundary::Clamp),
            scale,
        })?;
        Ok((distributed::min(dev, &y)?, distributed::max(dev, &y)?))
    };
    let (mut lo, mut hi) = luminance(1.0)?;
    let scale = normalising_scale(hi);
    if scale != 1.0 {
        (lo, hi) = luminance(scale)?;
    }
    lap("luminance");

    let flat = hi <= lo;
    let levels = pyramid_levels(w, h);
    let g = DistPyramid::<f32>::zeros(grid, levels)?;
    let g0 = g.level(0)?;
    distributed::execute(dev, &g0, |r| LogLuminance {
        y: r.accessor(&y, Boundary::Clamp),
        lo,
        scale: if flat { 0.0 } else { 100.0 / (hi - lo) },
    })?;
    lap("log");

    for k in 1..levels {
        let (fine, coarse) = (g.level(k - 1)?, g.level(k)?);
        distributed::execute(dev, &coarse, |r| Decimate {
            fine: r.accessor(&fine, Boundary::Clamp),
        })?;
    }
    lap("pyramid");

    let grads = DistPyramid::<f32>::like(&g)?;
    let mut thresholds = Vec::with_capacity(levels);
    for k in 0..levels {
        let (gk, hk) = (grads.level(k)?, g.level(k)?);
        distributed::execute(dev, &gk, |r| GradientMagnitude {
            h: r.accessor(&hk, Boundary::Clamp),
            inv_divider: 1.0 / (1u64 << (k + 1)) as f32,
        })?;
        let size = gk.grid().width() * gk.grid().height();
        let mean = distributed::exact_sum(&gk)? / size as f64;
        thresholds.push(params.alpha * mean as f32);
    }
    lap("gradients");

    let fi = DistPyramid::<f32>::like(&g)?;
    let coarsest = levels - 1;
    let (fc, gc) = (fi.level(coarsest)?, grads.level(coarsest)?);
    distributed::execute(dev, &fc, |r| Attenuation {
        grad: r.accessor(&gc, Boundary::Clamp),
        a: thresholds[coarsest],
        noise: params.noise,
        beta: params.beta,
    })?;
    for k in (0..coarsest).rev() {
        let (here, coarse, grad) = (fi.level(k)?, fi.level(k + 1)?, grads.level(k)?);
        distributed::execute(dev, &here, |r| PropagateAttenuation {
            coarse: r.accessor(&coarse, Boundary::Clamp),
            grad: r.accessor(&grad, Boundary::Clamp),
            a: thresholds[k],
            noise: params.noise,
            beta: params.beta,
            apply: i32::from(k >= params.detail_level),
        })?;
    }
    lap("attenuation");

    let solver_levels = Poisson::<f32>::default_levels(w, h, Bc::Neumann);
    let mut poisson = DistPoisson::<f32>::new(grid, solver_levels, Bc::Neumann, 1.0, GATHER_AT)?;
    let fi0 = fi.level(0)?;
    distributed::execute(dev, poisson.rhs(), |r| NegDivergence {
        h: r.accessor(&g0, Boundary::Clamp),
        fi: r.accessor(&fi0, Boundary::Clamp),
    })?;
    lap("divergence");

    // The single-process run's cycle (see `pipeline`).
    let opts = CycleOptions::new(params.cycle, Smoother::RedBlack, 2, 1)
        .fused(true)
        .graph(params.replay);
    poisson.fmg(dev, &opts, 1)?;
    let report = poisson.solve_to_error(dev, &opts, params.tol, params.max_cycles)?;
    lap("solve");

    let u = poisson.solution();
    let range = (
        f64::from(distributed::min(dev, u)?),
        f64::from(distributed::max(dev, u)?),
    );
    let (ulo, uhi) = locate_percentiles(
        range,
        (params.black_point, params.white_point),
        |lo, top| distributed::histogram(dev, u, BINS / FINE, lo, top),
        |lo, top, coarse_bins| {
            let mut counts = [[0u64; FINE]; 2];
            for (out, bin) in counts.iter_mut().zip(coarse_bins) {
                let window = bin * FINE..(bin + 1) * FINE;
                out.copy_from_slice(&distributed::histogram_window(
                    dev, u, BINS, lo, top, window,
                )?);
            }
            Ok(counts)
        },
    )?;
    lap("normalise");

    let b = grid.my_block();
    let (rgb_b, y_b, u_b) = (block(input)?, block(&y)?, block(u)?);
    let colour = colour_kernel((&rgb_b, &y_b, &u_b), params, encoding, (ulo, uhi), scale);
    // As in the single-process run: vector code of its own on the CPU.
    let on_host = if dev.kind() == BackendKind::Cpu {
        host_colour::colour(&colour, &rgb_b, &y_b, &u_b)?
    } else {
        None
    };
    let out_b = match on_host {
        Some(out) => out,
        None => {
            let out = Image::<Rgba<f32>>::new(b.width, b.height)?;
            colour.execute(dev, &IterationSpace::full(&out))?;
            out
        }
    };
    let pixels = out_b.read()?;
    let out = DistImage::from_fn(grid, |x, y| pixels[(y - b.y) * b.width + (x - b.x)])?;
    lap("colour");

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

/// This rank's block of `image` as an image of its own.
fn block<T: hipacc::core::Pixel>(image: &DistImage<T>) -> DistResult<Image<T>> {
    let b = image.grid().my_block();
    Ok(Image::from_vec(b.width, b.height, image.block_pixels()?)?)
}
