//! Each stage of the pipeline against a host computation.

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
            let gx =
                (clamp_at(&want_h, w, h, xx + 1, yy) - clamp_at(&want_h, w, h, xx - 1, yy)) / 4.0;
            let gy =
                (clamp_at(&want_h, w, h, xx, yy + 1) - clamp_at(&want_h, w, h, xx, yy - 1)) / 4.0;
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
    // 13x3: groups of eight lanes with a partial one at the end, and a
    // black pixel (Y = 0).
    let (w, h) = (13, 3);
    let n = w * h;
    let input = hdr_image(w, h);
    input.write().expect("rgb")[7] = Rgba::new(0.0, 0.0, 0.0, 1.0);
    let rgb = input.to_vec().expect("rgb");
    let y: Vec<f32> = rgb
        .iter()
        .map(|p| 0.2126 * p.r + 0.7152 * p.g + 0.0722 * p.b)
        .collect();
    let u: Vec<f32> = (0..n).map(|i| i as f32 * 0.1 - 1.0).collect();
    let (yimg, uimg) = (
        Image::from_vec(w, h, y.clone()).expect("y"),
        Image::from_vec(w, h, u.clone()).expect("u"),
    );
    let (gamma, lo, hi, s) = (0.8f32, 0.6f32, 2.0f32, 0.8f32);
    let kernel = Colour {
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
    };
    let on_host = host_colour::colour(&kernel, &input, &yimg, &uimg).expect("host colour");
    let out = Image::<Rgba<f32>>::new(w, h).expect("out");
    kernel
        .execute(&dev, &IterationSpace::full(&out))
        .expect("colour");
    let mut results = vec![("kernel", out.to_vec().expect("out"))];
    // The host version exists on x86-64 processors with AVX2 and FMA.
    results.extend(on_host.map(|img| ("host", img.to_vec().expect("host out"))));
    for (name, got) in results {
        for i in 0..n {
            let l = (((gamma * u[i]).exp() - lo) / (hi - lo)).max(0.0);
            let enc = |c: f32| {
                if y[i] > 0.0 {
                    ((c / y[i]).powf(s) * l).clamp(0.0, 1.0).powf(1.0 / 2.2)
                } else {
                    0.0
                }
            };
            let want = [enc(rgb[i].r), enc(rgb[i].g), enc(rgb[i].b)];
            assert_eq!(got[i].a, 1.0, "{name}: alpha of pixel {i}");
            close(&[got[i].r, got[i].g, got[i].b], &want, 1e-5);
        }
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

/// The percentiles from one 65536-bin histogram, as they were located
/// before the two-pass count.
fn one_pass_percentiles(dev: &Device, u: &Image<f32>, black: f32, white: f32) -> (f32, f32) {
    let lo = reduce::min(dev, u, None).expect("min") as f64;
    let hi = reduce::max(dev, u, None).expect("max") as f64;
    let top = hi + (hi - lo) * 1e-6;
    let hist = reduce::histogram(dev, u, None, 1 << 16, lo, top).expect("histogram");
    let n: u64 = hist.iter().sum();
    let at = |fraction: f64| -> f32 {
        let rank = ((fraction * n as f64) as u64).min(n - 1);
        let mut seen = 0u64;
        for (i, &c) in hist.iter().enumerate() {
            if seen + c > rank {
                let inside = (rank - seen) as f64 + 0.5;
                let v = lo + (top - lo) * (i as f64 + inside / c as f64) / (1 << 16) as f64;
                return v as f32;
            }
            seen += c;
        }
        hi as f32
    };
    (
        at(0.01 * f64::from(black)),
        at(1.0 - 0.01 * f64::from(white)),
    )
}

#[test]
fn two_pass_percentiles_equal_one_pass_ones_bit_for_bit() {
    let dev = Device::cpu();
    let (w, h) = (311, 203);
    let mut state = 0x2545_f491u32;
    let v: Vec<f32> = (0..w * h)
        .map(|i| {
            state ^= state << 13;
            state ^= state >> 17;
            state ^= state << 5;
            let noise = (state % 10_000) as f32 * 1e-4;
            ((i % w) as f32 * 0.03).sin() * 4.0 + (i / w) as f32 * 0.01 + noise
        })
        .collect();
    let img = Image::from_vec(w, h, v).expect("img");
    for (black, white) in [(0.1, 0.5), (1.0, 5.0), (0.0, 0.0), (50.0, 49.0)] {
        let got = percentiles(&dev, &img, black, white).expect("percentiles");
        let want = one_pass_percentiles(&dev, &img, black, white);
        assert_eq!(got, want, "black {black} white {white}");
    }
}

#[test]
fn pyramid_levels_follow_the_short_side() {
    assert_eq!(pyramid_levels(512, 768), 7);
    assert_eq!(pyramid_levels(7, 100), 1);
    assert_eq!(pyramid_levels(1, 1), 1);
    assert_eq!(pyramid_levels(16, 16), 2);
}

/// Where the stopping rule stopped a solve, against the solve cycled on.
#[derive(Debug)]
struct Stop {
    cycles: usize,
    /// The rule's estimate of the max-norm error in `U` at the stop.
    estimate: f64,
    /// The max-norm distance in `U` from the stopped solution to the one
    /// that 30 more cycles give (f32 round-off: what `--tol 1e-6` gives).
    error: f64,
    /// The largest difference of the gamma-encoded output from the one of
    /// a `--tol 1e-6` run, in 8-bit levels (before rounding).
    levels: f64,
}

fn stop_of(dev: &Device, input: &Image<Rgba<f32>>, params: &Params) -> Stop {
    let measured = std::cell::Cell::new((0, 0.0, 0.0));
    let after_solve = |dev: &Device, p: &Poisson<f32>, opts: &CycleOptions, r: &SolveReport| {
        let stopped = p.solution().to_vec()?;
        p.solve_to_error(dev, opts, 1e-9, 30)?;
        let error = p
            .solution()
            .to_vec()?
            .iter()
            .zip(&stopped)
            .map(|(a, b)| f64::from((a - b).abs()))
            .fold(0.0, f64::max);
        // The rest of the run goes on from where the rule stopped.
        let u = p.solution();
        let mut u = u.write()?;
        u.iter_mut().zip(&stopped).for_each(|(v, s)| *v = *s);
        let estimate = r.error_estimate.unwrap_or(f64::INFINITY);
        measured.set((r.cycles, estimate, error));
        Ok(())
    };
    let runner = Runner {
        dev,
        record: None,
        after_solve: Some(&after_solve),
    };
    let encoding = Encoding::Gamma(2.2);
    let (out, _) = pipeline(&runner, input, params, encoding, &|_| {}).expect("tone map");
    let tight = Params {
        tol: 1e-6,
        ..params.clone()
    };
    let (exact, _) = tone_map(dev, input, &tight, encoding, &|_| {}).expect("tone map");
    let levels = out
        .to_vec()
        .expect("out")
        .iter()
        .zip(exact.to_vec().expect("exact"))
        .flat_map(|(a, b)| [a.r - b.r, a.g - b.g, a.b - b.b])
        .map(|d| f64::from(d.abs()) * 255.0)
        .fold(0.0, f64::max);
    let (cycles, estimate, error) = measured.get();
    Stop {
        cycles,
        estimate,
        error,
        levels,
    }
}

/// The factor by which the true error at the stop may exceed the estimate
/// (see `hipacc::multigrid::stopping` and [`DEFAULT_TOL`]), plus the f32
/// round-off floor of `U` on these grids, below which the comparison says
/// nothing.
const ESTIMATE_FACTOR: f64 = 1.7;
const ROUND_OFF: f64 = 1e-4;
/// The largest change of the 8-bit output the stop may make, in levels.
const MAX_LEVELS: f64 = 0.5;

/// Whether `stop` keeps what the docs of [`DEFAULT_TOL`] claim.
fn stop_as_documented(stop: &Stop, params: &Params) -> bool {
    stop.estimate <= params.tol
        && stop.error <= ESTIMATE_FACTOR * stop.estimate + ROUND_OFF
        && stop.levels <= MAX_LEVELS
}

/// The stopping rule on flat areas with sharp steps (the charts of
/// `exr::testdata`, odd and even sizes) and, where `HIPACC_HDR_DIR` names a
/// folder, on every image in it, printing a table:
///
/// ```sh
/// HIPACC_HDR_DIR=../shared/hdr cargo test --release -p hipacc-examples --lib \
///     stopping_rule -- --nocapture
/// ```
#[test]
fn the_stopping_rule_estimate_bounds_the_error_at_the_stop() {
    use crate::hdr::exr::testdata::flat_steps;
    let dev = Device::cpu();
    let params = Params::default();
    let mut inputs: Vec<(String, Image<Rgba<f32>>)> = [(301, 155), (256, 128)]
        .iter()
        .map(|&(w, h)| {
            let pixels = flat_steps(w, h)
                .into_iter()
                .map(|[r, g, b]| Rgba::new(r, g, b, 1.0))
                .collect();
            let image = Image::from_vec(w, h, pixels).expect("chart");
            (format!("flat-steps {w}x{h}"), image)
        })
        .collect();
    if let Some(dir) = std::env::var_os("HIPACC_HDR_DIR") {
        let sources = crate::hdr::batch::expand_inputs(&[dir.into()]).expect("HIPACC_HDR_DIR");
        for source in sources {
            let crate::hdr::guard::Source::Path(path) = source else {
                continue;
            };
            let image = crate::hdr::input::load_hdr(&path).expect("image");
            crate::hdr::repair::repair(&image).expect("repair");
            let name = path.file_name().unwrap_or_default().to_string_lossy();
            inputs.push((name.into_owned(), image));
        }
    }
    let mut failed = Vec::new();
    println!("| image | size | cycles | estimate | error at the stop | error / estimate | 8-bit levels |");
    println!("|---|---|---|---|---|---|---|");
    for (name, image) in &inputs {
        let stop = stop_of(&dev, image, &params);
        println!(
            "| {name} | {}x{} | {} | {:.2e} | {:.2e} | {:.2} | {:.3} |",
            image.width(),
            image.height(),
            stop.cycles,
            stop.estimate,
            stop.error,
            stop.error / stop.estimate,
            stop.levels
        );
        if !stop_as_documented(&stop, &params) {
            failed.push(format!("{name}: {stop:?}"));
        }
    }
    assert!(failed.is_empty(), "{failed:#?}");
}

/// Replayed solver cycles give the output of plain ones bit for bit, with
/// the same cycle count: W-cycles to a tolerance f32 cannot reach, so the
/// solve runs to the cycle limit. After the solve both runs take one more
/// cycle, which must be a replay (every launch of its trace replayed) with
/// replay on and plain launches without.
#[test]
fn replayed_cycles_give_the_output_of_plain_ones() {
    let mut devices = vec![Device::cpu()];
    match Device::opencl() {
        Ok(d) => devices.push(d),
        Err(e) => println!("[SKIP] opencl: {e}"),
    }
    let input = hdr_image(67, 45);
    for dev in &devices {
        let run = |replay: bool| {
            let params = Params {
                cycle: CycleKind::W,
                tol: 1e-9,
                max_cycles: 6,
                replay,
                ..Params::default()
            };
            let replayed = std::cell::Cell::new(None);
            let one_more =
                |dev: &Device, p: &Poisson<f32>, opts: &CycleOptions, _: &SolveReport| {
                    let trace = p.cycle(dev, opts)?;
                    let mut launches = trace.launches().peekable();
                    assert!(launches.peek().is_some(), "a cycle launches kernels");
                    replayed.set(Some(launches.all(|l| l.variant.ends_with("graph replay"))));
                    Ok(())
                };
            let runner = Runner {
                dev,
                record: None,
                after_solve: Some(&one_more),
            };
            let (out, report) = pipeline(&runner, &input, &params, Encoding::Gamma(2.2), &|_| {})
                .expect("tone map");
            (out.to_vec().expect("pixels"), report.cycles, replayed.get())
        };
        let (plain, plain_cycles, plain_replayed) = run(false);
        let (replayed, replayed_cycles, replay_replayed) = run(true);
        let name = dev.name();
        assert_eq!(plain_cycles, 6, "{name}");
        assert_eq!(replayed_cycles, plain_cycles, "{name}");
        assert_eq!(plain_replayed, Some(false), "{name}");
        assert_eq!(replay_replayed, Some(true), "{name}");
        assert!(plain == replayed, "{name}: replay changed the output");
    }
}
