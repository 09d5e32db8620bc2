//! When to stop cycling: an estimate of the algebraic error from the
//! corrections the cycles make.
//!
//! # Why not the residual
//! The usual test, `‖r‖ ≤ tol · ‖f‖`, can pass on a wrong answer. A smooth
//! error mode of amplitude `E` and wavelength `L` cells leaves a residual of
//! only about `E (2π / L)² / h²`; on a grid of 1000 cells in pixel units a
//! mode spanning the grid changes the residual by `4e-5 E`. When `f` is
//! concentrated on a few sharp edges (a gradient-domain right-hand side of
//! an image with flat areas and steps), `‖f‖` is large and a relative
//! residual of `1e-3` leaves errors of several units in `u`. Bounding the
//! error through the residual needs `‖A⁻¹‖ ≈ (L / 2π)² h²` times the
//! residual, i.e. relative residuals near `1e-8` on such grids, which `f32`
//! arithmetic cannot reach.
//!
//! # The estimate
//! A multigrid cycle is a linear fixed-point iteration `u ← M u + c` for a
//! given right-hand side. When it contracts with factor `ρ < 1` in a norm,
//! the error after cycle `k` obeys `‖u* − u_k‖ ≤ ρ / (1 − ρ) · ‖u_k − u_{k−1}‖`
//! (the a-posteriori estimate of Banach's fixed-point theorem), whatever
//! shape the error has. The correction `u_k − u_{k−1}` is measured in the
//! max norm, because a displayed image is wrong where any pixel is wrong;
//! `ρ` is not known in advance and is measured as the largest ratio of
//! successive corrections so far (the power-method estimate of the
//! convergence factor). The solve stops when the estimate is at most the
//! tolerance, and never before [`MIN_CYCLES`] cycles, the fewest that
//! measure a ratio. A ratio of [`MAX_RATE`] or more counts as no
//! contraction: the estimate is then infinite and cycling goes on until the
//! cycle limit (as when `f32` round-off is all that is left to change).
//!
//! It is an estimate, not a guaranteed bound: the max norm is not one in
//! which a cycle is guaranteed to contract, and the measured ratio runs low
//! while a slowly converging component is still gaining weight. Measured,
//! the true error at the stop was at most 1.7 times the estimate plus the
//! solution's `f32` round-off (about `1e-4` on grids of a million cells):
//! - Neumann problems with flat steps (the tests' `steps_problem`) on
//!   777x1025, 1023x677 and 301x155, `f32`, full multigrid then tolerances
//!   `1e-3` and `2e-3`, against the `f64` solution: 0.73 to 1.52 times the
//!   estimate with V(2,2) cycles, 0.99 to 1.20 with V(2,1), and 2.0 (an error
//!   of 2.9e-4 for an estimate of 1.5e-4, round-off included) once; the
//!   residual test `‖r‖ ≤ 1e-3 ‖f‖` stopped these with errors of 0.19 to 0.47.
//!   `the_error_rule_holds_where_a_residual_rule_passes_a_wrong_answer`
//!   asserts `error ≤ 2 estimate + 1e-4` on two of them.
//! - `hdr-compress`'s solves (V(2,1), tolerance `2e-3`) of the four
//!   photographs in `../shared/hdr`, against 30 more cycles: 1.15 to 1.42
//!   times estimates of 0.9e-3 to 1.1e-3 (the table and the command are in
//!   the docs of `hipacc_examples::hdr::fattal::DEFAULT_TOL`; that test
//!   asserts the factor 1.7 plus `1e-4` on every image it is given).
//!
//! Choose the tolerance with that factor in mind.
//!
//! The tolerance is in the units of `u`, so a caller states it from what the
//! solution is for (for a log-luminance, `1e-3` is a 0.1 % change of
//! brightness). The estimate needs one copy of the solution and one pass
//! over it per cycle; [`ErrorEstimate`] is its pure part, tested on its own.

