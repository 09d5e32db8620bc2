//! An `iterate` body that is one `exp` weight and running sums of it, run
//! with the sums in registers.
//!
//! A bilateral filter's body `w = m · exp(-(v - c)² · s); num += w · v;
//! den += w` runs, fused ([`super::fuse`]), as three passes per tap over a
//! block of [`super::WALK_LANES`] columns: the weight's row, then each
//! update loading and storing its variable's row. Each pass is a call
//! through the tape interpreter, and two of the three only move memory
//! around a multiply-add. Where, after fusion, the body computes nothing
//! but that one weight (an [`Op::ExpScaled`] of accessor reads and rows
//! the body does not assign) and every assignment adds the weight, or the
//! weight times an accessor read or such a row, to its variable, the walk
//! runs here instead: for each block of [`LANES`] columns, every tap in
//! the direct path's order, the weight and all sums held in registers
//! across the taps, each variable loaded and stored once per block (as a
//! compiled window loop, Halide's schedule of the same body).
//!
//! Every lane computes the same f32 operations on the same operands, in
//! the same order, as the fused passes it replaces ([`super::fuse`]'s
//! `exp_square`, [`crate::cpu::exp::exp_scaled_row`], `update_product` and
//! `update`): the same bits, `NaN`s included (checked in the tests below).

use super::fuse::Arg;
use super::{scalar_op, Bin, Op, Tape, Update};
use crate::cpu::exp::exp_each;
use crate::cpu::simd::avx2_fma;
use std::cell::Cell;
use std::ops::Range;

/// Columns per block: two vectors of eight, whose `exp`s are independent
/// chains the CPU overlaps.
pub(super) const LANES: usize = 16;

/// The most variables a body may sum into here (each a register pair).
const MAX_SUMS: usize = 3;

/// A row the fused pass reads.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Src {
    /// The accessor slot's gathered window rows, at the tap.
    Read(usize),
    /// A row of the tape around the walk that the walk does not assign.
    Outer(usize),
}

/// A value the same in every lane of a tap.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Scalar {
    Const(f32),
    Param(usize),
    /// The mask coefficient at the tap.
    Coef,
    /// A value of the tap ([`super::tap`]).
    Tap(usize),
}

impl Scalar {
    /// The value at a tap of coefficient `coef` and values `tap`.
    fn value(self, params: &[f32], coef: f32, tap: &[f32]) -> f32 {
        match self {
            Scalar::Const(c) => c,
            Scalar::Param(p) => params[p],
            Scalar::Coef => coef,
            Scalar::Tap(k) => tap[k],
        }
    }
}

/// A walk whose body is a weight `exp(x · s + t) · k` and sums of it:
/// `x` is `(a op b)²` or `a`, and sum `i` adds the weight (times a factor
/// row) to the variable at `sums[i].0`.
#[derive(Clone, Debug, PartialEq)]
pub(super) struct Accumulate {
    a: Src,
    square: Option<(Bin, Src)>,
    /// `s`, negated where `neg` (1 where `None`).
    s: Option<Scalar>,
    neg: bool,
    /// `t`, negated where its flag is set (0 where `None`).
    t: Option<(Scalar, bool)>,
    /// `k` (1 where `None`).
    k: Option<Scalar>,
    sums: Vec<(usize, Option<Src>)>,
}

