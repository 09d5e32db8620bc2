//! Images split across MPI ranks (the `distributed` feature).
//!
//! A [`Grid`] splits a global extent into one block per rank (a 2-D process
//! grid chosen from the rank count: [`process_grid`]). A [`DistImage`]
//! holds this rank's block as an ordinary [`Image`](crate::Image) with a
//! halo. [`execute`] runs a kernel on distributed images: the halo each
//! input needs is the kernel's footprint from its IR (never declared), only
//! those pixels are exchanged, with non-blocking sends and receives while
//! the rank computes the part of its block that needs no halo, and the
//! kernel's boundary condition is applied at the global edges only, all six
//! modes (Repeat and Mirror take their pixels from the far rank). The
//! results are bit-identical to the single-process run for any rank count.
//! Blocks live on the device `execute` is given (the CPU or a GPU backend)
//! and stay there: an exchange moves only the band of the block that other
//! ranks read and the halo ring between the device and the host
//! ([`Image::read_rects`](hipacc_core::Image::read_rects),
//! [`Image::write_rects`](hipacc_core::Image::write_rects)).
//!
//! [`Grid::coarser`] gives the next multigrid level's grid, each block the
//! half of the same rank's fine block; a kernel may read images of the
//! output's grid and of the next finer or coarser one through offsets
//! computed from `x()` and `y()` (a restriction reads `fine.at(x() + i,
//! ..)`, a prolongation `coarse.at(x() / 2 - x(), ..)`): [`execute`] then
//! takes the halo from the kernel's affine footprint (one pixel between
//! nested grids) and stages the inputs so that each rank's block reads what
//! the single-process run reads. `x()` and `y()` are the launch's local
//! coordinates; a kernel that compares them with the global size (edges, a
//! red-black colour) adds [`Reads::origin`] (0 in a single-process run).
//! A [`DistPyramid`] keeps one distributed image per level on these
//! nested grids, and [`traverse`] runs a body over its levels as
//! [`crate::traverse`] does over a [`Pyramid`](crate::Pyramid): the same
//! kernels build the same pyramids, bit for bit, as deep as every rank
//! keeps a pixel ([`DistPyramid::max_depth`]). A rank that fails on its own
//! (an unreadable input) tells the others through [`all_ok`] before the
//! next collective, instead of leaving them waiting in it.
//! [`sum`], [`min`] and [`max`] reduce over all ranks ([`exact_sum`] to
//! the bits of the single-process [`reduce::exact_sum`](crate::reduce::exact_sum)); [`histogram`]
//! (and [`histogram_window`]) sums the ranks' counts exactly, and
//! [`argmin`]/[`argmax`] give the global index of the first occurrence.
//! [`multigrid::DistPoisson`] runs the multigrid solver (cycles and full multigrid) on
//! distributed levels, bit-identical to the single-process cycles.
//!
//! ```no_run
//! use hipacc::distributed::{self, DistImage, Grid};
//! use hipacc::prelude::*;
//! use std::rc::Rc;
//!
//! #[derive(Kernel)]
//! #[kernel(output = f32)]
//! struct Blur { input: Accessor<f32> }
//!
//! #[kernel_body]
//! impl Blur {
//!     fn kernel(&self) -> f32 {
//!         (self.input.at(-1, 0) + self.input.at(0, 0) + self.input.at(1, 0)) / 3.0
//!     }
//! }
//!
//! let universe = distributed::initialize()?;
//! let grid = Rc::new(Grid::new(&universe.world(), 1000, 700)?);
//! let input = DistImage::from_fn(&grid, |x, y| (x * y) as f32)?;
//! let output = DistImage::<f32>::new(&grid)?;
//! distributed::execute(&Device::cpu(), &output, |reads| Blur {
//!     input: reads.accessor(&input, Boundary::Mirror),
//! })?;
//! if let Some(image) = output.gather(0)? {
//!     println!("{} x {}", image.width(), image.height());
//! }
//!
//! // A 2:1 restriction onto the next coarser level (500 x 350).
//! #[derive(Kernel)]
//! #[kernel(output = f32)]
//! struct Restrict { fine: Accessor<f32> }
//!
//! #[kernel_body]
//! impl Restrict {
//!     fn kernel(&self) -> f32 {
//!         0.25 * (self.fine.at(x(), y()) + self.fine.at(x() + 1, y())
//!             + self.fine.at(x(), y() + 1) + self.fine.at(x() + 1, y() + 1))
//!     }
//! }
//!
//! let coarse = DistImage::<f32>::new(&Rc::new(grid.coarser()?))?;
//! distributed::execute(&Device::cpu(), &coarse, |reads| Restrict {
//!     fine: reads.accessor(&output, Boundary::Constant(0.0)),
//! })?;
//! # Ok::<(), distributed::DistError>(())
//! ```

