//! Hand-written Rust baselines of the PERF.md workloads: plain loops and
//! rayon, the way one would write them without a DSL.
//!
//! Both split the image into bands of [`BAND_ROWS`] rows processed in
//! parallel. Inside a band, each row's interior runs over equal-length
//! slices with no branches (so LLVM drops the bounds checks and vectorises);
//! the pixels whose neighbours leave the image are handled apart.

use rayon::prelude::*;

/// Rows per parallel band.
pub const BAND_ROWS: usize = 32;

/// The Gaussian's binomial taps, `[1 4 6 4 1] / 16`.
pub const BINOMIAL5: [f32; 5] = [1.0 / 16.0, 4.0 / 16.0, 6.0 / 16.0, 4.0 / 16.0, 1.0 / 16.0];

/// One weighted-Jacobi sweep of the 5-point Poisson operator with `h² = 1`
/// and neighbours outside the image read as 0:
/// `out = (1-omega) u + omega/4 (f + u[x-1] + u[x+1] + u[y-1] + u[y+1])`.
///
/// `u`, `f` and `out` are `width * height` row-major pixels.
pub fn jacobi(u: &[f32], f: &[f32], out: &mut [f32], width: usize, height: usize, omega: f32) {
    assert!(
        u.len() == width * height && f.len() == u.len() && out.len() == u.len(),
        "jacobi: buffers must hold width * height pixels"
    );
    let (keep, step) = (1.0 - omega, omega * 0.25);
    let zeros = vec![0.0f32; width];
    let row = |r: usize| &u[r * width..(r + 1) * width];
    out.par_chunks_mut(BAND_ROWS * width)
        .enumerate()
        .for_each(|(band, rows)| {
            let y0 = band * BAND_ROWS;
            for (i, o) in rows.chunks_exact_mut(width).enumerate() {
                let y = y0 + i;
                let up = if y > 0 { row(y - 1) } else { &zeros };
                let down = if y + 1 < height { row(y + 1) } else { &zeros };
                let rhs = &f[y * width..(y + 1) * width];
                jacobi_row(up, row(y), down, rhs, o, keep, step);
            }
        });
}

/// One row of [`jacobi`]: `up`/`down` are the neighbouring rows (zeros
/// outside the image); the first and last pixel read 0 beyond the row.
#[inline(always)]
fn jacobi_row(
    up: &[f32],
    mid: &[f32],
    down: &[f32],
    rhs: &[f32],
    out: &mut [f32],
    keep: f32,
    step: f32,
) {
    let w = mid.len();
    let at = |x: usize, left: f32, right: f32| {
        keep * mid[x] + step * (rhs[x] + (left + right + up[x] + down[x]))
    };
    if w == 1 {
        out[0] = at(0, 0.0, 0.0);
        return;
    }
    out[0] = at(0, 0.0, mid[1]);
    out[w - 1] = at(w - 1, mid[w - 2], 0.0);
    let n = w - 2;
    let (l, c, r) = (&mid[..n], &mid[1..n + 1], &mid[2..]);
    let (u, d, f) = (&up[1..n + 1], &down[1..n + 1], &rhs[1..n + 1]);
    let o = &mut out[1..n + 1];
    for i in 0..n {
        o[i] = keep * c[i] + step * (f[i] + (l[i] + r[i] + u[i] + d[i]));
    }
}

/// The 5x5 binomial Gaussian with clamp-to-edge borders, computed
/// separably: per band, a horizontal pass into a scratch buffer of the
/// band's rows plus two above and below (row indices clamped), then a
/// vertical pass from the scratch buffer, which needs no checks.
pub fn gauss5(input: &[f32], out: &mut [f32], width: usize, height: usize) {
    assert!(
        input.len() == width * height && out.len() == input.len(),
        "gauss5: buffers must hold width * height pixels"
    );
    let k = BINOMIAL5;
    out.par_chunks_mut(BAND_ROWS * width)
        .enumerate()
        .for_each(|(band, rows)| {
            SCRATCH.with_borrow_mut(|scratch| {
                let y0 = band * BAND_ROWS;
                let n_rows = rows.len() / width;
                scratch.resize((n_rows + 4) * width, 0.0);
                for (j, s) in scratch.chunks_exact_mut(width).enumerate() {
                    let y = (y0 + j).saturating_sub(2).min(height - 1);
                    gauss5_row(&input[y * width..(y + 1) * width], s);
                }
                for (i, o) in rows.chunks_exact_mut(width).enumerate() {
                    let s = |d: usize| &scratch[(i + d) * width..(i + d + 1) * width];
                    let (a, b, c, d, e) = (s(0), s(1), s(2), s(3), s(4));
                    for x in 0..width {
                        o[x] = k[0] * a[x] + k[1] * b[x] + k[2] * c[x] + k[3] * d[x] + k[4] * e[x];
                    }
                }
            });
        });
}

