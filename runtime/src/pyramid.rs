//! Image pyramids: one image per resolution level, finest first.
//!
//! [`Pyramid::new`] takes the finest image (level 0) and allocates the
//! coarser levels: level `k + 1` is `ceil(w_k / 2) x ceil(h_k / 2)` (each
//! dimension halved, rounded up, so an odd level keeps its last column and
//! row in the coarser level and no level is ever empty). A pyramid of an
//! `w x h` image can have up to `1 + ceil(log2(max(w, h)))` levels, the
//! last of them 1x1. The images live where every [`Image`] lives: on the
//! host until a device backend first reads them, then on that device.
//!
//! A pyramid is a cheap handle, like [`Image`]: `Clone` shares the levels.
//! [`crate::traverse`] binds pyramids to a traversal and addresses their
//! levels relative to the current one.

use crate::{Error, Result};
use hipacc_core::{Image, Pixel};
use sealed::Binding as _;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use thiserror::Error as ThisError;

/// Misuse of pyramids and traversals. Every variant says what to change.
#[derive(Debug, ThisError, PartialEq, Eq)]
#[non_exhaustive]
pub enum PyramidError {
    /// A pyramid of depth 0.
    #[error("a pyramid needs at least 1 level (depth 0 was requested)")]
    ZeroDepth,
    /// More levels than halving the image allows.
    #[error("a {width}x{height} image allows at most {max} pyramid levels (down to 1x1), but {depth} were requested")]
    TooDeep {
        /// Finest width.
        width: usize,
        /// Finest height.
        height: usize,
        /// Requested depth.
        depth: usize,
        /// Largest depth allowed.
        max: usize,
    },
    /// A 0-sized finest level.
    #[error("cannot build a pyramid of an empty {width}x{height} image")]
    Empty {
        /// Requested width.
        width: usize,
        /// Requested height.
        height: usize,
    },
    /// Pyramids that must have the same shape do not.
    #[error("pyramids differ in shape: {first} and {second}; pyramids in one traversal (or swapped) must have the same finest size and depth")]
    Mismatch {
        /// The first pyramid's shape, `WxH/depth`.
        first: String,
        /// The other pyramid's shape.
        second: String,
    },
    /// A pyramid already bound to a traversal (this one or an enclosing one).
    #[error("pyramid #{id} is already bound to a traversal; a pyramid can be bound to one traversal at a time (pass it once, and do not pass a pyramid of an enclosing traversal to a nested one)")]
    AlreadyBound {
        /// The pyramid's id.
        id: u64,
    },
    /// A pyramid read through a traversal it is not bound to.
    #[error(
        "pyramid #{id} is not bound to this traversal; add it to the pyramids passed to `traverse`"
    )]
    NotBound {
        /// The pyramid's id.
        id: u64,
    },
    /// A relative level index outside the pyramid.
    #[error("relative level {relative:+} at level {level} is outside the {depth} levels (0 = finest, {} = coarsest)", depth - 1)]
    LevelOutside {
        /// The relative index asked for.
        relative: i64,
        /// The current level.
        level: usize,
        /// The traversal's depth.
        depth: usize,
    },
    /// `recurse` at the coarsest level.
    #[error("cannot recurse below the coarsest level {level}; test `is_bottom_level()` before recursing")]
    RecurseAtBottom {
        /// The coarsest level.
        level: usize,
    },
    /// A traversal without pyramids.
    #[error("`traverse` needs at least one pyramid")]
    NoPyramids,
}

static NEXT_ID: AtomicU64 = AtomicU64::new(1);

/// A process-unique pyramid id (shared by every kind of pyramid, so the
/// ids a traversal binds never collide).
pub(crate) fn next_id() -> u64 {
    NEXT_ID.fetch_add(1, Ordering::Relaxed)
}

struct Shared<T: Pixel> {
    id: u64,
    width: usize,
    height: usize,
    depth: usize,
    levels: Mutex<Vec<Image<T>>>,
    bound: AtomicBool,
}

