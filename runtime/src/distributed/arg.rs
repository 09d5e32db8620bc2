//! Argmin and argmax of distributed images: the extreme pixel and the
//! global row-major index of its first occurrence.

use super::{all_gather, DistImage, DistResult};
use crate::Device;
use hipacc_core::Pixel;
use mpi::traits::*;

/// The smallest pixel of the global image and the row-major index in the
/// global image of its first occurrence, as
/// [`reduce::argmin`](crate::reduce::argmin) gives it on the gathered
/// image (ties go to the lowest global index; NaN is ignored unless every
/// pixel is NaN). Collective; exact, every rank gets it.
///
/// ```no_run
/// use hipacc::distributed::{self, DistImage, Grid};
/// use hipacc::Device;
/// use std::rc::Rc;
///
/// let universe = distributed::initialize()?;
/// let grid = Rc::new(Grid::new(&universe.world(), 300, 200)?);
/// let image = DistImage::from_fn(&grid, |x, y| (x as f32 - 120.0).abs() + y as f32)?;
/// // The first minimum in row-major order of the global image: (120, 0).
/// assert_eq!(distributed::argmin(&Device::cpu(), &image)?, (0.0, 120));
/// # Ok::<(), distributed::DistError>(())
/// ```
pub fn argmin<T: Pixel + PartialOrd>(
    device: &Device,
    image: &DistImage<T>,
) -> DistResult<(T, usize)> {
    arg_extreme(device, image, false)
}

/// The largest pixel and the global index of its first occurrence, as
/// [`argmin`] gives the smallest. Collective.
pub fn argmax<T: Pixel + PartialOrd>(
    device: &Device,
    image: &DistImage<T>,
) -> DistResult<(T, usize)> {
    arg_extreme(device, image, true)
}

fn arg_extreme<T: Pixel + PartialOrd>(
    device: &Device,
    image: &DistImage<T>,
    max: bool,
) -> DistResult<(T, usize)> {
    let (local, region) = (image.local(), Some(image.interior()));
    let (value, i) = if max {
        crate::reduce::argmax(device, &local, region)?
    } else {
        crate::reduce::argmin(device, &local, region)?
    };
    // The block's index to the global image's: every block is non-empty.
    let grid = image.grid();
    let b = grid.my_block();
    let global = (b.y + i / b.width) * grid.width() + b.x + i % b.width;
    let values = all_gather(grid, value);
    let mut indices = vec![0u64; grid.ranks()];
    grid.comm()
        .all_gather_into(&(global as u64), &mut indices[..]);
    Ok(crate::reduce::best(
        max,
        values
            .into_iter()
            .zip(indices.into_iter().map(|i| i as usize)),
    ))
}
