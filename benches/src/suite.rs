//! A benchmark suite modelled on HIPAcc's public samples, each kernel
//! written the way the README teaches a user (no kernel is shaped for a
//! fast path): box means as domain `reduce`s, Gaussians and the Laplacian
//! as mask `convolve`s, bilateral filters as `iterate`s with a range
//! weight (and the examples' own, with the spatial weight from the
//! offsets inside the `exp`), unsharp masking as one kernel (a
//! convolution inside a body), Sobel with its taps written out, erosion and dilation as domain
//! `reduce(Min | Max)`, a 3x3 median as a sorting network of `min`/`max`,
//! Shi-Tomasi corners as a three-kernel [`Pipeline`], one Horn-Schunck
//! optical-flow iteration as two kernels, the outputs of one pipeline
//! ([`Pipeline::output`]), and a 256-bin histogram.
//!
//! Inputs are 2048x2048 [`pattern_image`]s (values in [0, 1)) read through
//! [`Boundary::Clamp`] (Halide's `repeat_edge`, OpenCV's
//! `BORDER_REPLICATE`); the histogram reads the same pattern as `u8`.

use crate::pipelines::{SobelX, SobelY};
use crate::workload::pattern_image;
use hipacc::pipeline::Pipeline;
use hipacc::prelude::*;

/// The range parameter of the bilateral filters: weights
/// `exp(-(v - c)² / (2 σr²))` with `σr = 0.1`.
pub const BILATERAL_SIGMA_R: f32 = 0.1;

/// The smoothness weight `α²` of the Horn-Schunck iteration.
pub const HS_ALPHA2: f32 = 0.25;

/// A box mean over a domain.
#[derive(Kernel)]
#[kernel(output = f32)]
pub struct BoxMean {
    /// The image.
    pub input: Accessor<f32>,
    /// The window.
    pub window: Domain,
    /// One over the window's area.
    pub scale: f32,
}

#[kernel_body]
impl BoxMean {
    fn kernel(&self) -> f32 {
        reduce(&self.window, Sum, |dx, dy| self.input.at(dx, dy)) * self.scale
    }
}

/// A mask convolution.
#[derive(Kernel)]
#[kernel(output = f32)]
pub struct Convolution {
    /// The image.
    pub input: Accessor<f32>,
    /// The weights.
    pub mask: Mask<f32>,
}

#[kernel_body]
impl Convolution {
    fn kernel(&self) -> f32 {
        convolve(&self.mask, Sum, |dx, dy| {
            self.mask.at(dx, dy) * self.input.at(dx, dy)
        })
    }
}

/// A bilateral filter: spatial weights from a mask, range weights from the
/// difference to the centre pixel.
#[derive(Kernel)]
#[kernel(output = f32)]
pub struct Bilateral {
    /// The image.
    pub input: Accessor<f32>,
    /// The spatial weights.
    pub spatial: Mask<f32>,
    /// `1 / (2 σr²)`.
    pub range_scale: f32,
}

#[kernel_body]
impl Bilateral {
    fn kernel(&self) -> f32 {
        let c = self.input();
        let mut num = 0.0f32;
        let mut den = 0.0f32;
        iterate(&self.spatial, |dx, dy| {
            let v = self.input.at(dx, dy);
            let d = v - c;
            let w = self.spatial.at(dx, dy) * (-(d * d) * self.range_scale).exp();
            num += w * v;
            den += w;
        });
        num / den
    }
}

/// Unsharp masking written as one kernel: the blur and the sharpening in
/// one body (the pipeline `unsharp` writes them as two kernels).
#[derive(Kernel)]
#[kernel(output = f32)]
pub struct UnsharpKernel {
    /// The image.
    pub input: Accessor<f32>,
    /// The blur.
    pub mask: Mask<f32, 5, 5>,
    /// How much of the detail is added.
    pub amount: f32,
}

#[kernel_body]
impl UnsharpKernel {
    fn kernel(&self) -> f32 {
        let blurred = convolve(&self.mask, Sum, |dx, dy| {
            self.mask.at(dx, dy) * self.input.at(dx, dy)
        });
        self.input() + self.amount * (self.input() - blurred)
    }
}

/// The Sobel gradient magnitude.
#[derive(Kernel)]
#[kernel(output = f32)]
pub struct SobelMagnitude {
    /// The image.
    pub input: Accessor<f32>,
}