/// The [`Accumulate`] form of a fused walk body (`tape`, its `skip` steps,
/// in-place `updates` and `carried` copies), if it has it.
pub(super) fn recognise(
    tape: &Tape,
    skip: &[bool],
    updates: &[Update],
    carried: &[(usize, usize)],
) -> Option<Accumulate> {
    if !carried.is_empty() || updates.is_empty() || updates.len() > MAX_SUMS {
        return None;
    }
    let mut computed = (0..tape.ops.len()).filter(|&i| {
        !skip[i] && !scalar_op(&tape.ops[i]) && !matches!(tape.ops[i], Op::Read(_) | Op::Outer(_))
    });
    let weight = computed.next()?;
    computed.next().is_none().then_some(())?;
    let Op::ExpScaled { a, neg, s, t, k } = tape.ops[weight] else {
        return None;
    };
    // Rows the updates write change from tap to tap: not read here.
    let src = |j: usize| match tape.ops[j] {
        Op::Read(a) => Some(Src::Read(a)),
        Op::Outer(r) if updates.iter().all(|u| u.home != r) => Some(Src::Outer(r)),
        _ => None,
    };
    let scalar = |j: Option<usize>| match j.map(|j| tape.ops[j]) {
        None => Some(None),
        Some(Op::Const(c)) => Some(Some(Scalar::Const(c))),
        Some(Op::Param(p)) => Some(Some(Scalar::Param(p))),
        Some(Op::Coef) => Some(Some(Scalar::Coef)),
        Some(Op::Tap(v)) => Some(Some(Scalar::Tap(v))),
        Some(_) => None,
    };
    let (a, square) = match a {
        Arg::Row(a) => (src(a)?, None),
        // `min` and `max` of a NaN take the other operand: left to the
        // passes, whose compiled form is the reference.
        Arg::Square(Bin::Min | Bin::Max, ..) => return None,
        Arg::Square(op, a, b) => (src(a)?, Some((op, src(b)?))),
    };
    let sums = updates
        .iter()
        .map(|u| {
            (u.op == Bin::Add).then_some(())?;
            let factor = match u.product {
                None if u.x == weight => None,
                Some((p, q)) if p == weight => Some(src(q)?),
                Some((p, q)) if q == weight => Some(src(p)?),
                _ => return None,
            };
            Some((u.home, factor))
        })
        .collect::<Option<Vec<_>>>()?;
    let t = match t {
        None => None,
        Some((t, neg)) => Some((scalar(Some(t))??, neg)),
    };
    Some(Accumulate {
        a,
        square,
        s: scalar(s)?,
        neg,
        t,
        k: scalar(k)?,
        sums,
    })
}

/// Where the block loop takes a tap's weights from ([`super::mirror`]):
/// rows of stored weights, at the block's columns. A row one tap writes
/// and another reads is shared, so it is one of cells.
pub(super) enum Share<'r> {
    /// It computes them.
    Compute,
    /// It computes them and stores them.
    Store(&'r [Cell<f32>]),
    /// It loads them (another tap's, computed at an earlier row or ahead).
    Load(&'r [Cell<f32>]),
    /// It computes and stores them, and adds them to no sum: the tap runs
    /// again in order, loading them.
    Ahead(&'r [Cell<f32>]),
}

/// A row as the block loop reads it: from the tap's column (`moves`) or
/// from the block's.
#[derive(Clone, Copy)]
struct Row<'a> {
    lanes: &'a [f32],
    moves: bool,
}

impl Row<'_> {
    #[inline(always)]
    fn at(self, shift: usize, c: usize) -> [f32; LANES] {
        let o = if self.moves { shift + c } else { c };
        self.lanes[o..o + LANES]
            .try_into()
            .expect("a block of lanes")
    }
}

/// A tap: the offset of its column in the gathered rows, `s`, `t` and
/// `k`.
type Tap = (usize, f32, f32, f32);

impl Accumulate {
    /// The weight's scalars `(s, t, k)` at a tap of coefficient `coef`
    /// and values `tap`, signs applied.
    pub(super) fn scalars(&self, params: &[f32], coef: f32, tap: &[f32]) -> (f32, f32, f32) {
        let value = |s: Scalar| s.value(params, coef, tap);
        let s = self.s.map_or(1.0, value);
        // `(-x) · s` is `x · (-s)` exactly: rounding is symmetric;
        // `x - t` is `x + (-t)` exactly. Without a term, `+0` leaves the
        // `exp` unchanged (see `exp_scaled_row`).
        let s = if self.neg { -s } else { s };
        let t = self
            .t
            .map_or(0.0, |(t, neg)| if neg { -value(t) } else { value(t) });
        (s, t, self.k.map_or(1.0, value))
    }

