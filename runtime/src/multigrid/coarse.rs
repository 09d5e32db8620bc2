//! The exact solve on the coarsest level: banded Cholesky on the host.
//!
//! The 5-point operator with unknowns numbered along the shorter side is a
//! banded matrix of half-bandwidth `b = min(w, h)`; its Cholesky factor has
//! the same band, so the factorisation costs `n b²` and a solve `4 n b`
//! operations for `n = w h` unknowns (a 64x64 grid: 1.7e7 and 1.6e4). The
//! factor is computed once per grid and reused by every cycle.
//!
//! The matrix is `h²` times the operator: `d u_c - Σ c nb = h² f` with the
//! diagonal and the face couplings `c` of the kernels (1 between equal
//! cells; see [`super::kernels`] for a narrower last column or row). A pure Neumann problem is singular
//! (constants are its null space): the right-hand side is projected to
//! zero mean, the last unknown is fixed to 0 and its equation dropped (it
//! follows from the others when the right-hand side is compatible), which
//! leaves a positive definite system; the solution is then shifted to zero
//! mean.

use super::Bc;

/// Grids up to this many band entries (`n · (b + 1)`) are solved exactly;
/// a larger coarsest level is smoothed instead.
pub(crate) const MAX_BAND_ENTRIES: usize = 1 << 22;

/// A factorised coarsest-level operator.
#[derive(Debug)]
pub(crate) struct CoarseSolver {
    w: usize,
    h: usize,
    bc: Bc,
    /// Width of the last column and height of the last row, in cell widths.
    last: (f64, f64),
    /// Half-bandwidth.
    b: usize,
    /// Unknowns in the factor (one fewer than cells for Neumann).
    n: usize,
    /// Row `i` holds `L[i][i - b ..= i]` (entries before column 0 unused).
    factor: Vec<f64>,
}

impl CoarseSolver {
    /// Factorises the operator of a `w x h` grid whose last column and row
    /// are `last` cell widths wide and high, or `None` when the band would
    /// exceed [`MAX_BAND_ENTRIES`].
    pub(crate) fn new(w: usize, h: usize, bc: Bc, last: (f64, f64)) -> Option<CoarseSolver> {
        let b = w.min(h);
        let cells = w * h;
        if cells.checked_mul(b + 1)? > MAX_BAND_ENTRIES {
            return None;
        }
        let n = match bc {
            Bc::Dirichlet => cells,
            Bc::Neumann => cells - 1,
        };
        let mut s = CoarseSolver {
            w,
            h,
            bc,
            last,
            b,
            n,
            factor: vec![0.0; n * (b + 1)],
        };
        s.factorise();
        Some(s)
    }

    /// The cell of unknown `i` (numbered along the shorter side).
    fn cell(&self, i: usize) -> (usize, usize) {
        if self.w <= self.h {
            (i % self.w, i / self.w)
        } else {
            (i / self.h, i % self.h)
        }
    }

    /// The width and height of cell `(x, y)`, in cell widths.
    fn size(&self, x: usize, y: usize) -> (f64, f64) {
        let a = if x + 1 == self.w { self.last.0 } else { 1.0 };
        let b = if y + 1 == self.h { self.last.1 } else { 1.0 };
        (a, b)
    }

    /// The coupling of neighbouring cells `p` and `q`: the length of their
    /// common face over the distance of their centres.
    fn coupling(&self, p: (usize, usize), q: (usize, usize)) -> f64 {
        let (sp, sq) = (self.size(p.0, p.1), self.size(q.0, q.1));
        if p.1 == q.1 {
            sp.1 * 2.0 / (sp.0 + sq.0)
        } else {
            sp.0 * 2.0 / (sp.1 + sq.1)
        }
    }

