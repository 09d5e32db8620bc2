//! Separable convolutions: a kernel whose whole body is
//! `convolve(m, Sum, |dx, dy| m.at(dx, dy) * a.at(dx, dy))` over a rank-1
//! mask runs as a horizontal pass and a vertical pass. Reads at
//! `a.at(x() + dx, y() + dy)` (either axis) are the same convolution
//! evaluated at every second source pixel: the reduce step of a Gaussian
//! pyramid. A sum over a domain that visits its whole rectangle,
//! `reduce(d, Sum, |dx, dy| a.at(dx, dy))` (a box filter), is the
//! convolution with a mask of ones and runs the same way. Either may be
//! multiplied by a constant or a parameter of the output type (a box
//! mean's `· 1 / area`, a Gaussian's gain): each output pixel is the sum
//! times that factor, one rounding as in the direct body.
//!
//! A `w x h` mask costs `w · h` multiply-adds per pixel when applied
//! directly and `w + h` in two passes (10 instead of 25 for the 5x5
//! Gaussian), and both passes are plain slice loops that LLVM vectorises.
//! The rows are processed in bands: each band computes the horizontal pass
//! of the source rows it needs into a scratch buffer (cache-resident, reused
//! per thread), then the vertical pass from it into the output, so every
//! source pixel is read from memory once.
//!
//! Boundary conditions are per axis (DESIGN.md: a position outside the
//! region is remapped coordinate by coordinate, and `Constant` replaces the
//! whole read), so the horizontal pass applies the accessor's condition to
//! columns and the rows it reads are remapped alike; a row that maps
//! outside under `Constant` is the constant throughout.
//!
//! The result differs from the direct sum only by rounding: both add
//! non-negative-weighted terms of the same products, so the difference is
//! within the `(n + 4) ε` relative bound the conformance suite states for
//! an `n`-term reduction. A box sum adds the same `n` pixels regrouped by
//! rows (a tap of weight one is exact), so it is within
//! `(n + 4) ε · Σ |a|` of the direct sum, `(n + 4) ε · max(|e|, 1)` for
//! the non-negative images of the tests. Each tap is one fused multiply-add (`mul_add`,
//! one rounding instead of two), which halves the arithmetic of a pass and
//! only tightens that bound; the result is the same on every CPU
//! ([`super::simd`]).
//!
//! Bands are as tall as fits a scratch budget of about half an L2 cache, up
//! to 64 rows: taller bands recompute fewer horizontal rows at band edges
//! (4 of 68 for the 5x5 Gaussian instead of 4 of 36). The scratch starts
//! on a cache line, so where rows are a multiple of 64 bytes wide (as in
//! power-of-two images) no vector load of the vertical pass splits one.
//!
//! A `Min` or `Max` over a whole domain (erosion, dilation), possibly
//! times a factor, runs through the same passes with `min` or `max` in
//! place of the multiply-add: `w + h - 2` operations per pixel instead of
//! `w · h - 1` (8 instead of 24 for a 5x5 dilation). The result is the
//! same bits as the direct fold, row-major from the first tap: `max`
//! replaces its accumulator only by a greater value or where the
//! accumulator is NaN, so both forms yield the first greatest non-NaN
//! value in row-major order (the first row holding it, then its first
//! position in that row), and the last NaN where all are NaN; `min`
//! likewise. That holds for signed zeros and NaN payloads too.
//!
//! Box sums, minima and maxima share work between neighbouring outputs,
//! since their taps may be grouped in any way (a sum's within the bound
//! above, `min` and `max` exactly): rows of 9 or more taps are built from
//! runs of doubling length (13 taps: 5 operations per output instead of
//! 12), and columns of more than four taps fold the rows that four
//! consecutive outputs share once (19 operations for four outputs of 13
//! taps instead of 48). Each output's grouping depends only on its
//! position, so a row computed alone, in any band or pipeline strip, has
//! the same bits.
//!
//! Masks of 3, 5 and 7 taps have loops written for their size. Wider ones
//! (a 13x13 Gaussian or box) run in blocks of consecutive outputs whose
//! accumulators stay in registers while the taps run in the inner loop: a
//! tap is one vector load and one fused multiply-add per vector, and
//! nothing is stored until the block is done. The few columns at the
//! row ends whose taps leave the region gather those taps through the
//! boundary condition once, then run the same loops.

use super::taps::Fold;
use crate::Result;
use hipacc_core::image::read_as;
use hipacc_core::ir::{self, BinaryOp, Expr, ExprKind, ReduceOp, Window};
use hipacc_core::kernel::AccessorBinding;
use hipacc_core::{Bindings, BoundaryMode, Interpolation, Pixel, Rect};
use rayon::prelude::*;
use std::any::TypeId;
use std::cell::RefCell;

/// Most output rows per band (at stride 1).
const BAND_ROWS: usize = 64;
/// Fewest output rows per band (at stride 1), however wide the rows.
const MIN_BAND_ROWS: usize = 8;
/// Bytes of scratch a band may use before it gets fewer rows.
const SCRATCH_BYTES: usize = 640 << 10;
/// Alignment of the scratch rows' start: one cache line.
const SCRATCH_ALIGN: usize = 64;

/// Bytes of consecutive outputs in each of the [`VERTICAL_ROWS`] arrays
/// of accumulators the passes of a mask wider or taller than 7 keep: two
/// AVX2 vectors per array, eight independent chains of fused
/// multiply-adds in all, enough to hide their latency.
const BLOCK_BYTES: usize = 64;

/// A kernel that is exactly one convolution of accessor `acc` with the
/// weights of `window`, in one float type throughout, possibly times a
/// factor.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Convolution {
    /// Accessor slot read.
    pub(crate) acc: usize,
    /// The weights.
    pub(crate) window: Weights,
    /// How the terms combine: a sum, or (over a domain) the least or
    /// greatest value.
    pub(crate) fold: Fold,
    /// What the sum is multiplied by, if anything.
    pub(crate) scale: Option<Scale>,
    /// Source pixels per output pixel along x and y: 1 for reads at
    /// `(dx, dy)`, 2 for reads at `x() + dx` / `y() + dy` (decimation, as
    /// in a Gaussian pyramid's reduce step).
    pub(crate) stride: (usize, usize),
}

/// Where the weights of a [`Convolution`] come from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Weights {
    /// The coefficients of mask slot `i`.
    Mask(usize),
    /// One at every position of domain slot `i`, which visits all of them.
    Domain(usize),
}

/// A factor a [`Convolution`]'s sum is multiplied by.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Scale {
    /// A constant.
    Const(ir::Literal),
    /// Parameter slot `i`.
    Param(usize),
}