/// A multiresolution image: `depth` levels, level 0 the finest.
///
/// ```
/// use hipacc::{Image, Pyramid};
/// let fine = Image::<f32>::new(9, 4)?;
/// let p = Pyramid::new(&fine, 3)?;
/// let sizes: Vec<_> = (0..3).map(|k| p.size(k)).collect::<Result<_, _>>()?;
/// assert_eq!(sizes, [(9, 4), (5, 2), (3, 1)]);
/// assert!(Pyramid::new(&fine, 0).is_err());
/// # Ok::<(), hipacc::Error>(())
/// ```
pub struct Pyramid<T: Pixel> {
    shared: Arc<Shared<T>>,
}

impl<T: Pixel> Clone for Pyramid<T> {
    fn clone(&self) -> Self {
        Pyramid {
            shared: Arc::clone(&self.shared),
        }
    }
}

impl<T: Pixel> std::fmt::Debug for Pyramid<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Pyramid<{}>#{}({})", T::TYPE, self.id(), self.shape())
    }
}

/// The most levels a `width x height` image allows: halving (rounded up)
/// until both dimensions are 1.
pub fn max_depth(width: usize, height: usize) -> usize {
    let mut n = width.max(height);
    let mut depth = 1;
    while n > 1 {
        n = n.div_ceil(2);
        depth += 1;
    }
    depth
}

/// The size of level `level` of a pyramid whose finest level is `width x height`.
pub fn level_size(width: usize, height: usize, level: usize) -> (usize, usize) {
    (0..level).fold((width, height), |(w, h), _| (w.div_ceil(2), h.div_ceil(2)))
}

impl<T: Pixel> Pyramid<T> {
    /// A pyramid whose level 0 is `finest` (shared, not copied) and whose
    /// `depth - 1` coarser levels are allocated (zero pixels).
    pub fn new(finest: &Image<T>, depth: usize) -> Result<Pyramid<T>> {
        let (width, height) = (finest.width(), finest.height());
        check_depth(width, height, depth)?;
        let mut levels = vec![finest.clone()];
        for k in 1..depth {
            let (w, h) = level_size(width, height, k);
            levels.push(Image::new(w, h)?);
        }
        Ok(Pyramid {
            shared: Arc::new(Shared {
                id: next_id(),
                width,
                height,
                depth,
                levels: Mutex::new(levels),
                bound: AtomicBool::new(false),
            }),
        })
    }

    /// A pyramid of zero pixels whose finest level is `width x height`.
    pub fn zeros(width: usize, height: usize, depth: usize) -> Result<Pyramid<T>> {
        if width == 0 || height == 0 {
            return Err(PyramidError::Empty { width, height }.into());
        }
        check_depth(width, height, depth)?;
        Pyramid::new(&Image::new(width, height)?, depth)
    }

    /// A pyramid of zeros with the shape of `other`.
    pub fn like<U: Pixel>(other: &Pyramid<U>) -> Result<Pyramid<T>> {
        Pyramid::zeros(other.shared.width, other.shared.height, other.shared.depth)
    }

    /// Number of levels.
    pub fn depth(&self) -> usize {
        self.shared.depth
    }

    /// A process-unique id (clones share it).
    pub fn id(&self) -> u64 {
        self.shared.id
    }

    /// The image of level `level` (0 = finest); a handle sharing its pixels.
    pub fn level(&self, level: usize) -> Result<Image<T>> {
        self.levels()
            .get(level)
            .cloned()
            .ok_or_else(|| self.outside(level as i64, 0))
    }

    /// Width and height of level `level`.
    pub fn size(&self, level: usize) -> Result<(usize, usize)> {
        if level >= self.depth() {
            return Err(self.outside(level as i64, 0));
        }
        Ok(level_size(self.shared.width, self.shared.height, level))
    }

    /// Exchanges the levels of two pyramids of the same shape. Swapping a
    /// pyramid with itself (or a clone of it) does nothing, and
    /// `a.swap(&b)` equals `b.swap(&a)`.
    pub fn swap(&self, other: &Pyramid<T>) -> Result<()> {
        self.with_pair(other, std::mem::swap)
    }

    /// Runs `f` on the levels of both pyramids (checked to have the same
    /// shape; nothing for a pyramid and itself), locked in id order so two
    /// threads working on the same pair cannot deadlock.
    fn with_pair(
        &self,
        other: &Pyramid<T>,
        f: impl FnOnce(&mut Vec<Image<T>>, &mut Vec<Image<T>>),
    ) -> Result<()> {
        if self.id() == other.id() {
            return Ok(());
        }
        same_shape(self.shape(), other.shape())?;
        let (first, second) = if self.id() < other.id() {
            (self, other)
        } else {
            (other, self)
        };
        let mut a = first.levels();
        let mut b = second.levels();
        f(&mut a, &mut b);
        Ok(())
    }

