//! What the CPU backend's compiled kernel bodies read through.
//!
//! `#[kernel_body]` compiles the body a second time as ordinary Rust, with
//! each `self.acc.at(dx, dy)` turned into [`CpuRead::read`] on the field's
//! view. The backend instantiates the body once per [`ReadMode`], one per
//! kind of region of the iteration space, as HIPAcc specialises its GPU
//! kernels per border region:
//!
//! - [`Interior`]: every read is inside the image, no checks, so LLVM
//!   vectorises the row loop;
//! - [`LeftRight`]: the left and right strips of rows whose reads all stay
//!   inside vertically: only columns are checked;
//! - [`TopBottom`]: the top and bottom rows between those strips: only rows
//!   are checked;
//! - [`Border`]: the corners, and every pixel of a kernel whose footprint
//!   is unbounded: the boundary condition on both axes of every read, using
//!   the index maths of [`crate::boundary`].
//!
//! An accessor with an [`Interpolation`] other than `None` maps each output
//! pixel cell-centred into its region and weighs the taps as
//! [`crate::interpolate`] defines, applying the boundary condition to every
//! tap. Its reads do not bound the interior (they map to other positions):
//! there they run in [`InteriorInterpolating`], each checking its taps, or,
//! in the columns and rows where the launch found every tap inside
//! ([`interpolated_inside`]), in [`InteriorTapsInside`] with no check.

use crate::boundary::BoundaryMode;
use crate::image::ReadGuard;
use crate::interpolate::Taps;
use crate::{Accessor, Boundary, Domain, Interpolation, Mask, Pixel, Rect, Result};

mod extremes;
mod offset;
mod param;
mod tap_tables;

pub use extremes::Extremes;
pub use offset::{pixel_offset, PixelOffset};
pub use param::{param_value, ParamValue};

/// Which axes of a read may leave the image, and so get the boundary
/// condition; the other axes are known inside.
pub trait ReadMode: 'static {
    /// Columns may leave the region.
    const CHECK_X: bool;
    /// Rows may leave the region.
    const CHECK_Y: bool;
    /// The launch proved that no operand of the body's `min` and `max` is
    /// NaN or a negative zero, so they may be the plain compare-and-select
    /// ([`Extremes`]).
    const PLAIN_EXTREMES: bool = false;
    /// An interpolating accessor's reads sample inline, each checked
    /// against the region ([`InteriorInterpolating`]).
    const INTERPOLATING: bool = false;
    /// An interpolating accessor's taps are tabulated and inside the
    /// region: its reads check nothing ([`InteriorTapsInside`]).
    const TAPS_INSIDE: bool = false;
    /// The mode of the pixels of this mode's region where every
    /// interpolating read's taps lie inside: [`InteriorTapsInside`] for
    /// [`InteriorInterpolating`], the mode itself for the others, so that
    /// a loop naming it compiles no new instance of a kernel body without
    /// interpolating accessors.
    type TapsInside: ReadMode;
}

/// Reads known to be inside the image: no checks.
pub enum Interior {}
impl ReadMode for Interior {
    type TapsInside = Self;
    const CHECK_X: bool = false;
    const CHECK_Y: bool = false;
}

/// [`Interior`] reads in a launch that proved no `min`/`max` operand of
/// the body NaN or a negative zero (see [`Extremes`]).
pub enum InteriorPlain {}
impl ReadMode for InteriorPlain {
    type TapsInside = Self;
    const CHECK_X: bool = false;
    const CHECK_Y: bool = false;
    const PLAIN_EXTREMES: bool = true;
}

/// [`Interior`] reads in a launch with an interpolating accessor. The
/// interior is where the other accessors' reads stay inside; an
/// interpolating accessor's taps are not part of it (they map output pixels
/// to other positions), so its reads check their taps against the region
/// as the border's do, but inline for `Nearest` and `Linear`, whose taps
/// fit in a few instructions: in the border's out-of-line call, a
/// `Nearest` read cost about three times a hand-written loop's.
pub enum InteriorInterpolating {}
impl ReadMode for InteriorInterpolating {
    type TapsInside = InteriorTapsInside;
    const CHECK_X: bool = false;
    const CHECK_Y: bool = false;
    const INTERPOLATING: bool = true;
}

/// [`InteriorInterpolating`] reads where the launch found every tap of
/// every interpolating read tabulated and inside its accessor's region
/// ([`interpolated_inside`]): the reads look their taps up and sum them
/// with no check and no call, so that LLVM hoists a row's taps out of the
/// row loop, as a hand-written upsampling loop does.
pub enum InteriorTapsInside {}
impl ReadMode for InteriorTapsInside {
    type TapsInside = Self;
    const CHECK_X: bool = false;
    const CHECK_Y: bool = false;
    const INTERPOLATING: bool = true;
    const TAPS_INSIDE: bool = true;
}

/// The output indices `0..space` (relative to the iteration space's
/// origin) whose taps, read at offset `d` with `mode` from an accessor of
/// extent `acc`, all lie inside it and are tabulated: where every
/// interpolating read of a pixel has such taps on both axes, it may be
/// read in [`InteriorTapsInside`]. `None` for offsets the tables do not
/// reach.
///
/// ```
/// use hipacc_core::cpu::interpolated_inside;
/// use hipacc_core::Interpolation;
/// // Upsampling 4 -> 8 linearly: output 0 reads position -0.25, whose
/// // taps -1 and 0 leave the accessor; so does output 7 (3.25: 3, 4).
/// assert_eq!(interpolated_inside(Interpolation::Linear, 8, 4, 0), Some(1..7));
/// assert_eq!(interpolated_inside(Interpolation::Nearest, 8, 4, 0), Some(0..8));
/// assert_eq!(interpolated_inside(Interpolation::Nearest, 8, 4, 1000), None);
/// ```
pub fn interpolated_inside(
    mode: Interpolation,
    space: usize,
    acc: usize,
    d: i32,
) -> Option<std::ops::Range<usize>> {
    tap_tables::inside(mode, space, acc, d)
}

