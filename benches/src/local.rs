//! Local operators written the way the README teaches a user, beside the
//! same stencils written out tap by tap and a hand-written Rust loop, on the
//! same data, so that a run can state how far the window loops of
//! `convolve` and `reduce` are from hand-written code.
//!
//! - `conv5_scaled`: a 5x5 [`Mask`] `convolve` times a parameter, the same
//!   25 taps written out as a body, and a plain Rust loop;
//! - `conv5_pair`: the sum of two 5x5 convolutions of one input, and the 50
//!   taps written out;
//! - `conv3_scaled`: a 3x3 mask `convolve` times a parameter, and the 9 taps
//!   written out;
//! - `max5`/`sum5`: a 5x5 [`Domain`] `reduce` with `Max` and `Sum`, and the
//!   25-tap max written out.
//!
//! The masks are not rank 1 (no separable shortcut applies). Every input
//! reads through [`Boundary::Clamp`]. The written-out bodies keep the
//! row-major order of the window loops, so both give the same bits.

use crate::workload::pattern_image;
use hipacc::prelude::*;
use rayon::prelude::*;

/// Coefficient `(row, column)` of the 5x5 test mask: not rank 1.
pub fn coef5(row: usize, col: usize) -> f32 {
    (1 + (row * 5 + col * 3) % 7) as f32 / 64.0
}

/// Coefficient `(row, column)` of the 3x3 test mask: not rank 1.
pub fn coef3(row: usize, col: usize) -> f32 {
    (1 + (row * 3 + col * 2) % 5) as f32 / 16.0
}

/// The 5x5 test mask, and with `transposed` its transpose.
pub fn mask5(transposed: bool) -> hipacc::Result<Mask<f32, 5, 5>> {
    let rows: [[f32; 5]; 5] = std::array::from_fn(|r| {
        std::array::from_fn(|c| if transposed { coef5(c, r) } else { coef5(r, c) })
    });
    Ok(Mask::fixed(rows)?)
}

/// The 3x3 test mask.
pub fn mask3() -> hipacc::Result<Mask<f32, 3, 3>> {
    Ok(Mask::fixed(std::array::from_fn(|r| {
        std::array::from_fn(|c| coef3(r, c))
    }))?)
}

/// The parameter the scaled kernels multiply by.
pub const SCALE: f32 = 0.75;

/// `convolve` of a 5x5 mask, times a parameter.
#[derive(Kernel)]
#[kernel(output = f32)]
pub struct Conv5Scaled {
    /// The image.
    pub input: Accessor<f32>,
    /// The mask.
    pub mask: Mask<f32, 5, 5>,
    /// The factor.
    pub scale: f32,
}

#[kernel_body]
impl Conv5Scaled {
    fn kernel(&self) -> f32 {
        convolve(&self.mask, Sum, |dx, dy| {
            self.mask.at(dx, dy) * self.input.at(dx, dy)
        }) * self.scale
    }
}

/// [`Conv5Scaled`] with the 25 taps written out.
#[derive(Kernel)]
#[kernel(output = f32)]
pub struct Written5Scaled {
    /// The image.
    pub input: Accessor<f32>,
    /// The factor.
    pub scale: f32,
}

#[kernel_body]
impl Written5Scaled {
    fn kernel(&self) -> f32 {
        (self.input.at(-2, -2) * 0.015625
            + self.input.at(-1, -2) * 0.0625
            + self.input.at(0, -2) * 0.109375
            + self.input.at(1, -2) * 0.046875
            + self.input.at(2, -2) * 0.09375
            + self.input.at(-2, -1) * 0.09375
            + self.input.at(-1, -1) * 0.03125
            + self.input.at(0, -1) * 0.078125
            + self.input.at(1, -1) * 0.015625
            + self.input.at(2, -1) * 0.0625
            + self.input.at(-2, 0) * 0.0625
            + self.input.at(-1, 0) * 0.109375
            + self.input.at(0, 0) * 0.046875
            + self.input.at(1, 0) * 0.09375
            + self.input.at(2, 0) * 0.03125
            + self.input.at(-2, 1) * 0.03125
            + self.input.at(-1, 1) * 0.078125
            + self.input.at(0, 1) * 0.015625
            + self.input.at(1, 1) * 0.0625
            + self.input.at(2, 1) * 0.109375
            + self.input.at(-2, 2) * 0.109375
            + self.input.at(-1, 2) * 0.046875
            + self.input.at(0, 2) * 0.09375
            + self.input.at(1, 2) * 0.03125
            + self.input.at(2, 2) * 0.078125)
            * self.scale
    }
}

