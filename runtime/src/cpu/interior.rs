//! The interior of an iteration space: the output pixels at which every read
//! of every accessor lies inside that accessor's region.
//!
//! The output pixel `(x, y)` of a space with origin `(sx, sy)` reads accessor
//! position `(x - sx + dx, y - sy + dy)` for each offset `(dx, dy)` of the
//! accessor's footprint. Offsets are affine in the coordinates
//! ([`hipacc_core::ir::footprint::affine_footprints`]): `dx = c · x + [lo,
//! hi]`, so with `p = x - sx` the position is `(1 + c) p + c · sx + [lo,
//! hi]`, and the columns whose reads all stay inside a region of width `w`
//! form one range, found by solving two linear inequalities; rows alike.
//! Constant offsets are `c = 0`. Intersecting those ranges over all
//! accessors and with the space gives the interior, where the CPU backend
//! runs the body without boundary checks. An accessor whose footprint is
//! unbounded (other computed offsets, interpolation) leaves no interior.

use hipacc_core::Rect;
use std::ops::Range;

/// The offsets along one axis: `coef · c + [lo, hi]` for output coordinate `c`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct AxisReach {
    /// Coefficient of the absolute output coordinate.
    pub(crate) coef: f64,
    /// Smallest constant part.
    pub(crate) lo: f64,
    /// Largest constant part.
    pub(crate) hi: f64,
}

/// The offsets one accessor is read at.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Reach {
    /// Horizontal.
    pub(crate) x: AxisReach,
    /// Vertical.
    pub(crate) y: AxisReach,
}

impl Reach {
    /// Constant offsets `min_dx..=max_dx`, `min_dy..=max_dy`.
    #[cfg(test)]
    fn constant(min_dx: i32, max_dx: i32, min_dy: i32, max_dy: i32) -> Reach {
        let axis = |lo: i32, hi: i32| AxisReach {
            coef: 0.0,
            lo: f64::from(lo),
            hi: f64::from(hi),
        };
        Reach {
            x: axis(min_dx, max_dx),
            y: axis(min_dy, max_dy),
        }
    }

    /// True when the ranges hold no offset (the accessor is never read).
    pub(crate) fn reads_nothing(&self) -> bool {
        self.x.lo > self.x.hi || self.y.lo > self.y.hi
    }
}

/// A rectangle of output pixels in absolute image coordinates.
///
/// The axes are independent: `cols` are the columns at which every read
/// stays inside horizontally, `rows` the rows at which every read stays
/// inside vertically, so one may be empty while the other is not. Both are
/// empty when a footprint is unbounded.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Interior {
    /// Columns.
    pub(crate) cols: Range<usize>,
    /// Rows.
    pub(crate) rows: Range<usize>,
}

/// Rectangles within this many pixels of the origin: unchecked reads add an
/// output coordinate (at most the space's far edge) and an offset into a
/// region (at most its width) in `i32`, which then cannot overflow.
pub(crate) const I32_SPAN: usize = i32::MAX as usize / 2;

/// The interior of `space` for accessors given as (region, reach); `None`
/// as reach means unbounded.
pub(crate) fn interior(
    space: Rect,
    accessors: impl IntoIterator<Item = (Rect, Option<Reach>)>,
) -> Interior {
    let none = Interior {
        cols: space.x..space.x,
        rows: space.y..space.y,
    };
    // Unchecked reads compute positions in i32 (see `AccessorView`'s
    // `CpuRead`): images beyond that run checked throughout.
    let fits = |r: Rect| r.x + r.width <= I32_SPAN && r.y + r.height <= I32_SPAN;
    if !fits(space) {
        return none;
    }
    let mut cols = 0..space.width;
    let mut rows = 0..space.height;
    for (region, reach) in accessors {
        let Some(reach) = reach.filter(|_| fits(region)) else {
            return none;
        };
        if reach.reads_nothing() {
            continue;
        }
        cols = intersect(cols, axis(region.width, space.x, reach.x));
        rows = intersect(rows, axis(region.height, space.y, reach.y));
    }
    Interior {
        cols: space.x + cols.start..space.x + cols.end,
        rows: space.y + rows.start..space.y + rows.end,
    }
}