/// The convolution `k` consists of, if it is one.
pub(crate) fn convolution(k: &ir::Kernel) -> Option<Convolution> {
    let result = k.body.result.as_ref().filter(|_| k.body.stmts.is_empty())?;
    let float_scalar = k.output.lanes == 1 && k.output.scalar.is_float();
    let scale_of = |e: &Expr| match e.kind {
        _ if e.ty != k.output => None,
        ExprKind::Const(lit) => Some(Scale::Const(lit)),
        ExprKind::Param(i) => Some(Scale::Param(i)),
        _ => None,
    };
    let (sum, scale) = match &result.kind {
        ExprKind::Binary {
            op: BinaryOp::Mul,
            lhs,
            rhs,
        } => match (scale_of(lhs), scale_of(rhs)) {
            (Some(s), _) => (&**rhs, Some(s)),
            (_, Some(s)) => (&**lhs, Some(s)),
            _ => return None,
        },
        _ => (result, None),
    };
    let ExprKind::Reduce {
        window,
        op,
        dx,
        dy,
        body,
    } = &sum.kind
    else {
        return None;
    };
    let fold = match op {
        ReduceOp::Sum => Fold::Sum,
        ReduceOp::Min => Fold::Min,
        ReduceOp::Max => Fold::Max,
        ReduceOp::Prod => return None,
    };
    let summand = body.result.as_ref().filter(|_| body.stmts.is_empty())?;
    let is_offset = |e: &Expr, v: &ir::VarId| matches!(e.kind, ExprKind::Var(x) if x == *v);
    let is_coef = |e: &Expr, mask: usize| {
        matches!(&e.kind, ExprKind::MaskCoef { mask: m, dx: a, dy: b }
            if *m == mask && is_offset(a, dx) && is_offset(b, dy))
    };
    let read = |e: &Expr| match &e.kind {
        ExprKind::Read { acc, dx: a, dy: b } => Some((
            *acc,
            (stride(a, dx, &ExprKind::X)?, stride(b, dy, &ExprKind::Y)?),
        )),
        _ => None,
    };
    let ((acc, stride), window) = match *window {
        Window::Mask(mask) if fold == Fold::Sum => {
            let ExprKind::Binary {
                op: BinaryOp::Mul,
                lhs,
                rhs,
            } = &summand.kind
            else {
                return None;
            };
            let read = if is_coef(lhs, mask) {
                read(rhs)?
            } else if is_coef(rhs, mask) {
                read(lhs)?
            } else {
                return None;
            };
            (k.masks[mask].ty == k.output).then_some((read, Weights::Mask(mask)))?
        }
        Window::Domain(d) => {
            let whole = k.domains[d].enabled.iter().all(|&e| e);
            whole.then_some((read(summand)?, Weights::Domain(d)))?
        }
        Window::Mask(_) => return None,
    };
    let slot = &k.accessors[acc];
    (float_scalar && slot.pixel == k.output && slot.interpolation == Interpolation::None).then_some(
        Convolution {
            acc,
            window,
            fold,
            scale,
            stride,
        },
    )
}

/// The stride of a read offset along one axis: 1 for the window offset `v`
/// alone, 2 for `coord + v` (either order), where `coord` is `x()` or
/// `y()`.
fn stride(e: &Expr, v: &ir::VarId, coord: &ExprKind) -> Option<usize> {
    let is_var = |e: &Expr| matches!(e.kind, ExprKind::Var(x) if x == *v);
    match &e.kind {
        ExprKind::Var(_) if is_var(e) => Some(1),
        ExprKind::Binary {
            op: BinaryOp::Add,
            lhs,
            rhs,
        } => {
            let pair = (is_var(lhs) && rhs.kind == *coord) || (is_var(rhs) && lhs.kind == *coord);
            pair.then_some(2)
        }
        _ => None,
    }
}

/// `(kx, ky)` with `ky[j] · kx[i]` equal to the `w x h` row-major mask
/// `values` within `tol` relative to its largest coefficient, if the mask
/// has rank 1 and is at least 2 wide and 2 high (narrower masks gain
/// nothing from two passes).
pub(crate) fn factors(
    values: &[f64],
    w: usize,
    h: usize,
    tol: f64,
) -> Option<(Vec<f64>, Vec<f64>)> {
    if w < 2 || h < 2 || values.len() != w * h {
        return None;
    }
    let (pivot, &pv) = values
        .iter()
        .enumerate()
        .max_by(|a, b| a.1.abs().total_cmp(&b.1.abs()))?;
    if pv == 0.0 || !pv.is_finite() {
        return None;
    }
    let (r, c) = (pivot / w, pivot % w);
    let kx = values[r * w..(r + 1) * w].to_vec();
    let ky: Vec<f64> = (0..h).map(|j| values[j * w + c] / pv).collect();
    let exact =
        (0..h).all(|j| (0..w).all(|i| (ky[j] * kx[i] - values[j * w + i]).abs() <= tol * pv.abs()));
    exact.then_some((kx, ky))
}

/// The float types the passes run in.
pub(super) trait Float:
    Pixel + std::ops::Add<Output = Self> + std::ops::Sub<Output = Self> + std::ops::Mul<Output = Self>
{
    /// Machine epsilon.
    const EPSILON: f64;
    /// `v` rounded to this type.
    fn from_f64(v: f64) -> Self;
    /// `self · a + b`, rounded once.
    fn mul_add(self, a: Self, b: Self) -> Self;
    /// The smaller of `self` and `a`, as the IR's `min` (a NaN operand
    /// yields the other one).
    fn minimum(self, a: Self) -> Self;
    /// The larger of `self` and `a`, as the IR's `max`.
    fn maximum(self, a: Self) -> Self;
    /// Runs `f` with this thread's scratch buffer, reused across launches.
    fn with_scratch<R>(f: impl FnOnce(&mut Vec<Self>) -> R) -> R;
}

macro_rules! float {
    ($t:ty) => {
        impl Float for $t {
            const EPSILON: f64 = <$t>::EPSILON as f64;
            fn from_f64(v: f64) -> $t {
                v as $t
            }
            #[inline(always)]
            fn mul_add(self, a: $t, b: $t) -> $t {
                <$t>::mul_add(self, a, b)
            }
            #[inline(always)]
            fn minimum(self, a: $t) -> $t {
                <$t>::min(self, a)
            }
            #[inline(always)]
            fn maximum(self, a: $t) -> $t {
                <$t>::max(self, a)
            }
            fn with_scratch<R>(f: impl FnOnce(&mut Vec<$t>) -> R) -> R {
                thread_local! {
                    static SCRATCH: RefCell<Vec<$t>> = const { RefCell::new(Vec::new()) };
                }
                SCRATCH.with_borrow_mut(f)
            }
        }
    };
}
float!(f32);
float!(f64);

/// How a pass combines each tap's value `v` (with its coefficient `k`)
/// with the taps before it, as a type so that each pass is compiled for
/// one operator.
trait Step {
    /// The first tap's term.
    fn first<T: Float>(k: T, v: T) -> T;
    /// `acc` combined with the next tap.
    fn next<T: Float>(k: T, v: T, acc: T) -> T;
    /// The fold of taps `a` and the fold of the taps after them, where
    /// [`Step::regroups`] allows it.
    fn join<T: Float>(a: T, b: T) -> T;
    /// Whether the fold of taps with coefficients `k` may be split into
    /// consecutive runs folded apart and then joined: for a sum, where
    /// every coefficient is 1 (a box: the same terms, regrouped); for
    /// `min` and `max` always, with the same bits.
    fn regroups<T: Float>(k: &[T]) -> bool;
}

/// A weighted sum, each tap one fused multiply-add.
enum Weighted {}
impl Step for Weighted {
    #[inline(always)]
    fn first<T: Float>(k: T, v: T) -> T {
        k * v
    }
    #[inline(always)]
    fn next<T: Float>(k: T, v: T, acc: T) -> T {
        k.mul_add(v, acc)
    }
    #[inline(always)]
    fn join<T: Float>(a: T, b: T) -> T {
        a + b
    }
    fn regroups<T: Float>(k: &[T]) -> bool {
        let one = T::from_f64(1.0);
        k.iter().all(|&k| k == one)
    }
}

