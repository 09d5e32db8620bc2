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
//! Tables live in a small process-wide cache keyed by what they depend on,
//! so that the views of a fused pipeline (one per strip) and repeated
//! launches share them instead of rebuilding them.

use crate::interpolate::{self, Taps};
use crate::Interpolation;
use std::sync::{Arc, Mutex, OnceLock};

/// Offsets `-REACH..=REACH` have tables; reads further out compute their
/// taps (interpolating accessors are read near the mapped position).
const REACH: i32 = 4;

/// Tables the cache keeps (a few per interpolating accessor and axis).
const CACHED: usize = 64;

/// What one axis's table depends on: mode, space extent, accessor extent,
/// offset.
type Key = (Interpolation, usize, usize, i32);

/// The taps of one axis for every output index.
type Table = Arc<[Taps]>;

/// The tables of one interpolating accessor's view: built on first use of
/// an offset, shared through the cache.
pub(crate) struct TapTables {
    mode: Interpolation,
    /// Space and accessor extents along x and y.
    x: (usize, usize),
    y: (usize, usize),
    columns: [OnceLock<Table>; 2 * REACH as usize + 1],
    rows: [OnceLock<Table>; 2 * REACH as usize + 1],
}

impl TapTables {
    /// The tables of a view mapping a `space` extent onto an `acc` extent
    /// (width, height each).
    pub(crate) fn new(mode: Interpolation, space: (usize, usize), acc: (usize, usize)) -> Self {
        TapTables {
            mode,
            x: (space.0, acc.0),
            y: (space.1, acc.1),
            columns: Default::default(),
            rows: Default::default(),
        }
    }

    /// The mode the taps are of.
    #[inline]
    pub(crate) fn mode(&self) -> Interpolation {
        self.mode
    }

    /// The taps along x of output column `rel` (relative to the space) at
    /// offset `d`.
    #[inline]
    pub(crate) fn column(&self, rel: i64, d: i32) -> Taps {
        axis(&self.columns, self.mode, self.x, rel, d)
    }

    /// The taps along y of output row `rel` (relative to the space) at
    /// offset `d`.
    #[inline]
    pub(crate) fn row(&self, rel: i64, d: i32) -> Taps {
        axis(&self.rows, self.mode, self.y, rel, d)
    }
}

/// The taps of index `rel` at offset `d` from `tables`, or computed where
/// no table covers them.
#[inline]
fn axis(
    tables: &[OnceLock<Table>],
    mode: Interpolation,
    (space, acc): (usize, usize),
    rel: i64,
    d: i32,
) -> Taps {
    let slot = (d + REACH) as usize;
    if (0..space as i64).contains(&rel) && slot < tables.len() {
        let table = tables[slot].get_or_init(|| cached((mode, space, acc, d)));
        return table[rel as usize];
    }
    compute(mode, space, acc, rel, d)
}

/// The taps [`interpolate`] defines.
fn compute(mode: Interpolation, space: usize, acc: usize, rel: i64, d: i32) -> Taps {
    interpolate::taps(
        mode,
        interpolate::source_position(rel, space, acc, d.into()),
    )
}

/// The table of `key`, from the cache or built and cached.
fn cached(key: Key) -> Table {
    static CACHE: Mutex<Vec<(Key, Table)>> = Mutex::new(Vec::new());
    let find = |cache: &[(Key, Table)]| {
        cache
            .iter()
            .find(|(k, _)| *k == key)
            .map(|(_, t)| t.clone())
    };
    if let Some(t) = find(&CACHE.lock().unwrap_or_else(|e| e.into_inner())) {
        return t;
    }
    let (mode, space, acc, d) = key;
    let table: Table = (0..space as i64)
        .map(|rel| compute(mode, space, acc, rel, d))
        .collect();
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

    #[test]
    fn tabulated_taps_are_the_computed_ones_at_any_offset_and_index() {
        let modes = [
            Interpolation::Nearest,
            Interpolation::Linear,
            Interpolation::Cubic,
            Interpolation::Lanczos3,
        ];
        for mode in modes {
            for (space, acc) in [(16, 8), (7, 13), (9, 9)] {
                let tables = TapTables::new(mode, (space, space + 1), (acc, acc + 2));
                for d in -REACH - 2..=REACH + 2 {
                    for rel in -2..space as i64 + 3 {
                        let want = compute(mode, space, acc, rel, d);
                        let got = tables.column(rel, d);
                        assert_eq!((got.start, got.len), (want.start, want.len));
                        assert_eq!(
                            got.weights.map(f64::to_bits),
                            want.weights.map(f64::to_bits)
                        );
                        let want = compute(mode, space + 1, acc + 2, rel, d);
                        let got = tables.row(rel, d);
                        assert_eq!((got.start, got.len), (want.start, want.len));
                        assert_eq!(
                            got.weights.map(f64::to_bits),
                            want.weights.map(f64::to_bits)
                        );
                    }
                }
            }
        }
    }
}