    /// The accessor slot the weight reads at the tap.
    pub(super) fn read_slot(&self) -> Option<usize> {
        match self.a {
            Src::Read(a) => Some(a),
            Src::Outer(_) => None,
        }
    }

    /// The row of the tape around the walk that the weight's square
    /// combines with the tap's read, where the square is the same for the
    /// operands swapped (`-`, `+`, `·`).
    pub(super) fn mirrored_centre(&self) -> Option<usize> {
        match self.square? {
            (Bin::Sub | Bin::Add | Bin::Mul, Src::Outer(r)) => Some(r),
            _ => None,
        }
    }

    /// The square's operation (`Sub` without one: never asked then).
    pub(super) fn square_op(&self) -> Bin {
        self.square.map_or(Bin::Sub, |(op, _)| op)
    }

    /// Runs the walk at `taps` (each the offset of its column in the
    /// gathered `reads`, its coefficient and its values, in the direct
    /// path's order) over the output columns `cols`, whose length is a
    /// multiple of [`LANES`], updating the variables' rows in `outer`;
    /// each tap's weights taken as its `shares` says (one per tap).
    pub(super) fn run(
        &self,
        params: &[f32],
        reads: &[Vec<f32>],
        taps: &[(usize, f32, &[f32])],
        shares: &[Share],
        outer: &mut [Vec<f32>],
        cols: Range<usize>,
    ) {
        let taps: Vec<Tap> = taps
            .iter()
            .map(|&(shift, coef, tap)| {
                let (s, t, k) = self.scalars(params, coef, tap);
                (shift, s, t, k)
            })
            .collect();
        assert!(
            shares.len() == taps.len()
                && shares.iter().all(|s| match s {
                    Share::Compute => true,
                    Share::Store(r) | Share::Load(r) | Share::Ahead(r) => r.len() >= cols.end,
                }),
            "bug: shared weights that do not cover the blocks"
        );
        // The variables' rows leave `outer` while the others are read.
        let mut accs: Vec<Vec<f32>> = self
            .sums
            .iter()
            .map(|&(home, _)| std::mem::take(&mut outer[home]))
            .collect();
        let row = |s: Src| match s {
            Src::Read(a) => Row {
                lanes: &reads[a],
                moves: true,
            },
            Src::Outer(r) => Row {
                lanes: &outer[r],
                moves: false,
            },
        };
        let a = row(self.a);
        let square = self.square.map(|(op, b)| (op, row(b)));
        let factors: Vec<Option<Row>> = self.sums.iter().map(|&(_, f)| f.map(row)).collect();
        let term = self.t.is_some();
        match accs.len() {
            1 => sums::<1>(a, square, term, &taps, shares, &factors, &mut accs, cols),
            2 => sums::<2>(a, square, term, &taps, shares, &factors, &mut accs, cols),
            3 => sums::<3>(a, square, term, &taps, shares, &factors, &mut accs, cols),
            n => unreachable!("bug: {n} sums in registers"),
        }
        for (&(home, _), acc) in self.sums.iter().zip(accs) {
            outer[home] = acc;
        }
    }
}

