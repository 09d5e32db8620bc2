//! The decomposition: a global extent split into one block per rank.

use super::{DistError, DistResult};
use mpi::topology::SimpleCommunicator;
use mpi::traits::*;

/// A block of the global image: its origin and size in global pixels.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Block {
    /// Left column.
    pub x: usize,
    /// Top row.
    pub y: usize,
    /// Width.
    pub width: usize,
    /// Height.
    pub height: usize,
}

impl Block {
    /// True when the global pixel `(x, y)` lies in the block.
    pub fn contains(&self, x: usize, y: usize) -> bool {
        (self.x..self.x + self.width).contains(&x) && (self.y..self.y + self.height).contains(&y)
    }
}

/// The process grid `px x py` for `ranks` ranks and a `width x height`
/// extent: of the factorisations `px * py = ranks`, the one whose blocks
/// have the shortest perimeter (the least halo to exchange); ties go to
/// more columns.
///
/// ```
/// use hipacc::distributed::process_grid;
/// assert_eq!(process_grid(4, 100, 100), (2, 2));
/// assert_eq!(process_grid(2, 300, 100), (2, 1));
/// assert_eq!(process_grid(3, 100, 100), (3, 1));
/// ```
pub fn process_grid(ranks: usize, width: usize, height: usize) -> (usize, usize) {
    let ranks = ranks.max(1);
    let mut best = (ranks, 1);
    let mut best_cost = f64::INFINITY;
    for px in (1..=ranks).rev().filter(|px| ranks.is_multiple_of(*px)) {
        let py = ranks / px;
        let cost = width as f64 / px as f64 + height as f64 / py as f64;
        if cost < best_cost - 1e-9 {
            best = (px, py);
            best_cost = cost;
        }
    }
    best
}

/// Start of part `i` of `n` equal parts of `len` (the first parts are the
/// smaller ones when `len` does not divide).
fn split(len: usize, n: usize, i: usize) -> usize {
    i * len / n
}

/// The part of `bounds` (starts of the parts, then the length) holding `x`.
fn part_of(bounds: &[usize], x: usize) -> usize {
    bounds[1..bounds.len() - 1].partition_point(|&s| s <= x)
}

/// The bounds of the next coarser level: every bound halved, rounded up.
fn halve(bounds: &[usize]) -> Vec<usize> {
    bounds.iter().map(|b| b.div_ceil(2)).collect()
}

/// A global extent distributed over the ranks of a communicator.
///
/// Every rank must create it with the same size; [`Grid::new`] checks that
/// (all ranks get the same error otherwise). [`Grid::coarser`] gives the
/// nested grid of the next multigrid level.
pub struct Grid {
    comm: SimpleCommunicator,
    width: usize,
    height: usize,
    px: usize,
    py: usize,
    /// Column where each column of blocks starts, then the width.
    xs: Vec<usize>,
    /// Row where each row of blocks starts, then the height.
    ys: Vec<usize>,
}

impl std::fmt::Debug for Grid {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Grid")
            .field("width", &self.width)
            .field("height", &self.height)
            .field("px", &self.px)
            .field("py", &self.py)
            .field("rank", &self.rank())
            .finish()
    }
}

impl Grid {
    /// Splits `width x height` over the ranks of `comm` (which it
    /// duplicates, so its messages never mix with the caller's). Collective.
    pub fn new(comm: &SimpleCommunicator, width: usize, height: usize) -> DistResult<Grid> {
        let comm = comm.duplicate();
        let ranks = comm.size() as usize;
        let mine = [width as u64, height as u64];
        let mut all = vec![0u64; 2 * ranks];
        comm.all_gather_into(&mine[..], &mut all[..]);
        if let Some(r) = (0..ranks).find(|&r| all[2 * r..2 * r + 2] != all[0..2]) {
            return Err(DistError::SizeMismatch {
                rank0: (all[0] as usize, all[1] as usize),
                rank: r,
                size: (all[2 * r] as usize, all[2 * r + 1] as usize),
            });
        }
        let (px, py) = process_grid(ranks, width, height);
        if width < px || height < py {
            return Err(DistError::TooSmall {
                width,
                height,
                ranks,
                px,
                py,
            });
        }
        Ok(Grid {
            comm,
            width,
            height,
            px,
            py,
            xs: (0..=px).map(|i| split(width, px, i)).collect(),
            ys: (0..=py).map(|j| split(height, py, j)).collect(),
        })
    }