/// The smallest value, `acc.min(v)` tap after tap.
enum Smallest {}
impl Step for Smallest {
    #[inline(always)]
    fn first<T: Float>(_: T, v: T) -> T {
        v
    }
    #[inline(always)]
    fn next<T: Float>(_: T, v: T, acc: T) -> T {
        acc.minimum(v)
    }
    #[inline(always)]
    fn join<T: Float>(a: T, b: T) -> T {
        a.minimum(b)
    }
    fn regroups<T: Float>(_: &[T]) -> bool {
        true
    }
}

/// The largest value, `acc.max(v)` tap after tap.
enum Largest {}
impl Step for Largest {
    #[inline(always)]
    fn first<T: Float>(_: T, v: T) -> T {
        v
    }
    #[inline(always)]
    fn next<T: Float>(_: T, v: T, acc: T) -> T {
        acc.maximum(v)
    }
    #[inline(always)]
    fn join<T: Float>(a: T, b: T) -> T {
        a.maximum(b)
    }
    fn regroups<T: Float>(_: &[T]) -> bool {
        true
    }
}

/// Runs the convolution of a kernel with output `T` and launch values
/// `bindings` into the `space` rectangle of `out` (the output image's rows,
/// `out_width` wide), if its weights separate. Returns `false`, having
/// written nothing, when they do not.
pub(crate) fn run<T: Pixel>(
    conv: Convolution,
    bindings: &Bindings,
    out: &mut [T],
    out_width: usize,
    space: Rect,
) -> Result<bool> {
    let Some((acc, weights)) = launch(conv, bindings) else {
        return Ok(false);
    };
    let mask = weights.mask(conv.stride);
    let done = match conv.fold {
        Fold::Sum => run_step::<T, Weighted>(acc, mask, out, out_width, space)?,
        Fold::Min => run_step::<T, Smallest>(acc, mask, out, out_width, space)?,
        Fold::Max => run_step::<T, Largest>(acc, mask, out, out_width, space)?,
    };
    match dense(conv, &weights).filter(|_| !done) {
        Some(d) => super::dense::run(acc, &d, out, out_width, space),
        None => Ok(done),
    }
}

/// A weighted mask sum at stride 1 as [`super::dense`] runs it, for masks
/// that do not separate.
fn dense(conv: Convolution, weights: &LaunchWeights) -> Option<super::dense::Dense<'_>> {
    let plain = conv.fold == Fold::Sum && conv.stride == (1, 1);
    (plain && matches!(conv.window, Weights::Mask(_))).then_some(super::dense::Dense {
        coefficients: &weights.coefficients,
        size: weights.size,
        scale: weights.scale,
    })
}

/// [`run`] with the operator `S` of the convolution's fold.
fn run_step<T: Pixel, S: Step>(
    acc: &AccessorBinding,
    mask: Mask<'_>,
    out: &mut [T],
    out_width: usize,
    space: Rect,
) -> Result<bool> {
    if let Some(out) = as_float::<T, f32>(out) {
        run_typed::<f32, S>(acc, mask, out, out_width, space)
    } else if let Some(out) = as_float::<T, f64>(out) {
        run_typed::<f64, S>(acc, mask, out, out_width, space)
    } else {
        Ok(false)
    }
}

/// [`run`] for the output rows `ys` of `space` only, into `rows` (whole
/// rows of `out_width` from row `ys.start`), on this thread: each row is
/// computed as [`run`] computes it, whatever the rows around it.
#[allow(clippy::too_many_arguments)]
pub(crate) fn run_rows<T: Pixel>(
    conv: Convolution,
    bindings: &Bindings,
    rows: &mut [T],
    out_width: usize,
    space: Rect,
    ys: std::ops::Range<usize>,
) -> Result<bool> {
    let Some((acc, weights)) = launch(conv, bindings) else {
        return Ok(false);
    };
    let mask = weights.mask(conv.stride);
    let first = ys.start - space.y;
    if ys.is_empty() {
        return Ok(true);
    }
    let band = Band {
        space,
        first,
        out_width,
    };
    let done = match conv.fold {
        Fold::Sum => rows_step::<T, Weighted>(acc, mask, band, rows)?,
        Fold::Min => rows_step::<T, Smallest>(acc, mask, band, rows)?,
        Fold::Max => rows_step::<T, Largest>(acc, mask, band, rows)?,
    };
    match dense(conv, &weights).filter(|_| !done) {
        Some(d) => super::dense::run_rows(acc, &d, rows, out_width, space, ys),
        None => Ok(done),
    }
}

/// Where the rows of a [`run_rows`] call lie: output rows `first..` of
/// `space` (space-relative), in rows `out_width` wide.
#[derive(Clone, Copy)]
struct Band {
    space: Rect,
    first: usize,
    out_width: usize,
}

/// [`run_rows`] with the operator `S` of the convolution's fold.
fn rows_step<T: Pixel, S: Step>(
    acc: &AccessorBinding,
    mask: Mask<'_>,
    b: Band,
    rows: &mut [T],
) -> Result<bool> {
    let (space, first, out_width) = (b.space, b.first, b.out_width);
    if let Some(rows) = as_float::<T, f32>(rows) {
        with_setup(acc, mask, space, |src, taps| {
            f32::with_scratch(|buf| {
                band_pass::<f32, S>(src, taps, space, first, rows, out_width, buf)
            })
        })
    } else if let Some(rows) = as_float::<T, f64>(rows) {
        with_setup(acc, mask, space, |src, taps| {
            f64::with_scratch(|buf| {
                band_pass::<f64, S>(src, taps, space, first, rows, out_width, buf)
            })
        })
    } else {
        Ok(false)
    }
}

/// The launch values of a convolution: its weights and factor.
struct LaunchWeights {
    /// Row-major weights.
    coefficients: Vec<f64>,
    /// Width and height.
    size: (usize, usize),
    /// The factor, if any.
    scale: Option<f64>,
}

impl LaunchWeights {
    fn mask(&self, stride: (usize, usize)) -> Mask<'_> {
        Mask {
            coefficients: &self.coefficients,
            size: self.size,
            stride,
            scale: self.scale,
        }
    }
}

/// The accessor and the weights of `conv` at launch; `None` where a domain
/// no longer visits its whole rectangle.
fn launch(conv: Convolution, bindings: &Bindings) -> Option<(&AccessorBinding, LaunchWeights)> {
    let (coefficients, size) = match conv.window {
        Weights::Mask(m) => {
            let mask = &bindings.masks[m];
            let size = (mask.slot.width as usize, mask.slot.height as usize);
            (mask.values.iter().map(|v| v.as_f64()).collect(), size)
        }
        Weights::Domain(d) => {
            let domain = &bindings.domains[d];
            if !domain.enabled.iter().all(|&e| e) {
                return None;
            }
            (
                vec![1.0; domain.enabled.len()],
                (domain.width as usize, domain.height as usize),
            )
        }
    };
    let scale = conv.scale.map(|s| match s {
        Scale::Const(lit) => lit.as_f64(),
        Scale::Param(i) => bindings.params[i].value.as_f64(),
    });
    let weights = LaunchWeights {
        coefficients,
        size,
        scale,
    };
    Some((&bindings.accessors[conv.acc], weights))
}

