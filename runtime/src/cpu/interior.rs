//! The interior of an iteration space: the output pixels at which every read
//! of every accessor lies inside that accessor's region.
//!
//! The output pixel `(x, y)` of a space with origin `(sx, sy)` reads accessor
//! position `(x - sx + dx, y - sy + dy)` for each offset `(dx, dy)` of the
//! accessor's footprint. With the footprint's inclusive offset range
//! `min_dx..=max_dx`, all reads of column `x` are inside a region of width `w`
//! exactly when `0 <= x - sx + min_dx` and `x - sx + max_dx < w`; rows alike.
//! Intersecting those ranges over all accessors and with the space gives the
//! interior, where the CPU backend runs the body without boundary checks.
//! An accessor whose footprint is unbounded (computed offsets, interpolation)
//! leaves no interior at all.

use hipacc_core::Rect;
use std::ops::Range;

/// The offsets one accessor is read at, each range inclusive.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Reach {
    /// Smallest horizontal offset.
    pub(crate) min_dx: i32,
    /// Largest horizontal offset.
    pub(crate) max_dx: i32,
    /// Smallest vertical offset.
    pub(crate) min_dy: i32,
    /// Largest vertical offset.
    pub(crate) max_dy: i32,
}

impl Reach {
    /// True when the ranges hold no offset (the accessor is never read).
    fn reads_nothing(&self) -> bool {
        self.min_dx > self.max_dx || self.min_dy > self.max_dy
    }
}

/// A rectangle of output pixels in absolute image coordinates.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Interior {
    /// Columns.
    pub(crate) cols: Range<usize>,
    /// Rows.
    pub(crate) rows: Range<usize>,
}

impl Interior {
    /// True when no pixel is interior.
    pub(crate) fn is_empty(&self) -> bool {
        self.cols.is_empty() || self.rows.is_empty()
    }
}

/// The interior of `space` for accessors given as (region, reach); `None`
/// as reach means unbounded.
pub(crate) fn interior(
    space: Rect,
    accessors: impl IntoIterator<Item = (Rect, Option<Reach>)>,
) -> Interior {
    let mut cols = 0..space.width;
    let mut rows = 0..space.height;
    for (region, reach) in accessors {
        let Some(reach) = reach else {
            return Interior {
                cols: space.x..space.x,
                rows: space.y..space.y,
            };
        };
        if reach.reads_nothing() {
            continue;
        }
        cols = intersect(cols, axis(region.width, reach.min_dx, reach.max_dx));
        rows = intersect(rows, axis(region.height, reach.min_dy, reach.max_dy));
    }
    if cols.is_empty() || rows.is_empty() {
        cols = 0..0;
        rows = 0..0;
    }
    Interior {
        cols: space.x + cols.start..space.x + cols.end,
        rows: space.y + rows.start..space.y + rows.end,
    }
}

/// The space-relative positions `p` with `0 <= p + min` and `p + max < len`.
fn axis(len: usize, min: i32, max: i32) -> Range<usize> {
    let start = (-i64::from(min)).max(0);
    let end = len as i64 - i64::from(max);
    if end <= start {
        return 0..0;
    }
    start as usize..end as usize
}

fn intersect(a: Range<usize>, b: Range<usize>) -> Range<usize> {
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
        Some(Reach {
            min_dx,
            max_dx,
            min_dy,
            max_dy,
        })
    }

    /// The interior by brute force: every pixel whose reads are all inside.
    fn brute(space: Rect, accessors: &[(Rect, Option<Reach>)]) -> Vec<(usize, usize)> {
        let mut inside = Vec::new();
        for y in space.y..space.y + space.height {
            for x in space.x..space.x + space.width {
                let ok = accessors.iter().all(|(region, r)| match r {
                    None => false,
                    Some(r) if r.reads_nothing() => true,
                    Some(r) => {
                        (r.min_dx..=r.max_dx).all(|dx| {
                            let c = x as i64 - space.x as i64 + dx as i64;
                            (0..region.width as i64).contains(&c)
                        }) && (r.min_dy..=r.max_dy).all(|dy| {
                            let c = y as i64 - space.y as i64 + dy as i64;
                            (0..region.height as i64).contains(&c)
                        })
                    }
                });
                if ok {
                    inside.push((x, y));
                }
            }
        }
        inside
    }

    fn pixels(i: &Interior) -> Vec<(usize, usize)> {
        i.rows
            .clone()
            .flat_map(|y| i.cols.clone().map(move |x| (x, y)))
            .collect()
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
                        pixels(&interior(space, one)),
                        brute(space, &one),
                        "{space:?} {one:?}"
                    );
                    for f2 in footprints.iter().take(6) {
                        let two = [(r1, f1), (regions[3], *f2)];
                        assert_eq!(
                            pixels(&interior(space, two)),
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
        let space = Rect::full(5, 17);
        let i = interior(space, [(space, reach(-7, 7, -7, 7))]);
        assert!(i.is_empty());
    }

    #[test]
    fn unbounded_footprint_leaves_no_interior() {
        let space = Rect::full(64, 64);
        let i = interior(space, [(space, reach(0, 0, 0, 0)), (space, None)]);
        assert!(i.is_empty());
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
}
