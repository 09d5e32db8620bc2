//! The PERF.md CPU workloads, each runnable through hipacc and through its
//! hand-written [`baseline`] on the same data.
//!
//! - `jacobi`: one weighted-Jacobi sweep of the 5-point Poisson operator,
//!   `omega = 0.8`, `Boundary::Constant(0.0)`; 12 bytes per pixel (read `u`
//!   and `f`, write `u'`).
//! - `gauss5`: the 5x5 binomial Gaussian, clamp-to-edge; 8 bytes per pixel
//!   (read the input, write the output).

use crate::baseline;
use hipacc::prelude::*;
use hipacc_examples::filters::Gaussian5;

/// Side of the benchmark images.
pub const SIZE: usize = 2048;
/// The Jacobi weight.
pub const OMEGA: f32 = 0.8;
/// Bytes a Jacobi sweep moves per pixel.
pub const JACOBI_BYTES_PER_PIXEL: u64 = 12;
/// Bytes the Gaussian moves per pixel.
pub const GAUSS5_BYTES_PER_PIXEL: u64 = 8;

/// One weighted-Jacobi sweep: `u' = (1-omega) u + omega/4 (f + neighbours)`.
#[derive(Kernel)]
#[kernel(output = f32)]
pub struct Jacobi {
    sol: Accessor<f32>,
    rhs: Accessor<f32>,
    omega: f32,
}

#[kernel_body]
impl Jacobi {
    fn kernel(&self) -> f32 {
        let nb = self.sol.at(-1, 0) + self.sol.at(1, 0) + self.sol.at(0, -1) + self.sol.at(0, 1);
        (1.0 - self.omega) * self.sol() + self.omega * 0.25 * (self.rhs() + nb)
    }
}

/// Deterministic pixels in `[0, 1)` (a multiplicative hash of the index).
pub fn pattern(width: usize, height: usize, seed: u32) -> Vec<f32> {
    (0..width * height)
        .map(|i| {
            let h = (i as u32).wrapping_mul(2_654_435_761).wrapping_add(seed);
            (h >> 8) as f32 / 16_777_216.0
        })
        .collect()
}

/// A Jacobi sweep's data, for hipacc and the baseline.
pub struct JacobiRun {
    width: usize,
    height: usize,
    u: Vec<f32>,
    f: Vec<f32>,
    out: Vec<f32>,
    kernel: Jacobi,
    space: IterationSpace<f32>,
    device: Device,
}

impl JacobiRun {
    /// `width x height` images of [`pattern`] data on `device`.
    pub fn new(width: usize, height: usize, device: Device) -> anyhow::Result<JacobiRun> {
        let (u, f) = (pattern(width, height, 1), pattern(width, height, 2));
        let u_img = Image::from_vec(width, height, u.clone())?;
        let f_img = Image::from_vec(width, height, f.clone())?;
        let out_img = Image::<f32>::new(width, height)?;
        Ok(JacobiRun {
            width,
            height,
            out: vec![0.0; width * height],
            u,
            f,
            kernel: Jacobi {
                sol: Accessor::new(&u_img).with_boundary(Boundary::Constant(0.0)),
                rhs: Accessor::new(&f_img),
                omega: OMEGA,
            },
            space: IterationSpace::full(&out_img),
            device,
        })
    }

    /// Bytes one sweep moves.
    pub fn bytes(&self) -> u64 {
        (self.width * self.height) as u64 * JACOBI_BYTES_PER_PIXEL
    }

    /// One sweep through hipacc.
    pub fn hipacc(&self) -> hipacc::Result<()> {
        self.kernel.execute(&self.device, &self.space)
    }

    /// One sweep through the hand-written baseline.
    pub fn baseline(&mut self) {
        baseline::jacobi(
            &self.u,
            &self.f,
            &mut self.out,
            self.width,
            self.height,
            OMEGA,
        );
    }

    /// The kernel and the space it runs over.
    pub fn kernel(&self) -> (&Jacobi, &IterationSpace<f32>) {
        (&self.kernel, &self.space)
    }

    /// hipacc's output (after [`JacobiRun::hipacc`]).
    pub fn hipacc_output(&self) -> hipacc::Result<Vec<f32>> {
        Ok(self.space.image().to_vec()?)
    }

    /// The baseline's output (after [`JacobiRun::baseline`]).
    pub fn baseline_output(&self) -> &[f32] {
        &self.out
    }
}

/// A Gaussian's data, for hipacc and the baseline.
pub struct Gauss5Run {
    width: usize,
    height: usize,
    input: Vec<f32>,
    out: Vec<f32>,
    kernel: Gaussian5,
    space: IterationSpace<f32>,
    device: Device,
}

impl Gauss5Run {
    /// A `width x height` image of [`pattern`] data on `device`.
    pub fn new(width: usize, height: usize, device: Device) -> anyhow::Result<Gauss5Run> {
        let input = pattern(width, height, 3);
        let img = Image::from_vec(width, height, input.clone())?;
        let out_img = Image::<f32>::new(width, height)?;
        Ok(Gauss5Run {
            width,
            height,
            out: vec![0.0; width * height],
            input,
            kernel: Gaussian5::new(Accessor::new(&img).with_boundary(Boundary::Clamp))?,
            space: IterationSpace::full(&out_img),
            device,
        })
    }

    /// Bytes one run moves.
    pub fn bytes(&self) -> u64 {
        (self.width * self.height) as u64 * GAUSS5_BYTES_PER_PIXEL
    }

    /// One run through hipacc.
    pub fn hipacc(&self) -> hipacc::Result<()> {
        self.kernel.execute(&self.device, &self.space)
    }

    /// One run through the hand-written baseline.
    pub fn baseline(&mut self) {
        baseline::gauss5(&self.input, &mut self.out, self.width, self.height);
    }

    /// The kernel and the space it runs over.
    pub fn kernel(&self) -> (&Gaussian5, &IterationSpace<f32>) {
        (&self.kernel, &self.space)
    }

    /// hipacc's output (after [`Gauss5Run::hipacc`]).
    pub fn hipacc_output(&self) -> hipacc::Result<Vec<f32>> {
        Ok(self.space.image().to_vec()?)
    }

    /// The baseline's output (after [`Gauss5Run::baseline`]).
    pub fn baseline_output(&self) -> &[f32] {
        &self.out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn assert_close(a: &[f32], b: &[f32], what: &str) {
        assert_eq!(a.len(), b.len());
        for (i, (x, y)) in a.iter().zip(b).enumerate() {
            // Sums of at most 25 terms in [0, 1) in different orders.
            assert!(
                (x - y).abs() <= 1e-6 * (1.0 + y.abs()),
                "{what}: pixel {i}: {x} vs {y}"
            );
        }
    }

    #[test]
    fn hipacc_matches_the_baselines() {
        for (w, h) in [(1, 1), (3, 2), (70, 45), (129, 64)] {
            let mut j = JacobiRun::new(w, h, Device::cpu()).unwrap();
            j.hipacc().unwrap();
            j.baseline();
            assert_close(
                &j.hipacc_output().unwrap(),
                j.baseline_output(),
                &format!("jacobi {w}x{h}"),
            );
            let mut g = Gauss5Run::new(w, h, Device::cpu()).unwrap();
            g.hipacc().unwrap();
            g.baseline();
            assert_close(
                &g.hipacc_output().unwrap(),
                g.baseline_output(),
                &format!("gauss5 {w}x{h}"),
            );
        }
    }
}
