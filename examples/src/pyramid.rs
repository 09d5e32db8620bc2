//! The Burt-Adelson Gaussian and Laplacian pyramids, written once for any
//! depth with [`traverse`]; shared by the `pyramid` binary and its benchmark.
//!
//! - Gaussian: `G_{k+1} = decimate(blur(G_k))`, the blur the separable
//!   `[1 4 6 4 1]/16` binomial (5x5, as one mask), decimation keeping the
//!   even rows and columns: `G_{k+1}(x, y) = sum w(i) w(j) G_k(2x+i, 2y+j)`.
//! - Laplacian: `L_k = G_k - expand(G_{k+1})`, `L_bottom = G_bottom`, where
//!   `expand(c)(x, y) = 4 sum w(i) w(j) c((x-i)/2, (y-j)/2)` over the `i, j`
//!   that make `x-i`, `y-j` even: per axis weights `1/8, 6/8, 1/8` at
//!   `x/2 - 1, x/2, x/2 + 1` for even `x`, and `1/2, 1/2` at `(x-1)/2`,
//!   `(x+1)/2` for odd `x`.
//! - Reconstruction: `R_bottom = L_bottom`, `R_k = L_k + expand(R_{k+1})`.
//!
//! Every read reflects at the edges without repeating the edge pixel
//! ([`Boundary::MirrorInterior`], OpenCV's `BORDER_REFLECT_101`). The kernels
//! read a level of another size through computed offsets: with the space's
//! origin at 0, offset `x()` reads accessor position `2x`.

use hipacc::prelude::*;
use hipacc::{Result, Trace};

/// `G_{k+1}` from `G_k`: 5x5 binomial blur at the even positions.
#[derive(Kernel)]
#[kernel(output = f32)]
pub struct Downsample {
    fine: Accessor<f32>,
    mask: Mask<f32, 5, 5>,
}

#[kernel_body]
impl Downsample {
    fn kernel(&self) -> f32 {
        convolve(&self.mask, Sum, |dx, dy| {
            self.mask.at(dx, dy) * self.fine.at(x() + dx, y() + dy)
        })
    }
}

/// The horizontal pass of `expand`: the rows of the coarser level at the
/// finer width, `rows(x, y) = sum w(i) coarse((x-i)/2, y)`. `expand` is
/// separable, so running it as this pass and [`Expand`]'s vertical one
/// reads 2.5 coarse pixels per output instead of 6.25, and leaves the
/// full-size pass with unit-stride reads that vectorise.
#[derive(Kernel)]
#[kernel(output = f32)]
pub struct ExpandRows {
    coarse: Accessor<f32>,
}

#[kernel_body]
impl ExpandRows {
    fn kernel(&self) -> f32 {
        let c = x() / 2 - x();
        if x() % 2 == 0 {
            0.125f32 * self.coarse.at(c - 1, 0)
                + 0.75f32 * self.coarse.at(c, 0)
                + 0.125f32 * self.coarse.at(c + 1, 0)
        } else {
            0.5f32 * (self.coarse.at(c, 0) + self.coarse.at(c + 1, 0))
        }
    }
}

/// `base + sign · expand(coarse)` from the coarser level's [`ExpandRows`]:
/// the Laplacian level `L_k = G_k - expand(G_{k+1})` with `sign = -1`, the
/// reconstruction `R_k = L_k + expand(R_{k+1})` with `sign = 1`.
#[derive(Kernel)]
#[kernel(output = f32)]
pub struct Expand {
    base: Accessor<f32>,
    rows: Accessor<f32>,
    sign: f32,
}

#[kernel_body]
impl Expand {
    fn kernel(&self) -> f32 {
        let c = y() / 2 - y();
        let up = if y() % 2 == 0 {
            0.125f32 * self.rows.at(0, c - 1)
                + 0.75f32 * self.rows.at(0, c)
                + 0.125f32 * self.rows.at(0, c + 1)
        } else {
            0.5f32 * (self.rows.at(0, c) + self.rows.at(0, c + 1))
        };
        self.base() + self.sign * up
    }
}

/// A copy (the coarsest level of L and R).
#[derive(Kernel)]
#[kernel(output = f32)]
pub struct Copy {
    input: Accessor<f32>,
}

#[kernel_body]
impl Copy {
    fn kernel(&self) -> f32 {
        self.input()
    }
}

/// The three pyramids of the workload: Gaussian `g` (level 0 the input),
/// Laplacian `l` and reconstruction `r`.
pub struct BurtAdelson {
    /// The Gaussian pyramid.
    pub g: Pyramid<f32>,
    /// The Laplacian pyramid.
    pub l: Pyramid<f32>,
    /// The reconstruction.
    pub r: Pyramid<f32>,
    /// Per level but the coarsest: the next level's [`ExpandRows`], the
    /// width of this level and the height of the next.
    rows: Vec<Image<f32>>,
    mask: Mask<f32, 5, 5>,
}