/// The space-relative positions `p >= 0` whose reads `a p + b + [lo, hi]`
/// (`a = 1 + coef`, `b = coef · origin`) all lie in `0..len`.
fn axis(len: usize, origin: usize, r: AxisReach) -> Range<usize> {
    let a = 1.0 + r.coef;
    let (blo, bhi) = (r.coef * origin as f64 + r.lo, r.coef * origin as f64 + r.hi);
    let top = len as f64 - 1.0;
    let (start, end) = if a > 0.0 {
        // a p + blo >= 0 and a p + bhi <= top.
        ((-blo / a).ceil(), ((top - bhi) / a).floor() + 1.0)
    } else if a < 0.0 {
        (((bhi - top) / -a).ceil(), (blo / -a).floor() + 1.0)
    } else if blo >= 0.0 && bhi <= top {
        (0.0, f64::MAX)
    } else {
        (0.0, 0.0)
    };
    let start = start.max(0.0);
    if end <= start || end.is_nan() {
        return 0..0;
    }
    let clip = |v: f64| v.min(usize::MAX as f64 / 2.0) as usize;
    clip(start)..clip(end)
}
/// The positions in both `a` and `b`.
pub(crate) fn intersect(a: Range<usize>, b: Range<usize>) -> Range<usize> {
    let start = a.start.max(b.start);
    let end = a.end.min(b.end);
    if end <= start {
        0..0
    } else {
        start..end
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reach(min_dx: i32, max_dx: i32, min_dy: i32, max_dy: i32) -> Option<Reach> {
        Some(Reach::constant(min_dx, max_dx, min_dy, max_dy))
    }

    /// The interior by brute force, per axis: the columns at which every
    /// read stays inside horizontally, and the rows alike.
    fn brute(space: Rect, accessors: &[(Rect, Option<Reach>)]) -> (Vec<usize>, Vec<usize>) {
        // Every offset in the real range coef·c + [lo, hi] must read inside.
        let reads = |a: AxisReach, c: usize, origin: usize, len: usize| {
            let p = c as f64 - origin as f64 + a.coef * c as f64;
            p + a.lo >= 0.0 && p + a.hi <= len as f64 - 1.0
        };
        let safe = |c: usize, vertical: bool| {
            accessors.iter().all(|(region, r)| match r {
                None => false,
                Some(r) if r.reads_nothing() => true,
                Some(r) if vertical => reads(r.y, c, space.y, region.height),
                Some(r) => reads(r.x, c, space.x, region.width),
            })
        };
        (
            (space.x..space.x + space.width)
                .filter(|&x| safe(x, false))
                .collect(),
            (space.y..space.y + space.height)
                .filter(|&y| safe(y, true))
                .collect(),
        )
    }

    fn axes(i: &Interior) -> (Vec<usize>, Vec<usize>) {
        (i.cols.clone().collect(), i.rows.clone().collect())
    }

    #[test]
    fn matches_brute_force_for_many_footprints_and_regions() {
        let footprints = [
            reach(0, 0, 0, 0),
            reach(-1, 1, -1, 1),
            reach(-2, 2, -2, 2),
            reach(-4, 4, 0, 0),
            reach(0, 0, -4, 4),
            reach(-7, 7, -7, 7),
            reach(1, 3, -2, -1),
            reach(-3, -1, 2, 5),
            reach(1, 0, 0, 0),
            None,
        ];
        let spaces = [
            Rect::new(0, 0, 1, 1),
            Rect::new(0, 0, 7, 1),
            Rect::new(0, 0, 3, 2),
            Rect::new(0, 0, 17, 5),
            Rect::new(3, 2, 9, 6),
            Rect::new(0, 0, 20, 20),
        ];
        let regions = [
            Rect::new(0, 0, 1, 1),
            Rect::new(0, 0, 17, 5),
            Rect::new(2, 1, 10, 8),
            Rect::new(0, 0, 20, 20),
            Rect::new(5, 5, 15, 15),
        ];
        for space in spaces {
            for f1 in footprints {
                for r1 in regions {
                    let one = [(r1, f1)];
                    assert_eq!(
                        axes(&interior(space, one)),
                        brute(space, &one),
                        "{space:?} {one:?}"
                    );
                    for f2 in footprints.iter().take(6) {
                        let two = [(r1, f1), (regions[3], *f2)];
                        assert_eq!(
                            axes(&interior(space, two)),
                            brute(space, &two),
                            "{space:?} {two:?}"
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn three_by_three_on_a_full_image() {
        let space = Rect::full(64, 48);
        let i = interior(space, [(space, reach(-1, 1, -1, 1))]);
        assert_eq!(
            i,
            Interior {
                cols: 1..63,
                rows: 1..47
            }
        );
    }

    #[test]
    fn offset_space_maps_to_absolute_columns() {
        // Space at (10, 4) reading a 20x10 region: relative column p reads p-2..=p+2.
        let i = interior(
            Rect::new(10, 4, 30, 20),
            [(Rect::new(0, 0, 20, 10), reach(-2, 2, 0, 1))],
        );
        assert_eq!(
            i,
            Interior {
                cols: 12..28,
                rows: 4..13
            }
        );
    }

    #[test]
    fn window_wider_than_region_leaves_no_interior() {
        // No column reads inside horizontally; rows 7..10 still do vertically.
        let space = Rect::full(5, 17);
        let i = interior(space, [(space, reach(-7, 7, -7, 7))]);
        assert!(i.cols.is_empty());
        assert_eq!(i.rows, 7..10);
    }

    #[test]
    fn unbounded_footprint_leaves_no_interior() {
        let space = Rect::full(64, 64);
        let i = interior(space, [(space, reach(0, 0, 0, 0)), (space, None)]);
        assert!(i.cols.is_empty() && i.rows.is_empty());
    }

    #[test]
    fn positions_beyond_i32_leave_no_interior() {
        let wide = Rect::new(0, 0, I32_SPAN + 1, 1);
        let i = interior(wide, [(wide, reach(0, 0, 0, 0))]);
        assert!(i.cols.is_empty() && i.rows.is_empty());
        let space = Rect::full(8, 8);
        let far = Rect::new(I32_SPAN - 4, 0, 8, 8);
        let i = interior(space, [(far, reach(0, 0, 0, 0))]);
        assert!(i.cols.is_empty() && i.rows.is_empty());
    }

    #[test]
    fn no_accessor_means_all_interior() {
        let space = Rect::new(1, 2, 3, 4);
        assert_eq!(
            interior(space, []),
            Interior {
                cols: 1..4,
                rows: 2..6
            }
        );
    }

    #[test]
    fn affine_reaches_match_brute_force() {
        let affine = |coef: f64, lo: i32, hi: i32| AxisReach {
            coef,
            lo: f64::from(lo),
            hi: f64::from(hi),
        };
        // Reads at 2x + 0..=1 (restriction), x/2 ± 1 as -x/2 + [-2, 1]
        // (prolongation), and a mirror 7 - 2x.
        let cases = [
            (affine(1.0, 0, 1), affine(1.0, -1, 2)),
            (affine(-0.5, -2, 1), affine(0.0, -1, 1)),
            (affine(-3.0, 7, 7), affine(-0.5, -1, 0)),
            (affine(-1.0, 2, 3), affine(1.0, 0, 0)),
        ];
        let spaces = [
            Rect::new(0, 0, 9, 7),
            Rect::new(2, 1, 12, 10),
            Rect::new(0, 0, 40, 3),
        ];
        let regions = [
            Rect::new(0, 0, 18, 14),
            Rect::new(0, 0, 5, 4),
            Rect::new(0, 0, 41, 9),
        ];
        for (x, y) in cases {
            for space in spaces {
                for region in regions {
                    let acc = [(region, Some(Reach { x, y }))];
                    assert_eq!(
                        axes(&interior(space, acc)),
                        brute(space, &acc),
                        "{space:?} {acc:?}"
                    );
                }
            }
        }
    }
}
