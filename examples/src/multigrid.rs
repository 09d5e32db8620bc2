//! The `multigrid` example: `-Δu = f` on the unit square with a
//! manufactured solution, solved by [`hipacc::multigrid`]; shared by the
//! binary and the benchmarks. With the `distributed` feature,
//! [`distributed`] solves the same problem across MPI ranks.

#[cfg(feature = "distributed")]
pub mod distributed;

use hipacc::multigrid::{
    convergence_factor, manufactured, Bc, CycleOptions, Poisson, Real, Smoother,
};
use hipacc::{Device, Image, Result, Trace};
use std::fmt::Write as _;
use std::time::Instant;

/// How the problem is started.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Start {
    /// A pseudo-random initial guess: every error frequency is present, as
    /// convergence factors are measured.
    Random,
    /// Zero.
    Zero,
    /// Full multigrid with one cycle per level, then the cycles.
    Fmg,
}

/// One run of the example.
#[derive(Clone, Debug)]
pub struct Problem {
    /// Cells per side.
    pub size: usize,
    /// Levels.
    pub levels: usize,
    /// Boundary condition.
    pub bc: Bc,
    /// The cycle.
    pub opts: CycleOptions,
    /// Most cycles.
    pub max_cycles: usize,
    /// Relative residual to stop at.
    pub tol: f64,
    /// Initial guess.
    pub start: Start,
}

/// The figures a run reports, on one process or across MPI ranks.
#[derive(Clone, Debug)]
pub struct Figures {
    /// Residual norms: before the first cycle, then after each.
    pub residuals: Vec<f64>,
    /// See [`convergence_factor`].
    pub convergence_factor: Option<f64>,
    /// `max |u - u_exact|` at the end (Neumann: after removing the mean).
    pub error_vs_exact: f64,
    /// `max |u - u_exact|` right after full multigrid (with [`Start::Fmg`]).
    pub error_after_fmg: Option<f64>,
    /// Wall time of full multigrid, ms (with [`Start::Fmg`]).
    pub ms_fmg: Option<f64>,
    /// Wall time of each cycle, ms.
    pub ms_cycles: Vec<f64>,
}

/// What a run on one process measured.
#[derive(Clone, Debug)]
pub struct Outcome {
    /// Residuals, errors and cycle times.
    pub figures: Figures,
    /// The trace of the last cycle (or of full multigrid if no cycle ran).
    pub trace: Trace,
}

impl Problem {
    /// Solves in precision `T` on `dev`.
    pub fn run<T: Real>(&self, dev: &Device) -> Result<Outcome> {
        let n = self.size;
        let p = Poisson::<T>::new(n, n, self.levels, self.bc, 1.0 / n as f64)?;
        self.opts.validate(self.levels)?;
        manufactured::fill_rhs(self.bc, &p.rhs())?;
        let mut trace = Trace::default();
        let mut error_after_fmg = None;
        let mut ms_fmg = None;
        match self.start {
            Start::Random => manufactured::random_guess(&p.solution(), 1)?,
            Start::Zero => {}
            Start::Fmg => {
                dev.synchronize()?;
                let t0 = Instant::now();
                trace = p.fmg(dev, &self.opts, 1)?;
                dev.synchronize()?;
                ms_fmg = Some(t0.elapsed().as_secs_f64() * 1e3);
                error_after_fmg = Some(manufactured::max_error(self.bc, &p.solution())?);
            }
        }
        let norm_f = rhs_norm(self.bc, &p.rhs())?;
        let mut residuals = vec![p.residual_norm(dev)?];
        let mut ms_cycles = Vec::new();
        while self.goes_on(&residuals, norm_f) {
            dev.synchronize()?;
            let t0 = Instant::now();
            trace = p.cycle(dev, &self.opts)?;
            dev.synchronize()?;
            ms_cycles.push(t0.elapsed().as_secs_f64() * 1e3);
            residuals.push(p.residual_norm(dev)?);
        }
        Ok(Outcome {
            figures: Figures {
                convergence_factor: convergence_factor(&residuals),
                error_vs_exact: manufactured::max_error(self.bc, &p.solution())?,
                error_after_fmg,
                ms_fmg,
                residuals,
                ms_cycles,
            },
            trace,
        })
    }

    /// Whether the cycles go on after `residuals`: fewer than
    /// `max_cycles` ran and the last residual is above `tol` times
    /// `norm_f` (see [`rhs_norm`]).
    pub fn goes_on(&self, residuals: &[f64], norm_f: f64) -> bool {
        residuals.len() <= self.max_cycles
            && residuals.last().is_some_and(|r| *r > self.tol * norm_f)
    }
}

/// The norm of the right-hand side `rhs` as `solve` sees it (compatible
/// for Neumann: its mean removed), the scale of `--tol`: `sqrt(Σ (f -
/// mean)² / n)`, summed in `f64` in row-major order.
pub fn rhs_norm<T: Real>(bc: Bc, rhs: &Image<T>) -> Result<f64> {
    let f: Vec<f64> = rhs.to_vec()?.into_iter().map(Into::into).collect();
    let mean = match bc {
        Bc::Neumann => f.iter().sum::<f64>() / f.len() as f64,
        Bc::Dirichlet => 0.0,
    };
    Ok((f.iter().map(|v| (v - mean) * (v - mean)).sum::<f64>() / f.len() as f64).sqrt())
}

/// The median of `v` (0 when empty).
pub fn median(v: &[f64]) -> f64 {
    let mut s = v.to_vec();
    s.sort_by(f64::total_cmp);
    match s.len() {
        0 => 0.0,
        n if n % 2 == 1 => s[n / 2],
        n => 0.5 * (s[n / 2 - 1] + s[n / 2]),
    }
}