mod agree;
mod arg;
mod edges;
mod execute;
mod grid;
mod halo;
mod histogram;
mod image;
pub mod multigrid;
mod overlap;
mod pyramid;
mod scaled;
mod traverse;

pub use agree::all_ok;
pub use arg::{argmax, argmin};
pub use execute::{execute, LaunchStats, Reads};
pub use grid::{process_grid, Block, Grid};
pub use halo::ExchangeStats;
pub use histogram::{histogram, histogram_window};
pub use image::DistImage;
pub use mpi;
pub use pyramid::DistPyramid;
pub use traverse::{traverse, DistTraversal};

use crate::Device;
use hipacc_core::image::{as_bytes, as_bytes_mut};
use hipacc_core::{Pixel, Reducible};
use mpi::traits::*;

/// Errors of distributed execution.
#[derive(Debug, thiserror::Error)]
pub enum DistError {
    /// A local operation failed.
    #[error(transparent)]
    Local(#[from] crate::Error),
    /// The ranks passed different sizes to [`Grid::new`].
    #[error(
        "ranks disagree on the image size: rank 0 has {}x{}, rank {rank} has {}x{}",
        rank0.0, rank0.1, size.0, size.1
    )]
    SizeMismatch {
        /// Rank 0's size.
        rank0: (usize, usize),
        /// The first rank that differs.
        rank: usize,
        /// Its size.
        size: (usize, usize),
    },
    /// The extent has fewer columns or rows than the process grid.
    #[error(
        "a {width}x{height} image is too small to split over {ranks} ranks (a {px}x{py} grid)"
    )]
    TooSmall {
        /// Global width.
        width: usize,
        /// Global height.
        height: usize,
        /// Rank count.
        ranks: usize,
        /// Ranks along x.
        px: usize,
        /// Ranks along y.
        py: usize,
    },
    /// A kernel reads at offsets the footprint analysis cannot bound.
    #[error("kernel `{kernel}`: the footprint of accessor `{accessor}` is unbounded, so its halo is unknown")]
    UnboundedFootprint {
        /// Kernel name.
        kernel: &'static str,
        /// Accessor field.
        accessor: String,
    },
    /// A pyramid deeper than its grid can split (see
    /// [`DistPyramid::max_depth`]).
    #[error(
        "a {depth}-level pyramid of a {width}x{height} image cannot be split over {ranks} ranks: \
         level {max} would leave a rank's block empty (at most {max} levels; gather the \
         coarsest level and continue with a single-process `Pyramid` for more)"
    )]
    PyramidTooDeep {
        /// Finest width.
        width: usize,
        /// Finest height.
        height: usize,
        /// Requested depth.
        depth: usize,
        /// Deepest pyramid the grid allows.
        max: usize,
        /// Rank count.
        ranks: usize,
    },
    /// A rank reported a local failure to [`all_ok`]; every rank gets it.
    #[error("rank {rank} failed: {message}")]
    RankFailed {
        /// The lowest failing rank.
        rank: usize,
        /// Its error message.
        message: String,
    },
    /// MPI could not be initialised (or was already).
    #[error("MPI is unavailable or already initialised")]
    NoMpi,
    /// An API misuse.
    #[error("{0}")]
    Usage(&'static str),
}