#[kernel_body]
impl SobelMagnitude {
    fn kernel(&self) -> f32 {
        let gx = (self.input.at(1, -1) - self.input.at(-1, -1))
            + 2.0 * (self.input.at(1, 0) - self.input.at(-1, 0))
            + (self.input.at(1, 1) - self.input.at(-1, 1));
        let gy = (self.input.at(-1, 1) - self.input.at(-1, -1))
            + 2.0 * (self.input.at(0, 1) - self.input.at(0, -1))
            + (self.input.at(1, 1) - self.input.at(1, -1));
        (gx * gx + gy * gy).sqrt()
    }
}

/// Erosion: the minimum over a domain.
#[derive(Kernel)]
#[kernel(output = f32)]
pub struct Erode {
    /// The image.
    pub input: Accessor<f32>,
    /// The structuring element.
    pub window: Domain,
}

#[kernel_body]
impl Erode {
    fn kernel(&self) -> f32 {
        reduce(&self.window, Min, |dx, dy| self.input.at(dx, dy))
    }
}

/// Dilation: the maximum over a domain.
#[derive(Kernel)]
#[kernel(output = f32)]
pub struct Dilate {
    /// The image.
    pub input: Accessor<f32>,
    /// The structuring element.
    pub window: Domain,
}

#[kernel_body]
impl Dilate {
    fn kernel(&self) -> f32 {
        reduce(&self.window, Max, |dx, dy| self.input.at(dx, dy))
    }
}

/// The median of the 3x3 neighbourhood, by a 19-exchange sorting network
/// that leaves the median in the middle position.
#[derive(Kernel)]
#[kernel(output = f32)]
pub struct Median3 {
    /// The image.
    pub input: Accessor<f32>,
}

#[kernel_body]
impl Median3 {
    fn kernel(&self) -> f32 {
        let p0 = self.input.at(-1, -1);
        let p1 = self.input.at(0, -1);
        let p2 = self.input.at(1, -1);
        let p3 = self.input.at(-1, 0);
        let p4 = self.input.at(0, 0);
        let p5 = self.input.at(1, 0);
        let p6 = self.input.at(-1, 1);
        let p7 = self.input.at(0, 1);
        let p8 = self.input.at(1, 1);
        // Compare-exchanges (lower index gets the minimum); an exchange
        // whose maximum (or minimum) is never read again keeps one side.
        let lo = p1.min(p2);
        let p2 = p1.max(p2);
        let p1 = lo;
        let lo = p4.min(p5);
        let p5 = p4.max(p5);
        let p4 = lo;
        let lo = p7.min(p8);
        let p8 = p7.max(p8);
        let p7 = lo;
        let lo = p0.min(p1);
        let p1 = p0.max(p1);
        let p0 = lo;
        let lo = p3.min(p4);
        let p4 = p3.max(p4);
        let p3 = lo;
        let lo = p6.min(p7);
        let p7 = p6.max(p7);
        let p6 = lo;
        let lo = p1.min(p2);
        let p2 = p1.max(p2);
        let p1 = lo;
        let lo = p4.min(p5);
        let p5 = p4.max(p5);
        let p4 = lo;
        let lo = p7.min(p8);
        let p8 = p7.max(p8);
        let p7 = lo;
        let p3 = p0.max(p3);
        let p5 = p5.min(p8);
        let lo = p4.min(p7);
        let p7 = p4.max(p7);
        let p4 = lo;
        let p6 = p3.max(p6);
        let p4 = p1.max(p4);
        let p2 = p2.min(p5);
        let p4 = p4.min(p7);
        let lo = p4.min(p2);
        let p2 = p4.max(p2);
        let p4 = lo;
        let p4 = p6.max(p4);
        let p4 = p4.min(p2);
        p4
    }
}

/// The Shi-Tomasi response (the smaller eigenvalue of the structure
/// tensor, summed over a 3x3 box) from the derivatives.
#[derive(Kernel)]
#[kernel(output = f32)]
pub struct ShiTomasi {
    /// The horizontal derivative.
    pub ix: Accessor<f32>,
    /// The vertical derivative.
    pub iy: Accessor<f32>,
    /// The window.
    pub window: Domain,
}

#[kernel_body]
impl ShiTomasi {
    fn kernel(&self) -> f32 {
        let sxx = reduce(&self.window, Sum, |dx, dy| {
            self.ix.at(dx, dy) * self.ix.at(dx, dy)
        });
        let syy = reduce(&self.window, Sum, |dx, dy| {
            self.iy.at(dx, dy) * self.iy.at(dx, dy)
        });
        let sxy = reduce(&self.window, Sum, |dx, dy| {
            self.ix.at(dx, dy) * self.iy.at(dx, dy)
        });
        let half_trace = (sxx + syy) * 0.5;
        let half_diff = (sxx - syy) * 0.5;
        half_trace - (half_diff * half_diff + sxy * sxy).sqrt()
    }
}