/// Reads whose rows are inside the image: columns checked.
pub enum LeftRight {}
impl ReadMode for LeftRight {
    type TapsInside = Self;
    const CHECK_X: bool = true;
    const CHECK_Y: bool = false;
}

/// Reads whose columns are inside the image: rows checked.
pub enum TopBottom {}
impl ReadMode for TopBottom {
    type TapsInside = Self;
    const CHECK_X: bool = false;
    const CHECK_Y: bool = true;
}

/// Reads that may leave the image: boundary condition on both axes.
pub enum Border {}
impl ReadMode for Border {
    type TapsInside = Self;
    const CHECK_X: bool = true;
    const CHECK_Y: bool = true;
}

/// A field that `self.field.at(dx, dy)` reads in a CPU kernel body.
#[diagnostic::on_unimplemented(
    message = "only `Accessor` and `Mask` fields are read with `.at(dx, dy)` or `self.field()`",
    label = "not an accessor or a mask",
    note = "scalar parameters are read as `self.name`; a `Domain` only selects the positions \
            of `reduce` and `iterate`"
)]
pub trait CpuRead {
    /// The value read.
    type Out;
    /// The value at offset `(dx, dy)` for output pixel `(x, y)`.
    ///
    /// # Safety
    /// With `M = Interior` (or `InteriorPlain`, or `InteriorInterpolating`
    /// and `InteriorTapsInside` for an accessor that does not interpolate)
    /// the read must be inside the accessor's region,
    /// and its position and the output pixel's coordinates must fit in
    /// `i32`. With `M = InteriorTapsInside`, an interpolating accessor's
    /// read must have its offset within the tap tables and its taps
    /// inside the region ([`interpolated_inside`]). The other modes have
    /// no precondition; they return the boundary condition's value only
    /// on the axes they check, so a read must be inside on the others to
    /// give it.
    unsafe fn read<M: ReadMode>(&self, x: isize, y: isize, dx: i32, dy: i32) -> Self::Out;

    /// [`CpuRead::read`] for an offset the body computes as an affine
    /// function of the coordinates (and of their quotients by a constant):
    /// `column = Some((a, b, k, q))` says that `x + dx == a·x + b + k·(x / q)`
    /// exactly for every pixel, and `row` likewise along y. Computed that
    /// way, in `isize`, an unchecked read's address is plainly strided, and
    /// LLVM loads whole vectors for it.
    ///
    /// # Safety
    /// As for [`CpuRead::read`], and the forms must hold.
    #[inline(always)]
    unsafe fn read_affine<M: ReadMode>(
        &self,
        x: isize,
        y: isize,
        dx: i32,
        dy: i32,
        column: Option<AffinePosition>,
        row: Option<AffinePosition>,
    ) -> Self::Out {
        let _ = (column, row);
        // SAFETY: the caller's contract is `read`'s.
        unsafe { self.read::<M>(x, y, dx, dy) }
    }
    /// [`CpuRead::read_affine`] in a launch whose windows have the shape
    /// `S`: a mask of run-time size then reads its coefficients at a
    /// constant size, so that a tap's index folds to a constant.
    ///
    /// # Safety
    /// As for [`CpuRead::read_affine`], and `S` as [`CpuWindow`] says.
    #[inline(always)]
    #[allow(clippy::too_many_arguments)]
    unsafe fn read_in<M: ReadMode, S: WindowShape>(
        &self,
        x: isize,
        y: isize,
        dx: i32,
        dy: i32,
        column: Option<AffinePosition>,
        row: Option<AffinePosition>,
    ) -> Self::Out {
        // SAFETY: the caller's contract is `read_affine`'s.
        unsafe { self.read_affine::<M>(x, y, dx, dy, column, row) }
    }
}

/// A read position `a·p + b + k·(p / q)` along an axis with coordinate `p`
/// (`q > 0`), as [`CpuRead::read_affine`] takes it: `(a, b, k, q)`.
pub type AffinePosition = (isize, isize, isize, isize);

/// `a·p + b + k·(p / q)` for a coordinate `p >= 0`. The quotient is a shift
/// for a power of two: with `p` formed without wrapping, LLVM then folds
/// `(2h) / 2` back to `h`.
#[inline(always)]
fn affine_position(p: isize, (a, b, k, q): AffinePosition) -> isize {
    debug_assert!(p >= 0 && q > 0, "bug: affine position of {p} over {q}");
    let quotient = if q.count_ones() == 1 {
        p >> q.trailing_zeros()
    } else {
        p / q
    };
    a * p + b + k * quotient
}

/// What a launch knows of the size of its windows whose size is not in
/// their type (a [`Domain`], a `Mask<T>`): the CPU backend instantiates a
/// kernel's loops once more per shape it can prove, so that those windows'
/// loops get constant trip counts too.
pub trait WindowShape: 'static {
    /// Width of every run-time sized window of the launch; 0 when unknown.
    const W: usize;
    /// Height of every run-time sized window of the launch; 0 when unknown.
    const H: usize;
    /// Run every window loop as a loop, even over a window whose size is
    /// known. Written out, a window calls the body of a position once per
    /// position; on the checked border paths that body (a read through the
    /// boundary condition) is too large for LLVM to inline at 25 call sites,
    /// and 25 calls per pixel cost more than the loop. As a loop it has one
    /// call site, which LLVM inlines.
    const ROLLED: bool = false;
    /// Every `reduce` returns the value its caller computed for it at the
    /// pixel ([`Given`]) instead of walking its window.
    const GIVEN: bool = false;
    /// With [`WindowShape::GIVEN`]: where not 0, the caller gave each
    /// `reduce` this many rows and weights instead of values
    /// ([`GivenRows`]), and the value is their weighted sum.
    const GIVEN_ROWS: usize = 0;
}

