//! Domains: which positions of a window a local operator visits.

use crate::mask::check_odd;
use crate::{Error, Mask, Pixel, Result};

/// An odd-sized window with a per-position on/off flag, addressed by offset
/// from the centre. `reduce` and `iterate` visit the enabled positions in
/// row-major order.
///
/// The size is a run-time value (`Domain`, from [`Domain::new`]) or part of
/// the type (`Domain<5, 5>`, from [`Domain::fixed`]). A kernel field whose
/// domain size is in its type has that size checked when the kernel is
/// compiled: an even size is a compile error at the field, as for masks.
///
/// ```
/// use hipacc_core::Domain;
/// let mut d = Domain::new(3, 3)?;
/// d.set(0, 0, false)?;                      // a ring: all but the centre
/// assert_eq!(d.positions().len(), 8);
///
/// let cross: Domain<3, 3> = Domain::from_flags([
///     [false, true, false],
///     [true, true, true],
///     [false, true, false],
/// ])?;
/// assert_eq!(cross.positions().len(), 5);
/// # Ok::<(), hipacc_core::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Domain<const W: usize = 0, const H: usize = 0> {
    width: usize,
    height: usize,
    enabled: Vec<bool>,
}

impl<const W: usize, const H: usize> Domain<W, H> {
    /// A domain whose size is part of its type (`W x H`, both odd), with
    /// every position enabled.
    pub fn fixed() -> Result<Domain<W, H>> {
        Self::from_flags([[true; W]; H])
    }
    /// A domain whose size is part of its type, from rows of flags (`true`
    /// where the position is visited).
    pub fn from_flags(rows: [[bool; W]; H]) -> Result<Domain<W, H>> {
        check_odd("domain", W, H)?;
        Ok(Domain {
            width: W,
            height: H,
            enabled: rows.iter().flatten().copied().collect(),
        })
    }
}

impl Domain {
    /// A `width x height` domain with every position enabled; its size is a
    /// run-time value.
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
}

impl<const W: usize, const H: usize> Domain<W, H> {
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