/// One Horn-Schunck update of the horizontal flow `u` (and, with `ix` and
/// `iy` swapped, of `v`): the neighbourhood mean minus the brightness
/// constancy correction.
#[derive(Kernel)]
#[kernel(output = f32)]
pub struct HornSchunck {
    /// The derivative along this component.
    pub ia: Accessor<f32>,
    /// The derivative along the other component.
    pub ib: Accessor<f32>,
    /// The temporal derivative.
    pub it: Accessor<f32>,
    /// This flow component.
    pub a: Accessor<f32>,
    /// The other flow component.
    pub b: Accessor<f32>,
    /// `α²`.
    pub alpha2: f32,
}

#[kernel_body]
impl HornSchunck {
    fn kernel(&self) -> f32 {
        let abar = (self.a.at(-1, 0) + self.a.at(1, 0) + self.a.at(0, -1) + self.a.at(0, 1)) * 0.25;
        let bbar = (self.b.at(-1, 0) + self.b.at(1, 0) + self.b.at(0, -1) + self.b.at(0, 1)) * 0.25;
        let ia = self.ia();
        let ib = self.ib();
        let t = (ia * abar + ib * bbar + self.it()) / (self.alpha2 + ia * ia + ib * ib);
        abar - ia * t
    }
}

/// The normalised Gaussian weights of radius `r` and deviation `sigma`,
/// as the peers compute them (in f64, rounded to f32).
pub fn gaussian(r: usize, sigma: f64) -> Vec<f32> {
    let w: Vec<f64> = (0..=2 * r)
        .map(|i| {
            let d = i as f64 - r as f64;
            (-d * d / (2.0 * sigma * sigma)).exp()
        })
        .collect();
    let s: f64 = w.iter().sum();
    w.iter().map(|v| (v / s) as f32).collect()
}

/// The outer product of `g` with itself, as a mask.
fn outer(g: &[f32]) -> hipacc::Result<Mask<f32>> {
    let n = g.len();
    Ok(Mask::from_vec(
        n,
        n,
        (0..n * n).map(|i| g[i / n] * g[i % n]).collect(),
    )?)
}

/// A workload of the suite: its name and what it runs.
pub struct Workload {
    /// The name the peers use.
    pub name: &'static str,
    /// What the kernel computes, for the table.
    pub what: &'static str,
}

/// Every workload, in table order.
pub const WORKLOADS: [Workload; 16] = [
    Workload {
        name: "box3",
        what: "3x3 box mean (domain reduce)",
    },
    Workload {
        name: "box7",
        what: "7x7 box mean (domain reduce)",
    },
    Workload {
        name: "box13",
        what: "13x13 box mean (domain reduce)",
    },
    Workload {
        name: "gauss3",
        what: "3x3 Gaussian (mask convolve)",
    },
    Workload {
        name: "gauss13",
        what: "13x13 Gaussian, sigma 2 (mask convolve)",
    },
    Workload {
        name: "bilateral5",
        what: "5x5 bilateral (iterate)",
    },
    Workload {
        name: "bilateral13",
        what: "13x13 bilateral (iterate)",
    },
    Workload {
        name: "bilateral5d",
        what: "the examples' 5x5 bilateral: spatial term in the exp (iterate over a domain)",
    },
    Workload {
        name: "unsharp1",
        what: "unsharp mask as one kernel (5x5 binomial convolve and sharpening)",
    },
    Workload {
        name: "sobel",
        what: "Sobel magnitude (taps written out)",
    },
    Workload {
        name: "laplace",
        what: "3x3 Laplacian (mask convolve)",
    },
    Workload {
        name: "erode3",
        what: "3x3 erosion (domain reduce Min)",
    },
    Workload {
        name: "dilate5",
        what: "5x5 dilation (domain reduce Max)",
    },
    Workload {
        name: "median3",
        what: "3x3 median (sorting network)",
    },
    Workload {
        name: "shitomasi",
        what: "Shi-Tomasi corners (3-kernel pipeline)",
    },
    Workload {
        name: "hornschunck",
        what: "Horn-Schunck iteration (2-output pipeline)",
    },
];