/// Nothing known: windows take their size from their value.
pub enum AnyShape {}
impl WindowShape for AnyShape {
    const W: usize = 0;
    const H: usize = 0;
}

/// Nothing known, and every window loop rolled (see
/// [`WindowShape::ROLLED`]): the shape of the checked border paths.
pub enum Rolled {}
impl WindowShape for Rolled {
    const W: usize = 0;
    const H: usize = 0;
    const ROLLED: bool = true;
}

/// Every `reduce` of the body returns the value the caller computed for it
/// ([`with_given`]): the CPU backend computes a body's window sums a row
/// at a time in passes of its own, then runs the compiled body around
/// them, so the expression around the sums is native code whatever it is.
pub enum Given {}
impl WindowShape for Given {
    const W: usize = 0;
    const H: usize = 0;
    const GIVEN: bool = true;
}

/// As [`Given`], but each `reduce` returns `Σ_j k[j] · rows[j][x]` over
/// `H` rows and weights the caller gave ([`with_given_rows`]), in the
/// order of a vertical pass: the first product, then one fused
/// multiply-add per row. The last pass of a two-pass sum then runs in the
/// body's own loop instead of writing a row the body reads back.
pub enum GivenRows<const H: usize> {}
impl<const H: usize> WindowShape for GivenRows<H> {
    const W: usize = 0;
    const H: usize = 0;
    const GIVEN: bool = true;
    const GIVEN_ROWS: usize = H;
}

/// Most rows a [`GivenRows`] sum may have.
pub const MAX_GIVEN_ROWS: usize = 7;

/// The rows and weights of one [`GivenRows`] sum.
#[derive(Clone, Copy)]
struct RowSum {
    rows: [*const f32; MAX_GIVEN_ROWS],
    k: [f32; MAX_GIVEN_ROWS],
}

thread_local! {
    static GIVEN_SUMS: std::cell::Cell<[RowSum; MAX_GIVEN]> = const {
        std::cell::Cell::new(
            [RowSum { rows: [std::ptr::null(); MAX_GIVEN_ROWS], k: [0.0; MAX_GIVEN_ROWS] };
                MAX_GIVEN],
        )
    };
}

/// Runs `f` with `sums[s]` as the rows and weights of the body's `s`-th
/// `reduce` call site for the [`GivenRows`] shape: `rows[j][i]` is row
/// `j`'s value at output column `x0 + i`. The previous ones are restored
/// afterwards.
///
/// # Panics
/// With more than [`MAX_GIVEN`] sums, or a sum of more than
/// [`MAX_GIVEN_ROWS`] rows or of rows and weights of different counts.
pub fn with_given_rows<R>(sums: &[(&[&[f32]], &[f32])], x0: usize, f: impl FnOnce() -> R) -> R {
    assert!(sums.len() <= MAX_GIVEN, "{} given sums", sums.len());
    let mut given = GIVEN_SUMS.with(|g| g.get());
    let before = given;
    for (g, (rows, k)) in given.iter_mut().zip(sums) {
        assert!(rows.len() <= MAX_GIVEN_ROWS && rows.len() == k.len());
        for (p, row) in g.rows.iter_mut().zip(rows.iter()) {
            *p = row.as_ptr().wrapping_sub(x0);
        }
        g.k[..k.len()].copy_from_slice(k);
    }
    GIVEN_SUMS.with(|g| g.set(given));
    struct Restore([RowSum; MAX_GIVEN]);
    impl Drop for Restore {
        fn drop(&mut self) {
            GIVEN_SUMS.with(|g| g.set(self.0));
        }
    }
    let _restore = Restore(before);
    f()
}

/// The weighted sum of call site `site`'s `H` rows at output column `x`
/// under [`with_given_rows`].
///
/// # Safety
/// Inside [`with_given_rows`], with `H` rows for `site` covering column
/// `x`.
#[inline(always)]
unsafe fn given_rows<R: Copy + 'static, const H: usize>(site: usize, x: isize) -> R {
    if std::any::TypeId::of::<R>() != std::any::TypeId::of::<f32>() {
        unreachable!("bug: a given reduction of a type other than f32");
    }
    let g = GIVEN_SUMS.with(|g| g.get()[site]);
    // SAFETY: the caller's contract.
    let at = |j: usize| unsafe { *g.rows[j].wrapping_offset(x) };
    let mut v = g.k[0] * at(0);
    for j in 1..H {
        v = g.k[j].mul_add(at(j), v);
    }
    // SAFETY: `R` is `f32`.
    unsafe { std::mem::transmute_copy(&v) }
}

/// Most `reduce` call sites a body run in the [`Given`] shape may have.
pub const MAX_GIVEN: usize = 8;

thread_local! {
    /// Per call site, the row of values [`Given`] reduces return, offset
    /// so that output column `x` is at index `x`.
    static GIVEN_ROWS: std::cell::Cell<[*const f32; MAX_GIVEN]> =
        const { std::cell::Cell::new([std::ptr::null(); MAX_GIVEN]) };
}