    /// The grid of the next coarser level: `ceil(width / 2) x ceil(height /
    /// 2)` (as [`Pyramid`](crate::Pyramid) levels halve), over the same
    /// process grid, each block the half of this grid's block on the same
    /// rank: fine columns `[x0, x1)` give coarse columns `[ceil(x0 / 2),
    /// ceil(x1 / 2))`. A coarse cell then covers fine cells of its own rank
    /// (but for the last fine column of an odd block), so restriction and
    /// prolongation between the two grids exchange a halo of one pixel.
    /// Collective (it duplicates the communicator); every rank gets the
    /// same [`DistError::TooSmall`] when a block would be empty.
    ///
    /// ```no_run
    /// use hipacc::distributed::{self, Grid};
    /// let universe = distributed::initialize()?;
    /// let fine = Grid::new(&universe.world(), 1001, 77)?;
    /// let coarse = fine.coarser()?;
    /// assert_eq!((coarse.width(), coarse.height()), (501, 39));
    /// let (f, c) = (fine.my_block(), coarse.my_block());
    /// assert_eq!(c.x, f.x.div_ceil(2));
    /// # Ok::<(), distributed::DistError>(())
    /// ```
    pub fn coarser(&self) -> DistResult<Grid> {
        let (xs, ys) = (halve(&self.xs), halve(&self.ys));
        let (width, height) = (self.width.div_ceil(2), self.height.div_ceil(2));
        let nonempty = |v: &[usize]| v.windows(2).all(|w| w[0] < w[1]);
        if !nonempty(&xs) || !nonempty(&ys) {
            return Err(DistError::TooSmall {
                width,
                height,
                ranks: self.ranks(),
                px: self.px,
                py: self.py,
            });
        }
        Ok(Grid {
            comm: self.comm.duplicate(),
            width,
            height,
            px: self.px,
            py: self.py,
            xs,
            ys,
        })
    }

    /// The communicator of the grid.
    pub fn comm(&self) -> &SimpleCommunicator {
        &self.comm
    }

    /// This rank.
    pub fn rank(&self) -> usize {
        self.comm.rank() as usize
    }

    /// Number of ranks.
    pub fn ranks(&self) -> usize {
        self.px * self.py
    }

    /// Global width.
    pub fn width(&self) -> usize {
        self.width
    }

    /// Global height.
    pub fn height(&self) -> usize {
        self.height
    }

    /// Ranks along x and y.
    pub fn shape(&self) -> (usize, usize) {
        (self.px, self.py)
    }

    /// The block of `rank` (row-major over the process grid).
    pub fn block(&self, rank: usize) -> Block {
        let (i, j) = (rank % self.px, rank / self.px);
        Block {
            x: self.xs[i],
            y: self.ys[j],
            width: self.xs[i + 1] - self.xs[i],
            height: self.ys[j + 1] - self.ys[j],
        }
    }

    /// This rank's block.
    pub fn my_block(&self) -> Block {
        self.block(self.rank())
    }

    /// The rank owning global pixel `(x, y)`.
    pub fn owner(&self, x: usize, y: usize) -> usize {
        part_of(&self.ys, y) * self.px + part_of(&self.xs, x)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn process_grid_prefers_square_blocks() {
        assert_eq!(process_grid(1, 10, 10), (1, 1));
        assert_eq!(process_grid(6, 100, 100), (3, 2));
        assert_eq!(process_grid(4, 1000, 10), (4, 1));
        assert_eq!(process_grid(4, 10, 1000), (1, 4));
        assert_eq!(process_grid(7, 50, 50), (7, 1));
    }

    #[test]
    fn part_of_inverts_split_and_halve() {
        for len in 1..40 {
            for n in 1..=len.min(7) {
                let fine: Vec<usize> = (0..=n).map(|i| split(len, n, i)).collect();
                for bounds in [fine.clone(), halve(&fine)] {
                    for i in 0..n {
                        for x in bounds[i]..bounds[i + 1] {
                            assert_eq!(part_of(&bounds, x), i, "len {len} n {n} x {x}");
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn halved_blocks_cover_their_fine_blocks() {
        // Fine [x0, x1) -> coarse [ceil(x0/2), ceil(x1/2)): coarse cell c
        // covers fine 2c and 2c + 1, of which 2c lies in the fine block.
        let fine = [0, 3, 6, 10, 13];
        assert_eq!(halve(&fine), [0, 2, 3, 5, 7]);
        for (f, c) in fine.windows(2).zip(halve(&fine).windows(2)) {
            for cx in c[0]..c[1] {
                assert!((f[0]..f[1]).contains(&(2 * cx)));
            }
        }
    }
}