/// The mask of a convolution, the strides it is applied with and the
/// factor its sum is multiplied by.
#[derive(Clone, Copy)]
struct Mask<'a> {
    /// Row-major coefficients.
    coefficients: &'a [f64],
    /// Width and height.
    size: (usize, usize),
    /// See [`Convolution::stride`].
    stride: (usize, usize),
    /// The factor, if any.
    scale: Option<f64>,
}

/// `out` as a slice of `F`, when `T` is `F`.
pub(super) fn as_float<T: Pixel, F: Float>(out: &mut [T]) -> Option<&mut [F]> {
    (TypeId::of::<T>() == TypeId::of::<F>()).then(|| {
        // SAFETY: `T` and `F` are the same type (same type id), so the slice
        // is reinterpreted as itself.
        unsafe { std::slice::from_raw_parts_mut(out.as_mut_ptr().cast::<F>(), out.len()) }
    })
}

fn run_typed<T: Float, S: Step>(
    acc: &AccessorBinding,
    mask: Mask<'_>,
    out: &mut [T],
    out_width: usize,
    space: Rect,
) -> Result<bool> {
    let band_rows = band_rows::<T>(space.width, mask.size.1, mask.stride.1);
    let rows = &mut out[space.y * out_width..(space.y + space.height) * out_width];
    with_setup(acc, mask, space, |source, taps| {
        rows.par_chunks_mut(out_width * band_rows)
            .enumerate()
            .for_each(|(b, band)| {
                T::with_scratch(|buf| {
                    band_pass::<T, S>(source, taps, space, b * band_rows, band, out_width, buf);
                });
            });
    })
}

/// Runs `f` with the source and taps of the convolution of `acc` with
/// `mask` over `space`; `Ok(false)` without running it where the mask is
/// not rank 1 or the accessor's pixels are not `T`.
fn with_setup<T: Float>(
    acc: &AccessorBinding,
    mask: Mask<'_>,
    space: Rect,
    f: impl FnOnce(&Source<'_, T>, &Taps<T>),
) -> Result<bool> {
    let (w, h) = mask.size;
    let Some((kx, ky)) = factors(mask.coefficients, w, h, 4.0 * T::EPSILON) else {
        return Ok(false);
    };
    acc.region.check_in(acc.image.width(), acc.image.height())?;
    let Some(src) = read_as::<T>(&*acc.image) else {
        return Ok(false);
    };
    let src = src?;
    let constant = match acc.slot.constant.first() {
        Some(lit) => T::from_f64(lit.as_f64()),
        None => T::default(),
    };
    let source = Source {
        pixels: &src,
        stride: acc.image.width(),
        region: acc.region,
        mode: acc.slot.boundary,
        constant,
    };
    let (sx, sy) = mask.stride;
    let taps = Taps {
        kx: kx.into_iter().map(T::from_f64).collect(),
        ky: ky.into_iter().map(T::from_f64).collect(),
        scale: mask.scale.map(T::from_f64),
        // Output pixel `p` (space-relative) reads source position
        // `p + (s - 1) · (space origin + p) + d`: see `Convolution::stride`.
        x: Axis {
            stride: sx,
            base: ((sx - 1) * space.x) as i64,
        },
        y: Axis {
            stride: sy,
            base: ((sy - 1) * space.y) as i64,
        },
    };
    f(&source, &taps);
    Ok(true)
}

/// Output rows per band for rows of `width` horizontal sums, `taps` high
/// masks and vertical stride `sy`: as many as keep the scratch within
/// [`SCRATCH_BYTES`], between [`MIN_BAND_ROWS`] and [`BAND_ROWS`] source
/// rows' worth. Decimating bands read `sy` source rows per output row, so
/// they get `sy` times fewer.
fn band_rows<T>(width: usize, taps: usize, sy: usize) -> usize {
    let row_bytes = (width * std::mem::size_of::<T>()).max(1);
    let fit = (SCRATCH_BYTES / row_bytes).saturating_sub(taps - 1);
    fit.clamp(MIN_BAND_ROWS, BAND_ROWS) / sy
}

/// The accessor's pixels and how reads outside its region resolve.
pub(super) struct Source<'a, T> {
    pub(super) pixels: &'a [T],
    pub(super) stride: usize,
    pub(super) region: Rect,
    pub(super) mode: BoundaryMode,
    pub(super) constant: T,
}

impl<T: Float> Source<'_, T> {
    /// Row `r` of the region (region-relative, remapped), or `None` where
    /// the boundary gives the constant.
    pub(super) fn row(&self, r: i64) -> Option<&[T]> {
        let rh = self.region.height as i64;
        let r = match self.mode.remap(r, rh) {
            Some(r) => r,
            None if self.mode == BoundaryMode::Constant => return None,
            // Undefined: any value is allowed; read the nearest row.
            None => r.clamp(0, rh - 1),
        } as usize;
        let start = (self.region.y + r) * self.stride + self.region.x;
        Some(&self.pixels[start..start + self.region.width])
    }

    /// Column `c` of `row` (region-relative, remapped).
    pub(super) fn at(&self, row: &[T], c: i64) -> T {
        let n = row.len() as i64;
        match self.mode.remap(c, n) {
            Some(c) => row[c as usize],
            None if self.mode == BoundaryMode::Constant => self.constant,
            None => row[c.clamp(0, n - 1) as usize],
        }
    }
}

/// The two factors of the mask, in the pixel type, and how output
/// positions map to source positions along each axis.
struct Taps<T> {
    kx: Vec<T>,
    ky: Vec<T>,
    /// The factor each output is multiplied by, if any.
    scale: Option<T>,
    x: Axis,
    y: Axis,
}

/// Output position `p` (space-relative) reads the window centred on source
/// position `stride · p + base` (region-relative).
#[derive(Clone, Copy)]
struct Axis {
    stride: usize,
    base: i64,
}

super::simd::dispatch! {
    /// One band: output rows `first..` of the space (space-relative) into
    /// `band` (whole output-image rows), compiled for AVX2 where the CPU has
    /// it ([`super::simd`]).
    fn band_pass<T: Float, S: Step>(
        src: &Source<'_, T>,
        taps: &Taps<T>,
        space: Rect,
        first: usize,
        band: &mut [T],
        out_width: usize,
        buf: &mut Vec<T>,
    ) {
        let h = taps.ky.len();
        let cy = (h / 2) as i64;
        let rows = band.len() / out_width;
        let sw = space.width;
        let sy = taps.y.stride;
        let len = (sy * (rows - 1) + h) * sw;
        let size = std::mem::size_of::<T>();
        let period = ALIAS_PERIOD / size;
        // Every row is written by the horizontal pass before the vertical
        // one reads it, so old contents are kept rather than cleared.
        if buf.len() < len + period {
            buf.resize(len + period, T::default());
        }
        let top = (sy * first) as i64 + taps.y.base - cy;
        let read = src.row(top).unwrap_or(src.pixels).as_ptr() as usize;
        let written = band.as_ptr() as usize + space.x * size;
        let want = farthest_from(read, written);
        let skip = (want + ALIAS_PERIOD - buf.as_ptr() as usize % ALIAS_PERIOD) % ALIAS_PERIOD;
        let buf = &mut buf[skip / size..skip / size + len];
        let (mut edge, mut levels) = (Vec::new(), Vec::new());
        for (s, hrow) in buf.chunks_exact_mut(sw).enumerate() {
            match src.row(top + s as i64) {
                Some(row) => {
                    let scratch = (&mut edge, &mut levels);
                    horizontal::<T, S>(src, row, &taps.kx, taps.x, hrow, scratch)
                }
                None => {
                    let mut v = S::first(taps.kx[0], src.constant);
                    for &k in &taps.kx[1..] {
                        v = S::next(k, src.constant, v);
                    }
                    hrow.fill(v);
                }
            }
        }
        if sy == 1 && h > VERTICAL_ROWS && S::regroups(&taps.ky) {
            for_shared_rows::<T, S>(buf, first, band, out_width, space, taps.scale);
            return;
        }
        let mut rest = band;
        let mut i = 0;
        while !rest.is_empty() {
            let n = (rest.len() / out_width).min(VERTICAL_ROWS);
            let (block, tail) = rest.split_at_mut(n * out_width);
            rest = tail;
            let rows = &buf[sy * i * sw..];
            let out = |r: usize| space.x + r * out_width..space.x + r * out_width + sw;
            let ky = (&taps.ky[..], taps.scale);
            if n == VERTICAL_ROWS {
                let [a, b, c, d] = block.get_disjoint_mut([out(0), out(1), out(2), out(3)])
                    .unwrap_or_else(|e| unreachable!("bug: {e}"));
                vertical_block::<T, S, VERTICAL_ROWS>(rows, sy, ky, [a, b, c, d]);
            } else {
                for r in 0..n {
                    let row = &rows[sy * r * sw..];
                    vertical_block::<T, S, 1>(row, sy, ky, [&mut block[out(r)]]);
                }
            }
            i += n;
        }
    }
}