/// The images and kernels of the suite on one input.
pub struct Suite {
    /// The input.
    pub input: Image<f32>,
    /// The input as bytes (for the histogram).
    pub bytes: Image<u8>,
    /// The output of the single-kernel workloads.
    pub out: Image<f32>,
    gx: Image<f32>,
    gy: Image<f32>,
    ix: Image<f32>,
    iy: Image<f32>,
    it: Image<f32>,
    u: Image<f32>,
    v: Image<f32>,
    /// The outputs of the Horn-Schunck iteration.
    pub flow: (Image<f32>, Image<f32>),
    /// The output of the Shi-Tomasi pipeline.
    pub corners: Image<f32>,
}

impl Suite {
    /// The suite on `width x height` pattern inputs.
    pub fn new(width: usize, height: usize) -> hipacc::Result<Suite> {
        let input = pattern_image(width, height, 5)?;
        let values = input.to_vec()?;
        let bytes = Image::from_vec(
            width,
            height,
            values.iter().map(|v| (v * 256.0) as u8).collect(),
        )?;
        let image = || Image::<f32>::new(width, height);
        Ok(Suite {
            gx: image()?,
            gy: image()?,
            ix: pattern_image(width, height, 21)?,
            iy: pattern_image(width, height, 22)?,
            it: pattern_image(width, height, 23)?,
            u: pattern_image(width, height, 24)?,
            v: pattern_image(width, height, 25)?,
            input,
            bytes,
            out: image()?,
            flow: (image()?, image()?),
            corners: image()?,
        })
    }

    /// The output image of workload `name`.
    pub fn output(&self, name: &str) -> &Image<f32> {
        match name {
            "shitomasi" => &self.corners,
            "hornschunck" => &self.flow.0,
            _ => &self.out,
        }
    }

    /// Runs workload `name` on `device`.
    pub fn run(&self, name: &str, device: &Device) -> anyhow::Result<()> {
        if name == "bilateral5d" {
            // The examples' kernel itself, as the `filters` command runs it.
            let input = Accessor::new(&self.input).with_boundary(Boundary::Clamp);
            let k = hipacc_examples::filters::Bilateral::new(input)?;
            return Ok(k.execute(device, &IterationSpace::full(&self.out))?);
        }
        Ok(self.run_kernel(name, device)?)
    }

    /// [`Suite::run`] of the workloads whose kernels are defined here.
    fn run_kernel(&self, name: &str, device: &Device) -> hipacc::Result<()> {
        let clamp = |img: &Image<f32>| Accessor::new(img).with_boundary(Boundary::Clamp);
        let out = IterationSpace::full(&self.out);
        let boxed = |n: usize| -> hipacc::Result<()> {
            BoxMean {
                input: clamp(&self.input),
                window: Domain::new(n, n)?,
                scale: 1.0 / (n * n) as f32,
            }
            .execute(device, &out)
        };
        let bilateral = |r: usize| -> hipacc::Result<()> {
            Bilateral {
                input: clamp(&self.input),
                spatial: outer(&gaussian(r, r as f64 / 2.0))?,
                range_scale: 1.0 / (2.0 * BILATERAL_SIGMA_R * BILATERAL_SIGMA_R),
            }
            .execute(device, &out)
        };
        match name {
            "box3" => boxed(3),
            "box7" => boxed(7),
            "box13" => boxed(13),
            "gauss3" => Convolution {
                input: clamp(&self.input),
                mask: outer(&[0.25, 0.5, 0.25])?,
            }
            .execute(device, &out),
            "gauss13" => Convolution {
                input: clamp(&self.input),
                mask: outer(&gaussian(6, 2.0))?,
            }
            .execute(device, &out),
            "bilateral5" => bilateral(2),
            "bilateral13" => bilateral(6),
            "unsharp1" => UnsharpKernel {
                input: clamp(&self.input),
                mask: crate::pipelines::gauss5()?,
                amount: crate::pipelines::AMOUNT,
            }
            .execute(device, &out),
            "sobel" => SobelMagnitude {
                input: clamp(&self.input),
            }
            .execute(device, &out),
            "laplace" => Convolution {
                input: clamp(&self.input),
                mask: Mask::new([[0.0, 1.0, 0.0], [1.0, -4.0, 1.0], [0.0, 1.0, 0.0]])?,
            }
            .execute(device, &out),
            "erode3" => Erode {
                input: clamp(&self.input),
                window: Domain::new(3, 3)?,
            }
            .execute(device, &out),
            "dilate5" => Dilate {
                input: clamp(&self.input),
                window: Domain::new(5, 5)?,
            }
            .execute(device, &out),
            "median3" => Median3 {
                input: clamp(&self.input),
            }
            .execute(device, &out),
            "shitomasi" => {
                let (sx, sy) = (
                    SobelX {
                        input: clamp(&self.input),
                    },
                    SobelY {
                        input: clamp(&self.input),
                    },
                );
                let response = ShiTomasi {
                    ix: clamp(&self.gx),
                    iy: clamp(&self.gy),
                    window: Domain::new(3, 3)?,
                };
                let (six, siy, so) = (
                    IterationSpace::full(&self.gx),
                    IterationSpace::full(&self.gy),
                    IterationSpace::full(&self.corners),
                );
                let result = Pipeline::new()
                    .stage(&sx, &six)
                    .stage(&sy, &siy)
                    .stage(&response, &so)
                    .execute(device);
                result
            }
            "hornschunck" => {
                let update = |ia: &Image<f32>, ib: &Image<f32>, a: &Image<f32>, b: &Image<f32>| {
                    HornSchunck {
                        ia: Accessor::new(ia),
                        ib: Accessor::new(ib),
                        it: Accessor::new(&self.it),
                        a: clamp(a),
                        b: clamp(b),
                        alpha2: HS_ALPHA2,
                    }
                };
                let (update_u, update_v) = (
                    update(&self.ix, &self.iy, &self.u, &self.v),
                    update(&self.iy, &self.ix, &self.v, &self.u),
                );
                let (su, sv) = (
                    IterationSpace::full(&self.flow.0),
                    IterationSpace::full(&self.flow.1),
                );
                // Both components read the same five images: as two
                // outputs of one pipeline they read them in one pass.
                let result = Pipeline::new()
                    .output(&update_u, &su)
                    .output(&update_v, &sv)
                    .execute(device);
                result
            }
            _ => Err(hipacc::Error::Config(format!("no suite workload `{name}`"))),
        }
    }

