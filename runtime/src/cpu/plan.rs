//! Per-kernel launch plans: each accessor's reach and the interior loop's
//! shape, derived from the IR.
//!
//! Lowering the captured body and computing footprints allocates and walks
//! the whole IR; for small launches (coarse multigrid levels) that would cost
//! more than the pixels. The reaches depend only on the kernel's body and its
//! slots (types, boundary modes and constants, mask coefficients, domains),
//! never on images or parameter values, so they are cached under exactly that
//! key. A cache hit also means the bindings were validated by an earlier
//! lowering with the same slots.

use super::interior::{AxisReach, Reach};
use super::separable::{convolution, Convolution};
use crate::Result;
use hipacc_core::ir::footprint::{affine_footprints, AffineAxis, AffineFootprint};
use hipacc_core::ir::{AccessorSlot, DomainSlot, MaskSlot, ParamSlot};
use hipacc_core::{Bindings, Interpolation, Kernel};
use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock, PoisonError};

/// Plans kept at most; the cache is emptied when it would grow beyond this
/// (kernels whose mask coefficients change on every launch).
const CAPACITY: usize = 256;

/// What identifies a plan: the kernel's name and body (its `'static`
/// surface AST, one per kernel type) and every slot.
#[derive(Clone, PartialEq, Eq, Hash)]
struct Key {
    name: &'static str,
    body: usize,
    accessors: Vec<AccessorSlot>,
    masks: Vec<MaskSlot>,
    domains: Vec<DomainSlot>,
    params: Vec<ParamSlot>,
}

/// How the interior loop runs the body.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum LoopShape {
    /// One pixel per iteration, for LLVM's loop vectoriser: best for bodies
    /// with few reads (point operators, small stencils), which it turns into
    /// whole-vector loads.
    Plain,
    /// Eight pixels per step into a local array: for bodies with wide
    /// windows that multiply by mask coefficients, where eight copies of
    /// the body share each coefficient's broadcast (measured: the sum of
    /// two 5x5 convolutions 1.4x faster than [`LoopShape::Plain`]), and
    /// for vector (RGBA) pixels from windows of two columns. Wide
    /// bodies without masks (taps written out, domain reductions) run
    /// faster plain (up to 2x measured), their window loops being written
    /// out in any case, and so do windows wider than
    /// [`LANES_MAX_WIDTH`].
    Lanes,
    /// Two pixels per step from an even column, each of known parity: for
    /// bodies that read a coarser image at `x / 2` (upsampling,
    /// prolongation), whose taps depend on the column's parity.
    Pairs,
}

/// Footprints at most this wide (in columns) run as [`LoopShape::Plain`]
/// whatever the body.
const PLAIN_MAX_WIDTH: f64 = 3.0;

/// Footprints wider than this (in columns) run as [`LoopShape::Plain`]
/// again: eight copies of a body over a 9x9 window are more than LLVM's SLP
/// vectoriser packs well (it assembled rows from scalar loads and spilled),
/// while the loop vectoriser takes the written-out body whole. Measured
/// (`window-sizes`, 2048² f32, 2 threads): a weighted mean over a 9x9 mask
/// of the type's size, 49 ms in eight lanes, 21 ms plain; at 5x5 the two
/// were within noise.
const LANES_MAX_WIDTH: f64 = 7.0;

/// What a launch needs from the kernel's IR.
#[derive(Clone)]
pub(crate) struct Plan {
    /// The reach of each accessor (in field order), `None` where unbounded.
    pub(crate) reaches: Arc<[Option<Reach>]>,
    /// The interior loop to run.
    pub(crate) shape: LoopShape,
    /// Set when the body is one convolution, which runs in two passes when
    /// its mask separates ([`super::separable`]).
    pub(crate) convolution: Option<Convolution>,
    /// Set when the body's window sums can run in two passes where their
    /// masks separate ([`super::split`]).
    pub(crate) split: Option<Arc<super::split::Program>>,
    /// The accessors to scan and the parameters to check for NaN and
    /// negative zeros before an interior row runs the body's `min` and
    /// `max` as the plain compare-and-select; `None` where the body cannot ([`super::plain_extremes`]).
    pub(crate) plain_extremes: Option<Arc<super::plain_extremes::Checked>>,
    /// Some accessor interpolates: the interior runs in
    /// [`hipacc_core::cpu::InteriorInterpolating`].
    pub(crate) interpolating: bool,
    /// The offsets each interpolating accessor is read at (in field
    /// order; `None` for the others, and where they are not affine),
    /// which bound where its taps lie inside ([`super::taps_inside`]:
    /// only constant offsets do).
    pub(crate) interpolated: Arc<[Option<Reach>]>,
}