/// Runs `f` with `rows[k]` as the values of the body's `k`-th `reduce`
/// call site (in the order the sites appear in the body) for the
/// [`Given`] shape: `rows[k][i]` is the value at output column `x0 + i`.
/// The previous rows are restored afterwards.
///
/// # Panics
/// With more than [`MAX_GIVEN`] rows.
pub fn with_given<R>(rows: &[&[f32]], x0: usize, f: impl FnOnce() -> R) -> R {
    assert!(rows.len() <= MAX_GIVEN, "{} given rows", rows.len());
    let mut ptrs = [std::ptr::null(); MAX_GIVEN];
    for (p, row) in ptrs.iter_mut().zip(rows) {
        *p = row.as_ptr().wrapping_sub(x0);
    }
    let before = GIVEN_ROWS.with(|g| g.replace(ptrs));
    struct Restore([*const f32; MAX_GIVEN]);
    impl Drop for Restore {
        fn drop(&mut self) {
            GIVEN_ROWS.with(|g| g.set(self.0));
        }
    }
    let _restore = Restore(before);
    f()
}

/// The value of call site `site` at output column `x` under [`with_given`].
///
/// # Safety
/// Inside [`with_given`], with a row for `site` covering column `x`.
#[inline(always)]
unsafe fn given<R: Copy + 'static>(site: usize, x: isize) -> R {
    if std::any::TypeId::of::<R>() != std::any::TypeId::of::<f32>() {
        unreachable!("bug: a given reduction of a type other than f32");
    }
    let row = GIVEN_ROWS.with(|g| g.get()[site]);
    // SAFETY: the caller's contract.
    let v: f32 = unsafe { *row.wrapping_offset(x) };
    // SAFETY: `R` is `f32`.
    unsafe { std::mem::transmute_copy(&v) }
}

/// Every run-time sized mask of the launch is `W x H`, and every domain is
/// `W x H` with all its positions enabled.
pub enum FullShape<const W: usize, const H: usize> {}
impl<const W: usize, const H: usize> WindowShape for FullShape<W, H> {
    const W: usize = W;
    const H: usize = H;
}

/// The window a `reduce`/`convolve`/`iterate` walks, in row-major order.
///
/// The window owns the loop, so it can give it constant trip counts: for a
/// mask whose size is in its type (`Mask<T, W, H>`), or a window whose size
/// the launch's [`WindowShape`] gives, the loop is written out position by
/// position ([`crate::window_walk`]), and the pixel loop around the kernel
/// body vectorises. Windows are never empty (lowering rejects empty
/// domains).
///
/// The shape `S` is a promise of the caller of the kernel body (the CPU
/// backend): where `S::W > 0`, each window of run-time size is `S::W x
/// S::H` and, for a domain, full. The unchecked reads of the body rely on
/// it, as they rely on the interior.
#[diagnostic::on_unimplemented(
    message = "the window of `reduce`, `convolve` and `iterate` is a `Mask` or `Domain` field",
    label = "not a mask or a domain",
    note = "the closure reads accessors at the window's offsets: \
            `reduce(&self.domain, Sum, |dx, dy| self.input.at(dx, dy))`"
)]
pub trait CpuWindow {
    /// Combines `f(dx, dy)` over the window with `op`, starting from the value
    /// at the first position.
    fn reduce<S: WindowShape, R>(&self, f: impl Fn(i32, i32) -> R, op: impl Fn(R, R) -> R) -> R;
    /// Runs `f(dx, dy)` at every position.
    fn for_each<S: WindowShape>(&self, f: impl FnMut(i32, i32));
    /// [`CpuWindow::reduce`] as call site `site` (numbered from 0 in the
    /// order the body's `reduce`s and `convolve`s appear) at output column
    /// `x`: in the [`Given`] shape, the value the caller computed; in
    /// [`GivenRows`], the weighted sum of the rows it gave.
    ///
    /// # Safety
    /// In the [`Given`] or [`GivenRows`] shape, as [`with_given`] or
    /// [`with_given_rows`] says.
    #[inline(always)]
    unsafe fn reduce_at<S: WindowShape, R: Copy + 'static>(
        &self,
        site: usize,
        x: isize,
        f: impl Fn(i32, i32) -> R,
        op: impl Fn(R, R) -> R,
    ) -> R {
        if S::GIVEN {
            // SAFETY: the caller's contract.
            return unsafe {
                match S::GIVEN_ROWS {
                    3 => given_rows::<R, 3>(site, x),
                    5 => given_rows::<R, 5>(site, x),
                    7 => given_rows::<R, 7>(site, x),
                    _ => given::<R>(site, x),
                }
            };
        }
        self.reduce::<S, R>(f, op)
    }
}

/// An accessor as the CPU backend reads it: host pixels under a read lock,
/// plus the mapping from output pixel to image position.
pub struct AccessorView<'a, T> {
    /// The image's read lock, held for as long as the view lives; `None`
    /// for a row window, whose image a fused pipeline may hold locked for
    /// writing other rows of.
    _lock: Option<ReadGuard<'a, T>>,
    /// The locked pixels. A raw pointer copied out of the guard, so that
    /// reads in the pixel loop load it from the (read-only, `noalias`) view
    /// rather than through the lock's cell, which LLVM cannot prove the
    /// output stores leave unchanged: with it the interior loop vectorises.
    data: *const T,
    len: usize,
    stride: isize,
    /// The image row `data` starts at: 0, or the first row of a
    /// [`crate::row_window`] the view reads instead of the image.
    row0: isize,
    /// Absolute column of output column 0 (region origin minus space origin).
    ox: isize,
    /// Absolute row of output row 0.
    oy: isize,
    /// Region origin and size.
    rx: isize,
    ry: isize,
    rw: isize,
    rh: isize,
    mode: BoundaryMode,
    constant: T,
    /// The interpolating reads' taps (which hold the mapping from the
    /// iteration space), for an accessor with an [`Interpolation`].
    taps: Option<Box<tap_tables::TapTables>>,
}

// SAFETY: the view only reads through `data`, which points into pixels kept
// immutable by the read lock it owns; sharing such reads across threads is
// what `&[T]` allows for `T: Sync`.
unsafe impl<T: Sync> Sync for AccessorView<'_, T> {}

