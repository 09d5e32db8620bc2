//! Multi-kernel pipelines written the way the README teaches, run as a
//! [`Pipeline`] (fused per row strip) and kernel by kernel:
//!
//! - `unsharp`: a 5x5 Gaussian blur kernel ([1 4 6 4 1]^2 / 256, a mask
//!   `convolve`) and a sharpen kernel `in + 1.5 (in - blur)`;
//! - `harris`: Sobel x and Sobel y kernels (3x3 taps written out), then a
//!   kernel summing the products `ix²`, `iy²`, `ix·iy` over a 5x5
//!   Gaussian-weighted window (three `convolve`s) and returning the
//!   response `det - 0.04 trace²`.
//!
//! Inputs are [`pattern_image`]s read through [`Boundary::Clamp`]; the
//! intermediates are read through `Clamp` too.

use crate::workload::pattern_image;
use hipacc::pipeline::Pipeline;
use hipacc::prelude::*;

/// The binomial weights of the 5x5 Gaussian.
const BINOMIAL: [f32; 5] = [1.0, 4.0, 6.0, 4.0, 1.0];

/// The 5x5 Gaussian mask.
pub fn gauss5() -> hipacc::Result<Mask<f32, 5, 5>> {
    Ok(Mask::fixed(std::array::from_fn(|r| {
        std::array::from_fn(|c| BINOMIAL[r] * BINOMIAL[c] / 256.0)
    }))?)
}

/// The sharpening amount of `unsharp`.
pub const AMOUNT: f32 = 1.5;

/// The Harris constant `k` of `det - k trace²`.
pub const HARRIS_K: f32 = 0.04;

/// A 5x5 mask convolution.
#[derive(Kernel)]
#[kernel(output = f32)]
pub struct Blur {
    /// The image.
    pub input: Accessor<f32>,
    /// The weights.
    pub mask: Mask<f32, 5, 5>,
}

#[kernel_body]
impl Blur {
    fn kernel(&self) -> f32 {
        convolve(&self.mask, Sum, |dx, dy| {
            self.mask.at(dx, dy) * self.input.at(dx, dy)
        })
    }
}

/// `input + amount · (input - blurred)`.
#[derive(Kernel)]
#[kernel(output = f32)]
pub struct Sharpen {
    /// The image.
    pub input: Accessor<f32>,
    /// Its blur.
    pub blurred: Accessor<f32>,
    /// How much of the difference is added.
    pub amount: f32,
}

#[kernel_body]
impl Sharpen {
    fn kernel(&self) -> f32 {
        self.input() + self.amount * (self.input() - self.blurred())
    }
}

/// The horizontal Sobel derivative.
#[derive(Kernel)]
#[kernel(output = f32)]
pub struct SobelX {
    /// The image.
    pub input: Accessor<f32>,
}

#[kernel_body]
impl SobelX {
    fn kernel(&self) -> f32 {
        (self.input.at(1, -1) - self.input.at(-1, -1))
            + 2.0 * (self.input.at(1, 0) - self.input.at(-1, 0))
            + (self.input.at(1, 1) - self.input.at(-1, 1))
    }
}

/// The vertical Sobel derivative.
#[derive(Kernel)]
#[kernel(output = f32)]
pub struct SobelY {
    /// The image.
    pub input: Accessor<f32>,
}

#[kernel_body]
impl SobelY {
    fn kernel(&self) -> f32 {
        (self.input.at(-1, 1) - self.input.at(-1, -1))
            + 2.0 * (self.input.at(0, 1) - self.input.at(0, -1))
            + (self.input.at(1, 1) - self.input.at(1, -1))
    }
}

/// The Harris response from the derivatives: Gaussian-weighted sums of
/// their products over a 5x5 window, then `det - k trace²`.
#[derive(Kernel)]
#[kernel(output = f32)]
pub struct HarrisResponse {
    /// The horizontal derivative.
    pub ix: Accessor<f32>,
    /// The vertical derivative.
    pub iy: Accessor<f32>,
    /// The window's weights.
    pub mask: Mask<f32, 5, 5>,
    /// `k`.
    pub k: f32,
}