/// An SVG line chart of the residual norm per cycle on a log scale, with
/// `title` above it.
pub fn residual_plot(residuals: &[f64], title: &str) -> String {
    let (w, h, left, right, top, bottom) = (640.0, 400.0, 70.0, 20.0, 40.0, 50.0);
    let positive: Vec<f64> = residuals.iter().copied().filter(|r| *r > 0.0).collect();
    let hi = positive
        .iter()
        .copied()
        .fold(f64::MIN, f64::max)
        .log10()
        .ceil();
    let lo = positive
        .iter()
        .copied()
        .fold(f64::MAX, f64::min)
        .log10()
        .floor();
    let (lo, hi) = if positive.is_empty() {
        (0.0, 1.0)
    } else if hi > lo {
        (lo, hi)
    } else {
        (lo - 1.0, hi + 1.0)
    };
    let cycles = (residuals.len().max(2) - 1) as f64;
    let px = |i: f64| left + (w - left - right) * i / cycles;
    let py = |r: f64| top + (h - top - bottom) * (hi - r.max(1e-300).log10()) / (hi - lo);
    let mut s = String::new();
    let _ = writeln!(
        s,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" font-family="sans-serif" font-size="12">"#
    );
    let _ = writeln!(s, r#"<rect width="{w}" height="{h}" fill="white"/>"#);
    let _ = writeln!(
        s,
        r#"<text x="{}" y="22" text-anchor="middle" font-size="14">{}</text>"#,
        w / 2.0,
        escape(title)
    );
    for e in lo as i64..=hi as i64 {
        let y = py(10f64.powi(e as i32));
        let _ = writeln!(
            s,
            r##"<line x1="{left}" x2="{}" y1="{y:.1}" y2="{y:.1}" stroke="#ddd"/>"##,
            w - right
        );
        let _ = writeln!(
            s,
            r#"<text x="{}" y="{:.1}" text-anchor="end">1e{e}</text>"#,
            left - 6.0,
            y + 4.0
        );
    }
    let step = (cycles / 10.0).ceil().max(1.0) as usize;
    for i in (0..residuals.len()).step_by(step) {
        let x = px(i as f64);
        let _ = writeln!(
            s,
            r#"<text x="{x:.1}" y="{}" text-anchor="middle">{i}</text>"#,
            h - bottom + 18.0
        );
    }
    let _ = writeln!(
        s,
        r#"<text x="{}" y="{}" text-anchor="middle">cycle</text>"#,
        (left + w - right) / 2.0,
        h - 10.0
    );
    let _ = writeln!(
        s,
        r#"<text x="16" y="{}" text-anchor="middle" transform="rotate(-90 16 {})">residual (discrete L2)</text>"#,
        h / 2.0,
        h / 2.0
    );
    let _ = writeln!(
        s,
        r##"<rect x="{left}" y="{top}" width="{}" height="{}" fill="none" stroke="#000"/>"##,
        w - left - right,
        h - top - bottom
    );
    let points: Vec<String> = residuals
        .iter()
        .enumerate()
        .map(|(i, &r)| format!("{:.1},{:.1}", px(i as f64), py(r)))
        .collect();
    let _ = writeln!(
        s,
        r##"<polyline points="{}" fill="none" stroke="#1f77b4" stroke-width="2"/>"##,
        points.join(" ")
    );
    for p in &points {
        let (x, y) = p.split_once(',').unwrap_or(("0", "0"));
        let _ = writeln!(s, r##"<circle cx="{x}" cy="{y}" r="3" fill="#1f77b4"/>"##);
    }
    s.push_str("</svg>\n");
    s
}

fn escape(t: &str) -> String {
    t.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

/// The smoother's name on the command line.
pub fn smoother_name(s: Smoother) -> &'static str {
    match s {
        Smoother::Jacobi { .. } => "jacobi",
        Smoother::RedBlack => "rbgs",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use hipacc::multigrid::CycleKind;

    #[test]
    fn the_plot_has_one_point_per_residual_and_a_log_axis() {
        let svg = residual_plot(&[1.0, 0.1, 0.01, 1e-3], "V(2,2)");
        assert_eq!(svg.matches("<circle").count(), 4);
        assert!(svg.contains(">1e-3<") && svg.contains(">1e0<"));
        // Equal ratios are equal steps on the log axis.
        let ys: Vec<f64> = svg
            .lines()
            .filter(|l| l.starts_with("<circle"))
            .filter_map(|l| l.split("cy=\"").nth(1)?.split('"').next()?.parse().ok())
            .collect();
        assert!((ys[1] - ys[0] - (ys[3] - ys[2])).abs() < 0.2, "{ys:?}");
    }

    #[test]
    fn a_small_problem_reports_falling_residuals() {
        let p = Problem {
            size: 32,
            levels: 3,
            bc: Bc::Dirichlet,
            opts: CycleOptions::new(CycleKind::V, Smoother::RedBlack, 2, 2),
            max_cycles: 5,
            tol: 1e-12,
            start: Start::Random,
        };
        let out = p.run::<f64>(&Device::cpu()).expect("run");
        assert_eq!(out.figures.residuals.len(), 6);
        assert_eq!(out.figures.ms_cycles.len(), 5);
        assert!(out.figures.convergence_factor.expect("factor") < 0.1);
        assert!(out.trace.kernel_launches() > 0);
    }

    #[test]
    fn median_of_odd_and_even_counts() {
        assert_eq!(median(&[3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(&[4.0, 1.0, 2.0, 3.0]), 2.5);
        assert_eq!(median(&[]), 0.0);
    }
}