    /// Exchanges level `level` of two pyramids of the same shape, leaving
    /// the other levels in place: how a solver that alternates between a
    /// level and a scratch level makes the scratch one current without a
    /// copy. Handles to the two images obtained before keep their pixels.
    ///
    /// ```
    /// use hipacc::{Image, Pyramid};
    /// let a = Pyramid::new(&Image::from_vec(2, 1, vec![1.0f32, 2.0])?, 2)?;
    /// let b = Pyramid::<f32>::like(&a)?;
    /// a.swap_level(&b, 0)?;
    /// assert_eq!(b.level(0)?.to_vec()?, [1.0, 2.0]);
    /// assert_eq!(a.level(0)?.to_vec()?, [0.0, 0.0]);
    /// # Ok::<(), hipacc::Error>(())
    /// ```
    pub fn swap_level(&self, other: &Pyramid<T>, level: usize) -> Result<()> {
        if level >= self.depth() {
            return Err(self.outside(level as i64, 0));
        }
        self.with_pair(other, |a, b| std::mem::swap(&mut a[level], &mut b[level]))
    }

    fn levels(&self) -> MutexGuard<'_, Vec<Image<T>>> {
        self.shared
            .levels
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }

    fn outside(&self, level: i64, base: usize) -> Error {
        PyramidError::LevelOutside {
            relative: level,
            level: base,
            depth: self.depth(),
        }
        .into()
    }
}

pub(crate) fn check_depth(width: usize, height: usize, depth: usize) -> Result<()> {
    if depth == 0 {
        return Err(PyramidError::ZeroDepth.into());
    }
    let max = max_depth(width, height);
    if depth > max {
        return Err(PyramidError::TooDeep {
            width,
            height,
            depth,
            max,
        }
        .into());
    }
    Ok(())
}

/// `Mismatch` unless both shapes agree.
pub(crate) fn same_shape(a: String, b: String) -> Result<()> {
    if a == b {
        Ok(())
    } else {
        Err(PyramidError::Mismatch {
            first: a,
            second: b,
        }
        .into())
    }
}

/// A pyramid of any pixel type, as [`crate::traverse`] takes it.
///
/// Sealed: implemented by [`Pyramid`] only.
pub trait BindPyramid: sealed::Binding {}

impl<T: Pixel> BindPyramid for Pyramid<T> {}

pub(crate) mod sealed {
    use crate::Result;

    /// What a traversal needs of a pyramid, whatever its pixel type.
    pub trait Binding {
        /// The pyramid's id.
        fn id(&self) -> u64;
        /// `WxH/depth` of the finest level.
        fn shape(&self) -> String;
        /// Number of levels.
        fn depth(&self) -> usize;
        /// Marks the pyramid bound; `AlreadyBound` if it was.
        fn bind(&self) -> Result<()>;
        /// Marks the pyramid free again.
        fn unbind(&self);
    }
}

impl<T: Pixel> sealed::Binding for Pyramid<T> {
    fn id(&self) -> u64 {
        self.shared.id
    }
    fn shape(&self) -> String {
        format!(
            "{}x{}/{}",
            self.shared.width, self.shared.height, self.shared.depth
        )
    }
    fn depth(&self) -> usize {
        self.shared.depth
    }
    fn bind(&self) -> Result<()> {
        self.shared
            .bound
            .compare_exchange(false, true, Ordering::AcqRel, Ordering::Acquire)
            .map(|_| ())
            .map_err(|_| PyramidError::AlreadyBound { id: self.id() }.into())
    }
    fn unbind(&self) {
        self.shared.bound.store(false, Ordering::Release);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn max_depth_halves_rounding_up() {
        assert_eq!(max_depth(1, 1), 1);
        assert_eq!(max_depth(2, 1), 2);
        assert_eq!(max_depth(3, 3), 3);
        assert_eq!(max_depth(4096, 4096), 13);
        assert_eq!(max_depth(5, 1000), 11);
        assert_eq!(level_size(4096, 4096, 10), (4, 4));
        assert_eq!(level_size(7, 3, 2), (2, 1));
    }
}