/// The sum of two 5x5 convolutions of one image.
#[derive(Kernel)]
#[kernel(output = f32)]
pub struct Conv5Pair {
    /// The image.
    pub input: Accessor<f32>,
    /// The first mask.
    pub a: Mask<f32, 5, 5>,
    /// The second mask.
    pub b: Mask<f32, 5, 5>,
}

#[kernel_body]
impl Conv5Pair {
    fn kernel(&self) -> f32 {
        let first = convolve(&self.a, Sum, |dx, dy| {
            self.a.at(dx, dy) * self.input.at(dx, dy)
        });
        let second = convolve(&self.b, Sum, |dx, dy| {
            self.b.at(dx, dy) * self.input.at(dx, dy)
        });
        first + second
    }
}

/// [`Conv5Pair`] with the 50 taps written out.
#[derive(Kernel)]
#[kernel(output = f32)]
pub struct Written5Pair {
    /// The image.
    pub input: Accessor<f32>,
}

#[kernel_body]
impl Written5Pair {
    fn kernel(&self) -> f32 {
        let first = self.input.at(-2, -2) * 0.015625
            + self.input.at(-1, -2) * 0.0625
            + self.input.at(0, -2) * 0.109375
            + self.input.at(1, -2) * 0.046875
            + self.input.at(2, -2) * 0.09375
            + self.input.at(-2, -1) * 0.09375
            + self.input.at(-1, -1) * 0.03125
            + self.input.at(0, -1) * 0.078125
            + self.input.at(1, -1) * 0.015625
            + self.input.at(2, -1) * 0.0625
            + self.input.at(-2, 0) * 0.0625
            + self.input.at(-1, 0) * 0.109375
            + self.input.at(0, 0) * 0.046875
            + self.input.at(1, 0) * 0.09375
            + self.input.at(2, 0) * 0.03125
            + self.input.at(-2, 1) * 0.03125
            + self.input.at(-1, 1) * 0.078125
            + self.input.at(0, 1) * 0.015625
            + self.input.at(1, 1) * 0.0625
            + self.input.at(2, 1) * 0.109375
            + self.input.at(-2, 2) * 0.109375
            + self.input.at(-1, 2) * 0.046875
            + self.input.at(0, 2) * 0.09375
            + self.input.at(1, 2) * 0.03125
            + self.input.at(2, 2) * 0.078125;
        let second = self.input.at(-2, -2) * 0.015625
            + self.input.at(-1, -2) * 0.09375
            + self.input.at(0, -2) * 0.0625
            + self.input.at(1, -2) * 0.03125
            + self.input.at(2, -2) * 0.109375
            + self.input.at(-2, -1) * 0.0625
            + self.input.at(-1, -1) * 0.03125
            + self.input.at(0, -1) * 0.109375
            + self.input.at(1, -1) * 0.078125
            + self.input.at(2, -1) * 0.046875
            + self.input.at(-2, 0) * 0.109375
            + self.input.at(-1, 0) * 0.078125
            + self.input.at(0, 0) * 0.046875
            + self.input.at(1, 0) * 0.015625
            + self.input.at(2, 0) * 0.09375
            + self.input.at(-2, 1) * 0.046875
            + self.input.at(-1, 1) * 0.015625
            + self.input.at(0, 1) * 0.09375
            + self.input.at(1, 1) * 0.0625
            + self.input.at(2, 1) * 0.03125
            + self.input.at(-2, 2) * 0.09375
            + self.input.at(-1, 2) * 0.0625
            + self.input.at(0, 2) * 0.03125
            + self.input.at(1, 2) * 0.109375
            + self.input.at(2, 2) * 0.078125;
        first + second
    }
}

