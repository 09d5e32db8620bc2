//! The taps of interpolating reads, tabulated per output index.
//!
//! An interpolating read's taps along one axis depend only on the output
//! index, the offset, the two extents and the mode
//! ([`interpolate::source_position`], [`interpolate::taps`]): the same for
//! every row (columns) or every column (rows). Computing them per read costs
//! a division, a `floor` and, for `Cubic` and `Lanczos3`, the kernel's
//! polynomial or sines, for every tap of every pixel; a table computes each
//! once. The entries are the values [`interpolate::taps`] returns, so reads
//! through a table give the same bits.
//!
//! A view's tables, every offset within `REACH`, are built (or taken
//! from the cache) when the view is made, so that a read finds them
//! through plain pointers: behind a `OnceLock`, each read's atomic load
//! of its state ordered the loads after it, and upsampling a 1024² image
//! by two with `Nearest` took about 14 ms instead of 10 (`user-kernels`,
//! 2 threads). Tables
//! live in a small process-wide cache keyed by what they depend on, so
//! that the views of a fused pipeline (one per strip) and repeated
//! launches share them instead of rebuilding them.

use crate::interpolate::{self, Taps};
use crate::Interpolation;
use std::ops::Range;
use std::sync::{Arc, Mutex};

/// Offsets `-REACH..=REACH` have tables; reads further out compute their
/// taps (interpolating accessors are read near the mapped position).
const REACH: i32 = 4;

/// Tables the cache keeps: the offsets of both axes of a few
/// interpolating accessors.
const CACHED: usize = 8 * (2 * REACH as usize + 1);

/// What one axis's table depends on: mode, space extent, accessor extent,
/// offset.
type Key = (Interpolation, usize, usize, i32);

/// The taps of one axis for every output index, packed: the first tap's
/// index and then the `taps` weights of each entry, so that a read loads
/// one or two cache lines' worth and not a whole [`Taps`].
pub(crate) struct Table {
    starts: Box<[i64]>,
    weights: Box<[f64]>,
    /// The output indices whose taps all lie inside the accessor: the
    /// first tap is monotone in the index, so they are one range.
    inside: Range<usize>,
}

/// One axis of a read: the first tap's index and the weights of the
/// `N` taps from it.
#[derive(Clone, Copy)]
pub(crate) struct Axis<'t, const N: usize> {
    pub(crate) start: i64,
    pub(crate) weights: &'t [f64; N],
}

/// The tables of one interpolating accessor's view, one per offset
/// `-REACH..=REACH` and axis, shared through the cache.
pub(crate) struct TapTables {
    mode: Interpolation,
    /// Space and accessor extents along x and y.
    x: (usize, usize),
    y: (usize, usize),
    columns: Box<[Arc<Table>]>,
    rows: Box<[Arc<Table>]>,
}

impl TapTables {
    /// The tables of a view mapping a `space` extent onto an `acc` extent
    /// (width, height each).
    pub(crate) fn new(mode: Interpolation, space: (usize, usize), acc: (usize, usize)) -> Self {
        let tables = |space, acc| {
            (-REACH..=REACH)
                .map(|d| cached((mode, space, acc, d)))
                .collect()
        };
        TapTables {
            mode,
            x: (space.0, acc.0),
            y: (space.1, acc.1),
            columns: tables(space.0, acc.0),
            rows: tables(space.1, acc.1),
        }
    }

    /// The mode the taps are of.
    #[inline]
    pub(crate) fn mode(&self) -> Interpolation {
        self.mode
    }