    /// The inputs of the Horn-Schunck iteration, by name.
    pub fn flow_inputs(&self) -> [(&'static str, &Image<f32>); 5] {
        [
            ("ix", &self.ix),
            ("iy", &self.iy),
            ("it", &self.it),
            ("u", &self.u),
            ("v", &self.v),
        ]
    }

    /// The 256-bin histogram of [`Suite::bytes`].
    pub fn histogram(&self, device: &Device) -> hipacc::Result<Vec<u64>> {
        hipacc::reduce::histogram(device, &self.bytes, None, 256, 0.0, 256.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The examples' bilateral form computes the mask form's filter with
    /// σs = 2: the normalised Gaussian mask is `C · exp(-(dx² + dy²) /
    /// 8)`, whose factor `C` cancels in the weighted mean. The two differ
    /// by the rounding of the weights (a few ulp each).
    #[test]
    fn both_bilateral_forms_give_one_filter() {
        let s = Suite::new(37, 23).unwrap();
        let sigma_s = hipacc_examples::filters::BILATERAL_SIGMA_S;
        Bilateral {
            input: Accessor::new(&s.input).with_boundary(Boundary::Clamp),
            spatial: outer(&gaussian(2, f64::from(sigma_s))).unwrap(),
            range_scale: 1.0 / (2.0 * BILATERAL_SIGMA_R * BILATERAL_SIGMA_R),
        }
        .execute(&Device::cpu(), &IterationSpace::full(&s.out))
        .unwrap();
        let mask = s.out.to_vec().unwrap();
        s.run("bilateral5d", &Device::cpu()).unwrap();
        let domain = s.out.to_vec().unwrap();
        for (i, (m, d)) in mask.iter().zip(&domain).enumerate() {
            assert!((m - d).abs() <= 1e-5, "pixel {i}: {m} against {d}");
        }
    }

    /// The sorting network leaves the median of the nine pixels, checked
    /// against sorting them.
    #[test]
    fn the_median_network_gives_the_median() {
        let s = Suite::new(19, 11).unwrap();
        s.run("median3", &Device::cpu()).unwrap();
        let got = s.out.to_vec().unwrap();
        let src = s.input.to_vec().unwrap();
        let at = |x: i64, y: i64| src[(y.clamp(0, 10) * 19 + x.clamp(0, 18)) as usize];
        for y in 0..11i64 {
            for x in 0..19i64 {
                let mut v: Vec<f32> = (-1..=1)
                    .flat_map(|dy| (-1..=1).map(move |dx| (dx, dy)))
                    .map(|(dx, dy)| at(x + dx, y + dy))
                    .collect();
                v.sort_by(f32::total_cmp);
                assert_eq!(got[(y * 19 + x) as usize], v[4], "({x}, {y})");
            }
        }
    }
}
