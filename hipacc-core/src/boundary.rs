//! Boundary conditions: what an accessor returns for a read outside its image.
//!
//! This file is the single definition of each mode's index mathematics; the
//! evaluator, the CPU backend and the OpenCL/CUDA code generators all use it
//! (the generators print the same formulas as C). Every mode is exact at any
//! distance outside the image, also when a window is wider than the image.
//!
//! For an extent `n` and an index `i` outside `[0, n)`:
//!
//! | mode | index |
//! |---|---|
//! | `Clamp` | `clamp(i, 0, n-1)` |
//! | `Repeat` | `i mod n` (non-negative) |
//! | `Mirror` | reflection with the edge duplicated, period `2n`: `… 1 0 \| 0 1 … n-1 \| n-1 n-2 …` |
//! | `MirrorInterior` | reflection without duplicating the edge, period `2(n-1)`: `… 2 1 \| 0 1 … n-1 \| n-2 …` |
//! | `Constant(c)` | no index: the read returns `c` |
//! | `Undefined` | no check; debug builds assert the read is in range |

use serde::{Deserialize, Serialize};

/// How reads outside an accessor's image are answered.
///
/// `Constant` carries the pixel value returned for every read outside the image.
///
/// ```
/// use hipacc_core::Boundary;
/// let b: Boundary<f32> = Boundary::Constant(0.0);
/// assert_eq!(b.mode(), hipacc_core::BoundaryMode::Constant);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Default)]
pub enum Boundary<T> {
    /// No check: reading outside is a bug of the kernel (asserted in debug builds).
    #[default]
    Undefined,
    /// The nearest edge pixel.
    Clamp,
    /// Periodic continuation.
    Repeat,
    /// Reflection with the edge pixel duplicated (period `2n`).
    Mirror,
    /// Reflection about the edge pixel, which is not duplicated (period `2(n-1)`).
    MirrorInterior,
    /// A fixed value.
    Constant(T),
}

/// The mode of a [`Boundary`] without its constant: what code generation keys on.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, PartialOrd, Ord)]
pub enum BoundaryMode {
    /// See [`Boundary::Undefined`].
    Undefined,
    /// See [`Boundary::Clamp`].
    Clamp,
    /// See [`Boundary::Repeat`].
    Repeat,
    /// See [`Boundary::Mirror`].
    Mirror,
    /// See [`Boundary::MirrorInterior`].
    MirrorInterior,
    /// See [`Boundary::Constant`].
    Constant,
}

impl BoundaryMode {
    /// Every mode, in a fixed order (for tests and enumeration).
    pub const ALL: [BoundaryMode; 6] = [
        BoundaryMode::Undefined,
        BoundaryMode::Clamp,
        BoundaryMode::Repeat,
        BoundaryMode::Mirror,
        BoundaryMode::MirrorInterior,
        BoundaryMode::Constant,
    ];

    /// Maps `i` into `[0, n)` for the index-remapping modes.
    ///
    /// Returns `None` for `Constant` when `i` is outside (the caller returns the
    /// constant) and for `Undefined` when `i` is outside (the read is invalid).
    /// `n` must be at least 1.
    #[inline(always)]
    pub fn remap(self, i: i64, n: i64) -> Option<i64> {
        debug_assert!(n >= 1, "bug: boundary remap on an empty extent");
        if (0..n).contains(&i) {
            return Some(i);
        }
        match self {
            BoundaryMode::Undefined | BoundaryMode::Constant => None,
            BoundaryMode::Clamp => Some(clamp(i, n)),
            BoundaryMode::Repeat => Some(repeat(i, n)),
            BoundaryMode::Mirror => Some(mirror(i, n)),
            BoundaryMode::MirrorInterior => Some(mirror_interior(i, n)),
        }
    }
}

