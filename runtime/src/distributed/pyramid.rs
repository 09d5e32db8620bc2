//! Pyramids of distributed images: level `k + 1` lives on the
//! [`Grid::coarser`] grid of level `k`, so every rank holds the same part
//! of every level and a kernel reading one level finer or coarser runs
//! through the cross-grid [`execute`](super::execute) with a halo of one
//! pixel.
//!
//! A level is only distributed while every rank's block of it holds at
//! least one pixel. A pyramid deeper than that is refused when it is
//! created ([`DistError::PyramidTooDeep`], the same on every rank) rather
//! than gathered onto one rank behind the caller's back: the levels below
//! are a few pixels per rank, and a caller who wants them gathers the
//! coarsest distributed level ([`DistImage::gather`]) and continues with a
//! single-process [`Pyramid`](crate::Pyramid), whose levels halve exactly
//! as these do. [`DistPyramid::max_depth`] says how deep a grid allows.

use super::{DistError, DistImage, DistResult, Grid};
use crate::pyramid::{check_depth, max_depth, next_id, sealed, BindPyramid, PyramidError};
use hipacc_core::Pixel;
use std::cell::{Cell, RefCell};
use std::rc::Rc;

struct Shared<T: Pixel> {
    id: u64,
    grids: Rc<[Rc<Grid>]>,
    levels: RefCell<Vec<Rc<DistImage<T>>>>,
    bound: Cell<bool>,
}

/// A multiresolution distributed image: `depth` levels, level 0 the
/// finest, level `k` of size [`level_size`](crate::level_size)`(k)` on the
/// `k`-th [`Grid::coarser`] grid of level 0's grid.
///
/// Bind it to [`traverse`](super::traverse) as a single-process
/// [`Pyramid`](crate::Pyramid) binds to [`crate::traverse`]. `Clone`
/// shares the levels.
///
/// ```no_run
/// use hipacc::distributed::{self, DistImage, DistPyramid, Grid};
/// use std::rc::Rc;
///
/// let universe = distributed::initialize()?;
/// let grid = Rc::new(Grid::new(&universe.world(), 131, 71)?);
/// let fine = Rc::new(DistImage::from_fn(&grid, |x, y| (x + y) as f32)?);
/// let depth = DistPyramid::<f32>::max_depth(&grid).min(4);
/// let g = DistPyramid::new(&fine, depth)?;
/// assert_eq!(g.level(1)?.grid().width(), 66);
/// let laplacian = DistPyramid::<f32>::like(&g)?;
/// assert_eq!(laplacian.depth(), depth);
/// # Ok::<(), distributed::DistError>(())
/// ```
pub struct DistPyramid<T: Pixel> {
    shared: Rc<Shared<T>>,
}

impl<T: Pixel> Clone for DistPyramid<T> {
    fn clone(&self) -> Self {
        DistPyramid {
            shared: Rc::clone(&self.shared),
        }
    }
}

impl<T: Pixel> std::fmt::Debug for DistPyramid<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        use sealed::Binding as _;
        write!(
            f,
            "DistPyramid<{}>#{}({})",
            T::TYPE,
            self.id(),
            self.shape()
        )
    }
}

/// The starts of the grid's columns (or rows) of blocks, then its width
/// (or height): the bounds [`Grid::coarser`] halves.
fn bounds(grid: &Grid) -> (Vec<usize>, Vec<usize>) {
    let (px, py) = grid.shape();
    let xs = (0..px).map(|i| grid.block(i).x).chain([grid.width()]);
    let ys = (0..py).map(|j| grid.block(j * px).y).chain([grid.height()]);
    (xs.collect(), ys.collect())
}

impl<T: Pixel> DistPyramid<T> {
    /// The most levels a pyramid whose finest level is on `grid` can have:
    /// halving (as [`Grid::coarser`] does) while every block keeps a pixel,
    /// and at most [`max_depth`](crate::max_depth) of the global size.
    /// Local (no communication); the same on every rank.
    pub fn max_depth(grid: &Grid) -> usize {
        let nonempty = |v: &[usize]| v.windows(2).all(|w| w[0] < w[1]);
        let (mut xs, mut ys) = bounds(grid);
        let mut depth = 1;
        while depth < max_depth(grid.width(), grid.height()) {
            xs.iter_mut().for_each(|b| *b = b.div_ceil(2));
            ys.iter_mut().for_each(|b| *b = b.div_ceil(2));
            if !nonempty(&xs) || !nonempty(&ys) {
                break;
            }
            depth += 1;
        }
        depth
    }