impl<'a, T: Pixel> AccessorView<'a, T> {
    /// The locked pixels as a slice.
    #[inline(always)]
    fn pixels(&self) -> &[T] {
        // SAFETY: `data`/`len` come from the slice the lock guard derefs to,
        // and the guard lives as long as `self`; or from a row window, whose
        // buffer outlives the view (the contract of `with_row_windows`).
        unsafe { std::slice::from_raw_parts(self.data, self.len) }
    }

    /// The view of `acc` for an iteration space with origin `origin` and the
    /// accessor's size (an interpolating accessor then maps one to one).
    pub fn new(acc: &'a Accessor<T>, origin: (usize, usize)) -> Result<Self> {
        let r = acc.region();
        Self::in_space(acc, Rect::new(origin.0, origin.1, r.width, r.height))
    }

    /// The view of `acc` for the iteration space `space`; an interpolating
    /// accessor maps `space` onto its region cell-centred.
    pub fn in_space(acc: &'a Accessor<T>, space: Rect) -> Result<Self> {
        let origin = (space.x, space.y);
        let r = acc.region();
        let img = acc.image();
        r.check_in(img.width(), img.height())?;
        let (lock, (data, len, row0)) = match crate::row_window::window_of(img) {
            Some(window) => (None, window),
            None => {
                let lock = img.read()?;
                let at = (lock.as_ptr(), lock.len(), 0);
                (Some(lock), at)
            }
        };
        Ok(AccessorView {
            _lock: lock,
            data,
            len,
            stride: img.width() as isize,
            row0: row0 as isize,
            ox: r.x as isize - origin.0 as isize,
            oy: r.y as isize - origin.1 as isize,
            rx: r.x as isize,
            ry: r.y as isize,
            rw: r.width as isize,
            rh: r.height as isize,
            mode: acc.boundary().mode(),
            constant: match acc.boundary() {
                Boundary::Constant(c) => c,
                _ => T::default(),
            },
            taps: (acc.interpolation() != Interpolation::None).then(|| {
                Box::new(tap_tables::TapTables::new(
                    acc.interpolation(),
                    (space.width.max(1), space.height.max(1)),
                    (r.width, r.height),
                ))
            }),
        })
    }

    /// The pixel at position `(rel_x, rel_y)` of the region, through the
    /// boundary condition on the axes `M` checks; the others must be inside.
    #[inline(always)]
    fn read_region<M: ReadMode>(&self, rel_x: i64, rel_y: i64) -> T {
        let (w, h) = (self.rw as i64, self.rh as i64);
        let remap = |check: bool, i: i64, n: i64| {
            if check {
                self.mode.remap(i, n)
            } else {
                debug_assert!((0..n).contains(&i), "bug: unchecked axis at {i} of 0..{n}");
                Some(i)
            }
        };
        let (cx, cy) = match (remap(M::CHECK_X, rel_x, w), remap(M::CHECK_Y, rel_y, h)) {
            (Some(cx), Some(cy)) => (cx, cy),
            _ if self.mode == BoundaryMode::Constant => return self.constant,
            _ => {
                debug_assert!(
                    false,
                    "read ({rel_x}, {rel_y}) outside the region with an Undefined boundary"
                );
                (rel_x.clamp(0, w - 1), rel_y.clamp(0, h - 1))
            }
        };
        self.pixels()
            [((cy as isize + self.ry - self.row0) * self.stride + cx as isize + self.rx) as usize]
    }

    /// An interpolating read at offset `(dx, dy)` for output pixel `(x, y)`:
    /// the taps, weights, order of `f64` operations and rounding of
    /// [`crate::interpolate::sample`] (the evaluator's), so the same bits, on the
    /// pixel type's own lanes rather than through [`crate::ir::Value`] and a
    /// fetch closure, with the taps from tables rather than a division, a
    /// `floor` and the kernel's weights per read (together about 150 cycles
    /// per read before). Out of line: one copy per pixel type rather than
    /// per read of every kernel body.
    #[inline(never)]
    fn read_interpolated(
        &self,
        tables: &tap_tables::TapTables,
        x: isize,
        y: isize,
        dx: i32,
        dy: i32,
    ) -> T {
        let (rel_x, rel_y) = self.space_relative(x, y);
        match tables.mode() {
            Interpolation::Nearest | Interpolation::None => {
                self.weigh::<1>(tables, rel_x, rel_y, dx, dy)
            }
            Interpolation::Linear => self.weigh::<2>(tables, rel_x, rel_y, dx, dy),
            Interpolation::Cubic => self.weigh::<4>(tables, rel_x, rel_y, dx, dy),
            Interpolation::Lanczos3 => self.weigh::<6>(tables, rel_x, rel_y, dx, dy),
        }
    }

    /// [`Self::read_interpolated`] inlined for `Nearest` and `Linear`,
    /// whose table reads, checks and one to four products are smaller than
    /// the call; the other modes' reads are called.
    #[inline(always)]
    fn read_interpolated_inline(
        &self,
        tables: &tap_tables::TapTables,
        x: isize,
        y: isize,
        dx: i32,
        dy: i32,
    ) -> T {
        let (rel_x, rel_y) = self.space_relative(x, y);
        match tables.mode() {
            Interpolation::Nearest => self.weigh::<1>(tables, rel_x, rel_y, dx, dy),
            Interpolation::Linear => self.weigh::<2>(tables, rel_x, rel_y, dx, dy),
            _ => self.read_interpolated(tables, x, y, dx, dy),
        }
    }