impl<T> Boundary<T> {
    /// The mode without the constant.
    pub fn mode(&self) -> BoundaryMode {
        match self {
            Boundary::Undefined => BoundaryMode::Undefined,
            Boundary::Clamp => BoundaryMode::Clamp,
            Boundary::Repeat => BoundaryMode::Repeat,
            Boundary::Mirror => BoundaryMode::Mirror,
            Boundary::MirrorInterior => BoundaryMode::MirrorInterior,
            Boundary::Constant(_) => BoundaryMode::Constant,
        }
    }

    /// The constant of `Constant`, if this is that mode.
    pub fn constant(&self) -> Option<&T> {
        match self {
            Boundary::Constant(c) => Some(c),
            _ => None,
        }
    }
}

/// `clamp(i, 0, n-1)`.
#[inline(always)]
pub fn clamp(i: i64, n: i64) -> i64 {
    i.clamp(0, n - 1)
}

/// `i mod n`, non-negative.
#[inline(always)]
pub fn repeat(i: i64, n: i64) -> i64 {
    i.rem_euclid(n)
}

/// Reflection with the edge duplicated: period `2n`, `m = i mod 2n`,
/// `m < n ? m : 2n-1-m`.
#[inline(always)]
pub fn mirror(i: i64, n: i64) -> i64 {
    let m = i.rem_euclid(2 * n);
    if m < n {
        m
    } else {
        2 * n - 1 - m
    }
}

/// Reflection without duplicating the edge: period `2(n-1)`,
/// `m = i mod 2(n-1)`, `m < n ? m : 2(n-1)-m`; an extent of 1 maps to 0.
#[inline(always)]
pub fn mirror_interior(i: i64, n: i64) -> i64 {
    if n == 1 {
        return 0;
    }
    let p = 2 * (n - 1);
    let m = i.rem_euclid(p);
    if m < n {
        m
    } else {
        p - m
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Reference by unfolding the definition step by step from the edge.
    fn walk(mode: BoundaryMode, i: i64, n: i64) -> i64 {
        let mut i = i;
        loop {
            if (0..n).contains(&i) {
                return i;
            }
            i = match mode {
                BoundaryMode::Clamp => i.clamp(0, n - 1),
                BoundaryMode::Repeat => {
                    if i < 0 {
                        i + n
                    } else {
                        i - n
                    }
                }
                BoundaryMode::Mirror => {
                    if i < 0 {
                        -1 - i
                    } else {
                        2 * n - 1 - i
                    }
                }
                BoundaryMode::MirrorInterior => {
                    if n == 1 {
                        0
                    } else if i < 0 {
                        -i
                    } else {
                        2 * (n - 1) - i
                    }
                }
                _ => unreachable!(),
            };
        }
    }

    #[test]
    fn remap_matches_unfolded_definition_at_any_distance() {
        for n in 1..=8i64 {
            for i in -3 * n - 3..=4 * n + 3 {
                for mode in [
                    BoundaryMode::Clamp,
                    BoundaryMode::Repeat,
                    BoundaryMode::Mirror,
                    BoundaryMode::MirrorInterior,
                ] {
                    assert_eq!(
                        mode.remap(i, n),
                        Some(walk(mode, i, n)),
                        "{mode:?} i={i} n={n}"
                    );
                }
                let inside = (0..n).contains(&i);
                assert_eq!(BoundaryMode::Constant.remap(i, n).is_some(), inside);
                assert_eq!(BoundaryMode::Undefined.remap(i, n).is_some(), inside);
            }
        }
    }

    #[test]
    fn documented_patterns() {
        let m: Vec<i64> = (-3..7).map(|i| mirror(i, 4)).collect();
        assert_eq!(m, [2, 1, 0, 0, 1, 2, 3, 3, 2, 1]);
        let mi: Vec<i64> = (-3..7).map(|i| mirror_interior(i, 4)).collect();
        assert_eq!(mi, [3, 2, 1, 0, 1, 2, 3, 2, 1, 0]);
        let r: Vec<i64> = (-3..7).map(|i| repeat(i, 4)).collect();
        assert_eq!(r, [1, 2, 3, 0, 1, 2, 3, 0, 1, 2]);
    }
}
