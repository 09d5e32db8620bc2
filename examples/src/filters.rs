//! The filters of the `filters` example, as hipacc kernels.
//!
//! Each filter reads one luminance image (`f32`) through an accessor with the
//! boundary condition chosen on the command line and writes one `f32` image
//! of the same size:
//!
//! | filter | definition |
//! |---|---|
//! | `gaussian5` | the binomial `[1 4 6 4 1]/16` outer product as one 5x5 [`Mask`], applied with `convolve` |
//! | `box` | the mean of an N x N window (N odd, default 3): `reduce(Sum)` over a [`Domain`] times `1/N²` |
//! | `sobel` | `sqrt(gx² + gy²)` of the unnormalised 3x3 Sobel operators, `gx` = right column minus left column with weights 1 2 1, `gy` = bottom row minus top row |
//! | `laplace` | the 5-point Laplacian `u(x-1,y) + u(x+1,y) + u(x,y-1) + u(x,y+1) - 4u(x,y)` |
//! | `bilateral` | 5x5 window, `sigma_s = 2`, `sigma_r = 0.1`: `sum(w q) / sum(w)` over the window's values `q` with `w = exp(-(dx²+dy²)/(2 sigma_s²) - (q-c)²/(2 sigma_r²))`, `c` the centre value |
//!
//! With [`Boundary::Undefined`] no read may leave the image, so only the
//! pixels whose whole window lies inside it are computed; the others (a
//! frame as wide as the window's radius) are 0 (see [`Filter::apply`]).

use anyhow::{bail, Context, Result};
use hipacc::prelude::*;

/// The spatial standard deviation of `bilateral`, in pixels.
pub const BILATERAL_SIGMA_S: f32 = 2.0;
/// The range standard deviation of `bilateral`, in luminance units.
pub const BILATERAL_SIGMA_R: f32 = 0.1;
/// The largest `box` size accepted.
pub const MAX_BOX_SIZE: usize = 63;

/// 5x5 binomial Gaussian as one mask. The mask has rank 1, so the CPU
/// backend runs the convolution as a horizontal and a vertical pass (10
/// multiply-adds per pixel instead of 25); the GPU code generators unroll the
/// 25 taps with the coefficients as literals (the mask's size is in its type).
#[derive(Kernel)]
#[kernel(output = f32)]
pub struct Gaussian5 {
    input: Accessor<f32>,
    mask: Mask<f32, 5, 5>,
}

#[kernel_body]
impl Gaussian5 {
    fn kernel(&self) -> f32 {
        convolve(&self.mask, Sum, |dx, dy| {
            self.mask.at(dx, dy) * self.input.at(dx, dy)
        })
    }
}

impl Gaussian5 {
    /// The kernel reading `input`.
    pub fn new(input: Accessor<f32>) -> Result<Gaussian5> {
        Ok(Gaussian5 {
            input,
            mask: gaussian5_mask()?,
        })
    }
}

/// The `[1 4 6 4 1]/16` binomial outer product (every coefficient exact in f32).
pub fn gaussian5_mask() -> Result<Mask<f32, 5, 5>> {
    let row = [1.0f32, 4.0, 6.0, 4.0, 1.0].map(|c| c / 16.0);
    Ok(Mask::fixed(row.map(|cy| row.map(|cx| cy * cx)))?)
}

/// N x N mean.
#[derive(Kernel)]
#[kernel(output = f32)]
pub struct BoxMean {
    input: Accessor<f32>,
    window: Domain,
    scale: f32,
}

#[kernel_body]
impl BoxMean {
    fn kernel(&self) -> f32 {
        reduce(&self.window, Sum, |dx, dy| self.input.at(dx, dy)) * self.scale
    }
}

impl BoxMean {
    /// The `size x size` mean of `input`; `size` must be odd.
    pub fn new(input: Accessor<f32>, size: usize) -> Result<BoxMean> {
        Ok(BoxMean {
            input,
            window: Domain::new(size, size)?,
            scale: 1.0 / (size * size) as f32,
        })
    }
}

/// Sobel gradient magnitude.
#[derive(Kernel)]
#[kernel(output = f32)]
pub struct Sobel {
    input: Accessor<f32>,
}

#[kernel_body]
impl Sobel {
    fn kernel(&self) -> f32 {
        let gx = (self.input.at(1, -1) + 2.0 * self.input.at(1, 0) + self.input.at(1, 1))
            - (self.input.at(-1, -1) + 2.0 * self.input.at(-1, 0) + self.input.at(-1, 1));
        let gy = (self.input.at(-1, 1) + 2.0 * self.input.at(0, 1) + self.input.at(1, 1))
            - (self.input.at(-1, -1) + 2.0 * self.input.at(0, -1) + self.input.at(1, -1));
        (gx * gx + gy * gy).sqrt()
    }
}