    /// The `N` taps along x of output column `rel` (relative to the space)
    /// at offset `d`, or `None` where no table covers them; `N` must be the
    /// mode's tap count.
    #[inline(always)]
    pub(crate) fn column<const N: usize>(&self, rel: i64, d: i32) -> Option<Axis<'_, N>> {
        axis(&self.columns, self.x, rel, d)
    }

    /// The `N` taps along y of output row `rel` (relative to the space) at
    /// offset `d`, or `None` where no table covers them.
    #[inline(always)]
    pub(crate) fn row<const N: usize>(&self, rel: i64, d: i32) -> Option<Axis<'_, N>> {
        axis(&self.rows, self.y, rel, d)
    }

    /// [`Self::column`] where the caller knows a table covers the taps.
    ///
    /// # Safety
    /// `rel` must be inside the space and `d` within `-REACH..=REACH`.
    #[inline(always)]
    pub(crate) unsafe fn column_unchecked<const N: usize>(&self, rel: i64, d: i32) -> Axis<'_, N> {
        // SAFETY: the caller's contract.
        unsafe { axis_unchecked(&self.columns, rel, d) }
    }

    /// [`Self::row`] where the caller knows a table covers the taps.
    ///
    /// # Safety
    /// As [`Self::column_unchecked`].
    #[inline(always)]
    pub(crate) unsafe fn row_unchecked<const N: usize>(&self, rel: i64, d: i32) -> Axis<'_, N> {
        // SAFETY: the caller's contract.
        unsafe { axis_unchecked(&self.rows, rel, d) }
    }

    /// The taps along x of `rel` at `d`, computed (for reads no table
    /// covers).
    pub(crate) fn column_computed(&self, rel: i64, d: i32) -> Taps {
        compute(self.mode, self.x.0, self.x.1, rel, d)
    }

    /// The taps along y of `rel` at `d`, computed.
    pub(crate) fn row_computed(&self, rel: i64, d: i32) -> Taps {
        compute(self.mode, self.y.0, self.y.1, rel, d)
    }
}

/// The `N` taps of index `rel` at offset `d` from `tables`, where one
/// covers them.
#[inline(always)]
fn axis<const N: usize>(
    tables: &[Arc<Table>],
    (space, _): (usize, usize),
    rel: i64,
    d: i32,
) -> Option<Axis<'_, N>> {
    // In i64: an offset near `i32::MAX` must not wrap onto a table.
    let slot = i64::from(d) + i64::from(REACH);
    if !(0..space as i64).contains(&rel) || !(0..tables.len() as i64).contains(&slot) {
        return None;
    }
    let table = &tables[slot as usize];
    let rel = rel as usize;
    debug_assert_eq!(
        table.weights.len(),
        table.starts.len() * N,
        "bug: {N} taps expected"
    );
    Some(Axis {
        start: table.starts[rel],
        weights: table.weights[rel * N..][..N].try_into().ok()?,
    })
}

/// [`axis`] without its checks, which the caller has made.
///
/// # Safety
/// `rel` must index the tables' space and `d` be within `-REACH..=REACH`.
#[inline(always)]
unsafe fn axis_unchecked<const N: usize>(tables: &[Arc<Table>], rel: i64, d: i32) -> Axis<'_, N> {
    debug_assert!(
        (-REACH..=REACH).contains(&d),
        "bug: offset {d} beyond the tables"
    );
    // SAFETY: the caller's contract; a table holds `N` weights per index.
    unsafe {
        let table = tables.get_unchecked((d + REACH) as usize);
        let rel = rel as usize;
        debug_assert!(
            rel < table.starts.len(),
            "bug: index {rel} beyond the table"
        );
        debug_assert_eq!(
            table.weights.len(),
            table.starts.len() * N,
            "bug: {N} taps expected"
        );
        Axis {
            start: *table.starts.get_unchecked(rel),
            weights: &*table.weights.as_ptr().add(rel * N).cast::<[f64; N]>(),
        }
    }
}

/// The output indices `0..space` at offset `d` whose `mode` taps all lie
/// inside `0..acc`, or `None` where `d` is beyond the tables (those reads
/// compute their taps and check them).
pub(crate) fn inside(
    mode: Interpolation,
    space: usize,
    acc: usize,
    d: i32,
) -> Option<Range<usize>> {
    (-REACH..=REACH)
        .contains(&d)
        .then(|| cached((mode, space, acc, d)).inside.clone())
}

/// The taps [`interpolate`] defines.
fn compute(mode: Interpolation, space: usize, acc: usize, rel: i64, d: i32) -> Taps {
    interpolate::taps(
        mode,
        interpolate::source_position(rel, space, acc, d.into()),
    )
}

