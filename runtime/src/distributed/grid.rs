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

/// A global extent distributed over the ranks of a communicator.
///
/// Every rank must create it with the same size; [`Grid::new`] checks that
/// (all ranks get the same error otherwise).
pub struct Grid {
    comm: SimpleCommunicator,
    width: usize,
    height: usize,
    px: usize,
    py: usize,
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
        let x = split(self.width, self.px, i);
        let y = split(self.height, self.py, j);
        Block {
            x,
            y,
            width: split(self.width, self.px, i + 1) - x,
            height: split(self.height, self.py, j + 1) - y,
        }
    }

    /// This rank's block.
    pub fn my_block(&self) -> Block {
        self.block(self.rank())
    }

    /// The rank owning global pixel `(x, y)`.
    pub fn owner(&self, x: usize, y: usize) -> usize {
        // Part i covers [i*len/n, (i+1)*len/n): i = ((x+1)*n - 1) / len.
        let i = ((x + 1) * self.px - 1) / self.width;
        let j = ((y + 1) * self.py - 1) / self.height;
        j * self.px + i
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
    fn owner_inverts_split() {
        for len in 1..40 {
            for n in 1..=len.min(7) {
                for i in 0..n {
                    for x in split(len, n, i)..split(len, n, i + 1) {
                        assert_eq!(((x + 1) * n - 1) / len, i, "len {len} n {n} x {x}");
                    }
                }
            }
        }
    }
}