/// The fewest cycles after which the estimate can stop a solve: two
/// corrections give one contraction ratio.
pub const MIN_CYCLES: usize = 2;

/// Contraction ratios at or above this are treated as no contraction.
pub const MAX_RATE: f64 = 0.95;

/// The error estimate of a solve so far, from the max-norm corrections of its
/// cycles.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ErrorEstimate {
    corrections: Vec<f64>,
}

impl ErrorEstimate {
    /// Records the max-norm correction `‖u_k − u_{k−1}‖∞` of one more cycle.
    pub fn push(&mut self, correction: f64) {
        self.corrections.push(correction);
    }

    /// The corrections recorded, one per cycle.
    pub fn corrections(&self) -> &[f64] {
        &self.corrections
    }

    /// The measured contraction factor: the largest ratio of successive
    /// corrections so far (`Some(0)` once a correction is exactly 0); `None`
    /// before [`MIN_CYCLES`] cycles.
    pub fn rate(&self) -> Option<f64> {
        let c = &self.corrections;
        if c.len() < MIN_CYCLES {
            return None;
        }
        if c[c.len() - 1] == 0.0 {
            return Some(0.0);
        }
        let largest = c
            .windows(2)
            .map(|w| {
                if w[1] == 0.0 {
                    0.0
                } else if w[0] == 0.0 {
                    f64::INFINITY
                } else {
                    w[1] / w[0]
                }
            })
            .fold(0.0, f64::max);
        Some(largest)
    }

    /// The estimated max-norm error of the current solution,
    /// `ρ / (1 − ρ) · ‖u_k − u_{k−1}‖∞`; infinite before [`MIN_CYCLES`]
    /// cycles or when the cycles do not contract (see the module docs).
    pub fn error(&self) -> f64 {
        match (self.rate(), self.corrections.last()) {
            (Some(rate), Some(&last)) if last == 0.0 || rate == 0.0 => 0.0,
            (Some(rate), Some(&last)) if rate < MAX_RATE => rate / (1.0 - rate) * last,
            _ => f64::INFINITY,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn estimate(corrections: &[f64]) -> ErrorEstimate {
        let mut e = ErrorEstimate::default();
        for &c in corrections {
            e.push(c);
        }
        e
    }

    #[test]
    fn one_correction_estimates_nothing() {
        assert_eq!(estimate(&[]).error(), f64::INFINITY);
        assert_eq!(estimate(&[1e-9]).error(), f64::INFINITY);
        assert_eq!(estimate(&[1e-9]).rate(), None);
    }

    #[test]
    fn a_geometric_sequence_estimates_its_remaining_sum() {
        // Corrections q^k: the error left after the last is the tail sum
        // q^(n+1) / (1 - q), which the estimate equals.
        let q: f64 = 0.25;
        let c: Vec<f64> = (1..=5).map(|k| q.powi(k)).collect();
        let e = estimate(&c);
        assert!((e.rate().unwrap() - q).abs() < 1e-12);
        let tail: f64 = (6..200).map(|k| q.powi(k)).sum();
        assert!((e.error() - tail).abs() < 1e-12 * tail);
    }

    #[test]
    fn the_largest_ratio_so_far_counts() {
        let e = estimate(&[1.0, 0.5, 0.05, 0.01]);
        assert_eq!(e.rate(), Some(0.5));
        assert!((e.error() - 0.01).abs() < 1e-15);
    }

    #[test]
    fn stagnation_and_growth_estimate_nothing() {
        assert_eq!(estimate(&[1.0, 0.97]).error(), f64::INFINITY);
        assert_eq!(estimate(&[1.0, 2.0]).error(), f64::INFINITY);
        assert_eq!(estimate(&[0.0, 1.0]).error(), f64::INFINITY);
    }

    #[test]
    fn an_exact_solution_has_no_error() {
        assert_eq!(estimate(&[1.0, 0.0]).error(), 0.0);
        assert_eq!(estimate(&[0.0, 0.0]).error(), 0.0);
    }
}