/// Addresses this far apart share their low bits, which is all a load's
/// check against older stores compares before it waits for them.
const ALIAS_PERIOD: usize = 4096;

/// The cache-line start in the [`ALIAS_PERIOD`] farthest from both `a` and
/// `b`: where the band's rows start. The horizontal pass stores each row
/// a little behind where it loads the source, and the vertical pass loads
/// the rows a little ahead of where it stores the output; a band that
/// started just after the source, or just before the output, in the
/// period would make those loads wait on unrelated stores (4K aliasing).
fn farthest_from(a: usize, b: usize) -> usize {
    let (a, b) = (a % ALIAS_PERIOD, b % ALIAS_PERIOD);
    let (lo, hi) = (a.min(b), a.max(b));
    let mid = if hi - lo >= ALIAS_PERIOD / 2 {
        lo + (hi - lo) / 2
    } else {
        hi + (ALIAS_PERIOD - (hi - lo)) / 2
    };
    mid % ALIAS_PERIOD / SCRATCH_ALIGN * SCRATCH_ALIGN
}

/// Output rows the vertical pass computes together. Each source row of
/// horizontal sums is loaded once per block instead of once per output row
/// it feeds: 8 row loads for 4 outputs of the 5x5 Gaussian instead of 20.
/// The vertical pass is bound by those loads (the scratch lives in L2), so
/// this is what makes it cheaper than the horizontal pass.
const VERTICAL_ROWS: usize = 4;

/// The vertical pass of a mask taller than [`VERTICAL_ROWS`] whose taps
/// regroup ([`Step::regroups`]: a box sum, a minimum or a maximum) at
/// stride 1: output rows `first..` of the space into `band` from the rows
/// of horizontal results `rows`.
///
/// Four consecutive outputs share all but three of their rows, so an
/// aligned group of four (space rows `4k ..= 4k + 3`) folds the shared
/// rows once and adds the rest through running partial results:
/// `h + 6` operations for four outputs of an `h`-tap column instead of
/// `4 · (h - 1)` (19 instead of 48 for a 13x13 box). How an output's taps
/// are grouped depends only on its row modulo four ([`phase_lanes`]), so
/// a row computed alone at a band's edge, or in a pipeline's strip of any
/// height, gets the bits it gets inside a group.
#[inline(always)]
fn for_shared_rows<T: Float, S: Step>(
    rows: &[T],
    first: usize,
    band: &mut [T],
    out_width: usize,
    space: Rect,
    scale: Option<T>,
) {
    let sw = space.width;
    let h = rows.len() / sw - band.len() / out_width + 1;
    let out = |r: usize| space.x + r * out_width..space.x + r * out_width + sw;
    let count = band.len() / out_width;
    let mut i = 0;
    while i < count {
        let phase = (first + i) % VERTICAL_ROWS;
        let window = &rows[i * sw..(i + h) * sw];
        if phase == 0 && count - i >= VERTICAL_ROWS {
            let block = &mut band[i * out_width..(i + VERTICAL_ROWS) * out_width];
            let [a, b, c, d] = block
                .get_disjoint_mut([out(0), out(1), out(2), out(3)])
                .unwrap_or_else(|e| unreachable!("bug: {e}"));
            let window = &rows[i * sw..(i + h + VERTICAL_ROWS - 1) * sw];
            match scale {
                Some(s) => shared_block::<T, S, true>(window, h, s, [a, b, c, d]),
                None => shared_block::<T, S, false>(window, h, T::default(), [a, b, c, d]),
            }
            i += VERTICAL_ROWS;
        } else {
            let row = &mut band[out(i)];
            match scale {
                Some(s) => shared_row::<T, S, true>(window, h, phase, s, row),
                None => shared_row::<T, S, false>(window, h, phase, T::default(), row),
            }
            i += 1;
        }
    }
}

/// Output lanes computed together by [`shared_block`] and [`shared_row`]:
/// two AVX2 vectors of `f32`.
const SHARED_LANES: usize = 16;

/// Four output rows of an aligned group from the `h + 3` rows of
/// horizontal results `rows` (the first group row's window first), in
/// blocks of [`SHARED_LANES`] columns.
#[inline(always)]
fn shared_block<T: Float, S: Step, const SCALED: bool>(
    rows: &[T],
    h: usize,
    s: T,
    mut out: [&mut [T]; VERTICAL_ROWS],
) {
    let sw = out[0].len();
    let blocks = sw / SHARED_LANES * SHARED_LANES;
    for x in (0..blocks).step_by(SHARED_LANES) {
        let row = |j: usize| -> [T; SHARED_LANES] {
            let start = j * sw + x;
            rows[start..start + SHARED_LANES]
                .try_into()
                .unwrap_or_else(|_| unreachable!("bug: a block of {SHARED_LANES}"))
        };
        let v = group_lanes::<T, S, SHARED_LANES>(row, h);
        for (o, v) in out.iter_mut().zip(v) {
            for (d, v) in o[x..x + SHARED_LANES].iter_mut().zip(v) {
                *d = scaled::<T, SCALED>(v, s);
            }
        }
    }
    for x in blocks..sw {
        let v = group_lanes::<T, S, 1>(|j| [rows[j * sw + x]], h);
        for (o, [v]) in out.iter_mut().zip(v) {
            o[x] = scaled::<T, SCALED>(v, s);
        }
    }
}

