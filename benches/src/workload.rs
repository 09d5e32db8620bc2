//! The PERF.md CPU workloads, each runnable through hipacc and through its
//! hand-written [`baseline`] on the same data.
//!
//! Both read the same input images and write the same output image: the
//! Jacobi sweep touches 48 MB, more than a 32 MB last-level cache, and how
//! separate buffers happened to lie in physical memory changed either
//! side's time by up to 10% from one process to the next.
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
        .map(|i| pattern_pixel(i, seed))
        .collect()
}

/// [`pattern`] as an image, filled in place so that its pages are the
/// huge ones `Image::from_fn` asks for (as a NumPy peer's arrays are).
pub fn pattern_image(width: usize, height: usize, seed: u32) -> hipacc::Result<Image<f32>> {
    Ok(Image::from_fn(width, height, |x, y| {
        pattern_pixel(y * width + x, seed)
    })?)
}

/// Pixel `i` of [`pattern`].
fn pattern_pixel(i: usize, seed: u32) -> f32 {
    let h = (i as u32).wrapping_mul(2_654_435_761).wrapping_add(seed);
    (h >> 8) as f32 / 16_777_216.0
}

/// The outputs `hipacc` and `baseline` leave in `out`, each run into an
/// output first filled with NaN, so that a run that writes nothing cannot
/// pass a check.
fn both_outputs(
    out: &Image<f32>,
    hipacc: impl Fn() -> hipacc::Result<()>,
    baseline: impl Fn() -> hipacc::Result<()>,
) -> hipacc::Result<(Vec<f32>, Vec<f32>)> {
    let nan = vec![f32::NAN; out.width() * out.height()];
    out.copy_from_slice(&nan)?;
    hipacc()?;
    let ours = out.to_vec()?;
    out.copy_from_slice(&nan)?;
    baseline()?;
    Ok((ours, out.to_vec()?))
}

/// A Jacobi sweep's data, for hipacc and the baseline.
pub struct JacobiRun {
    width: usize,
    height: usize,
    u: Image<f32>,
    f: Image<f32>,
    kernel: Jacobi,
    space: IterationSpace<f32>,
    device: Device,
}

impl JacobiRun {
    /// `width x height` images of [`pattern`] data on `device`.
    pub fn new(width: usize, height: usize, device: Device) -> anyhow::Result<JacobiRun> {
        let u = pattern_image(width, height, 1)?;
        let f = pattern_image(width, height, 2)?;
        let out_img = Image::<f32>::new(width, height)?;
        Ok(JacobiRun {
            width,
            height,
            kernel: Jacobi {
                sol: Accessor::new(&u).with_boundary(Boundary::Constant(0.0)),
                rhs: Accessor::new(&f),
                omega: OMEGA,
            },
            u,
            f,
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

    /// One sweep through the hand-written baseline, on the host pixels of
    /// the same images.
    pub fn baseline(&self) -> hipacc::Result<()> {
        let (u, f) = (self.u.read()?, self.f.read()?);
        let mut out = self.space.image().write()?;
        baseline::jacobi(&u, &f, &mut out, self.width, self.height, OMEGA);
        Ok(())
    }

    /// The kernel and the space it runs over.
    pub fn kernel(&self) -> (&Jacobi, &IterationSpace<f32>) {
        (&self.kernel, &self.space)
    }

    /// The output of the last run.
    pub fn output(&self) -> hipacc::Result<Vec<f32>> {
        Ok(self.space.image().to_vec()?)
    }

    /// hipacc's and the baseline's outputs, each run into an output filled
    /// with NaN first.
    pub fn outputs(&self) -> hipacc::Result<(Vec<f32>, Vec<f32>)> {
        both_outputs(self.space.image(), || self.hipacc(), || self.baseline())
    }
}

/// A Gaussian's data, for hipacc and the baseline.
pub struct Gauss5Run {
    width: usize,
    height: usize,
    input: Image<f32>,
    kernel: Gaussian5,
    space: IterationSpace<f32>,
    device: Device,
}

impl Gauss5Run {
    /// A `width x height` image of [`pattern`] data on `device`.
    pub fn new(width: usize, height: usize, device: Device) -> anyhow::Result<Gauss5Run> {
        let input = pattern_image(width, height, 3)?;
        let out_img = Image::<f32>::new(width, height)?;
        Ok(Gauss5Run {
            width,
            height,
            kernel: Gaussian5::new(Accessor::new(&input).with_boundary(Boundary::Clamp))?,
            input,
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

    /// One run through the hand-written baseline, on the host pixels of the
    /// same images.
    pub fn baseline(&self) -> hipacc::Result<()> {
        let input = self.input.read()?;
        let mut out = self.space.image().write()?;
        baseline::gauss5(&input, &mut out, self.width, self.height);
        Ok(())
    }

    /// The kernel and the space it runs over.
    pub fn kernel(&self) -> (&Gaussian5, &IterationSpace<f32>) {
        (&self.kernel, &self.space)
    }

    /// The output of the last run.
    pub fn output(&self) -> hipacc::Result<Vec<f32>> {
        Ok(self.space.image().to_vec()?)
    }

    /// hipacc's and the baseline's outputs, each run into an output filled
    /// with NaN first.
    pub fn outputs(&self) -> hipacc::Result<(Vec<f32>, Vec<f32>)> {
        both_outputs(self.space.image(), || self.hipacc(), || self.baseline())
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
            let j = JacobiRun::new(w, h, Device::cpu()).unwrap();
            let (ours, theirs) = j.outputs().unwrap();
            assert_close(&ours, &theirs, &format!("jacobi {w}x{h}"));
            let g = Gauss5Run::new(w, h, Device::cpu()).unwrap();
            let (ours, theirs) = g.outputs().unwrap();
            assert_close(&ours, &theirs, &format!("gauss5 {w}x{h}"));
        }
    }
}