    /// A pyramid whose level 0 is `finest` (shared, not copied) and whose
    /// `depth - 1` coarser levels are allocated on the coarser grids
    /// (default pixels). Collective (each level's grid duplicates the
    /// communicator). Refused on every rank alike when `depth` is 0, more
    /// than the image allows, or more than the grid can split
    /// ([`DistError::PyramidTooDeep`]).
    pub fn new(finest: &Rc<DistImage<T>>, depth: usize) -> DistResult<DistPyramid<T>> {
        let grid = finest.grid();
        check_depth(grid.width(), grid.height(), depth)?;
        let max = Self::max_depth(grid);
        if depth > max {
            return Err(DistError::PyramidTooDeep {
                width: grid.width(),
                height: grid.height(),
                depth,
                max,
                ranks: grid.ranks(),
            });
        }
        let mut grids = vec![Rc::clone(grid)];
        for k in 1..depth {
            let coarser = grids[k - 1].coarser()?;
            grids.push(Rc::new(coarser));
        }
        Self::on(grids.into(), Some(finest))
    }

    /// A pyramid of default pixels whose finest level is on `grid`.
    /// Collective.
    pub fn zeros(grid: &Rc<Grid>, depth: usize) -> DistResult<DistPyramid<T>> {
        Self::new(&Rc::new(DistImage::new(grid)?), depth)
    }

    /// A pyramid of default pixels on the grids of `other` (shared, so no
    /// communicator is duplicated). Local.
    pub fn like<U: Pixel>(other: &DistPyramid<U>) -> DistResult<DistPyramid<T>> {
        Self::on(Rc::clone(&other.shared.grids), None)
    }

    /// The pyramid on `grids`, level 0 `finest` or a new image.
    fn on(grids: Rc<[Rc<Grid>]>, finest: Option<&Rc<DistImage<T>>>) -> DistResult<Self> {
        let levels = grids
            .iter()
            .enumerate()
            .map(|(k, g)| match finest {
                Some(f) if k == 0 => Ok(Rc::clone(f)),
                _ => Ok(Rc::new(DistImage::new(g)?)),
            })
            .collect::<DistResult<_>>()?;
        Ok(DistPyramid {
            shared: Rc::new(Shared {
                id: next_id(),
                grids,
                levels: RefCell::new(levels),
                bound: Cell::new(false),
            }),
        })
    }

    /// Number of levels.
    pub fn depth(&self) -> usize {
        self.shared.grids.len()
    }

    /// A process-unique id (clones share it).
    pub fn id(&self) -> u64 {
        self.shared.id
    }

    /// The distributed image of level `level` (0 = finest).
    pub fn level(&self, level: usize) -> DistResult<Rc<DistImage<T>>> {
        self.shared
            .levels
            .borrow()
            .get(level)
            .cloned()
            .ok_or_else(|| {
                crate::Error::from(PyramidError::LevelOutside {
                    relative: level as i64,
                    level: 0,
                    depth: self.depth(),
                })
                .into()
            })
    }

    /// The grid of level `level`.
    pub fn grid(&self, level: usize) -> DistResult<Rc<Grid>> {
        Ok(Rc::clone(self.level(level)?.grid()))
    }
}

impl<T: Pixel> BindPyramid for DistPyramid<T> {}

impl<T: Pixel> sealed::Binding for DistPyramid<T> {
    fn id(&self) -> u64 {
        self.shared.id
    }
    fn shape(&self) -> String {
        let g = &self.shared.grids[0];
        format!("{}x{}/{}", g.width(), g.height(), self.depth())
    }
    fn depth(&self) -> usize {
        self.depth()
    }
    fn bind(&self) -> crate::Result<()> {
        if self.shared.bound.replace(true) {
            return Err(PyramidError::AlreadyBound { id: self.id() }.into());
        }
        Ok(())
    }
    fn unbind(&self) {
        self.shared.bound.set(false);
    }
}