impl Sobel {
    /// The kernel reading `input`.
    pub fn new(input: Accessor<f32>) -> Sobel {
        Sobel { input }
    }
}

/// 5-point Laplacian.
#[derive(Kernel)]
#[kernel(output = f32)]
pub struct Laplace {
    input: Accessor<f32>,
}

#[kernel_body]
impl Laplace {
    fn kernel(&self) -> f32 {
        self.input.at(-1, 0) + self.input.at(1, 0) + self.input.at(0, -1) + self.input.at(0, 1)
            - 4.0 * self.input()
    }
}

impl Laplace {
    /// The kernel reading `input`.
    pub fn new(input: Accessor<f32>) -> Laplace {
        Laplace { input }
    }
}

/// 5x5 bilateral filter.
#[derive(Kernel)]
#[kernel(output = f32)]
pub struct Bilateral {
    input: Accessor<f32>,
    window: Domain,
    /// `1 / (2 sigma_s²)`.
    spatial: f32,
    /// `1 / (2 sigma_r²)`.
    range: f32,
}

#[kernel_body]
impl Bilateral {
    fn kernel(&self) -> f32 {
        let centre = self.input();
        let mut weighted: f32 = 0.0;
        let mut total: f32 = 0.0;
        iterate(&self.window, |dx, dy| {
            let q = self.input.at(dx, dy);
            let d = q - centre;
            let w = (-((dx * dx + dy * dy) as f32) * self.spatial - d * d * self.range).exp();
            weighted += w * q;
            total += w;
        });
        weighted / total
    }
}

impl Bilateral {
    /// The kernel with [`BILATERAL_SIGMA_S`] and [`BILATERAL_SIGMA_R`].
    pub fn new(input: Accessor<f32>) -> Result<Bilateral> {
        Ok(Bilateral {
            input,
            window: Domain::new(5, 5)?,
            spatial: 1.0 / (2.0 * BILATERAL_SIGMA_S * BILATERAL_SIGMA_S),
            range: 1.0 / (2.0 * BILATERAL_SIGMA_R * BILATERAL_SIGMA_R),
        })
    }
}

/// A filter of the `filters` example.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Filter {
    /// 5x5 binomial Gaussian.
    Gaussian5,
    /// N x N mean (N odd).
    Box(usize),
    /// Sobel gradient magnitude.
    Sobel,
    /// 5-point Laplacian.
    Laplace,
    /// 5x5 bilateral filter.
    Bilateral,
}

/// The filter names the command line accepts.
pub const FILTER_NAMES: [&str; 5] = ["gaussian5", "box", "sobel", "laplace", "bilateral"];

impl Filter {
    /// The filter called `name`; `size` is the box size (only `box` takes one).
    pub fn parse(name: &str, size: Option<usize>) -> Result<Filter> {
        let filter = match name {
            "gaussian5" => Filter::Gaussian5,
            "box" => {
                let n = size.unwrap_or(3);
                if n % 2 != 1 || n > MAX_BOX_SIZE {
                    bail!("--size {n}: the box size must be odd, from 1 to {MAX_BOX_SIZE}");
                }
                Filter::Box(n)
            }
            "sobel" => Filter::Sobel,
            "laplace" => Filter::Laplace,
            "bilateral" => Filter::Bilateral,
            other => bail!(
                "unknown filter `{other}` (expected one of: {})",
                FILTER_NAMES.join(", ")
            ),
        };
        if let (Some(n), false) = (size, matches!(filter, Filter::Box(_))) {
            bail!("--size {n}: only the `box` filter takes a size");
        }
        Ok(filter)
    }

    /// The half-width of the filter's window (reads reach this far).
    pub fn radius(self) -> usize {
        match self {
            Filter::Gaussian5 | Filter::Bilateral => 2,
            Filter::Box(n) => n / 2,
            Filter::Sobel | Filter::Laplace => 1,
        }
    }

    /// The IR of the kernel [`Filter::apply`] runs for `boundary` (what
    /// offline code emission prints).
    pub fn kernel_ir(self, boundary: Boundary<f32>) -> Result<hipacc::core::ir::Kernel> {
        let input = Image::<f32>::new(1, 1)?;
        let read = if boundary == Boundary::Undefined {
            Boundary::Clamp
        } else {
            boundary
        };
        let acc = Accessor::new(&input).with_boundary(read);
        Ok(match self {
            Filter::Gaussian5 => Gaussian5::new(acc)?.ir()?,
            Filter::Box(n) => BoxMean::new(acc, n)?.ir()?,
            Filter::Sobel => Sobel::new(acc).ir()?,
            Filter::Laplace => Laplace::new(acc).ir()?,
            Filter::Bilateral => Bilateral::new(acc)?.ir()?,
        })
    }