thread_local! {
    /// The horizontal pass of one band, reused across calls on each thread.
    static SCRATCH: std::cell::RefCell<Vec<f32>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// The horizontal binomial pass of one row, clamping at its ends.
#[inline(always)]
fn gauss5_row(row: &[f32], out: &mut [f32]) {
    let k = BINOMIAL5;
    let w = row.len();
    let clamped = |x: isize| row[x.clamp(0, w as isize - 1) as usize];
    let edge = |x: usize| {
        let x = x as isize;
        (-2..=2)
            .zip(k)
            .map(|(d, c)| c * clamped(x + d))
            .sum::<f32>()
    };
    if w < 5 {
        for (x, o) in out.iter_mut().enumerate() {
            *o = edge(x);
        }
        return;
    }
    for x in [0, 1, w - 2, w - 1] {
        out[x] = edge(x);
    }
    let n = w - 4;
    let (a, b, c, d, e) = (
        &row[..n],
        &row[1..n + 1],
        &row[2..n + 2],
        &row[3..n + 3],
        &row[4..],
    );
    let o = &mut out[2..n + 2];
    for i in 0..n {
        o[i] = k[0] * a[i] + k[1] * b[i] + k[2] * c[i] + k[3] * d[i] + k[4] * e[i];
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pattern(w: usize, h: usize, seed: u32) -> Vec<f32> {
        (0..w * h)
            .map(|i| {
                ((i as u32).wrapping_mul(2_654_435_761).wrapping_add(seed) >> 8) as f32
                    / 16_777_216.0
            })
            .collect()
    }

    /// Per-pixel reference with explicit bounds checks.
    fn jacobi_naive(u: &[f32], f: &[f32], w: usize, h: usize, omega: f32) -> Vec<f32> {
        let get = |x: isize, y: isize| {
            if x < 0 || y < 0 || x >= w as isize || y >= h as isize {
                0.0
            } else {
                u[y as usize * w + x as usize]
            }
        };
        (0..w * h)
            .map(|i| {
                let (x, y) = ((i % w) as isize, (i / w) as isize);
                let nb = get(x - 1, y) + get(x + 1, y) + get(x, y - 1) + get(x, y + 1);
                (1.0 - omega) * u[i] + omega * 0.25 * (f[i] + nb)
            })
            .collect()
    }

    fn gauss5_naive(img: &[f32], w: usize, h: usize) -> Vec<f32> {
        let get = |x: isize, y: isize| {
            img[y.clamp(0, h as isize - 1) as usize * w + x.clamp(0, w as isize - 1) as usize]
        };
        (0..w * h)
            .map(|i| {
                let (x, y) = ((i % w) as isize, (i / w) as isize);
                let mut s = 0.0;
                for (dy, cy) in (-2..=2).zip(BINOMIAL5) {
                    for (dx, cx) in (-2..=2).zip(BINOMIAL5) {
                        s += cy * cx * get(x + dx, y + dy);
                    }
                }
                s
            })
            .collect()
    }

    fn assert_close(a: &[f32], b: &[f32], what: &str) {
        for (i, (x, y)) in a.iter().zip(b).enumerate() {
            assert!(
                (x - y).abs() <= 1e-6 * (1.0 + y.abs()),
                "{what}: pixel {i}: {x} vs {y}"
            );
        }
    }

    #[test]
    fn baselines_match_naive_loops_at_every_size() {
        for (w, h) in [(1, 1), (1, 7), (2, 3), (5, 17), (4, 4), (67, 33), (64, 70)] {
            let (u, f) = (pattern(w, h, 1), pattern(w, h, 7));
            let mut out = vec![f32::NAN; w * h];
            jacobi(&u, &f, &mut out, w, h, 0.8);
            assert_close(
                &out,
                &jacobi_naive(&u, &f, w, h, 0.8),
                &format!("jacobi {w}x{h}"),
            );
            gauss5(&u, &mut out, w, h);
            assert_close(&out, &gauss5_naive(&u, w, h), &format!("gauss5 {w}x{h}"));
        }
    }
}
