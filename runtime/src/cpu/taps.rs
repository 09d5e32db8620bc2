//! A window reduction over a whole row, one window row at a time.
//!
//! The direct path runs a window whose size is known only at launch (a
//! `Domain`, a `Mask<T>` larger than 7x7) as a loop of taps per pixel: a
//! dependent chain of scalar operations, nothing vectorised across pixels.
//! Here the summand has already been evaluated over a source row
//! ([`super::split`]), and each tap of that window row is one contiguous
//! slice of it: blocks of [`BLOCK`] consecutive output pixels keep their
//! accumulators in registers while the taps run in the outer loop, each a
//! vector load, a multiply by the broadcast coefficient and a combine.
//!
//! Every pixel combines its terms in the order the direct path and the IR
//! evaluator do (window rows top to bottom, taps left to right, the first
//! term as the initial value), each term the same f32 product, so the
//! results are the same bits.

use super::simd::dispatch;

/// Output pixels per block: two AVX2 vectors of f32.
const BLOCK: usize = 16;

/// How the terms of a window combine.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Fold {
    /// `a + b`.
    Sum,
    /// `a.min(b)`.
    Min,
    /// `a.max(b)`.
    Max,
}

/// A combining operator, as a type so that each loop is compiled for one.
trait Combine {
    fn apply(a: f32, b: f32) -> f32;
}

enum Add {}
impl Combine for Add {
    #[inline(always)]
    fn apply(a: f32, b: f32) -> f32 {
        a + b
    }
}

enum Least {}
impl Combine for Least {
    #[inline(always)]
    fn apply(a: f32, b: f32) -> f32 {
        a.min(b)
    }
}

enum Most {}
impl Combine for Most {
    #[inline(always)]
    fn apply(a: f32, b: f32) -> f32 {
        a.max(b)
    }
}

/// What a tap contributes: its summand value, or that value times the
/// tap's coefficient.
trait Term {
    fn of(coef: f32, v: f32) -> f32;
}

enum Plain {}
impl Term for Plain {
    #[inline(always)]
    fn of(_: f32, v: f32) -> f32 {
        v
    }
}

enum Weighted {}
impl Term for Weighted {
    #[inline(always)]
    fn of(coef: f32, v: f32) -> f32 {
        coef * v
    }
}

/// One row of a window: its taps as `(column in the summand row,
/// coefficient)`, left to right.
pub(crate) type TapRow = [(usize, f32)];

/// Combines the terms of the taps `row` into `out`: `out[x] = fold(out[x],
/// term(c, e[x + i]))` for each tap `(i, c)` in order, where `first` says
/// that `out` holds nothing yet (the first tap's term then starts it).
/// `weighted` multiplies each value by its coefficient. `e` must cover
/// `out.len()` columns past every tap's column; `row` must not be empty.
pub(crate) fn fold_row(
    fold: Fold,
    weighted: bool,
    e: &[f32],
    row: &TapRow,
    first: bool,
    out: &mut [f32],
) {
    let last = row.iter().map(|&(i, _)| i).max().unwrap_or(0);
    assert!(
        !row.is_empty() && e.len() >= last + out.len(),
        "bug: {} taps up to column {last} over {} values for {} pixels",
        row.len(),
        e.len(),
        out.len()
    );
    match (fold, weighted) {
        (Fold::Sum, true) => fold_taps::<Add, Weighted>(e, row, first, out),
        (Fold::Sum, false) => fold_taps::<Add, Plain>(e, row, first, out),
        (Fold::Min, true) => fold_taps::<Least, Weighted>(e, row, first, out),
        (Fold::Min, false) => fold_taps::<Least, Plain>(e, row, first, out),
        (Fold::Max, true) => fold_taps::<Most, Weighted>(e, row, first, out),
        (Fold::Max, false) => fold_taps::<Most, Plain>(e, row, first, out),
    }
}

dispatch! {
    /// [`fold_row`] for one operator and term, compiled for AVX2 where the
    /// CPU has it.
    fn fold_taps<C: Combine, T: Term>(e: &[f32], row: &TapRow, first: bool, out: &mut [f32]) {
        let (rest, init) = if first {
            (&row[1..], Some(row[0]))
        } else {
            (row, None)
        };
        let blocks = out.len() / BLOCK * BLOCK;
        for (b, o) in out.chunks_exact_mut(BLOCK).enumerate() {
            let x = b * BLOCK;
            let mut acc = [0.0f32; BLOCK];
            match init {
                Some((i, c)) => {
                    let v = &e[x + i..x + i + BLOCK];
                    for l in 0..BLOCK {
                        acc[l] = T::of(c, v[l]);
                    }
                }
                None => acc.copy_from_slice(o),
            }
            for &(i, c) in rest {
                let v = &e[x + i..x + i + BLOCK];
                for l in 0..BLOCK {
                    acc[l] = C::apply(acc[l], T::of(c, v[l]));
                }
            }
            o.copy_from_slice(&acc);
        }
        for (x, o) in out.iter_mut().enumerate().skip(blocks) {
            let mut acc = match init {
                Some((i, c)) => T::of(c, e[x + i]),
                None => *o,
            };
            for &(i, c) in rest {
                acc = C::apply(acc, T::of(c, e[x + i]));
            }
            *o = acc;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each pixel's terms combined one by one, in tap order.
    fn per_pixel(
        fold: Fold,
        weighted: bool,
        e: &[f32],
        rows: &[Vec<(usize, f32)>],
        n: usize,
    ) -> Vec<f32> {
        (0..n)
            .map(|x| {
                let mut terms =
                    rows.iter()
                        .flatten()
                        .map(|&(i, c)| if weighted { c * e[x + i] } else { e[x + i] });
                let first = terms.next().unwrap();
                terms.fold(first, |a, t| match fold {
                    Fold::Sum => a + t,
                    Fold::Min => a.min(t),
                    Fold::Max => a.max(t),
                })
            })
            .collect()
    }

    #[test]
    fn rows_of_taps_fold_as_each_pixel_does() {
        let e: Vec<f32> = (0..80)
            .map(|k| ((k * 37 % 23) as f32 - 11.0) / 7.0)
            .collect();
        let rows = vec![
            vec![(0, 0.5), (2, -1.25), (5, 3.0)],
            vec![(1, 0.1)],
            vec![(3, 2.0), (4, 0.3)],
        ];
        // Block-sized, a block and a tail, and tail only.
        for n in [BLOCK * 3, BLOCK + 7, 5] {
            for fold in [Fold::Sum, Fold::Min, Fold::Max] {
                for weighted in [true, false] {
                    let mut out = vec![f32::NAN; n];
                    for (j, row) in rows.iter().enumerate() {
                        fold_row(fold, weighted, &e, row, j == 0, &mut out);
                    }
                    let want = per_pixel(fold, weighted, &e, &rows, n);
                    assert_eq!(
                        out.iter().map(|v| v.to_bits()).collect::<Vec<_>>(),
                        want.iter().map(|v| v.to_bits()).collect::<Vec<_>>(),
                        "{fold:?}, weighted {weighted}, {n} pixels"
                    );
                }
            }
        }
    }
}
