//! `min` and `max` in compiled kernel bodies.
//!
//! A body's `a.min(b)` and `a.max(b)` keep Rust's semantics: a NaN operand
//! yields the other one. On x86 that costs a compare and a blend per
//! operation on top of the hardware `minps`/`maxps`: a median's sorting
//! network spends most of its time there. A launch that proved that no
//! operand of the body's `min`/`max` is NaN or a negative zero (the pixels
//! read were scanned, and every operand is built from reads by `min`,
//! `max`, `abs`, `floor` and selection only) runs its interior in
//! [`InteriorPlain`](super::InteriorPlain), where [`Extremes`] is the plain
//! compare-and-select, one `minps`. Such operands are ordered, and two of
//! them that compare equal are the same bits, so both forms give the same
//! result. Elsewhere, and off x86, the standard methods are kept.

use super::ReadMode;
use crate::Rgba;

/// `min` and `max` of a kernel body, as the read mode `M` allows.
///
/// ```
/// use hipacc_core::cpu::{Extremes, Interior, InteriorPlain};
/// assert_eq!(Extremes::least::<Interior>(f32::NAN, 1.0), 1.0);
/// assert_eq!(Extremes::least::<InteriorPlain>(2.0_f32, 1.0), 1.0);
/// assert_eq!(Extremes::most::<Interior>(3_i32, 7), 7);
/// ```
pub trait Extremes: Copy {
    /// The smaller of `self` and `other` (`self.min(other)`).
    fn least<M: ReadMode>(self, other: Self) -> Self;
    /// The larger of `self` and `other` (`self.max(other)`).
    fn most<M: ReadMode>(self, other: Self) -> Self;
}

macro_rules! float_extremes {
    ($($t:ty),*) => {$(
        impl Extremes for $t {
            #[inline(always)]
            fn least<M: ReadMode>(self, other: Self) -> Self {
                if cfg!(any(target_arch = "x86", target_arch = "x86_64")) && M::PLAIN_EXTREMES {
                    // One `minps`; `min`'s bits for operands neither NaN
                    // nor negative zero.
                    if self < other { self } else { other }
                } else {
                    self.min(other)
                }
            }
            #[inline(always)]
            fn most<M: ReadMode>(self, other: Self) -> Self {
                if cfg!(any(target_arch = "x86", target_arch = "x86_64")) && M::PLAIN_EXTREMES {
                    if self > other { self } else { other }
                } else {
                    self.max(other)
                }
            }
        }
        impl Extremes for Rgba<$t> {
            #[inline(always)]
            fn least<M: ReadMode>(self, o: Self) -> Self {
                Rgba::new(
                    self.r.least::<M>(o.r),
                    self.g.least::<M>(o.g),
                    self.b.least::<M>(o.b),
                    self.a.least::<M>(o.a),
                )
            }
            #[inline(always)]
            fn most<M: ReadMode>(self, o: Self) -> Self {
                Rgba::new(
                    self.r.most::<M>(o.r),
                    self.g.most::<M>(o.g),
                    self.b.most::<M>(o.b),
                    self.a.most::<M>(o.a),
                )
            }
        }
    )*};
}
float_extremes!(f32, f64);

macro_rules! int_extremes {
    ($($t:ty),*) => {$(
        impl Extremes for $t {
            #[inline(always)]
            fn least<M: ReadMode>(self, other: Self) -> Self {
                Ord::min(self, other)
            }
            #[inline(always)]
            fn most<M: ReadMode>(self, other: Self) -> Self {
                Ord::max(self, other)
            }
        }
    )*};
}
int_extremes!(u8, u16, u32, u64, usize, i8, i16, i32, i64, isize);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cpu::{Interior, InteriorPlain};

    /// Without NaN and negative zero the plain form gives `min`'s and
    /// `max`'s bits, infinities and subnormals included.
    #[test]
    fn the_plain_form_has_the_standard_bits_on_its_operands() {
        let values = [
            0.0_f32,
            1.0,
            -1.0,
            f32::INFINITY,
            f32::NEG_INFINITY,
            1e-40,
            -1e-40,
            f32::MAX,
            f32::MIN,
        ];
        for &a in &values {
            for &b in &values {
                let (a, b) = (std::hint::black_box(a), std::hint::black_box(b));
                assert_eq!(
                    a.least::<InteriorPlain>(b).to_bits(),
                    a.min(b).to_bits(),
                    "{a} {b}"
                );
                assert_eq!(
                    a.most::<InteriorPlain>(b).to_bits(),
                    a.max(b).to_bits(),
                    "{a} {b}"
                );
                let (c, d) = (f64::from(a), f64::from(b));
                assert_eq!(c.least::<InteriorPlain>(d).to_bits(), c.min(d).to_bits());
                assert_eq!(c.most::<InteriorPlain>(d).to_bits(), c.max(d).to_bits());
            }
        }
    }

    /// The exact modes keep Rust's NaN rule.
    #[test]
    fn exact_modes_drop_a_nan_operand() {
        assert_eq!(f32::NAN.least::<Interior>(2.0), 2.0);
        assert_eq!(2.0_f32.least::<Interior>(f32::NAN), 2.0);
        assert_eq!(f64::NAN.most::<Interior>(-2.0), -2.0);
        let p = Rgba::new(f32::NAN, 1.0, 5.0, 0.0);
        let q = Rgba::new(3.0, f32::NAN, 4.0, -1.0);
        assert_eq!(p.least::<Interior>(q), Rgba::new(3.0, 1.0, 4.0, -1.0));
        assert_eq!(p.most::<Interior>(q), Rgba::new(3.0, 1.0, 5.0, 0.0));
    }
}