/// `convolve` of a 3x3 mask, times a parameter.
#[derive(Kernel)]
#[kernel(output = f32)]
pub struct Conv3Scaled {
    /// The image.
    pub input: Accessor<f32>,
    /// The mask.
    pub mask: Mask<f32, 3, 3>,
    /// The factor.
    pub scale: f32,
}

#[kernel_body]
impl Conv3Scaled {
    fn kernel(&self) -> f32 {
        convolve(&self.mask, Sum, |dx, dy| {
            self.mask.at(dx, dy) * self.input.at(dx, dy)
        }) * self.scale
    }
}

/// [`Conv3Scaled`] with the 9 taps written out.
#[derive(Kernel)]
#[kernel(output = f32)]
pub struct Written3Scaled {
    /// The image.
    pub input: Accessor<f32>,
    /// The factor.
    pub scale: f32,
}

#[kernel_body]
impl Written3Scaled {
    fn kernel(&self) -> f32 {
        (self.input.at(-1, -1) * 0.0625
            + self.input.at(0, -1) * 0.1875
            + self.input.at(1, -1) * 0.3125
            + self.input.at(-1, 0) * 0.25
            + self.input.at(0, 0) * 0.0625
            + self.input.at(1, 0) * 0.1875
            + self.input.at(-1, 1) * 0.125
            + self.input.at(0, 1) * 0.25
            + self.input.at(1, 1) * 0.0625)
            * self.scale
    }
}

/// The largest value of a domain's window.
#[derive(Kernel)]
#[kernel(output = f32)]
pub struct DomainMax {
    /// The image.
    pub input: Accessor<f32>,
    /// The window.
    pub window: Domain,
}

#[kernel_body]
impl DomainMax {
    fn kernel(&self) -> f32 {
        reduce(&self.window, Max, |dx, dy| self.input.at(dx, dy))
    }
}

/// The sum of a domain's window.
#[derive(Kernel)]
#[kernel(output = f32)]
pub struct DomainSum {
    /// The image.
    pub input: Accessor<f32>,
    /// The window.
    pub window: Domain,
}

#[kernel_body]
impl DomainSum {
    fn kernel(&self) -> f32 {
        reduce(&self.window, Sum, |dx, dy| self.input.at(dx, dy))
    }
}

/// The 5x5 max written out.
#[derive(Kernel)]
#[kernel(output = f32)]
pub struct Written5Max {
    /// The image.
    pub input: Accessor<f32>,
}

#[kernel_body]
impl Written5Max {
    fn kernel(&self) -> f32 {
        self.input
            .at(-2, -2)
            .max(self.input.at(-1, -2))
            .max(self.input.at(0, -2))
            .max(self.input.at(1, -2))
            .max(self.input.at(2, -2))
            .max(self.input.at(-2, -1))
            .max(self.input.at(-1, -1))
            .max(self.input.at(0, -1))
            .max(self.input.at(1, -1))
            .max(self.input.at(2, -1))
            .max(self.input.at(-2, 0))
            .max(self.input.at(-1, 0))
            .max(self.input.at(0, 0))
            .max(self.input.at(1, 0))
            .max(self.input.at(2, 0))
            .max(self.input.at(-2, 1))
            .max(self.input.at(-1, 1))
            .max(self.input.at(0, 1))
            .max(self.input.at(1, 1))
            .max(self.input.at(2, 1))
            .max(self.input.at(-2, 2))
            .max(self.input.at(-1, 2))
            .max(self.input.at(0, 2))
            .max(self.input.at(1, 2))
            .max(self.input.at(2, 2))
    }
}

/// The 5x5 sum written out.
#[derive(Kernel)]
#[kernel(output = f32)]
pub struct Written5Sum {
    /// The image.
    pub input: Accessor<f32>,
}