#[kernel_body]
impl HarrisResponse {
    fn kernel(&self) -> f32 {
        let sxx = convolve(&self.mask, Sum, |dx, dy| {
            self.mask.at(dx, dy) * (self.ix.at(dx, dy) * self.ix.at(dx, dy))
        });
        let syy = convolve(&self.mask, Sum, |dx, dy| {
            self.mask.at(dx, dy) * (self.iy.at(dx, dy) * self.iy.at(dx, dy))
        });
        let sxy = convolve(&self.mask, Sum, |dx, dy| {
            self.mask.at(dx, dy) * (self.ix.at(dx, dy) * self.iy.at(dx, dy))
        });
        let trace = sxx + syy;
        sxx * syy - sxy * sxy - self.k * trace * trace
    }
}

/// The images and kernels of the two pipelines on one input.
pub struct PipelineRun {
    /// The input.
    pub input: Image<f32>,
    blurred: Image<f32>,
    /// The output of `unsharp`.
    pub sharpened: Image<f32>,
    ix: Image<f32>,
    iy: Image<f32>,
    /// The output of `harris`.
    pub response: Image<f32>,
    blur: Blur,
    sharpen: Sharpen,
    sobel_x: SobelX,
    sobel_y: SobelY,
    harris: HarrisResponse,
}

impl PipelineRun {
    /// A `width x height` input of pattern data.
    pub fn new(width: usize, height: usize) -> hipacc::Result<PipelineRun> {
        let input = pattern_image(width, height, 11)?;
        let image = || Image::<f32>::new(width, height);
        let (blurred, sharpened) = (image()?, image()?);
        let (ix, iy, response) = (image()?, image()?, image()?);
        let clamp = |img: &Image<f32>| Accessor::new(img).with_boundary(Boundary::Clamp);
        Ok(PipelineRun {
            blur: Blur {
                input: clamp(&input),
                mask: gauss5()?,
            },
            sharpen: Sharpen {
                input: Accessor::new(&input),
                blurred: Accessor::new(&blurred),
                amount: AMOUNT,
            },
            sobel_x: SobelX {
                input: clamp(&input),
            },
            sobel_y: SobelY {
                input: clamp(&input),
            },
            harris: HarrisResponse {
                ix: clamp(&ix),
                iy: clamp(&iy),
                mask: gauss5()?,
                k: HARRIS_K,
            },
            input,
            blurred,
            sharpened,
            ix,
            iy,
            response,
        })
    }

    /// Runs `unsharp`, fused or kernel by kernel.
    pub fn unsharp(&self, device: &Device, fused: bool) -> hipacc::Result<()> {
        let blurred = IterationSpace::full(&self.blurred);
        let out = IterationSpace::full(&self.sharpened);
        if fused {
            return Pipeline::new()
                .stage(&self.blur, &blurred)
                .stage(&self.sharpen, &out)
                .execute(device);
        }
        self.blur.execute(device, &blurred)?;
        self.sharpen.execute(device, &out)
    }

    /// Runs `harris`, fused or kernel by kernel.
    pub fn harris(&self, device: &Device, fused: bool) -> hipacc::Result<()> {
        let ix = IterationSpace::full(&self.ix);
        let iy = IterationSpace::full(&self.iy);
        let out = IterationSpace::full(&self.response);
        if fused {
            return Pipeline::new()
                .stage(&self.sobel_x, &ix)
                .stage(&self.sobel_y, &iy)
                .stage(&self.harris, &out)
                .execute(device);
        }
        self.sobel_x.execute(device, &ix)?;
        self.sobel_y.execute(device, &iy)?;
        self.harris.execute(device, &out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fused_pipelines_equal_kernel_by_kernel() {
        let p = PipelineRun::new(67, 45).expect("images");
        let dev = Device::cpu();
        type Step = fn(&PipelineRun, &Device, bool) -> hipacc::Result<()>;
        let steps: [(Step, &Image<f32>); 2] = [
            (PipelineRun::unsharp, &p.sharpened),
            (PipelineRun::harris, &p.response),
        ];
        for (step, out) in steps {
            step(&p, &dev, true).expect("fused");
            let fused = out.to_vec().expect("readable");
            step(&p, &dev, false).expect("kernel by kernel");
            let unfused = out.to_vec().expect("readable");
            assert!(fused
                .iter()
                .zip(&unfused)
                .all(|(a, b)| a.to_bits() == b.to_bits()));
        }
    }
}