    /// [`Self::read_interpolated`] where the taps are known tabulated and
    /// inside the region ([`InteriorTapsInside`]): no check and no call,
    /// so nothing in a row loop of such reads stops LLVM from hoisting the
    /// row's taps.
    ///
    /// # Safety
    /// `(x, y)` must be inside the space, `(dx, dy)` within the tables'
    /// reach, and the taps inside the region ([`interpolated_inside`]).
    #[inline(always)]
    unsafe fn read_taps_inside(
        &self,
        tables: &tap_tables::TapTables,
        x: isize,
        y: isize,
        dx: i32,
        dy: i32,
    ) -> T {
        let (rel_x, rel_y) = self.space_relative(x, y);
        // SAFETY: the caller's contract.
        unsafe {
            match tables.mode() {
                Interpolation::Nearest | Interpolation::None => {
                    self.weigh_inside::<1>(tables, rel_x, rel_y, dx, dy)
                }
                Interpolation::Linear => self.weigh_inside::<2>(tables, rel_x, rel_y, dx, dy),
                Interpolation::Cubic => self.weigh_inside::<4>(tables, rel_x, rel_y, dx, dy),
                Interpolation::Lanczos3 => self.weigh_inside::<6>(tables, rel_x, rel_y, dx, dy),
            }
        }
    }

    /// [`Self::weigh`] where the taps are known tabulated and inside.
    ///
    /// # Safety
    /// As [`Self::read_taps_inside`], with `N` the mode's tap count.
    #[inline(always)]
    unsafe fn weigh_inside<const N: usize>(
        &self,
        tables: &tap_tables::TapTables,
        rel_x: i64,
        rel_y: i64,
        dx: i32,
        dy: i32,
    ) -> T {
        // SAFETY: the caller's contract.
        let (tx, ty) = unsafe {
            (
                tables.column_unchecked::<N>(rel_x, dx),
                tables.row_unchecked::<N>(rel_y, dy),
            )
        };
        debug_assert!(
            self.taps_inside::<N>(tx.start, ty.start),
            "bug: taps ({}, {}) of ({rel_x}, {rel_y}) at ({dx}, {dy}) leave the region",
            tx.start,
            ty.start
        );
        self.sum_taps::<N, true>(tx.start, tx.weights, ty.start, ty.weights)
    }

    /// Output pixel `(x, y)` relative to the iteration space's origin, as
    /// the tap tables index it.
    #[inline(always)]
    fn space_relative(&self, x: isize, y: isize) -> (i64, i64) {
        // x + ox is the region-absolute column.
        (
            (x + self.ox - self.rx) as i64,
            (y + self.oy - self.ry) as i64,
        )
    }

    /// An interpolating read of a mode with `N` taps per axis: its taps
    /// from the tables and read unchecked where all lie inside the region,
    /// or [`Self::weigh_near_edges`].
    #[inline(always)]
    fn weigh<const N: usize>(
        &self,
        tables: &tap_tables::TapTables,
        rel_x: i64,
        rel_y: i64,
        dx: i32,
        dy: i32,
    ) -> T {
        if let (Some(tx), Some(ty)) = (tables.column::<N>(rel_x, dx), tables.row::<N>(rel_y, dy)) {
            if self.taps_inside::<N>(tx.start, ty.start) {
                return self.sum_taps::<N, true>(tx.start, tx.weights, ty.start, ty.weights);
            }
        }
        self.weigh_near_edges::<N>(tables, rel_x, rel_y, dx, dy)
    }

    /// The reads [`Self::weigh`] leaves: taps computed rather than
    /// tabulated (the same bits), and read through the boundary condition
    /// unless all lie inside. Out of line, so that the common read stays
    /// small: these are the few pixels near the edges, and offsets beyond
    /// the tables.
    #[inline(never)]
    fn weigh_near_edges<const N: usize>(
        &self,
        tables: &tap_tables::TapTables,
        rel_x: i64,
        rel_y: i64,
        dx: i32,
        dy: i32,
    ) -> T {
        let (tx, ty) = (
            tables.column_computed(rel_x, dx),
            tables.row_computed(rel_y, dy),
        );
        debug_assert!(tx.len == N && ty.len == N, "bug: {N} taps expected");
        let first = |t: &Taps| *t.weights.first_chunk::<N>().expect("N is at most MAX_TAPS");
        let (wx, wy) = (first(&tx), first(&ty));
        if self.taps_inside::<N>(tx.start, ty.start) {
            self.sum_taps::<N, true>(tx.start, &wx, ty.start, &wy)
        } else {
            self.sum_taps::<N, false>(tx.start, &wx, ty.start, &wy)
        }
    }

    /// Whether the `N x N` taps from `(sx, sy)` all lie inside the region.
    #[inline(always)]
    fn taps_inside<const N: usize>(&self, sx: i64, sy: i64) -> bool {
        (0..=self.rw as i64 - N as i64).contains(&sx)
            && (0..=self.rh as i64 - N as i64).contains(&sy)
    }

    /// The weighted sum of the `N x N` taps from `(sx, sy)`, skipping taps
    /// of weight 0, in [`crate::interpolate::sample`]'s order; taps known
    /// `INSIDE` the region are read without the boundary condition's
    /// checks.
    #[inline(always)]
    fn sum_taps<const N: usize, const INSIDE: bool>(
        &self,
        sx: i64,
        wx: &[f64; N],
        sy: i64,
        wy: &[f64; N],
    ) -> T {
        let pixels = self.pixels();
        let mut acc = [0.0f64; 4];
        for (j, &wy) in wy.iter().enumerate() {
            if wy == 0.0 {
                continue;
            }
            let iy = sy + j as i64;
            let mut row = [0.0f64; 4];
            for (i, &wx) in wx.iter().enumerate() {
                if wx == 0.0 {
                    continue;
                }
                let ix = sx + i as i64;
                let v = if INSIDE {
                    let i = ((iy as isize + self.ry - self.row0) * self.stride
                        + ix as isize
                        + self.rx) as usize;
                    debug_assert!(i < pixels.len(), "bug: tap ({ix}, {iy}) beyond the pixels");
                    // SAFETY: the caller checked the taps inside the region,
                    // which is inside the pixels held (checked in `in_space`);
                    // unchecked, so that no panic path in a row loop of reads
                    // keeps LLVM from hoisting the row's taps.
                    unsafe { *pixels.get_unchecked(i) }
                } else {
                    self.read_region::<Border>(ix, iy)
                };
                for (r, l) in row.iter_mut().zip(v.sample_lanes()) {
                    *r += wx * l;
                }
            }
            for (a, r) in acc.iter_mut().zip(row) {
                *a += wy * r;
            }
        }
        T::from_sample_lanes(acc)
    }
}