/// The block loop for `N` sums: per block, every tap's weight and its
/// additions to the sums, which stay in registers across the taps.
#[inline(always)]
fn blocks<const N: usize>(
    a: Row,
    square: Option<(Bin, Row)>,
    taps: &[Tap],
    shares: &[Share],
    factors: &[Option<Row>],
    accs: &mut [Vec<f32>],
    cols: Range<usize>,
) {
    let factors: [Option<Row>; N] = std::array::from_fn(|u| factors[u]);
    for c in cols.step_by(LANES) {
        let mut acc: [[f32; LANES]; N] =
            std::array::from_fn(|u| accs[u][c..c + LANES].try_into().expect("a block of lanes"));
        for (&(shift, s, t, k), share) in taps.iter().zip(shares.iter()) {
            if let Share::Load(r) = share {
                let w: [f32; LANES] = std::array::from_fn(|l| r[c + l].get());
                add_weights(&mut acc, w, factors, shift, c);
                continue;
            }
            let x = match square {
                None => a.at(shift, c).map(|a| a * s + t),
                Some((op, b)) => {
                    let (a, b) = (a.at(shift, c), b.at(shift, c));
                    let d: [f32; LANES] = match op {
                        Bin::Add => std::array::from_fn(|l| a[l] + b[l]),
                        Bin::Sub => std::array::from_fn(|l| a[l] - b[l]),
                        Bin::Mul => std::array::from_fn(|l| a[l] * b[l]),
                        Bin::Div => std::array::from_fn(|l| a[l] / b[l]),
                        Bin::Min | Bin::Max => unreachable!("bug: min or max in registers"),
                    };
                    d.map(|d| d * d * s + t)
                }
            };
            let mut w = [0.0f32; LANES];
            exp_each(x.into_iter(), k, &mut w);
            if let Share::Store(r) | Share::Ahead(r) = share {
                r[c..c + LANES].iter().zip(w).for_each(|(r, w)| r.set(w));
            }
            if let Share::Ahead(_) = share {
                continue;
            }
            add_weights(&mut acc, w, factors, shift, c);
        }
        for (row, acc) in accs.iter_mut().zip(acc) {
            row[c..c + LANES].copy_from_slice(&acc);
        }
    }
}

/// Adds a tap's weights `w` (times the factor rows at the tap) to the sums.
#[inline(always)]
fn add_weights<const N: usize>(
    acc: &mut [[f32; LANES]; N],
    w: [f32; LANES],
    factors: [Option<Row>; N],
    shift: usize,
    c: usize,
) {
    for (acc, f) in acc.iter_mut().zip(factors) {
        match f {
            None => acc.iter_mut().zip(w).for_each(|(v, w)| *v += w),
            Some(f) => {
                let f = f.at(shift, c);
                acc.iter_mut()
                    .zip(w.iter().zip(f))
                    .for_each(|(v, (&w, f))| *v += w * f);
            }
        }
    }
}

/// [`blocks`] for `N` sums: [`wide`] where the CPU has AVX2 and FMA
/// (which adds the taps' `t` only where the body has a `term`).
#[allow(clippy::too_many_arguments)] // the block loop's parts
fn sums<const N: usize>(
    a: Row,
    square: Option<(Bin, Row)>,
    term: bool,
    taps: &[Tap],
    shares: &[Share],
    factors: &[Option<Row>],
    accs: &mut [Vec<f32>],
    cols: Range<usize>,
) {
    #[cfg(target_arch = "x86_64")]
    if avx2_fma() {
        // SAFETY: the CPU supports AVX2 and FMA.
        return unsafe { wide::pick::<N>(a, square, term, taps, shares, factors, accs, cols) };
    }
    let _ = term;
    blocks::<N>(a, square, taps, shares, factors, accs, cols)
}

/// [`blocks`] written with AVX2 and FMA instructions, whose values are
/// those of the scalar operations (each product and sum rounded as
/// there), compiled once per form of the weight's argument and per set
/// of sums that have a factor: with those decided at run time inside the
/// tap loop, the compiler spilled the sums to memory and tested the form
/// at every tap (a bilateral filter's loop took 1.5x its time).
#[cfg(target_arch = "x86_64")]
mod wide {
    use super::{Bin, Row, Share, Tap, LANES};
    use crate::cpu::exp::{exp_lane, exp_normal8};
    use std::arch::x86_64::*;
    use std::ops::Range;

    /// Vectors of eight lanes per step: two independent `exp` chains the
    /// CPU overlaps ([`LANES`] columns; one was measured 5% slower).
    const HALVES: usize = LANES / 8;

    /// The weight's argument is `a · s`.
    const PLAIN: u8 = 0;
    /// It is `(a - b)² · s` (a bilateral filter's).
    const DIFF: u8 = 1;
    /// It is `(a op b)² · s`, `op` chosen per block.
    const OTHER: u8 = 2;

