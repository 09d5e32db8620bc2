//! Domains: which positions of a window a local operator visits.

use crate::mask::check_odd;
use crate::{Error, Mask, Pixel, Result};

/// An odd-sized window with a per-position on/off flag, addressed by offset
/// from the centre. `reduce` and `iterate` visit the enabled positions in
/// row-major order.
///
/// ```
/// use hipacc_core::Domain;
/// let mut d = Domain::new(3, 3)?;
/// d.set(0, 0, false)?;                      // a ring: all but the centre
/// assert_eq!(d.positions().len(), 8);
/// # Ok::<(), hipacc_core::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Domain {
    width: usize,
    height: usize,
    enabled: Vec<bool>,
}

impl Domain {
    /// A `width x height` domain with every position enabled.
    pub fn new(width: usize, height: usize) -> Result<Domain> {
        check_odd("domain", width, height)?;
        Ok(Domain {
            width,
            height,
            enabled: vec![true; width * height],
        })
    }
    /// The non-zero pattern of a mask.
    pub fn from_mask<T: Pixel, const W: usize, const H: usize>(mask: &Mask<T, W, H>) -> Domain {
        Domain {
            width: mask.width(),
            height: mask.height(),
            enabled: mask
                .coefficients()
                .iter()
                .map(|&c| c != T::default())
                .collect(),
        }
    }
    /// Width (odd).
    pub fn width(&self) -> usize {
        self.width
    }
    /// Height (odd).
    pub fn height(&self) -> usize {
        self.height
    }
    /// Row-major flags.
    pub fn enabled(&self) -> &[bool] {
        &self.enabled
    }
    /// Whether offset `(dx, dy)` is visited (false outside the window).
    pub fn is_enabled(&self, dx: i32, dy: i32) -> bool {
        self.index(dx, dy).is_some_and(|i| self.enabled[i])
    }
    /// Enables or disables offset `(dx, dy)`.
    pub fn set(&mut self, dx: i32, dy: i32, on: bool) -> Result<()> {
        let i = self.index(dx, dy).ok_or_else(|| Error::SizeMismatch {
            what: format!(
                "offset ({dx}, {dy}) is outside the {}x{} domain",
                self.width, self.height
            ),
        })?;
        self.enabled[i] = on;
        Ok(())
    }
    /// The enabled offsets `(dx, dy)` in row-major order.
    pub fn positions(&self) -> Vec<(i32, i32)> {
        let (cx, cy) = ((self.width / 2) as i32, (self.height / 2) as i32);
        (0..self.height)
            .flat_map(|iy| (0..self.width).map(move |ix| (ix, iy)))
            .filter(|&(ix, iy)| self.enabled[iy * self.width + ix])
            .map(|(ix, iy)| (ix as i32 - cx, iy as i32 - cy))
            .collect()
    }
    fn index(&self, dx: i32, dy: i32) -> Option<usize> {
        let (ix, iy) = (
            dx as i64 + (self.width / 2) as i64,
            dy as i64 + (self.height / 2) as i64,
        );
        ((0..self.width as i64).contains(&ix) && (0..self.height as i64).contains(&iy))
            .then(|| iy as usize * self.width + ix as usize)
    }
}