/// One output row of group phase `phase` (its row modulo four) from the
/// `h` rows of horizontal results of its window, `rows`, grouped as
/// [`shared_block`] groups that row.
#[inline(always)]
fn shared_row<T: Float, S: Step, const SCALED: bool>(
    rows: &[T],
    h: usize,
    phase: usize,
    s: T,
    out: &mut [T],
) {
    let sw = out.len();
    let blocks = sw / SHARED_LANES * SHARED_LANES;
    // Row `j` of the group (`j >= phase`) is row `j - phase` of the window.
    for x in (0..blocks).step_by(SHARED_LANES) {
        let row = |j: usize| -> [T; SHARED_LANES] {
            let start = (j - phase) * sw + x;
            rows[start..start + SHARED_LANES]
                .try_into()
                .unwrap_or_else(|_| unreachable!("bug: a block of {SHARED_LANES}"))
        };
        let v = phase_lanes::<T, S, SHARED_LANES>(row, h, phase);
        for (d, v) in out[x..x + SHARED_LANES].iter_mut().zip(v) {
            *d = scaled::<T, SCALED>(v, s);
        }
    }
    for x in blocks..sw {
        let [v] = phase_lanes::<T, S, 1>(|j| [rows[(j - phase) * sw + x]], h, phase);
        out[x] = scaled::<T, SCALED>(v, s);
    }
}

/// `a` joined with `b` lane by lane ([`Step::join`]).
#[inline(always)]
fn join_lanes<T: Float, S: Step, const B: usize>(a: [T; B], b: [T; B]) -> [T; B] {
    std::array::from_fn(|l| S::join(a[l], b[l]))
}

/// The four outputs of a group whose rows are `row(0..h + 3)`: output `q`
/// folds rows `q..q + h` as `(left ⊕ middle) ⊕ right`, with the middle
/// rows `3..h` shared by all four, `left = row(q) ⊕ (… ⊕ row(2))` and
/// `right = (row(h) ⊕ …) ⊕ row(h + q - 1)` built up across the outputs.
#[inline(always)]
fn group_lanes<T: Float, S: Step, const B: usize>(
    row: impl Fn(usize) -> [T; B],
    h: usize,
) -> [[T; B]; VERTICAL_ROWS] {
    const R: usize = VERTICAL_ROWS;
    let mut middle = row(R - 1);
    for j in R..h {
        middle = join_lanes::<T, S, B>(middle, row(j));
    }
    let mut v = [middle; R];
    let mut left = row(R - 2);
    v[R - 2] = join_lanes::<T, S, B>(left, middle);
    for q in (0..R - 2).rev() {
        left = join_lanes::<T, S, B>(row(q), left);
        v[q] = join_lanes::<T, S, B>(left, middle);
    }
    let mut right = row(h);
    v[1] = join_lanes::<T, S, B>(v[1], right);
    for (q, v) in v.iter_mut().enumerate().skip(2) {
        right = join_lanes::<T, S, B>(right, row(h + q - 1));
        *v = join_lanes::<T, S, B>(*v, right);
    }
    v
}

/// Output `phase` of [`group_lanes`] alone: the same operations on the
/// same rows (`row(j)` for `j` in `phase..phase + h`), so the same bits.
#[inline(always)]
fn phase_lanes<T: Float, S: Step, const B: usize>(
    row: impl Fn(usize) -> [T; B],
    h: usize,
    phase: usize,
) -> [T; B] {
    const R: usize = VERTICAL_ROWS;
    let mut v = row(R - 1);
    for j in R..h {
        v = join_lanes::<T, S, B>(v, row(j));
    }
    if phase < R - 1 {
        let mut left = row(R - 2);
        for j in (phase..R - 2).rev() {
            left = join_lanes::<T, S, B>(row(j), left);
        }
        v = join_lanes::<T, S, B>(left, v);
    }
    if phase > 0 {
        let mut right = row(h);
        for j in h + 1..h + phase {
            right = join_lanes::<T, S, B>(right, row(j));
        }
        v = join_lanes::<T, S, B>(v, right);
    }
    v
}

/// The vertical pass of `R` output rows (`out`, each as wide as a row of
/// horizontal sums) from the rows of horizontal sums `rows`: output row
/// `q` combines rows `sy · q ..` `sy · q + ky.len()`, then is multiplied
/// by the factor, if any, in the same loop (a box mean's `1 / area`: no
/// second pass over the output rows).
#[inline(always)]
fn vertical_block<T: Float, S: Step, const R: usize>(
    rows: &[T],
    sy: usize,
    (ky, scale): (&[T], Option<T>),
    out: [&mut [T]; R],
) {
    match scale {
        Some(s) => vertical_scaled::<T, S, R, true>(rows, sy, ky, s, out),
        None => vertical_scaled::<T, S, R, false>(rows, sy, ky, T::default(), out),
    }
}

/// [`vertical_block`] with the factor `s` applied where `SCALED`.
#[inline(always)]
fn vertical_scaled<T: Float, S: Step, const R: usize, const SCALED: bool>(
    rows: &[T],
    sy: usize,
    ky: &[T],
    s: T,
    out: [&mut [T]; R],
) {
    match ky.len() {
        3 => vertical_taps::<T, S, 3, R, SCALED>(rows, sy, ky, s, out),
        5 => vertical_taps::<T, S, 5, R, SCALED>(rows, sy, ky, s, out),
        7 => vertical_taps::<T, S, 7, R, SCALED>(rows, sy, ky, s, out),
        _ if std::mem::size_of::<T>() == 4 => {
            vertical_wide::<T, S, R, { BLOCK_BYTES / 4 }, SCALED>(rows, sy, ky, s, out)
        }
        _ => vertical_wide::<T, S, R, { BLOCK_BYTES / 8 }, SCALED>(rows, sy, ky, s, out),
    }
}

/// `v · s` where `SCALED`, else `v`.
#[inline(always)]
fn scaled<T: Float, const SCALED: bool>(v: T, s: T) -> T {
    if SCALED {
        v * s
    } else {
        v
    }
}

/// The vertical pass of a mask of any height for `R` output rows, in
/// blocks of `B` columns whose `R · B` accumulators stay in registers
/// while the taps run; each output adds its taps top to bottom, the first
/// product as the initial value.
#[inline(always)]
fn vertical_wide<T: Float, S: Step, const R: usize, const B: usize, const SCALED: bool>(
    rows: &[T],
    sy: usize,
    ky: &[T],
    s: T,
    mut out: [&mut [T]; R],
) {
    let sw = out[0].len();
    let row = |j: usize, x: usize| -> &[T; B] {
        let start = j * sw + x;
        rows[start..start + B]
            .try_into()
            .unwrap_or_else(|_| unreachable!("bug: a block of {B}"))
    };
    let blocks = sw / B * B;
    for x in (0..blocks).step_by(B) {
        let mut v = [[T::default(); B]; R];
        for (q, acc) in v.iter_mut().enumerate() {
            let r = row(sy * q, x);
            for l in 0..B {
                acc[l] = S::first(ky[0], r[l]);
            }
        }
        for (j, &k) in ky.iter().enumerate().skip(1) {
            for (q, acc) in v.iter_mut().enumerate() {
                let r = row(sy * q + j, x);
                for l in 0..B {
                    acc[l] = S::next(k, r[l], acc[l]);
                }
            }
        }
        for (o, acc) in out.iter_mut().zip(&v) {
            for (d, &a) in o[x..x + B].iter_mut().zip(acc) {
                *d = scaled::<T, SCALED>(a, s);
            }
        }
    }
    for (q, o) in out.into_iter().enumerate() {
        let base = sy * q * sw;
        for (x, d) in o.iter_mut().enumerate().skip(blocks) {
            let mut v = S::first(ky[0], rows[base + x]);
            for (j, &k) in ky.iter().enumerate().skip(1) {
                v = S::next(k, rows[base + j * sw + x], v);
            }
            *d = scaled::<T, SCALED>(v, s);
        }
    }
}