    /// Matrix entry `A[i][j]` for `j <= i`, `i - j <= b`.
    fn entry(&self, i: usize, j: usize) -> f64 {
        let (xi, yi) = self.cell(i);
        if i == j {
            let (w, h) = (self.w as i64, self.h as i64);
            let mut d = 0.0;
            let mut sides = 0.0;
            for (dx, dy) in [(-1, 0), (1, 0), (0, -1), (0, 1)] {
                let (x, y) = (xi as i64 + dx, yi as i64 + dy);
                if x < 0 || y < 0 || x >= w || y >= h {
                    sides += 1.0;
                } else {
                    d += self.coupling((xi, yi), (x as usize, y as usize));
                }
            }
            return match self.bc {
                Bc::Dirichlet => d + 2.0 * sides,
                Bc::Neumann => d,
            };
        }
        let (xj, yj) = self.cell(j);
        if xi.abs_diff(xj) + yi.abs_diff(yj) == 1 {
            -self.coupling((xi, yi), (xj, yj))
        } else {
            0.0
        }
    }

    fn at(&self, i: usize, j: usize) -> f64 {
        self.factor[i * (self.b + 1) + (self.b + j - i)]
    }

    fn set(&mut self, i: usize, j: usize, v: f64) {
        let b = self.b;
        self.factor[i * (b + 1) + (b + j - i)] = v;
    }

    fn factorise(&mut self) {
        for j in 0..self.n {
            let lo = j.saturating_sub(self.b);
            let mut d = self.entry(j, j);
            for k in lo..j {
                d -= self.at(j, k) * self.at(j, k);
            }
            // The matrix is positive definite, so d > 0 up to rounding.
            let djj = d.max(f64::MIN_POSITIVE).sqrt();
            self.set(j, j, djj);
            for i in j + 1..(j + self.b + 1).min(self.n) {
                let lo = i.saturating_sub(self.b);
                let mut v = self.entry(i, j);
                for k in lo..j {
                    v -= self.at(i, k) * self.at(j, k);
                }
                self.set(i, j, v / djj);
            }
        }
    }