fn cache() -> &'static Mutex<HashMap<Key, Plan>> {
    static CACHE: OnceLock<Mutex<HashMap<Key, Plan>>> = OnceLock::new();
    CACHE.get_or_init(Mutex::default)
}

/// The plan of `kernel`. Lowers the kernel (which validates its bindings)
/// unless a kernel of the same type with the same slots was planned before.
pub(crate) fn plan<K: Kernel>(kernel: &K, bindings: &Bindings) -> Result<Plan> {
    let key = Key {
        name: K::NAME,
        body: K::surface() as *const _ as usize,
        accessors: bindings.accessors.iter().map(|a| a.slot.clone()).collect(),
        masks: bindings.masks.iter().map(|m| m.slot.clone()).collect(),
        domains: bindings.domains.clone(),
        params: bindings.params.iter().map(|p| p.slot.clone()).collect(),
    };
    if let Some(hit) = cache()
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .get(&key)
    {
        return Ok(hit.clone());
    }
    let ir = kernel.ir()?;
    let footprints = affine_footprints(&ir);
    let reach_if = |plain: bool| -> Arc<[Option<Reach>]> {
        footprints
            .iter()
            .copied()
            .zip(&ir.accessors)
            .map(|(f, slot)| f.filter(|_| (slot.interpolation == Interpolation::None) == plain))
            .map(|f| f.map(reach_of))
            .collect()
    };
    // Interpolating reads map output pixels to other image positions: their
    // window is not an offset range of the output pixel.
    let reaches = reach_if(true);
    let widest = reaches
        .iter()
        .flatten()
        .filter(|r| r.x.coef == 0.0)
        .map(|r| r.x.hi - r.x.lo + 1.0)
        .fold(0.0, f64::max);
    // Vector pixels: the plain loop's body is the four lanes of one pixel,
    // its sum one dependent chain per pixel; eight pixels interleave eight
    // chains. Measured (`user-kernels`, 2048² `Rgba<f32>`, 3x3 mask):
    // 12.2 ms plain, 8.2 to 8.8 ms in eight lanes.
    let narrowest = if ir.output.is_scalar() {
        PLAIN_MAX_WIDTH
    } else {
        1.0
    };
    let wide = widest > narrowest && widest <= LANES_MAX_WIDTH;
    let upsampling = reaches.iter().flatten().any(|r| r.x.coef == -0.5);
    let plan = Plan {
        convolution: convolution(&ir),
        split: super::split::program(&ir).map(Arc::new),
        plain_extremes: super::plain_extremes::checked(&ir).map(Arc::new),
        interpolating: ir
            .accessors
            .iter()
            .any(|a| a.interpolation != Interpolation::None),
        interpolated: reach_if(false),
        reaches,
        shape: if upsampling {
            LoopShape::Pairs
        } else if wide && !ir.masks.is_empty() {
            LoopShape::Lanes
        } else {
            LoopShape::Plain
        },
    };
    let mut map = cache().lock().unwrap_or_else(PoisonError::into_inner);
    if map.len() >= CAPACITY {
        map.clear();
    }
    map.insert(key, plan.clone());
    Ok(plan)
}

fn reach_of(f: AffineFootprint) -> Reach {
    let axis = |a: AffineAxis| AxisReach {
        coef: a.coef,
        lo: a.lo,
        hi: a.hi,
    };
    Reach {
        x: axis(f.x),
        y: axis(f.y),
    }
}
