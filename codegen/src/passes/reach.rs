//! The offsets each accessor is read at, as GPU code generation uses them.
//!
//! The analysis is the core crate's, the one the CPU backend runs
//! ([`hipacc_core::ir::footprint`]): offsets are affine in the output
//! coordinates, `coef · x() + [lo, hi]`, so reads of a finer or coarser
//! grid (a restriction's `2x + i`, a prolongation's `x / 2`) are bounded
//! and their interior blocks run without checks. Interpolating accessors
//! read between pixels of another grid: their reads are no offset range of
//! the output pixel, so they are unbounded here.

use hipacc_core::ir::footprint::{affine_footprints, AffineFootprint, Footprint};
use hipacc_core::ir::Kernel;
use hipacc_core::Interpolation;

/// The affine footprint of every accessor slot, in slot order; `None` where
/// an offset is not bounded at compile time or the accessor interpolates.
pub(crate) fn reaches(kernel: &Kernel) -> Vec<Option<AffineFootprint>> {
    affine_footprints(kernel)
        .into_iter()
        .zip(&kernel.accessors)
        .map(|(f, a)| f.filter(|_| a.interpolation == Interpolation::None))
        .collect()
}

/// The footprint of every accessor slot whose offsets do not depend on the
/// coordinates, in slot order; `None` elsewhere. Tiles in local memory
/// need such a window of fixed size.
///
/// ```
/// use hipacc_codegen::footprints;
/// use hipacc_core::ir::Footprint;
/// use hipacc_core::{kernel_body, Accessor, Image, Kernel};
///
/// #[derive(Kernel)]
/// #[kernel(output = f32)]
/// struct Reads {
///     blur: Accessor<f32>,
///     fine: Accessor<f32>,
/// }
///
/// #[kernel_body]
/// impl Reads {
///     fn kernel(&self) -> f32 {
///         // `fine` is read at 2x and 2x + 1: affine, not a fixed window.
///         self.blur.at(-1, 0) + self.blur.at(1, 2) + self.fine.at(x(), 0) + self.fine.at(x() + 1, 0)
///     }
/// }
///
/// let image = Image::<f32>::new(4, 4)?;
/// let k = Reads { blur: Accessor::new(&image), fine: Accessor::new(&image) };
/// let window = Footprint { min_dx: -1, max_dx: 1, min_dy: 0, max_dy: 2 };
/// assert_eq!(footprints(&k.ir()?), [Some(window), None]);
/// # Ok::<(), hipacc_core::Error>(())
/// ```
pub fn footprints(kernel: &Kernel) -> Vec<Option<Footprint>> {
    reaches(kernel)
        .into_iter()
        .map(|f| f.and_then(AffineFootprint::constant))
        .collect()
}