#[kernel_body]
impl Written5Sum {
    fn kernel(&self) -> f32 {
        self.input.at(-2, -2)
            + self.input.at(-1, -2)
            + self.input.at(0, -2)
            + self.input.at(1, -2)
            + self.input.at(2, -2)
            + self.input.at(-2, -1)
            + self.input.at(-1, -1)
            + self.input.at(0, -1)
            + self.input.at(1, -1)
            + self.input.at(2, -1)
            + self.input.at(-2, 0)
            + self.input.at(-1, 0)
            + self.input.at(0, 0)
            + self.input.at(1, 0)
            + self.input.at(2, 0)
            + self.input.at(-2, 1)
            + self.input.at(-1, 1)
            + self.input.at(0, 1)
            + self.input.at(1, 1)
            + self.input.at(2, 1)
            + self.input.at(-2, 2)
            + self.input.at(-1, 2)
            + self.input.at(0, 2)
            + self.input.at(1, 2)
            + self.input.at(2, 2)
    }
}

/// The images and kernels of the local-operator benches.
pub struct LocalRun {
    width: usize,
    height: usize,
    input: Image<f32>,
    space: IterationSpace<f32>,
    device: Device,
}

impl LocalRun {
    /// A `width x height` image of pattern data on `device`.
    pub fn new(width: usize, height: usize, device: Device) -> anyhow::Result<LocalRun> {
        Ok(LocalRun {
            width,
            height,
            input: pattern_image(width, height, 5)?,
            space: IterationSpace::full(&Image::<f32>::new(width, height)?),
            device,
        })
    }

    fn acc(&self) -> Accessor<f32> {
        Accessor::new(&self.input).with_boundary(Boundary::Clamp)
    }

    /// The kernels of the benches, by name.
    pub fn kernels(&self) -> anyhow::Result<Vec<(&'static str, LocalKernel)>> {
        let window = Domain::new(5, 5)?;
        Ok(vec![
            (
                "conv5_scaled",
                LocalKernel::Conv5Scaled(Conv5Scaled {
                    input: self.acc(),
                    mask: mask5(false)?,
                    scale: SCALE,
                }),
            ),
            (
                "written5_scaled",
                LocalKernel::Written5Scaled(Written5Scaled {
                    input: self.acc(),
                    scale: SCALE,
                }),
            ),
            (
                "conv5_pair",
                LocalKernel::Conv5Pair(Conv5Pair {
                    input: self.acc(),
                    a: mask5(false)?,
                    b: mask5(true)?,
                }),
            ),
            (
                "written5_pair",
                LocalKernel::Written5Pair(Written5Pair { input: self.acc() }),
            ),
            (
                "conv3_scaled",
                LocalKernel::Conv3Scaled(Conv3Scaled {
                    input: self.acc(),
                    mask: mask3()?,
                    scale: SCALE,
                }),
            ),
            (
                "written3_scaled",
                LocalKernel::Written3Scaled(Written3Scaled {
                    input: self.acc(),
                    scale: SCALE,
                }),
            ),
            (
                "domain_max5",
                LocalKernel::DomainMax(DomainMax {
                    input: self.acc(),
                    window: window.clone(),
                }),
            ),
            (
                "domain_sum5",
                LocalKernel::DomainSum(DomainSum {
                    input: self.acc(),
                    window,
                }),
            ),
            (
                "written5_max",
                LocalKernel::Written5Max(Written5Max { input: self.acc() }),
            ),
            (
                "written5_sum",
                LocalKernel::Written5Sum(Written5Sum { input: self.acc() }),
            ),
        ])
    }

    /// Runs `k` into the output.
    pub fn run(&self, k: &LocalKernel) -> hipacc::Result<()> {
        let (d, s) = (&self.device, &self.space);
        match k {
            LocalKernel::Conv5Scaled(k) => k.execute(d, s),
            LocalKernel::Written5Scaled(k) => k.execute(d, s),
            LocalKernel::Conv5Pair(k) => k.execute(d, s),
            LocalKernel::Written5Pair(k) => k.execute(d, s),
            LocalKernel::Conv3Scaled(k) => k.execute(d, s),
            LocalKernel::Written3Scaled(k) => k.execute(d, s),
            LocalKernel::DomainMax(k) => k.execute(d, s),
            LocalKernel::DomainSum(k) => k.execute(d, s),
            LocalKernel::Written5Max(k) => k.execute(d, s),
            LocalKernel::Written5Sum(k) => k.execute(d, s),
        }
    }