/// The vertical pass for `N` taps known at compile time and `R` output
/// rows at once: all taps per pixel in one loop (no partial sums stored),
/// the order of additions of [`vertical_wide`].
#[inline(always)]
fn vertical_taps<T: Float, S: Step, const N: usize, const R: usize, const SCALED: bool>(
    rows: &[T],
    sy: usize,
    ky: &[T],
    s: T,
    out: [&mut [T]; R],
) {
    let sw = out[0].len();
    let k: [T; N] = std::array::from_fn(|j| ky[j]);
    let row = |j: usize| &rows[j * sw..(j + 1) * sw];
    let r: [[&[T]; N]; R] = std::array::from_fn(|q| std::array::from_fn(|j| row(sy * q + j)));
    let out = out.map(|o| &mut o[..sw]);
    for x in 0..sw {
        let mut v: [T; R] = std::array::from_fn(|q| S::first(k[0], r[q][0][x]));
        for j in 1..N {
            for q in 0..R {
                v[q] = S::next(k[j], r[q][j][x], v[q]);
            }
        }
        for q in 0..R {
            out[q][x] = scaled::<T, SCALED>(v[q], s);
        }
    }
}

/// The horizontal pass of one region row into `out`: output column `p`
/// reads row columns `q - cx ..= q - cx + w - 1` with `q = stride · p +
/// base`.
#[inline(always)]
fn horizontal<T: Float, S: Step>(
    src: &Source<'_, T>,
    row: &[T],
    kx: &[T],
    axis: Axis,
    out: &mut [T],
    (edge, levels): (&mut Vec<T>, &mut Vec<T>),
) {
    let (n, w) = (row.len() as i64, kx.len() as i64);
    let len = out.len() as i64;
    let (s, cx) = (axis.stride as i64, (w / 2));
    // The first column of output `p`'s taps.
    let start = |p: i64| s * p + axis.base - cx;
    // Outputs whose taps all lie inside the row: `lo..hi`.
    let lo = (((cx - axis.base).max(0) + s - 1) / s).min(len);
    let last = n - w + cx - axis.base;
    let hi = if last < 0 {
        lo
    } else {
        (last / s + 1).clamp(lo, len)
    };
    // The edges read their taps through the boundary condition, gathered
    // once per tap position into `edge`, then run as the interior does.
    for (range, inside) in [(0..lo, false), (lo..hi, true), (hi..len, false)] {
        if range.is_empty() {
            continue;
        }
        let window = if inside {
            &row[start(lo) as usize..]
        } else {
            let count = s * (range.end - range.start - 1) + w;
            edge.clear();
            edge.extend((0..count).map(|i| src.at(row, start(range.start) + i)));
            &edge[..]
        };
        let out = &mut out[range.start as usize..range.end as usize];
        horizontal_taps::<T, S>(window, kx, axis.stride, out, levels);
    }
}

/// `out[p] = Σ kx[i] · window[stride · p + i]`, added left to right, or
/// regrouped ([`horizontal_doubling`], with `levels` as its scratch) where
/// the taps allow it and that pays.
#[inline(always)]
fn horizontal_taps<T: Float, S: Step>(
    window: &[T],
    kx: &[T],
    stride: usize,
    inner: &mut [T],
    levels: &mut Vec<T>,
) {
    match (stride, kx.len()) {
        (1, n) if n >= DOUBLING_TAPS && S::regroups(kx) => {
            horizontal_doubling::<T, S>(window, n, inner, levels)
        }
        (1, 3) => horizontal_n::<T, S, 3, 1>(window, kx, inner),
        (1, 5) => horizontal_n::<T, S, 5, 1>(window, kx, inner),
        (1, 7) => horizontal_n::<T, S, 7, 1>(window, kx, inner),
        (2, 3) => horizontal_n::<T, S, 3, 2>(window, kx, inner),
        (2, 5) => horizontal_n::<T, S, 5, 2>(window, kx, inner),
        (2, 7) => horizontal_n::<T, S, 7, 2>(window, kx, inner),
        (1, _) if std::mem::size_of::<T>() == 4 => {
            horizontal_wide::<T, S, { BLOCK_BYTES / 4 }>(window, kx, inner)
        }
        (1, _) => horizontal_wide::<T, S, { BLOCK_BYTES / 8 }>(window, kx, inner),
        (s, _) => {
            for (p, d) in inner.iter_mut().enumerate() {
                *d = S::first(kx[0], window[s * p]);
            }
            for (i, &k) in kx.iter().enumerate().skip(1) {
                for (p, d) in inner.iter_mut().enumerate() {
                    *d = S::next(k, window[s * p + i], *d);
                }
            }
        }
    }
}

/// Fewest taps a row of a box or an extremum runs in doubling runs
/// ([`horizontal_doubling`]): below 9 the loads it saves are spent on the
/// stores of its levels.
const DOUBLING_TAPS: usize = 9;

/// Outputs of a [`horizontal_doubling`] chunk: the rows of partial
/// results it keeps stay in the first-level cache.
const DOUBLING_CHUNK: usize = 512;

/// The interior of the horizontal pass at stride 1 for taps that regroup
/// ([`Step::regroups`]), as [`horizontal_wide`] computes it but from runs
/// of doubling length: `t₂[i] = w[i] ⊕ w[i + 1]`, `t₄[i] = t₂[i] ⊕ t₂[i +
/// 2]`, …, then each output joins the runs that make up its `n` taps,
/// longest first (`t₈[p] ⊕ t₄[p + 8] ⊕ w[p + 12]` for 13 taps). Each
/// level is one load pair, one operation and one store per output, so 13
/// taps take 5 operations and 9 loads instead of 12 and 13. The grouping
/// is the same for every output and every call, so a row computed in
/// parts, or its edges through the boundary condition, get the same bits.
#[inline(always)]
fn horizontal_doubling<T: Float, S: Step>(
    window: &[T],
    n: usize,
    out: &mut [T],
    levels: &mut Vec<T>,
) {
    let top = n.ilog2() as usize;
    let stride = DOUBLING_CHUNK + n;
    if levels.len() < top * stride {
        levels.resize(top * stride, T::default());
    }
    for (c, out) in out.chunks_mut(DOUBLING_CHUNK).enumerate() {
        let len = out.len();
        let w = &window[c * DOUBLING_CHUNK..c * DOUBLING_CHUNK + len + n - 1];
        // Level `k` (runs of `2^k` taps) has `len + n - 2^k` entries.
        for k in 1..=top {
            let half = 1 << (k - 1);
            let (done, rest) = levels.split_at_mut((k - 1) * stride);
            let prev: &[T] = if k == 1 { w } else { &done[(k - 2) * stride..] };
            let count = len + n - (1 << k);
            let cur = &mut rest[..count];
            let (a, b) = (&prev[..count], &prev[half..half + count]);
            for ((d, &a), &b) in cur.iter_mut().zip(a).zip(b) {
                *d = S::join(a, b);
            }
        }
        let level = |k: usize| -> &[T] {
            if k == 0 {
                w
            } else {
                &levels[(k - 1) * stride..]
            }
        };
        // The runs after the longest: the lower set bits of `n`, longest
        // first, each at the offset where the runs before it end.
        let mut terms = [(&w[..0], 0usize); usize::BITS as usize];
        let mut count = 0;
        let mut offset = 1 << top;
        for k in (0..top).rev() {
            if n & (1 << k) != 0 {
                terms[count] = (level(k), offset);
                count += 1;
                offset += 1 << k;
            }
        }
        let first = &level(top)[..len];
        match &terms[..count] {
            [] => out.copy_from_slice(first),
            [(a, i)] => {
                let a = &a[*i..i + len];
                for ((d, &f), &a) in out.iter_mut().zip(first).zip(a) {
                    *d = S::join(f, a);
                }
            }
            [(a, i), (b, j)] => {
                let (a, b) = (&a[*i..i + len], &b[*j..j + len]);
                for (((d, &f), &a), &b) in out.iter_mut().zip(first).zip(a).zip(b) {
                    *d = S::join(S::join(f, a), b);
                }
            }
            more => {
                out.copy_from_slice(first);
                for (a, i) in more {
                    for (d, &a) in out.iter_mut().zip(&a[*i..i + len]) {
                        *d = S::join(*d, a);
                    }
                }
            }
        }
    }
}

