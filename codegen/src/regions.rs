//! Region starts: which blocks of a launch need boundary checks on which side.
//!
//! With [`BoundaryScheme::Regions`](crate::BoundaryScheme::Regions) each block
//! runs the body specialised for its region. Block `(bx, by)` checks the left
//! edge when `bx < left`, the right edge when `bx >= right`, the top when
//! `by < top`, the bottom when `by >= bottom`; when it needs both left and
//! right (or top and bottom), because the image is narrower than two blocks or
//! the window wider than the image, it runs the fallback with every check.
//!
//! The starts are computed on the host, per launch, from each checked
//! accessor's footprint and region size, the block width and the rows a block
//! covers (block height x pixels per thread). Thread `tx` of block `bx` writes
//! column `u = bx * BX + tx` of the iteration space and reads accessor column
//! `u + dx`; the block needs a left check when `bx * BX + min_dx < 0` and a
//! right check when `(bx + 1) * BX - 1 + max_dx >= width` (the same along y).

use crate::passes::footprint::Footprint;

/// Block indices where boundary checks start; passed to the kernel as four
/// `int` arguments.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub struct RegionStarts {
    /// Blocks `bx < left` check the left edge.
    pub left: u32,
    /// Blocks `bx >= right` check the right edge.
    pub right: u32,
    /// Blocks `by < top` check the top edge.
    pub top: u32,
    /// Blocks `by >= bottom` check the bottom edge.
    pub bottom: u32,
}

/// One accessor as the region computation sees it.
#[derive(Clone, Copy, Debug)]
pub(crate) struct CheckedAccessor {
    /// Region width and height.
    pub(crate) size: (usize, usize),
    /// Its bounded footprint.
    pub(crate) footprint: Footprint,
}

/// The region starts for an iteration space of `space` pixels split into
/// blocks of `block_w x rows` pixels, for the accessors that need checks.
pub(crate) fn region_starts(
    space: (usize, usize),
    block_w: u32,
    rows: u32,
    accessors: &[CheckedAccessor],
) -> RegionStarts {
    let nbx = space.0.div_ceil(block_w as usize) as i64;
    let nby = space.1.div_ceil(rows as usize) as i64;
    let mut s = (0i64, nbx, 0i64, nby);
    for a in accessors {
        let f = a.footprint;
        let (l, r) = axis(nbx, block_w as i64, a.size.0 as i64, f.min_dx, f.max_dx);
        let (t, b) = axis(nby, rows as i64, a.size.1 as i64, f.min_dy, f.max_dy);
        s = (s.0.max(l), s.1.min(r), s.2.max(t), s.3.min(b));
    }
    let c = |v: i64| v.clamp(0, u32::MAX as i64) as u32;
    RegionStarts {
        left: c(s.0),
        right: c(s.1),
        top: c(s.2),
        bottom: c(s.3),
    }
}

/// `(first block without a low check, first block with a high check)` along
/// one axis with `n` blocks of `size` pixels over an extent `extent`.
fn axis(n: i64, size: i64, extent: i64, min_d: i32, max_d: i32) -> (i64, i64) {
    let ceil_div = |a: i64, b: i64| (a + b - 1).div_euclid(b);
    // bx * size + min_d < 0  <=>  bx < ceil(-min_d / size)
    let low = ceil_div(-(min_d as i64), size).clamp(0, n);
    // (bx + 1) * size - 1 + max_d >= extent  <=>  bx >= ceil((extent - max_d + 1 - size) / size)
    let high = ceil_div(extent - max_d as i64 + 1 - size, size).clamp(0, n);
    (low, high)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Brute force: does any pixel of block `b` read outside `[0, extent)`?
    fn needs(b: i64, size: i64, extent: i64, min_d: i32, max_d: i32) -> (bool, bool) {
        let lo = (b * size..(b + 1) * size).any(|u| u + (min_d as i64) < 0);
        let hi = (b * size..(b + 1) * size).any(|u| u + (max_d as i64) >= extent);
        (lo, hi)
    }

    #[test]
    fn axis_matches_brute_force() {
        for extent in 1..40i64 {
            for size in [1i64, 4, 8, 32] {
                let n = (extent + size - 1) / size;
                for min_d in -9..=0 {
                    for max_d in 0..=9 {
                        let (low, high) = axis(n, size, extent, min_d, max_d);
                        for b in 0..n {
                            let (lo, hi) = needs(b, size, extent, min_d, max_d);
                            assert_eq!(b < low, lo, "low e={extent} s={size} d={min_d} b={b}");
                            assert_eq!(b >= high, hi, "high e={extent} s={size} d={max_d} b={b}");
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn starts_combine_accessors() {
        let a = CheckedAccessor {
            size: (100, 50),
            footprint: Footprint {
                min_dx: -2,
                max_dx: 2,
                min_dy: -1,
                max_dy: 1,
            },
        };
        let s = region_starts((100, 50), 32, 16, &[a]);
        assert_eq!(
            s,
            RegionStarts {
                left: 1,
                right: 3,
                top: 1,
                bottom: 3
            }
        );
        let none = region_starts((100, 50), 32, 16, &[]);
        assert_eq!(
            none,
            RegionStarts {
                left: 0,
                right: 4,
                top: 0,
                bottom: 4
            }
        );
    }
}