    /// Runs [`run`] compiled for the form of `square` and the sums of
    /// `factors` that have one.
    ///
    /// # Safety
    /// The CPU must support AVX2 and FMA.
    #[allow(clippy::too_many_arguments)] // the block loop's parts
    pub(super) unsafe fn pick<const N: usize>(
        a: Row,
        square: Option<(Bin, Row)>,
        term: bool,
        taps: &[Tap],
        shares: &[Share],
        factors: &[Option<Row>],
        accs: &mut [Vec<f32>],
        cols: Range<usize>,
    ) {
        assert!(
            accs.len() == N && factors.len() == N && cols.len().is_multiple_of(LANES),
            "bug: {N} sums over columns {cols:?}"
        );
        // Every load below lies within its row: checked here once.
        let last = taps.iter().map(|t| t.0).max().unwrap_or(0);
        let fits = |r: Row| r.lanes.len() >= cols.end + if r.moves { last } else { 0 };
        let rows = [Some(a), square.map(|(_, b)| b)]
            .into_iter()
            .chain(factors.iter().copied());
        assert!(
            rows.flatten().all(fits) && accs.iter().all(|r| r.len() >= cols.end),
            "bug: a row shorter than its block's loads"
        );
        let (form, op, b) = match square {
            None => (PLAIN, Bin::Add, a),
            Some((Bin::Sub, b)) => (DIFF, Bin::Sub, b),
            Some((Bin::Min | Bin::Max, _)) => unreachable!("bug: min or max in registers"),
            Some((op, b)) => (OTHER, op, b),
        };
        // `Accumulate::run` checked that the shared rows cover `cols`.
        // Cells may be written through their pointers.
        let shares: Vec<Shared> = shares
            .iter()
            .map(|s| match s {
                Share::Compute => Shared::Compute,
                Share::Store(r) => Shared::Store(r.as_ptr().cast_mut().cast()),
                Share::Load(r) => Shared::Load(r.as_ptr().cast()),
                Share::Ahead(r) => Shared::Ahead(r.as_ptr().cast_mut().cast()),
            })
            .collect();
        let mask = factors
            .iter()
            .enumerate()
            .fold(0u8, |m, (u, f)| m | (u8::from(f.is_some()) << u));
        let factors: [Row; N] = std::array::from_fn(|u| factors[u].unwrap_or(a));
        macro_rules! by_mask {
            ($($m:literal)*) => {
                match (form, term, mask) {
                    $(
                        // SAFETY: the CPU supports AVX2 and FMA (the
                        // caller's contract); the loads fit (above).
                        (PLAIN, false, $m) => unsafe { run::<N, PLAIN, false, $m>(a, b, op, taps, &shares, factors, accs, cols) },
                        (DIFF, false, $m) => unsafe { run::<N, DIFF, false, $m>(a, b, op, taps, &shares, factors, accs, cols) },
                        (_, false, $m) => unsafe { run::<N, OTHER, false, $m>(a, b, op, taps, &shares, factors, accs, cols) },
                        (PLAIN, true, $m) => unsafe { run::<N, PLAIN, true, $m>(a, b, op, taps, &shares, factors, accs, cols) },
                        (DIFF, true, $m) => unsafe { run::<N, DIFF, true, $m>(a, b, op, taps, &shares, factors, accs, cols) },
                        (_, true, $m) => unsafe { run::<N, OTHER, true, $m>(a, b, op, taps, &shares, factors, accs, cols) },
                    )*
                    _ => unreachable!("bug: factor mask {mask} of {N} sums"),
                }
            };
        }
        match N {
            1 => by_mask!(0 1),
            2 => by_mask!(0 1 2 3),
            _ => by_mask!(0 1 2 3 4 5 6 7),
        }
    }

    /// [`Share`] as the block loop uses it: rows as pointers to their
    /// first lane, each covering the loop's columns.
    #[derive(Clone, Copy)]
    enum Shared {
        Compute,
        Store(*mut f32),
        Load(*const f32),
        Ahead(*mut f32),
    }