impl From<hipacc_core::Error> for DistError {
    fn from(e: hipacc_core::Error) -> Self {
        DistError::Local(e.into())
    }
}

/// `Result` with [`DistError`].
pub type DistResult<T> = std::result::Result<T, DistError>;

/// Initialises MPI; keep the universe alive while distributed images exist.
pub fn initialize() -> DistResult<mpi::environment::Universe> {
    mpi::initialize().ok_or(DistError::NoMpi)
}

/// Every rank's `value`, in rank order. Collective.
fn all_gather<T: Pixel>(grid: &Grid, value: T) -> Vec<T> {
    let mut all = vec![T::default(); grid.ranks()];
    grid.comm()
        .all_gather_into(as_bytes(&[value]), as_bytes_mut(&mut all));
    all
}

/// The sum of all pixels, in `f64`. Collective; every rank gets it.
///
/// Each rank sums its block as [`reduce::sum`](crate::reduce::sum) does
/// and the block sums are added in rank order, so the result depends on the
/// rank count within `f64` rounding (about 1e-15 relative), not more.
pub fn sum<T: Pixel + Into<f64>>(device: &Device, image: &DistImage<T>) -> DistResult<f64> {
    let local = crate::reduce::sum(device, &image.local(), Some(image.interior()))?;
    Ok(all_gather(image.grid(), local).into_iter().sum())
}

/// The sum of all pixels, bit-identical to
/// [`reduce::exact_sum`](crate::reduce::exact_sum) of the whole image on
/// one process, for any rank count: each rank adds its pixels exactly into
/// integer accumulators, and the ranks' accumulators are added exactly
/// before the one rounding. Collective; every rank gets it.
///
/// ```no_run
/// use hipacc::distributed::{self, DistImage, Grid};
/// use hipacc::{reduce, Device, Image};
/// use std::rc::Rc;
///
/// let universe = distributed::initialize()?;
/// let f = |x: usize, y: usize| ((x * 7 + y * 13) % 97) as f32 * 0.1 - 3.0;
/// let grid = Rc::new(Grid::new(&universe.world(), 131, 71)?);
/// let image = DistImage::from_fn(&grid, f)?;
/// let whole = Image::from_fn(131, 71, f)?;
/// let s = distributed::exact_sum(&image)?;
/// assert_eq!(s.to_bits(), reduce::exact_sum(&whole, None)?.to_bits());
/// # Ok::<(), distributed::DistError>(())
/// ```
pub fn exact_sum<T: Pixel + Into<f64>>(image: &DistImage<T>) -> DistResult<f64> {
    use crate::reduce::ExactSum;
    let local = crate::reduce::exact_sum_parts(&image.local(), Some(image.interior()))?;
    let grid = image.grid();
    let mut all = vec![0u8; ExactSum::BYTES * grid.ranks()];
    grid.comm()
        .all_gather_into(&local.to_bytes()[..], &mut all[..]);
    Ok(all
        .chunks_exact(ExactSum::BYTES)
        .map(ExactSum::from_bytes)
        .fold(ExactSum::new(), |acc, s| acc.merge(&s))
        .value())
}

/// The smallest pixel (lane-wise for vectors). Collective; exact.
pub fn min<T: Pixel>(device: &Device, image: &DistImage<T>) -> DistResult<T> {
    let local = crate::reduce::min(device, &image.local(), Some(image.interior()))?;
    Ok(all_gather(image.grid(), local)
        .into_iter()
        .reduce(Reducible::r_min)
        .unwrap_or(local))
}

/// The largest pixel (lane-wise for vectors). Collective; exact.
pub fn max<T: Pixel>(device: &Device, image: &DistImage<T>) -> DistResult<T> {
    let local = crate::reduce::max(device, &image.local(), Some(image.interior()))?;
    Ok(all_gather(image.grid(), local)
        .into_iter()
        .reduce(Reducible::r_max)
        .unwrap_or(local))
}
