//! Where a launch's interpolating reads need no check: the output columns
//! and rows at which every tap of every interpolating read is tabulated
//! and lies inside its accessor's region.
//!
//! The interior ([`super::interior`]) leaves interpolating accessors out,
//! their reads mapping output pixels to other positions; there each read
//! runs in [`hipacc_core::cpu::InteriorInterpolating`], checking its taps
//! and calling out of line near the edges. Those calls keep LLVM from
//! hoisting a row's taps out of the row loop: about 70 instructions per
//! pixel for a `Nearest` upsampling by two, where a hand-written loop looks
//! the row up once. With constant offsets, the taps of output column `x`
//! depend on `x` and the offset alone, and the first tap is monotone in
//! `x`, so the columns whose taps lie inside form one range per offset
//! ([`hipacc_core::cpu::interpolated_inside`]); rows alike. Intersected
//! over the interpolating accessors and their offsets, they give the
//! rectangle whose reads run in [`hipacc_core::cpu::InteriorTapsInside`].

use super::interior::{intersect, AxisReach, Interior, Reach};
use hipacc_core::cpu::interpolated_inside;
use hipacc_core::{Interpolation, Rect};

/// The columns and rows of `space` (absolute) at which every read of the
/// interpolating `accessors`, given as (mode, region, constant offsets),
/// has its taps tabulated and inside the region; empty where some
/// accessor's offsets are not constant or reach beyond the tables.
pub(crate) fn taps_inside(
    space: Rect,
    accessors: impl IntoIterator<Item = (Interpolation, Rect, Option<Reach>)>,
) -> Interior {
    let none = Interior {
        cols: space.x..space.x,
        rows: space.y..space.y,
    };
    let mut cols = 0..space.width;
    let mut rows = 0..space.height;
    for (mode, region, reach) in accessors {
        if mode == Interpolation::None {
            continue;
        }
        let Some(reach) = reach else {
            return none;
        };
        if reach.reads_nothing() {
            continue;
        }
        let along = |space: usize, acc: usize, r: AxisReach| {
            offsets(r)?.try_fold(0..space, |range, d| {
                Some(intersect(range, interpolated_inside(mode, space, acc, d)?))
            })
        };
        let (Some(c), Some(r)) = (
            along(space.width, region.width, reach.x),
            along(space.height, region.height, reach.y),
        ) else {
            return none;
        };
        cols = intersect(cols, c);
        rows = intersect(rows, r);
    }
    Interior {
        cols: space.x + cols.start..space.x + cols.end,
        rows: space.y + rows.start..space.y + rows.end,
    }
}

/// The constant offsets `lo..=hi` of `r`, where they are whole `i32`s and
/// do not depend on the coordinate.
fn offsets(r: AxisReach) -> Option<std::ops::RangeInclusive<i32>> {
    let whole = |v: f64| {
        (v.fract() == 0.0 && v >= f64::from(i32::MIN) && v <= f64::from(i32::MAX))
            .then_some(v as i32)
    };
    (r.coef == 0.0).then_some(())?;
    Some(whole(r.lo)?..=whole(r.hi)?)
}

#[cfg(test)]
mod tests {
    use super::*;
    use hipacc_core::interpolate::{source_position, taps};
    use std::ops::Range;

    /// The reach of constant offsets `(dx, dy)` ranges.
    fn reach(x: (f64, f64), y: (f64, f64)) -> Option<Reach> {
        let axis = |(lo, hi)| AxisReach { coef: 0.0, lo, hi };
        Some(Reach {
            x: axis(x),
            y: axis(y),
        })
    }

    /// Whether output index `p` (space-relative) read at offsets `ds`
    /// has all its taps inside, from the evaluator's definitions.
    fn inside(mode: Interpolation, space: usize, acc: usize, p: usize, ds: Range<i32>) -> bool {
        ds.into_iter().all(|d| {
            let t = taps(mode, source_position(p as i64, space, acc, d.into()));
            t.start >= 0 && t.start + t.len as i64 <= acc as i64
        })
    }

    #[test]
    fn holds_exactly_the_pixels_whose_taps_all_lie_inside() {
        let space = Rect::new(3, 5, 19, 13);
        for mode in [
            Interpolation::Nearest,
            Interpolation::Linear,
            Interpolation::Cubic,
            Interpolation::Lanczos3,
        ] {
            // Upsampling, downsampling, one to one; each beside a second
            // accessor read at other offsets.
            for (a, b) in [
                ((9, 7), (19, 13)),
                ((23, 17), (11, 9)),
                ((19, 13), (19, 13)),
            ] {
                let ra = Rect::new(1, 2, a.0, a.1);
                let rb = Rect::new(0, 0, b.0, b.1);
                let got = taps_inside(
                    space,
                    [
                        (mode, ra, reach((-1.0, 2.0), (0.0, 0.0))),
                        (Interpolation::None, Rect::new(0, 0, 1, 1), None),
                        (Interpolation::Linear, rb, reach((0.0, 0.0), (-2.0, 1.0))),
                    ],
                );
                for x in 0..space.width {
                    let want = inside(mode, space.width, a.0, x, -1..3)
                        && inside(Interpolation::Linear, space.width, b.0, x, 0..1);
                    assert_eq!(
                        got.cols.contains(&(space.x + x)),
                        want,
                        "{mode:?} {a:?} column {x}"
                    );
                }
                for y in 0..space.height {
                    let want = inside(mode, space.height, a.1, y, 0..1)
                        && inside(Interpolation::Linear, space.height, b.1, y, -2..2);
                    assert_eq!(
                        got.rows.contains(&(space.y + y)),
                        want,
                        "{mode:?} {a:?} row {y}"
                    );
                }
            }
        }
    }

    #[test]
    fn is_empty_where_offsets_are_not_tabulated_constants() {
        let space = Rect::new(0, 0, 16, 16);
        let region = Rect::new(0, 0, 8, 8);
        let empty = |reach| {
            let got = taps_inside(space, [(Interpolation::Linear, region, reach)]);
            got.cols.is_empty() && got.rows.is_empty()
        };
        assert!(empty(None));
        assert!(empty(reach((0.0, 5.0), (0.0, 0.0))));
        assert!(empty(reach((0.0, 0.0), (0.5, 0.5))));
        let mut sloped = reach((0.0, 0.0), (0.0, 0.0));
        if let Some(r) = sloped.as_mut() {
            r.x.coef = -0.5;
        }
        assert!(empty(sloped));
        assert!(!empty(reach((-1.0, 1.0), (0.0, 0.0))));
    }
}
