//! Masks: rectangular coefficient arrays centred on the output pixel.

use crate::{Error, Pixel, Result};

/// Filter coefficients of odd width and height, addressed by offset from the
/// centre: `at(dx, dy)` for `dx` in `-w/2..=w/2`. Reads outside the mask give 0.
///
/// By default the coefficients are part of the kernel's IR, so GPU code
/// generation writes them as literals and unrolls; [`Mask::dynamic`] instead
/// passes them at launch (constant memory), so changing them does not
/// recompile.
///
/// The size is chosen at run time (`Mask<T>`), or fixed in the type
/// (`Mask<T, W, H>`, built by [`Mask::fixed`]). GPU code is generated at run
/// time and unrolls either; the CPU backend is compiled ahead of time by
/// rustc, which unrolls a local operator's loop (and then vectorises across
/// pixels) only when the size is in the type.
///
/// ```
/// use hipacc_core::Mask;
/// let m = Mask::new([[1.0f32, 2.0, 1.0], [2.0, 4.0, 2.0], [1.0, 2.0, 1.0]])?;
/// assert_eq!(m.at(1, 0), Some(2.0));
/// assert_eq!((m.width(), m.height()), (3, 3));
/// let f: Mask<f32, 3, 1> = Mask::fixed([[1.0, 2.0, 1.0]])?;
/// assert_eq!(f.at(-1, 0), Some(1.0));
/// # Ok::<(), hipacc_core::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct Mask<T: Pixel, const W: usize = 0, const H: usize = 0> {
    width: usize,
    height: usize,
    coefficients: Vec<T>,
    dynamic: bool,
}

impl<T: Pixel, const W: usize, const H: usize> Mask<T, W, H> {
    /// A mask whose size is part of its type (`W x H`, both odd).
    pub fn fixed(rows: [[T; W]; H]) -> Result<Mask<T, W, H>> {
        check_odd("mask", W, H)?;
        Ok(Mask {
            width: W,
            height: H,
            coefficients: rows.iter().flatten().copied().collect(),
            dynamic: false,
        })
    }
}

impl<T: Pixel> Mask<T> {
    /// A mask from rows of coefficients; its size is a run-time value.
    pub fn new<const W: usize, const H: usize>(rows: [[T; W]; H]) -> Result<Mask<T>> {
        Self::from_vec(W, H, rows.iter().flatten().copied().collect())
    }
    /// A mask from row-major coefficients.
    pub fn from_vec(width: usize, height: usize, coefficients: Vec<T>) -> Result<Mask<T>> {
        check_odd("mask", width, height)?;
        if coefficients.len() != width * height {
            return Err(Error::DataLength {
                len: coefficients.len(),
                width,
                height,
            });
        }
        Ok(Mask {
            width,
            height,
            coefficients,
            dynamic: false,
        })
    }
    /// The outer product `column * row` (a separable filter as one mask).
    pub fn separable(row: &[T], column: &[T]) -> Result<Mask<T>>
    where
        T: std::ops::Mul<Output = T>,
    {
        let c = column
            .iter()
            .flat_map(|&cy| row.iter().map(move |&rx| cy * rx))
            .collect();
        Self::from_vec(row.len(), column.len(), c)
    }
}

impl<T: Pixel, const W: usize, const H: usize> Mask<T, W, H> {
    /// Passes the coefficients at launch instead of compiling them in.
    pub fn dynamic(mut self) -> Mask<T, W, H> {
        self.dynamic = true;
        self
    }
    /// True if coefficients are passed at launch.
    pub fn is_dynamic(&self) -> bool {
        self.dynamic
    }
    /// Width (odd).
    pub fn width(&self) -> usize {
        self.width
    }
    /// Height (odd).
    pub fn height(&self) -> usize {
        self.height
    }
    /// Row-major coefficients.
    pub fn coefficients(&self) -> &[T] {
        &self.coefficients
    }
    /// Coefficient at offset `(dx, dy)` from the centre, `None` outside.
    pub fn at(&self, dx: i32, dy: i32) -> Option<T> {
        let (cx, cy) = ((self.width / 2) as i64, (self.height / 2) as i64);
        let (ix, iy) = (dx as i64 + cx, dy as i64 + cy);
        if ix < 0 || iy < 0 || ix >= self.width as i64 || iy >= self.height as i64 {
            return None;
        }
        Some(self.coefficients[iy as usize * self.width + ix as usize])
    }
    /// Sets one coefficient.
    pub fn set(&mut self, dx: i32, dy: i32, value: T) -> Result<()> {
        let (cx, cy) = ((self.width / 2) as i64, (self.height / 2) as i64);
        let (ix, iy) = (dx as i64 + cx, dy as i64 + cy);
        if ix < 0 || iy < 0 || ix >= self.width as i64 || iy >= self.height as i64 {
            return Err(Error::SizeMismatch {
                what: format!(
                    "offset ({dx}, {dy}) is outside the {}x{} mask",
                    self.width, self.height
                ),
            });
        }
        self.coefficients[iy as usize * self.width + ix as usize] = value;
        Ok(())
    }
}

pub(crate) fn check_odd(what: &str, width: usize, height: usize) -> Result<()> {
    if width == 0 || height == 0 || width.is_multiple_of(2) || height.is_multiple_of(2) {
        return Err(Error::SizeMismatch {
            what: format!("a {what} must have odd width and height, got {width}x{height}"),
        });
    }
    Ok(())
}