fn read(img: &Image<f32>) -> Accessor<f32> {
    Accessor::new(img).with_boundary(Boundary::MirrorInterior)
}

impl BurtAdelson {
    /// The pyramids of `input` with `levels` levels (allocated once).
    pub fn new(input: &Image<f32>, levels: usize) -> Result<BurtAdelson> {
        let g = Pyramid::new(input, levels)?;
        let tap = [1.0f32, 4.0, 6.0, 4.0, 1.0].map(|c| c / 16.0);
        let taps = tap.map(|r| tap.map(|c| r * c));
        let rows = (1..g.depth())
            .map(|k| Ok(Image::new(g.level(k - 1)?.width(), g.level(k)?.height())?))
            .collect::<Result<_>>()?;
        Ok(BurtAdelson {
            l: Pyramid::like(&g)?,
            r: Pyramid::like(&g)?,
            g,
            rows,
            mask: Mask::fixed(taps)?,
        })
    }

    /// Builds the Gaussian and Laplacian pyramids.
    pub fn decompose(&self, dev: &Device) -> Result<Trace> {
        let (g, l) = (&self.g, &self.l);
        traverse(&[g, l], |t| {
            let here = t.image(g, 0)?;
            if t.is_bottom_level() {
                return Copy { input: read(&here) }
                    .execute(dev, &IterationSpace::full(&t.image(l, 0)?));
            }
            let coarse = t.image(g, 1)?;
            Downsample {
                fine: read(&here),
                mask: self.mask.clone(),
            }
            .execute(dev, &IterationSpace::full(&coarse))?;
            t.recurse()?;
            self.expand(dev, t.level(), &here, &coarse, -1.0, &t.image(l, 0)?)
        })
    }

    /// Rebuilds the finest level from the Laplacian pyramid into `r`.
    pub fn reconstruct(&self, dev: &Device) -> Result<Trace> {
        let (l, r) = (&self.l, &self.r);
        traverse(&[l, r], |t| {
            let out = IterationSpace::full(&t.image(r, 0)?);
            if t.is_bottom_level() {
                let detail = read(&t.image(l, 0)?);
                return Copy { input: detail }.execute(dev, &out);
            }
            t.recurse()?;
            self.expand(
                dev,
                t.level(),
                &t.image(l, 0)?,
                &t.image(r, 1)?,
                1.0,
                out.image(),
            )
        })
    }

    /// `out = base + sign · expand(coarse)` at `level`, in two passes
    /// through that level's `rows` image.
    fn expand(
        &self,
        dev: &Device,
        level: usize,
        base: &Image<f32>,
        coarse: &Image<f32>,
        sign: f32,
        out: &Image<f32>,
    ) -> Result<()> {
        let rows = &self.rows[level];
        ExpandRows {
            coarse: read(coarse),
        }
        .execute(dev, &IterationSpace::full(rows))?;
        Expand {
            base: read(base),
            rows: read(rows),
            sign,
        }
        .execute(dev, &IterationSpace::full(out))
    }

    /// The IR of every kernel the workload launches, as at its finest level
    /// (for emitting or compiling GPU code without running anything).
    pub fn kernel_irs(&self) -> Result<Vec<hipacc::core::ir::Kernel>> {
        let (fine, coarse) = (self.g.level(0)?, self.g.level(1.min(self.g.depth() - 1))?);
        let rows = self.rows.first().unwrap_or(&fine);
        Ok(vec![
            Downsample {
                fine: read(&fine),
                mask: self.mask.clone(),
            }
            .ir()?,
            ExpandRows {
                coarse: read(&coarse),
            }
            .ir()?,
            Expand {
                base: read(&fine),
                rows: read(rows),
                sign: -1.0,
            }
            .ir()?,
            Copy {
                input: read(&coarse),
            }
            .ir()?,
        ])
    }

    /// `max |R_0 - G_0|`.
    pub fn max_reconstruction_error(&self) -> Result<f32> {
        let (a, b) = (self.g.level(0)?.to_vec()?, self.r.level(0)?.to_vec()?);
        Ok(a.iter()
            .zip(&b)
            .map(|(x, y)| (x - y).abs())
            .fold(0.0, f32::max))
    }
}

/// A deterministic `n x n` test image in `[0, 1]`: smooth waves plus
/// pseudo-random detail, so every pyramid level carries signal.
pub fn test_image(n: usize) -> Result<Image<f32>> {
    Ok(Image::from_fn(n, n, |x, y| {
        let (fx, fy) = (x as f32, y as f32);
        let h = (x as u32).wrapping_mul(0x9e37_79b9) ^ (y as u32).wrapping_mul(0x85eb_ca6b);
        let h = h ^ (h >> 15);
        let noise = (h.wrapping_mul(0x2c1b_3c6d) >> 8) as f32 / (1u32 << 24) as f32;
        0.5 + 0.2 * (fx * 0.031).sin() * (fy * 0.017).cos() + 0.1 * (noise - 0.5)
    })?)
}