impl<T: Pixel> CpuRead for AccessorView<'_, T> {
    type Out = T;
    #[inline(always)]
    unsafe fn read<M: ReadMode>(&self, x: isize, y: isize, dx: i32, dy: i32) -> T {
        // SAFETY: the caller's contract, with no affine forms claimed.
        unsafe { self.read_affine::<M>(x, y, dx, dy, None, None) }
    }

    #[inline(always)]
    unsafe fn read_affine<M: ReadMode>(
        &self,
        x: isize,
        y: isize,
        dx: i32,
        dy: i32,
        column: Option<AffinePosition>,
        row: Option<AffinePosition>,
    ) -> T {
        if M::INTERPOLATING {
            if let Some(tables) = &self.taps {
                if M::TAPS_INSIDE {
                    // SAFETY: the caller's contract for `InteriorTapsInside`.
                    return unsafe { self.read_taps_inside(tables, x, y, dx, dy) };
                }
                return self.read_interpolated_inline(tables, x, y, dx, dy);
            }
        }
        if !M::CHECK_X && !M::CHECK_Y {
            // Without a form, in i32, as the body computed `dx` from `x()`:
            // LLVM then folds `x + (2 x() + i - x())` to `2 x + i`. Exact:
            // the CPU backend runs `Interior` only where positions fit in
            // i32, so the body's i32 arithmetic and the exact form agree.
            let along = |p: isize, d: i32, form: Option<AffinePosition>| {
                let wrapped = (p as i32).wrapping_add(d) as isize;
                form.map_or(wrapped, |form| {
                    let exact = affine_position(p, form);
                    debug_assert_eq!(exact, wrapped, "bug: affine form {form:?} at {p}");
                    exact
                })
            };
            let ix = along(x, dx, column) + self.ox;
            let iy = along(y, dy, row) + self.oy;
            let i = (iy - self.row0) * self.stride + ix;
            debug_assert!(
                ix >= self.rx && ix < self.rx + self.rw && iy >= self.ry && iy < self.ry + self.rh,
                "bug: interior read ({ix}, {iy}) outside the region"
            );
            debug_assert!(
                (0..self.len as isize).contains(&i),
                "bug: interior read ({ix}, {iy}) outside the rows held"
            );
            // SAFETY: the caller guarantees the read is inside the region,
            // which is inside the image (checked in `new`), and, for a view
            // of a row window, on a row the window holds (the contract of
            // `with_row_windows`).
            return unsafe { *self.data.add(i as usize) };
        }
        let ix = x + self.ox + dx as isize;
        let iy = y + self.oy + dy as isize;
        if let Some(tables) = &self.taps {
            return self.read_interpolated(tables, x, y, dx, dy);
        }
        self.read_region::<M>((ix - self.rx) as i64, (iy - self.ry) as i64)
    }
}

/// A mask as the CPU backend reads it. `W`, `H` are the size when it is in
/// the mask's type, 0 when it is chosen at run time.
pub struct MaskView<'a, T, const W: usize = 0, const H: usize = 0> {
    coefficients: &'a [T],
    width: usize,
    height: usize,
}

impl<'a, T: Pixel, const W: usize, const H: usize> MaskView<'a, T, W, H> {
    /// The view of `mask`.
    pub fn new(mask: &'a Mask<T, W, H>) -> Self {
        let (width, height) = (mask.width(), mask.height());
        assert!(
            mask.coefficients().len() == width * height
                && (W == 0 || W == width)
                && (H == 0 || H == height),
            "bug: mask invariant broken"
        );
        MaskView {
            coefficients: mask.coefficients(),
            width,
            height,
        }
    }
    /// Width: the type's when it has one, so loops over it have constant bounds.
    #[inline(always)]
    fn w(&self) -> usize {
        if W > 0 {
            W
        } else {
            self.width
        }
    }
    #[inline(always)]
    fn h(&self) -> usize {
        if H > 0 {
            H
        } else {
            self.height
        }
    }
}

impl<T: Pixel, const W: usize, const H: usize> CpuRead for MaskView<'_, T, W, H> {
    type Out = T;
    #[inline(always)]
    unsafe fn read<M: ReadMode>(&self, _x: isize, _y: isize, dx: i32, dy: i32) -> T {
        // SAFETY: `new` checked that the size is `w() x h()`.
        unsafe { self.coefficient(self.w(), self.h(), dx, dy) }
    }

    #[inline(always)]
    unsafe fn read_in<M: ReadMode, S: WindowShape>(
        &self,
        _x: isize,
        _y: isize,
        dx: i32,
        dy: i32,
        _column: Option<AffinePosition>,
        _row: Option<AffinePosition>,
    ) -> T {
        let (w, h) = self.size_in::<S>();
        // SAFETY: `new` checked the type's size, the caller promises the
        // launch's shape (see `CpuWindow`).
        unsafe { self.coefficient(w, h, dx, dy) }
    }
}