    /// Eight lanes of `r` at `o` lanes from its start.
    ///
    /// # Safety
    /// AVX; `o + 8 <= r.lanes.len()`.
    #[target_feature(enable = "avx2,fma")]
    #[inline]
    unsafe fn load(r: Row, o: usize) -> __m256 {
        debug_assert!(o + 8 <= r.lanes.len());
        // SAFETY: the caller's.
        unsafe { _mm256_loadu_ps(r.lanes.as_ptr().add(o)) }
    }

    /// The block loop of [`super::blocks`] for the argument form `FORM`,
    /// with the taps' `t` added where `TERM`, and the sums with a factor
    /// set in `MASK` (bit `u` for sum `u`).
    ///
    /// # Safety
    /// The CPU must support AVX2 and FMA; every row holds the lanes its
    /// loads read over `cols` at every tap ([`pick`] checks).
    #[target_feature(enable = "avx2,fma")]
    #[allow(clippy::too_many_arguments)]
    unsafe fn run<const N: usize, const FORM: u8, const TERM: bool, const MASK: u8>(
        a: Row,
        b: Row,
        op: Bin,
        taps: &[Tap],
        shares: &[Shared],
        factors: [Row; N],
        accs: &mut [Vec<f32>],
        cols: Range<usize>,
    ) {
        let shift_of = |r: Row, shift: usize| if r.moves { shift } else { 0 };
        for c in cols.step_by(8 * HALVES) {
            let mut acc = [[_mm256_setzero_ps(); HALVES]; N];
            for (acc, row) in acc.iter_mut().zip(accs.iter()) {
                for (h, v) in acc.iter_mut().enumerate() {
                    // SAFETY: `pick` checked the sums' rows.
                    *v = unsafe { _mm256_loadu_ps(row.as_ptr().add(c + 8 * h)) };
                }
            }
            for (&(shift, s, t, k), &share) in taps.iter().zip(shares) {
                // Written out per sum: as a loop, the sums went to memory.
                macro_rules! add {
                    ($w:ident, $u:literal) => {
                        if $u < N {
                            let f = factors[$u];
                            let of = shift_of(f, shift) + c;
                            for h in 0..HALVES {
                                let add = if MASK & (1 << $u) != 0 {
                                    _mm256_mul_ps($w[h], unsafe { load(f, of + 8 * h) })
                                } else {
                                    $w[h]
                                };
                                acc[$u][h] = _mm256_add_ps(acc[$u][h], add);
                            }
                        }
                    };
                }
                if let Shared::Load(r) = share {
                    let mut w = [_mm256_setzero_ps(); HALVES];
                    for (h, w) in w.iter_mut().enumerate() {
                        // SAFETY: the row covers the loop's columns.
                        *w = unsafe { _mm256_loadu_ps(r.add(c + 8 * h)) };
                    }
                    add!(w, 0);
                    add!(w, 1);
                    add!(w, 2);
                    continue;
                }
                let (sv, tv, kv) = (_mm256_set1_ps(s), _mm256_set1_ps(t), _mm256_set1_ps(k));
                let (oa, ob) = (shift_of(a, shift) + c, shift_of(b, shift) + c);
                let mut x = [_mm256_setzero_ps(); HALVES];
                let mut w = x;
                let mut inside = _mm256_castsi256_ps(_mm256_set1_epi32(-1));
                for h in 0..HALVES {
                    // SAFETY (here and below): AVX2 and FMA, and the
                    // loads fit, as the caller guarantees.
                    let av = unsafe { load(a, oa + 8 * h) };
                    // Each product and sum rounded: no fused multiply-add.
                    let scaled = if FORM == PLAIN {
                        _mm256_mul_ps(av, sv)
                    } else {
                        let bv = unsafe { load(b, ob + 8 * h) };
                        let d = match (FORM, op) {
                            (DIFF, _) | (_, Bin::Sub) => _mm256_sub_ps(av, bv),
                            (_, Bin::Add) => _mm256_add_ps(av, bv),
                            (_, Bin::Mul) => _mm256_mul_ps(av, bv),
                            (_, Bin::Div) => _mm256_div_ps(av, bv),
                            (_, Bin::Min | Bin::Max) => {
                                unreachable!("bug: min or max in registers")
                            }
                        };
                        _mm256_mul_ps(_mm256_mul_ps(d, d), sv)
                    };
                    // Without a term `t` is 0: not added (a register and
                    // an instruction fewer; the bits are the same).
                    x[h] = if TERM {
                        _mm256_add_ps(scaled, tv)
                    } else {
                        scaled
                    };
                    let (v, ins) = unsafe { exp_normal8(x[h]) };
                    w[h] = _mm256_mul_ps(v, kv);
                    inside = _mm256_and_ps(inside, ins);
                }
                // Lanes outside the normal range: the general form, rarely.
                if _mm256_movemask_ps(inside) != 0xff {
                    for h in 0..HALVES {
                        let mut l = [0.0f32; 8];
                        // SAFETY: `l` holds eight f32s.
                        unsafe { _mm256_storeu_ps(l.as_mut_ptr(), x[h]) };
                        let l = l.map(|x| exp_lane(x) * k);
                        // SAFETY: as above.
                        w[h] = unsafe { _mm256_loadu_ps(l.as_ptr()) };
                    }
                }
                if let Shared::Store(r) | Shared::Ahead(r) = share {
                    for (h, w) in w.iter().enumerate() {
                        // SAFETY: the row covers the loop's columns.
                        unsafe { _mm256_storeu_ps(r.add(c + 8 * h), *w) };
                    }
                    if let Shared::Ahead(_) = share {
                        continue;
                    }
                }
                add!(w, 0);
                add!(w, 1);
                add!(w, 2);
            }
            for (acc, row) in acc.iter().zip(accs.iter_mut()) {
                for (h, v) in acc.iter().enumerate() {
                    // SAFETY: `pick` checked the sums' rows.
                    unsafe { _mm256_storeu_ps(row.as_mut_ptr().add(c + 8 * h), *v) };
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cpu::exp::exp_scaled_row;
    use crate::cpu::split::fuse::{exp_square, update_product};
    use crate::cpu::split::{update, Side};

    /// Three gathered window rows of `n` lanes and a centre row: smooth
    /// values with NaN, infinities, zeros of both signs, subnormals and
    /// values whose scaled squares leave `exp`'s normal range.
    fn rows(n: usize) -> (Vec<f32>, Vec<f32>) {
        let specials = [
            f32::NAN,
            f32::INFINITY,
            f32::NEG_INFINITY,
            0.0,
            -0.0,
            1.0e-40,
            -3.0e-42,
            f32::MIN_POSITIVE,
            30.0,
            -95.0,
        ];
        let mut reads: Vec<f32> = (0..3 * n).map(|i| (i as f32 * 0.37).sin() * 2.5).collect();
        for (j, &v) in specials.iter().enumerate() {
            reads[7 * j + 3] = v;
        }
        let mut centre: Vec<f32> = (0..n).map(|i| (i as f32 * 0.13).cos()).collect();
        centre[20] = f32::NAN;
        centre[33] = 1.0e-39;
        centre[34] = f32::INFINITY;
        (reads, centre)
    }

    fn same(got: f32, want: f32) -> bool {
        got.to_bits() == want.to_bits() || (got.is_nan() && want.is_nan())
    }

    /// The block loop against the passes it replaces (the weight's row,
    /// then each sum's update), tap by tap over three blocks, for both
    /// forms of the weight, every binary op of a square, scalars of every
    /// kind, with and without an added term, and one to three sums: the
    /// same bits in every lane, and the columns outside the blocks
    /// untouched.
    #[test]
    fn sums_in_registers_give_the_bits_of_the_passes() {
        let (width, cols) = (3, 3 * LANES);
        let n = cols + width - 1 + 5;
        let (reads, centre) = rows(n);
        let reads = vec![reads];
        // Per tap: two values, the second large enough to push weights
        // out of `exp`'s normal range.
        let values: Vec<[f32; 2]> = (0..3 * width)
            .map(|q| [-0.125 * q as f32, 10.0 * q as f32 - 40.0])
            .collect();
        let taps: Vec<(usize, f32, &[f32])> = (0..3)
            .flat_map(|k| (0..width).map(move |i| (k, i)))
            .map(|(k, i)| {
                let coef = 0.5 + (k * width + i) as f32 * 0.1;
                (k * n + i, coef, &values[k * width + i][..])
            })
            .collect();
        let params = [-7.5, 0.25];
        let scalars = [
            (Some(Scalar::Param(0)), false, None, Some(Scalar::Coef)),
            (Some(Scalar::Param(1)), true, None, None),
            (Some(Scalar::Coef), true, None, Some(Scalar::Const(-3.0))),
            (None, false, None, Some(Scalar::Param(1))),
            (Some(Scalar::Const(60.0)), false, None, None),
            (
                Some(Scalar::Param(1)),
                true,
                Some((Scalar::Tap(0), false)),
                None,
            ),
            (
                Some(Scalar::Tap(0)),
                false,
                Some((Scalar::Tap(1), true)),
                Some(Scalar::Coef),
            ),
            (
                None,
                true,
                Some((Scalar::Param(0), false)),
                Some(Scalar::Tap(0)),
            ),
        ];
        let ops = [Bin::Add, Bin::Sub, Bin::Mul, Bin::Div];
        let squares = ops
            .iter()
            .map(|&op| Some((op, Src::Outer(0))))
            .chain([None]);
        let all_sums = [
            vec![(1, None)],
            vec![(1, Some(Src::Read(0))), (2, None)],
            vec![(3, Some(Src::Outer(0))), (1, None), (2, Some(Src::Read(0)))],
        ];
        for square in squares {
            for (s, neg, t, k) in scalars {
                for sums in &all_sums {
                    let acc = Accumulate {
                        a: Src::Read(0),
                        square,
                        s,
                        neg,
                        t,
                        k,
                        sums: sums.clone(),
                    };
                    let start: Vec<Vec<f32>> = (0..4)
                        .map(|r| match r {
                            0 => centre[..n].to_vec(),
                            _ => (0..n).map(|i| r as f32 * 0.5 - i as f32 * 0.01).collect(),
                        })
                        .collect();
                    let mut got = start.clone();
                    let shares: Vec<Share> = taps.iter().map(|_| Share::Compute).collect();
                    acc.run(&params, &reads, &taps, &shares, &mut got, 0..cols);
                    let mut want = start.clone();
                    let mut w = vec![0.0; cols];
                    for &(shift, coef, tap) in &taps {
                        let value = |s: Scalar| s.value(&params, coef, tap);
                        let sv = s.map_or(1.0, value);
                        let sv = if neg { -sv } else { sv };
                        let tv = t.map_or(0.0, |(t, neg)| if neg { -value(t) } else { value(t) });
                        let kv = k.map_or(1.0, value);
                        let a = &reads[0][shift..shift + cols];
                        match square {
                            Some((op, _)) => exp_square(a, &centre[..cols], op, sv, tv, kv, &mut w),
                            None => exp_scaled_row(a, sv, tv, kv, &mut w),
                        }
                        for &(home, f) in sums {
                            let f = match f {
                                Some(Src::Read(_)) => Some(a.to_vec()),
                                Some(Src::Outer(_)) => Some(centre[..cols].to_vec()),
                                None => None,
                            };
                            let row = &mut want[home][..cols];
                            match f {
                                Some(f) => update_product(row, &w, &f, Bin::Add, Side::Left),
                                None => update(row, &w, Bin::Add, Side::Left),
                            }
                        }
                    }
                    for (r, (g, e)) in got.iter().zip(&want).enumerate() {
                        for (i, (&g, &e)) in g.iter().zip(e).enumerate() {
                            assert!(
                                same(g, e),
                                "{square:?} s {s:?} neg {neg} t {t:?} k {k:?} sums {sums:?}: \
                                 row {r} lane {i} is {g}, the passes give {e}"
                            );
                        }
                    }
                }
            }
        }
    }
}
