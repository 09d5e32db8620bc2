//! Accessors: how a kernel reads an input image.

use crate::{Boundary, Image, Pixel, Rect};
use serde::{Deserialize, Serialize};

/// How an accessor reads positions between pixel centres.
///
/// `None` reads whole-pixel offsets from the position that corresponds to the
/// output pixel one-to-one. The interpolating modes map the output pixel's
/// centre to the accessor's image cell-centred, for reading a finer or coarser
/// image.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, Default)]
pub enum Interpolation {
    /// Whole-pixel reads; accessor and iteration space correspond pixel to pixel.
    #[default]
    None,
    /// The nearest pixel.
    Nearest,
    /// Bilinear.
    Linear,
    /// Bicubic (Keys, a = -0.5).
    Cubic,
    /// Lanczos with 3 lobes.
    Lanczos3,
}

/// Read access to an image for a kernel: an optional region of interest, a
/// boundary condition and an interpolation mode.
///
/// The region acts as the image: position `(0, 0)` of the accessor is the
/// region's origin, and the boundary condition applies at the region's edges.
/// The output pixel `(x, y)` of an iteration space with origin `(sx, sy)`
/// reads accessor position `(x - sx + dx, y - sy + dy)` at offset `(dx, dy)`.
///
/// ```
/// use hipacc_core::{Accessor, Boundary, Image};
/// let img = Image::<f32>::new(8, 8)?;
/// let acc = Accessor::new(&img).with_boundary(Boundary::Mirror);
/// assert_eq!(acc.region().width, 8);
/// # Ok::<(), hipacc_core::Error>(())
/// ```
#[derive(Clone, Debug)]
pub struct Accessor<T: Pixel> {
    image: Image<T>,
    region: Rect,
    boundary: Boundary<T>,
    interpolation: Interpolation,
}

impl<T: Pixel> Accessor<T> {
    /// Reads the whole image with an `Undefined` boundary.
    pub fn new(image: &Image<T>) -> Accessor<T> {
        Accessor {
            image: image.clone(),
            region: Rect::full(image.width(), image.height()),
            boundary: Boundary::Undefined,
            interpolation: Interpolation::None,
        }
    }
    /// Sets the boundary condition.
    pub fn with_boundary(mut self, boundary: Boundary<T>) -> Accessor<T> {
        self.boundary = boundary;
        self
    }
    /// Restricts reads to a region of interest (checked at launch).
    pub fn with_region(mut self, region: Rect) -> Accessor<T> {
        self.region = region;
        self
    }
    /// Sets the interpolation mode.
    pub fn with_interpolation(mut self, interpolation: Interpolation) -> Accessor<T> {
        self.interpolation = interpolation;
        self
    }
    /// The image read.
    pub fn image(&self) -> &Image<T> {
        &self.image
    }
    /// The region of interest.
    pub fn region(&self) -> Rect {
        self.region
    }
    /// The boundary condition.
    pub fn boundary(&self) -> Boundary<T> {
        self.boundary
    }
    /// The interpolation mode.
    pub fn interpolation(&self) -> Interpolation {
        self.interpolation
    }
}