    /// The hand-written Rust loop of `conv5_scaled` into the output.
    pub fn baseline_conv5_scaled(&self) -> hipacc::Result<()> {
        let input = self.input.read()?;
        let mut out = self.space.image().write()?;
        conv5_scaled_loop(&input, &mut out, self.width, self.height, SCALE);
        Ok(())
    }

    /// The output of the last run.
    pub fn output(&self) -> hipacc::Result<Vec<f32>> {
        Ok(self.space.image().to_vec()?)
    }

    /// Fills the output with NaN, so that a run that writes nothing shows.
    pub fn poison(&self) -> hipacc::Result<()> {
        Ok(self
            .space
            .image()
            .copy_from_slice(&vec![f32::NAN; self.width * self.height])?)
    }
}

/// One of the bench kernels.
pub enum LocalKernel {
    /// See [`Conv5Scaled`].
    Conv5Scaled(Conv5Scaled),
    /// See [`Written5Scaled`].
    Written5Scaled(Written5Scaled),
    /// See [`Conv5Pair`].
    Conv5Pair(Conv5Pair),
    /// See [`Written5Pair`].
    Written5Pair(Written5Pair),
    /// See [`Conv3Scaled`].
    Conv3Scaled(Conv3Scaled),
    /// See [`Written3Scaled`].
    Written3Scaled(Written3Scaled),
    /// See [`DomainMax`].
    DomainMax(DomainMax),
    /// See [`DomainSum`].
    DomainSum(DomainSum),
    /// See [`Written5Max`].
    Written5Max(Written5Max),
    /// See [`Written5Sum`].
    Written5Sum(Written5Sum),
}

/// Rows per parallel band of [`conv5_scaled_loop`].
const BAND_ROWS: usize = 32;

/// `conv5_scaled` as a Rust programmer writes it: rayon bands of rows, the
/// 25 taps over equal-length row slices in the interior (no checks, so LLVM
/// vectorises), clamped reads at the edges; same tap order, same bits.
pub fn conv5_scaled_loop(input: &[f32], out: &mut [f32], width: usize, height: usize, scale: f32) {
    assert!(
        input.len() == width * height && out.len() == input.len(),
        "conv5_scaled_loop: buffers must hold width * height pixels"
    );
    let c: [[f32; 5]; 5] = std::array::from_fn(|r| std::array::from_fn(|k| coef5(r, k)));
    let at = |x: isize, y: isize| {
        input[y.clamp(0, height as isize - 1) as usize * width
            + x.clamp(0, width as isize - 1) as usize]
    };
    let edge = |x: usize, y: usize| {
        let mut s = 0.0f32;
        let mut first = true;
        for (r, row) in c.iter().enumerate() {
            for (k, &ck) in row.iter().enumerate() {
                let v = at(x as isize + k as isize - 2, y as isize + r as isize - 2) * ck;
                s = if first { v } else { s + v };
                first = false;
            }
        }
        s * scale
    };
    out.par_chunks_mut(BAND_ROWS * width)
        .enumerate()
        .for_each(|(band, rows)| {
            for (i, o) in rows.chunks_exact_mut(width).enumerate() {
                let y = band * BAND_ROWS + i;
                if width < 5 || y < 2 || y + 2 >= height {
                    for (x, p) in o.iter_mut().enumerate() {
                        *p = edge(x, y);
                    }
                    continue;
                }
                for x in [0, 1, width - 2, width - 1] {
                    o[x] = edge(x, y);
                }
                let n = width - 4;
                let r: [&[f32]; 5] =
                    std::array::from_fn(|k| &input[(y + k - 2) * width..(y + k - 1) * width]);
                let o = &mut o[2..n + 2];
                for (x, p) in o.iter_mut().enumerate() {
                    let mut s = r[0][x] * c[0][0];
                    for (k, &ck) in c[0].iter().enumerate().skip(1) {
                        s += r[0][x + k] * ck;
                    }
                    for (row, cr) in r.iter().zip(&c).skip(1) {
                        for (k, &ck) in cr.iter().enumerate() {
                            s += row[x + k] * ck;
                        }
                    }
                    *p = s * scale;
                }
            }
        });
}
