//! Manufactured solutions on the unit square, for tests and benchmarks.
//!
//! `u = sin(πx) sin(πy)` vanishes on the boundary (Dirichlet 0) and
//! `u = cos(πx) cos(πy)` has zero normal derivative there (Neumann) and
//! zero mean; both satisfy `-Δu = 2π² u`. Values are sampled at the cell
//! centres `((i + 1/2) / n, (j + 1/2) / n)` of an `n x n` grid.

use super::{Bc, Real};
use crate::Result;
use hipacc_core::Image;
use std::f64::consts::PI;

/// The exact solution for `bc` at cell `(i, j)` of an `n x n` grid.
pub fn exact(bc: Bc, n: usize, i: usize, j: usize) -> f64 {
    let (x, y) = ((i as f64 + 0.5) / n as f64, (j as f64 + 0.5) / n as f64);
    match bc {
        Bc::Dirichlet => (PI * x).sin() * (PI * y).sin(),
        Bc::Neumann => (PI * x).cos() * (PI * y).cos(),
    }
}

/// Writes `f = -Δu = 2π² u` of the manufactured solution into `rhs`
/// (an `n x n` image).
pub fn fill_rhs<T: Real>(bc: Bc, rhs: &Image<T>) -> Result<()> {
    let n = rhs.width();
    let mut f = rhs.write()?;
    for (k, v) in f.iter_mut().enumerate() {
        *v = T::from_f64(2.0 * PI * PI * exact(bc, n, k % n, k / n));
    }
    Ok(())
}

/// `max |u - exact|`, for Neumann after removing the mean of `u` (the
/// exact solution has zero mean).
pub fn max_error<T: Real>(bc: Bc, u: &Image<T>) -> Result<f64> {
    let n = u.width();
    let v: Vec<f64> = u.to_vec()?.into_iter().map(Into::into).collect();
    let mean = match bc {
        Bc::Dirichlet => 0.0,
        Bc::Neumann => v.iter().sum::<f64>() / v.len() as f64,
    };
    Ok(v.iter()
        .enumerate()
        .map(|(k, &x)| (x - mean - exact(bc, n, k % n, k / n)).abs())
        .fold(0.0, f64::max))
}

/// Fills `u` with a deterministic pseudo-random initial guess in
/// `[-1, 1)` (a hash of the position and `seed`), which contains every
/// error frequency: how convergence factors are measured.
pub fn random_guess<T: Real>(u: &Image<T>, seed: u64) -> Result<()> {
    let mut v = u.write()?;
    for (k, x) in v.iter_mut().enumerate() {
        let mut h = (k as u64 ^ seed.wrapping_mul(0x9e37_79b9_7f4a_7c15)).wrapping_add(1);
        h ^= h >> 33;
        h = h.wrapping_mul(0xff51_afd7_ed55_8ccd);
        h ^= h >> 33;
        h = h.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
        h ^= h >> 33;
        *x = T::from_f64((h >> 11) as f64 / (1u64 << 52) as f64 - 1.0);
    }
    Ok(())
}
