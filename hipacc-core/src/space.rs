//! Iteration spaces: the output image and the region a kernel writes.

use crate::{Image, Pixel, Rect, Result};

/// Where a kernel runs: every pixel of `region` of the output image is
/// written exactly once, with the kernel body's value at that pixel.
///
/// ```
/// use hipacc_core::{Image, IterationSpace, Rect};
/// let out = Image::<f32>::new(16, 8)?;
/// let roi = IterationSpace::region(&out, Rect::new(2, 2, 4, 4))?;
/// assert_eq!(roi.rect(), Rect::new(2, 2, 4, 4));
/// assert!(IterationSpace::region(&out, Rect::new(14, 0, 4, 4)).is_err());
/// # Ok::<(), hipacc_core::Error>(())
/// ```
#[derive(Clone, Debug)]
pub struct IterationSpace<T: Pixel> {
    image: Image<T>,
    rect: Rect,
}

impl<T: Pixel> IterationSpace<T> {
    /// The whole output image.
    pub fn full(image: &Image<T>) -> IterationSpace<T> {
        IterationSpace {
            image: image.clone(),
            rect: Rect::full(image.width(), image.height()),
        }
    }
    /// A region of interest of the output image; it must be non-empty and inside.
    pub fn region(image: &Image<T>, rect: Rect) -> Result<IterationSpace<T>> {
        rect.check_in(image.width(), image.height())?;
        Ok(IterationSpace {
            image: image.clone(),
            rect,
        })
    }
    /// The output image.
    pub fn image(&self) -> &Image<T> {
        &self.image
    }
    /// The region written.
    pub fn rect(&self) -> Rect {
        self.rect
    }
}