    /// Solves `A u = h2 · f` for the cells in row-major order.
    pub(crate) fn solve(&self, f: &[f64], h2: f64) -> Vec<f64> {
        let cells = self.w * self.h;
        let index = |i: usize| {
            let (x, y) = self.cell(i);
            y * self.w + x
        };
        let mut rhs: Vec<f64> = (0..cells).map(|i| h2 * f[index(i)]).collect();
        if self.bc == Bc::Neumann {
            let mean = rhs.iter().sum::<f64>() / cells as f64;
            rhs.iter_mut().for_each(|v| *v -= mean);
        }
        // Forward: L z = rhs.
        let mut z = rhs[..self.n].to_vec();
        for i in 0..self.n {
            let lo = i.saturating_sub(self.b);
            let dot: f64 = (lo..i)
                .zip(&z[lo..i])
                .map(|(k, zk)| self.at(i, k) * zk)
                .sum();
            z[i] = (z[i] - dot) / self.at(i, i);
        }
        // Backward: L^T u = z.
        for i in (0..self.n).rev() {
            let hi = (i + self.b + 1).min(self.n);
            let dot: f64 = (i + 1..hi)
                .zip(&z[i + 1..hi])
                .map(|(k, zk)| self.at(k, i) * zk)
                .sum();
            z[i] = (z[i] - dot) / self.at(i, i);
        }
        z.resize(cells, 0.0);
        if self.bc == Bc::Neumann {
            let mean = z.iter().sum::<f64>() / cells as f64;
            z.iter_mut().for_each(|v| *v -= mean);
        }
        let mut u = vec![0.0; cells];
        for (i, v) in z.into_iter().enumerate() {
            u[index(i)] = v;
        }
        u
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `h² A u` by the stencil, row-major.
    fn apply(u: &[f64], w: usize, h: usize, bc: Bc) -> Vec<f64> {
        let sign = if bc == Bc::Dirichlet { 1.0 } else { -1.0 };
        let at = |x: i64, y: i64| {
            if x < 0 || y < 0 || x >= w as i64 || y >= h as i64 {
                0.0
            } else {
                u[y as usize * w + x as usize]
            }
        };
        let mut out = vec![0.0; w * h];
        for y in 0..h as i64 {
            for x in 0..w as i64 {
                let sides = [x == 0, x + 1 == w as i64, y == 0, y + 1 == h as i64]
                    .iter()
                    .filter(|&&s| s)
                    .count() as f64;
                let nb = at(x - 1, y) + at(x + 1, y) + at(x, y - 1) + at(x, y + 1);
                out[y as usize * w + x as usize] = (4.0 + sign * sides) * at(x, y) - nb;
            }
        }
        out
    }

    #[test]
    fn solves_dirichlet_and_neumann_on_odd_and_wide_grids() {
        for (w, h) in [(1, 1), (2, 3), (5, 3), (7, 7), (16, 4), (3, 11)] {
            for bc in [Bc::Dirichlet, Bc::Neumann] {
                let f: Vec<f64> = (0..w * h).map(|i| ((i * 7) % 5) as f64 - 2.0).collect();
                let s = CoarseSolver::new(w, h, bc, (1.0, 1.0)).expect("small grid");
                let u = s.solve(&f, 1.0);
                let mut want = f.clone();
                if bc == Bc::Neumann {
                    let m = want.iter().sum::<f64>() / want.len() as f64;
                    want.iter_mut().for_each(|v| *v -= m);
                    assert!(u.iter().sum::<f64>().abs() < 1e-9);
                }
                let got = apply(&u, w, h, bc);
                for (g, e) in got.iter().zip(&want) {
                    assert!((g - e).abs() < 1e-9, "{w}x{h} {bc:?}: {g} vs {e}");
                }
            }
        }
    }

    #[test]
    fn narrow_last_cells_couple_by_the_distance_of_their_centres() {
        // A linear function of the cell centres has zero net flux through
        // every cell away from the boundary, wherever the centres lie.
        let (w, h, last) = (6, 5, (0.5, 0.25));
        let s = CoarseSolver::new(w, h, Bc::Neumann, last).expect("small grid");
        let centre = |i: usize, n: usize, a: f64| {
            if i + 1 == n {
                (n - 1) as f64 + a / 2.0
            } else {
                i as f64 + 0.5
            }
        };
        let u = |x: usize, y: usize| centre(x, w, last.0) + 2.0 * centre(y, h, last.1);
        for i in 0..w * h {
            let (x, y) = s.cell(i);
            if x == 0 || y == 0 || x + 1 == w || y + 1 == h {
                continue;
            }
            let lo = i.saturating_sub(s.b);
            let hi = (i + s.b + 1).min(w * h);
            let flux: f64 = (lo..hi)
                .map(|j| {
                    let a = if j <= i { s.entry(i, j) } else { s.entry(j, i) };
                    let (xj, yj) = s.cell(j);
                    a * u(xj, yj)
                })
                .sum();
            assert!(flux.abs() < 1e-12, "cell ({x}, {y}): {flux}");
        }
        // Constants are still the null space: every row sums to zero.
        for i in 0..w * h {
            let lo = i.saturating_sub(s.b);
            let hi = (i + s.b + 1).min(w * h);
            let row: f64 = (lo..hi)
                .map(|j| if j <= i { s.entry(i, j) } else { s.entry(j, i) })
                .sum();
            assert!(row.abs() < 1e-12, "row {i}: {row}");
        }
    }

    #[test]
    fn refuses_grids_whose_band_is_too_large() {
        assert!(CoarseSolver::new(4096, 4096, Bc::Dirichlet, (1.0, 1.0)).is_none());
        assert!(CoarseSolver::new(64, 64, Bc::Dirichlet, (1.0, 1.0)).is_some());
    }
}