impl<T: Pixel, const W: usize, const H: usize> MaskView<'_, T, W, H> {
    /// The coefficient at `(dx, dy)` of the mask, whose size is `w x h`
    /// (constants where known, so that the index folds); 0 outside.
    ///
    /// # Safety
    /// `w x h` must be the mask's size.
    #[inline(always)]
    unsafe fn coefficient(&self, w: usize, h: usize, dx: i32, dy: i32) -> T {
        debug_assert_eq!(
            w * h,
            self.coefficients.len(),
            "bug: mask read at a wrong size"
        );
        let (w, h) = (w as isize, h as isize);
        let ix = dx as isize + w / 2;
        let iy = dy as isize + h / 2;
        if ix < 0 || iy < 0 || ix >= w || iy >= h {
            return T::default();
        }
        // SAFETY: `coefficients.len() == w * h` (the caller's contract) and
        // `0 <= ix < w`, `0 <= iy < h` here. Unchecked, so that with a size
        // fixed in the type the read folds to a constant offset.
        unsafe { *self.coefficients.get_unchecked((iy * w + ix) as usize) }
    }
}

impl<T: Pixel, const W: usize, const H: usize> MaskView<'_, T, W, H> {
    /// True when the window loop is written out: the size is a constant
    /// (in the type, or the launch's shape) and the launch does not roll.
    #[inline(always)]
    fn known<S: WindowShape>() -> bool {
        ((W > 0 && H > 0) || S::W > 0) && !S::ROLLED
    }

    /// The size as the launch knows it: the type's, else the launch's shape,
    /// else the value's.
    #[inline(always)]
    fn size_in<S: WindowShape>(&self) -> (usize, usize) {
        if (W == 0 || H == 0) && S::W > 0 {
            debug_assert!(
                (self.width, self.height) == (S::W, S::H),
                "bug: {}x{} mask in a {}x{} launch",
                self.width,
                self.height,
                S::W,
                S::H
            );
            return (S::W, S::H);
        }
        (self.w(), self.h())
    }
}

impl<T: Pixel, const W: usize, const H: usize> CpuWindow for MaskView<'_, T, W, H> {
    #[inline(always)]
    fn reduce<S: WindowShape, R>(&self, f: impl Fn(i32, i32) -> R, op: impl Fn(R, R) -> R) -> R {
        let (w, h) = self.size_in::<S>();
        if Self::known::<S>() {
            return crate::window_walk::fold(w, h, f, op);
        }
        let (cx, cy) = ((w / 2) as i32, (h / 2) as i32);
        if S::ROLLED {
            // One call site of `f`, which LLVM then inlines (see
            // `WindowShape::ROLLED`).
            let mut acc: Option<R> = None;
            for iy in 0..h {
                for ix in 0..w {
                    let v = f(ix as i32 - cx, iy as i32 - cy);
                    acc = Some(match acc.take() {
                        None => v,
                        Some(a) => op(a, v),
                    });
                }
            }
            return acc.unwrap_or_else(|| unreachable!("bug: empty mask reached the CPU backend"));
        }
        // Every position of a mask is visited: start from the first one and
        // combine the rest, with no state for the optimiser to track.
        let mut acc = f(-cx, -cy);
        for iy in 0..h {
            for ix in 0..w {
                if ix == 0 && iy == 0 {
                    continue;
                }
                acc = op(acc, f(ix as i32 - cx, iy as i32 - cy));
            }
        }
        acc
    }
    #[inline(always)]
    fn for_each<S: WindowShape>(&self, mut f: impl FnMut(i32, i32)) {
        let (w, h) = self.size_in::<S>();
        if Self::known::<S>() {
            return crate::window_walk::each(w, h, f);
        }
        let (cx, cy) = ((w / 2) as i32, (h / 2) as i32);
        for iy in 0..h {
            for ix in 0..w {
                f(ix as i32 - cx, iy as i32 - cy);
            }
        }
    }
}

/// A domain as the CPU backend reads it.
pub struct DomainView {
    width: usize,
    height: usize,
    enabled: Vec<bool>,
}

impl DomainView {
    /// The view of `domain`.
    pub fn new<const W: usize, const H: usize>(domain: &Domain<W, H>) -> Self {
        DomainView {
            width: domain.width(),
            height: domain.height(),
            enabled: domain.enabled().to_vec(),
        }
    }

    /// Checks the launch's promise (see [`CpuWindow`]) in debug builds.
    #[inline(always)]
    fn check_shape<S: WindowShape>(&self) {
        debug_assert!(
            (self.width, self.height) == (S::W, S::H) && self.enabled.iter().all(|&e| e),
            "bug: {}x{} domain in a full {}x{} launch",
            self.width,
            self.height,
            S::W,
            S::H
        );
    }
}

impl CpuWindow for DomainView {
    #[inline(always)]
    fn reduce<S: WindowShape, R>(&self, f: impl Fn(i32, i32) -> R, op: impl Fn(R, R) -> R) -> R {
        if S::W > 0 {
            self.check_shape::<S>();
            return crate::window_walk::fold(S::W, S::H, f, op);
        }
        let mut acc: Option<R> = None;
        self.for_each::<S>(|dx, dy| {
            let v = f(dx, dy);
            acc = Some(match acc.take() {
                None => v,
                Some(a) => op(a, v),
            });
        });
        match acc {
            Some(a) => a,
            None => unreachable!("bug: empty window reached the CPU backend"),
        }
    }
    #[inline(always)]
    fn for_each<S: WindowShape>(&self, mut f: impl FnMut(i32, i32)) {
        if S::W > 0 {
            self.check_shape::<S>();
            return crate::window_walk::each(S::W, S::H, f);
        }
        let (cx, cy) = ((self.width / 2) as i32, (self.height / 2) as i32);
        for iy in 0..self.height {
            for ix in 0..self.width {
                if self.enabled[iy * self.width + ix] {
                    f(ix as i32 - cx, iy as i32 - cy);
                }
            }
        }
    }
}