/// The interior of the horizontal pass for `N` taps and stride `S` known
/// at compile time: `out[p] = Σ kx[i] · window[S · p + i]`, added left to
/// right.
#[inline(always)]
fn horizontal_n<T: Float, C: Step, const N: usize, const S: usize>(
    window: &[T],
    kx: &[T],
    out: &mut [T],
) {
    let k: [T; N] = std::array::from_fn(|i| kx[i]);
    if out.is_empty() {
        return;
    }
    // Checked once here: LLVM keeps per-tap bounds checks at stride 2,
    // which leave the loop scalar.
    let window = &window[..S * (out.len() - 1) + N];
    for (p, d) in out.iter_mut().enumerate() {
        // SAFETY: `S·p + i <= S·(len - 1) + N - 1 < window.len()`.
        let tap = |i: usize| unsafe { *window.get_unchecked(S * p + i) };
        let mut v = C::first(k[0], tap(0));
        for (i, &ki) in k.iter().enumerate().skip(1) {
            v = C::next(ki, tap(i), v);
        }
        *d = v;
    }
}

/// The interior of the horizontal pass at stride 1 for any number of taps:
/// `out[p] = Σ kx[i] · window[p + i]`, added left to right, in blocks of
/// [`VERTICAL_ROWS`] times `B` outputs (as many accumulators as the
/// vertical pass keeps), then of `B`, then one by one.
#[inline(always)]
fn horizontal_wide<T: Float, S: Step, const B: usize>(window: &[T], kx: &[T], out: &mut [T]) {
    let done = horizontal_blocks::<T, S, VERTICAL_ROWS, B>(window, kx, out);
    let done = done + horizontal_blocks::<T, S, 1, B>(&window[done..], kx, &mut out[done..]);
    let n = kx.len();
    for (p, d) in out.iter_mut().enumerate().skip(done) {
        let w = &window[p..p + n];
        let mut v = S::first(kx[0], w[0]);
        for (&k, &x) in kx.iter().zip(w).skip(1) {
            v = S::next(k, x, v);
        }
        *d = v;
    }
}

/// The whole blocks of `R · B` outputs of [`horizontal_wide`], as `R`
/// arrays of `B` accumulators (the shape LLVM keeps in registers while
/// the taps run); returns how many outputs they cover.
#[inline(always)]
fn horizontal_blocks<T: Float, S: Step, const R: usize, const B: usize>(
    window: &[T],
    kx: &[T],
    out: &mut [T],
) -> usize {
    let n = kx.len();
    let blocks = out.len() / (R * B) * (R * B);
    for (b, d) in out[..blocks].chunks_exact_mut(R * B).enumerate() {
        let w = &window[b * R * B..(b + 1) * R * B + n - 1];
        let tap = |q: usize, i: usize| -> &[T; B] {
            w[q * B + i..q * B + i + B]
                .try_into()
                .unwrap_or_else(|_| unreachable!("bug: a block of {B}"))
        };
        let mut v = [[T::default(); B]; R];
        for (q, acc) in v.iter_mut().enumerate() {
            let first = tap(q, 0);
            for l in 0..B {
                acc[l] = S::first(kx[0], first[l]);
            }
        }
        for (i, &k) in kx.iter().enumerate().skip(1) {
            for (q, acc) in v.iter_mut().enumerate() {
                let w = tap(q, i);
                for l in 0..B {
                    acc[l] = S::next(k, w[l], acc[l]);
                }
            }
        }
        for (d, acc) in d.chunks_exact_mut(B).zip(&v) {
            d.copy_from_slice(acc);
        }
    }
    blocks
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The band starts on a cache line, at least a quarter of the period
    /// from the source and the output whatever their offsets, and half
    /// the period away where they share one.
    #[test]
    fn band_starts_far_from_source_and_output_in_the_period() {
        let distance = |p: usize, q: usize| {
            let d = (p + ALIAS_PERIOD - q % ALIAS_PERIOD) % ALIAS_PERIOD;
            d.min(ALIAS_PERIOD - d)
        };
        assert_eq!(farthest_from(16, 16), 2048);
        assert_eq!(farthest_from(8192 + 16, 4096 + 16), 2048);
        for a in (0..ALIAS_PERIOD).step_by(80) {
            for b in (0..ALIAS_PERIOD).step_by(48) {
                let at = farthest_from(a + 3 * ALIAS_PERIOD, b);
                assert_eq!(at % SCRATCH_ALIGN, 0, "{a} {b}");
                assert!(at < ALIAS_PERIOD);
                let near = distance(at, a).min(distance(at, b));
                assert!(near + SCRATCH_ALIGN >= ALIAS_PERIOD / 4, "{a} {b}: {at}");
            }
        }
    }

    #[test]
    fn bands_fit_the_scratch_budget() {
        // 2048 f32 columns: 68 rows of 8 KiB fit 640 KiB, so the full 64.
        assert_eq!(band_rows::<f32>(2048, 5, 1), 64);
        assert_eq!(band_rows::<f32>(2048, 5, 2), 32);
        // 4096 columns: 160 rows' budget minus the 4 extra ones.
        assert_eq!(band_rows::<f32>(4096, 5, 1), 36);
        assert_eq!(band_rows::<f64>(4096, 5, 1), 16);
        // Very wide rows still get the minimum; tiny ones the maximum.
        assert_eq!(band_rows::<f64>(1 << 20, 7, 1), MIN_BAND_ROWS);
        assert_eq!(band_rows::<f32>(1, 3, 1), BAND_ROWS);
    }

    #[test]
    fn binomial_masks_factor_and_others_do_not() {
        let b = [1.0, 4.0, 6.0, 4.0, 1.0];
        let outer: Vec<f64> = (0..25).map(|i| b[i / 5] * b[i % 5] / 256.0).collect();
        let (kx, ky) = factors(&outer, 5, 5, 1e-12).unwrap();
        for j in 0..5 {
            for i in 0..5 {
                assert!((ky[j] * kx[i] - outer[j * 5 + i]).abs() < 1e-15);
            }
        }
        let mut bumped = outer.clone();
        bumped[7] += 1e-3;
        assert!(factors(&bumped, 5, 5, 1e-6).is_none());
        let laplace = [0.0, 1.0, 0.0, 1.0, -4.0, 1.0, 0.0, 1.0, 0.0];
        assert!(factors(&laplace, 3, 3, 1e-6).is_none());
        assert!(factors(&[1.0, 2.0, 3.0], 3, 1, 1e-6).is_none());
        assert!(factors(&[0.0; 9], 3, 3, 1e-6).is_none());
    }
}