/// The table of `key`, from the cache or built and cached.
fn cached(key: Key) -> Arc<Table> {
    static CACHE: Mutex<Vec<(Key, Arc<Table>)>> = Mutex::new(Vec::new());
    let find = |cache: &[(Key, Arc<Table>)]| {
        cache
            .iter()
            .find(|(k, _)| *k == key)
            .map(|(_, t)| t.clone())
    };
    if let Some(t) = find(&CACHE.lock().unwrap_or_else(|e| e.into_inner())) {
        return t;
    }
    let (mode, space, acc, d) = key;
    let taps: Vec<Taps> = (0..space as i64)
        .map(|rel| compute(mode, space, acc, rel, d))
        .collect();
    let is_inside = |t: &Taps| t.start >= 0 && t.start + t.len as i64 <= acc as i64;
    let first = taps.iter().position(is_inside).unwrap_or(taps.len());
    let end = first + taps[first..].iter().take_while(|t| is_inside(t)).count();
    let table = Arc::new(Table {
        inside: first..end,
        starts: taps.iter().map(|t| t.start).collect(),
        weights: taps
            .iter()
            .flat_map(|t| t.weights[..t.len].to_vec())
            .collect(),
    });
    let mut cache = CACHE.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(t) = find(&cache) {
        return t;
    }
    if cache.len() >= CACHED {
        cache.remove(0);
    }
    cache.push((key, table.clone()));
    table
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `got`, a table's taps of `rel` at `d`, are `want`'s bits, and a
    /// table covers every index of the space at offsets within reach.
    fn check<const N: usize>(
        got: Option<Axis<'_, N>>,
        want: &Taps,
        rel: i64,
        space: usize,
        d: i32,
    ) {
        let covered = (0..space as i64).contains(&rel) && (-REACH..=REACH).contains(&d);
        assert_eq!(got.is_some(), covered, "rel {rel}, d {d}");
        if let Some(got) = got {
            assert_eq!((got.start, N), (want.start, want.len));
            assert_eq!(
                got.weights.map(f64::to_bits)[..],
                want.weights.map(f64::to_bits)[..N]
            );
        }
    }

    /// Every index and offset of tables of `mode`, which has `N` taps.
    fn check_mode<const N: usize>(mode: Interpolation) {
        for (space, acc) in [(16, 8), (7, 13), (9, 9)] {
            let tables = TapTables::new(mode, (space, space + 1), (acc, acc + 2));
            let far = [i32::MIN, i32::MIN + 1, i32::MAX - REACH, i32::MAX];
            for d in (-REACH - 2..=REACH + 2).chain(far) {
                for rel in -2..space as i64 + 3 {
                    let want = compute(mode, space, acc, rel, d);
                    assert_eq!(tables.column_computed(rel, d), want);
                    check(tables.column::<N>(rel, d), &want, rel, space, d);
                    let want = compute(mode, space + 1, acc + 2, rel, d);
                    assert_eq!(tables.row_computed(rel, d), want);
                    check(tables.row::<N>(rel, d), &want, rel, space + 1, d);
                }
                check_inside::<N>(&tables, mode, space, acc, d);
            }
        }
    }

    /// `inside` holds exactly the indices whose computed taps lie inside
    /// the accessor, and the unchecked lookups are the checked ones.
    fn check_inside<const N: usize>(
        tables: &TapTables,
        mode: Interpolation,
        space: usize,
        acc: usize,
        d: i32,
    ) {
        let got = inside(mode, space, acc, d);
        if !(-REACH..=REACH).contains(&d) {
            assert_eq!(got, None, "d {d}");
            return;
        }
        let got = got.expect("offsets within reach have tables");
        for rel in 0..space {
            let t = compute(mode, space, acc, rel as i64, d);
            let want = t.start >= 0 && t.start + t.len as i64 <= acc as i64;
            assert_eq!(
                got.contains(&rel),
                want,
                "{mode:?} {space} -> {acc}, d {d}, rel {rel}"
            );
            let checked = tables.column::<N>(rel as i64, d).expect("covered");
            // SAFETY: `rel` is inside the space and `d` within reach.
            let unchecked = unsafe { tables.column_unchecked::<N>(rel as i64, d) };
            assert_eq!(
                (checked.start, checked.weights),
                (unchecked.start, unchecked.weights)
            );
        }
    }

    #[test]
    fn tabulated_taps_are_the_computed_ones_at_any_offset_and_index() {
        check_mode::<1>(Interpolation::Nearest);
        check_mode::<2>(Interpolation::Linear);
        check_mode::<4>(Interpolation::Cubic);
        check_mode::<6>(Interpolation::Lanczos3);
    }
}
