//! Rectangles: regions of interest of accessors and iteration spaces.

use serde::{Deserialize, Serialize};

/// An axis-aligned rectangle of pixels: origin `(x, y)` and size.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, Default)]
pub struct Rect {
    /// Left column.
    pub x: usize,
    /// Top row.
    pub y: usize,
    /// Width in pixels.
    pub width: usize,
    /// Height in pixels.
    pub height: usize,
}

impl Rect {
    /// A rectangle from origin and size.
    pub const fn new(x: usize, y: usize, width: usize, height: usize) -> Rect {
        Rect {
            x,
            y,
            width,
            height,
        }
    }
    /// The whole of a `width x height` image.
    pub const fn full(width: usize, height: usize) -> Rect {
        Rect {
            x: 0,
            y: 0,
            width,
            height,
        }
    }
    /// True when non-empty and inside a `width x height` image.
    pub fn fits_in(&self, width: usize, height: usize) -> bool {
        self.width > 0
            && self.height > 0
            && self.x.checked_add(self.width).is_some_and(|r| r <= width)
            && self.y.checked_add(self.height).is_some_and(|b| b <= height)
    }
    /// Checks [`Rect::fits_in`], with the error that says why not.
    pub fn check_in(&self, width: usize, height: usize) -> crate::Result<()> {
        if self.fits_in(width, height) {
            Ok(())
        } else {
            Err(crate::Error::RegionOutside {
                x: self.x,
                y: self.y,
                width: self.width,
                height: self.height,
                image_width: width,
                image_height: height,
            })
        }
    }
}