    /// Applies the filter to `input` on `device`, reading through `boundary`.
    ///
    /// `Boundary::Undefined` promises the kernel that no read leaves the
    /// image, a promise only the pixels whose whole window lies inside can
    /// keep: those are computed (their reads never reach a boundary, so
    /// they run with `Clamp` and the same result), the frame around them
    /// is 0. An image with no such pixel is an error.
    pub fn apply(
        self,
        input: &Image<f32>,
        boundary: Boundary<f32>,
        device: &Device,
    ) -> Result<Image<f32>> {
        let (w, h) = (input.width(), input.height());
        let r = self.radius();
        let undefined = boundary == Boundary::Undefined;
        if undefined && (w <= 2 * r || h <= 2 * r) {
            bail!(
                "the {w}x{h} image has no pixel whose {0}x{0} window lies inside it; \
                 the `undefined` boundary computes only those, choose another boundary",
                2 * r + 1
            );
        }
        let output = Image::<f32>::new(w, h)?;
        let space = IterationSpace::full(&output);
        let read = if undefined { Boundary::Clamp } else { boundary };
        let acc = Accessor::new(input).with_boundary(read);
        match self {
            Filter::Gaussian5 => Gaussian5::new(acc)?.execute(device, &space)?,
            Filter::Box(n) => BoxMean::new(acc, n)?.execute(device, &space)?,
            Filter::Sobel => Sobel::new(acc).execute(device, &space)?,
            Filter::Laplace => Laplace::new(acc).execute(device, &space)?,
            Filter::Bilateral => Bilateral::new(acc)?.execute(device, &space)?,
        }
        if undefined {
            let mut px = output.write()?;
            for (y, row) in px.chunks_mut(w).enumerate() {
                if y < r || y >= h - r {
                    row.fill(0.0);
                } else {
                    row[..r].fill(0.0);
                    row[w - r..].fill(0.0);
                }
            }
        }
        Ok(output)
    }
}

/// The boundary named `name`: `clamp`, `repeat`, `mirror`, `mirror-interior`,
/// `undefined` or `constant:V` with `V` a number.
pub fn parse_boundary(name: &str) -> Result<Boundary<f32>> {
    Ok(match name {
        "clamp" => Boundary::Clamp,
        "repeat" => Boundary::Repeat,
        "mirror" => Boundary::Mirror,
        "mirror-interior" => Boundary::MirrorInterior,
        "undefined" => Boundary::Undefined,
        other => match other.strip_prefix("constant:") {
            Some(v) => {
                let c: f32 = v
                    .parse()
                    .ok()
                    .filter(|c: &f32| c.is_finite())
                    .with_context(|| format!("boundary `{other}`: `{v}` is not a finite number"))?;
                Boundary::Constant(c)
            }
            None => bail!(
                "unknown boundary `{other}` (expected clamp, repeat, mirror, mirror-interior, \
                 undefined or constant:V)"
            ),
        },
    })
}

/// A built-in test image with values in `[0, 1]`: smooth rings, sharp-edged
/// squares and a diagonal ramp, so every filter has something to act on.
pub fn demo_image(width: usize, height: usize) -> Result<Image<f32>> {
    let (cx, cy) = (width as f32 / 2.0, height as f32 / 2.0);
    Ok(Image::from_fn(width, height, |x, y| {
        let (fx, fy) = (x as f32, y as f32);
        let r = ((fx - cx).powi(2) + (fy - cy).powi(2)).sqrt();
        let rings = 0.5 + 0.5 * (r * 0.12).sin();
        let squares = ((x / 32 + y / 32 + 1) % 2) as f32;
        let ramp = (fx + fy) / (width + height) as f32;
        0.4 * rings + 0.35 * squares + 0.25 * ramp
    })?)
}

/// Refuses images holding NaN or infinite pixels, naming the first one.
pub fn check_finite(image: &Image<f32>) -> Result<()> {
    let pixels = image.to_vec()?;
    let bad = pixels.iter().filter(|v| !v.is_finite()).count();
    if let Some(i) = pixels.iter().position(|v| !v.is_finite()) {
        bail!(
            "{bad} pixel(s) are NaN or infinite, the first at ({}, {}): {}",
            i % image.width(),
            i / image.width(),
            pixels[i]
        );
    }
    Ok(())
}
