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
//! accessor's footprint and region size, the space's origin, the block width
//! and the rows a block covers (block height x pixels per thread). Thread
//! `tx` of block `bx` writes column `u = bx * BX + tx` of the iteration space
//! and reads accessor column `u + dx`, where the offset `dx` is affine in the
//! absolute output column `sx + u` ([`hipacc_core::ir::footprint`]):
//! `dx = c (sx + u) + [lo, hi]`. The columns a block reads are then
//! `a u + c sx + [lo, hi]` with `a = 1 + c` over its `u`; for `a > 0` the
//! smallest is at the block's first column and the largest at its last, so
//! each edge's test is one linear inequality in `bx` (the same along y).
//! Constant offsets are `c = 0`. Coefficients and bounds are exact in `f64`
//! (dyadic, or widened by the analysis where a division rounds), so the
//! floors and ceilings below are exact.

use hipacc_core::ir::footprint::{AffineAxis, AffineFootprint};

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
    /// Its bounded footprint, affine in the output coordinates.
    pub(crate) reach: AffineFootprint,
}

/// The region starts for an iteration space of `space` pixels at `origin`
/// split into blocks of `block_w x rows` pixels, for the accessors that need
/// checks.
pub(crate) fn region_starts(
    origin: (usize, usize),
    space: (usize, usize),
    block_w: u32,
    rows: u32,
    accessors: &[CheckedAccessor],
) -> RegionStarts {
    let nbx = space.0.div_ceil(block_w as usize) as i64;
    let nby = space.1.div_ceil(rows as usize) as i64;
    let mut s = (0i64, nbx, 0i64, nby);
    for a in accessors {
        let r = a.reach;
        let (l, h) = axis(nbx, block_w.into(), a.size.0, origin.0, r.x);
        let (t, b) = axis(nby, rows.into(), a.size.1, origin.1, r.y);
        s = (s.0.max(l), s.1.min(h), s.2.max(t), s.3.min(b));
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
/// one axis with `n` blocks of `size` pixels reading a region of `extent`
/// pixels at `coef (origin + u) + [lo, hi]` from column `u`.
fn axis(n: i64, size: i64, extent: usize, origin: usize, r: AffineAxis) -> (i64, i64) {
    let a = 1.0 + r.coef;
    let base = r.coef * origin as f64;
    let (lo, hi) = (base + r.lo, base + r.hi);
    let last = extent as f64 - 1.0;
    let size = size as f64;
    let (low, high) = if a > 0.0 {
        // a * bx * size + lo < 0  <=>  bx < -lo / (a size).
        let low = (-lo / (a * size)).ceil();
        // a ((bx + 1) size - 1) + hi > last  <=>  bx > ((last - hi) / a + 1) / size - 1.
        let high = (((last - hi) / a + 1.0) / size).floor();
        (low, high)
    } else if a == 0.0 && lo >= 0.0 && hi <= last {
        // Every pixel reads the same positions, all inside.
        (0.0, n as f64)
    } else {
        // Reads that run backwards (or a fixed position outside): checks
        // everywhere, which the kernel runs as the fallback.
        (n as f64, 0.0)
    };
    let clamp = |v: f64| v.clamp(0.0, n as f64) as i64;
    (clamp(low), clamp(high))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn constant(lo: i32, hi: i32) -> AffineAxis {
        AffineAxis {
            coef: 0.0,
            lo: lo.into(),
            hi: hi.into(),
        }
    }

    /// Brute force: does any pixel of block `b` read outside `[0, extent)`,
    /// below and above? Pixel `p` reads `p + coef (origin + p) + [lo, hi]`.
    fn needs(b: i64, size: i64, extent: i64, origin: i64, r: AffineAxis) -> (bool, bool) {
        let at = |p: i64| p as f64 + r.coef * (origin + p) as f64;
        let block = b * size..(b + 1) * size;
        let low = block.clone().any(|p| at(p) + r.lo < 0.0);
        let high = block
            .into_iter()
            .any(|p| at(p) + r.hi > (extent - 1) as f64);
        (low, high)
    }

    /// For every block: checked exactly when a read leaves the region.
    fn check_axis(r: AffineAxis) {
        for extent in 1..40i64 {
            for size in [1i64, 4, 8, 32] {
                for origin in [0i64, 3, 8] {
                    let n = (extent + size - 1) / size;
                    let (low, high) = axis(n, size, extent as usize, origin as usize, r);
                    for b in 0..n {
                        let (lo, hi) = needs(b, size, extent, origin, r);
                        let at = format!("e={extent} s={size} o={origin} b={b} {r:?}");
                        assert_eq!(b < low, lo, "low {at}");
                        assert_eq!(b >= high, hi, "high {at}");
                    }
                }
            }
        }
    }

    #[test]
    fn constant_offsets_check_exactly_the_blocks_that_leave() {
        for min_d in -9..=0 {
            for max_d in 0..=9 {
                check_axis(constant(min_d, max_d));
            }
        }
    }

    #[test]
    fn affine_offsets_check_exactly_the_blocks_that_leave() {
        // A restriction reads 2x + i (offset x() + i), a prolongation x / 2
        // (offset x() / 2 - x(): coefficient -1/2, one unit of slack).
        for (coef, lo, hi) in [
            (1.0, 0.0, 1.0),
            (1.0, -1.0, 2.0),
            (-0.5, -1.0, 1.0),
            (-0.5, 0.0, 0.0),
        ] {
            check_axis(AffineAxis { coef, lo, hi });
        }
    }

    #[test]
    fn starts_combine_accessors() {
        let a = CheckedAccessor {
            size: (100, 50),
            reach: AffineFootprint {
                x: constant(-2, 2),
                y: constant(-1, 1),
            },
        };
        let s = region_starts((0, 0), (100, 50), 32, 16, &[a]);
        assert_eq!(
            s,
            RegionStarts {
                left: 1,
                right: 3,
                top: 1,
                bottom: 3
            }
        );
        let none = region_starts((0, 0), (100, 50), 32, 16, &[]);
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
