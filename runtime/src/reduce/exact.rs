//! Sums whose result does not depend on the order of the additions.
//!
//! A floating-point sum depends on the grouping of its additions: a sum
//! split over threads, or over the ranks of a distributed image, rounds
//! differently for every split. [`ExactSum`] adds each value exactly into
//! integer accumulators, one per binary exponent, and rounds only when the
//! total is read. Integer additions commute, so the same values give the
//! same total however they are grouped: one thread or many, one process or
//! any number of ranks. A pure Neumann Poisson problem needs this: the
//! mean it subtracts moves every pixel of the solution, so a distributed
//! solve matches the single-process one bit for bit only with a mean that
//! both compute alike.

use super::{with_rows, Grouping};
use crate::Result;
use hipacc_core::{Image, Pixel, Rect};

/// Binary exponents of `f64` (the biased exponent field).
const EXPONENTS: usize = 2048;

/// An order-independent sum of `f64` values (see the [module docs](self)).
///
/// Each finite value `m · 2^(e - 1075)` (`m` its 53-bit integer mantissa)
/// adds `±m` to the accumulator of exponent `e`, exactly: an `i128`
/// accumulator holds more than `2^70` such additions. Non-finite values are
/// summed apart (their `f64` sum does not depend on the order either).
#[derive(Clone)]
pub(crate) struct ExactSum {
    mantissas: Box<[i128]>,
    non_finite: f64,
}

impl ExactSum {
    /// The empty sum.
    pub(crate) fn new() -> ExactSum {
        ExactSum {
            mantissas: vec![0; EXPONENTS].into_boxed_slice(),
            non_finite: 0.0,
        }
    }

    /// Adds `v` exactly.
    pub(crate) fn add(&mut self, v: f64) {
        let bits = v.to_bits();
        let exponent = ((bits >> 52) & 0x7ff) as usize;
        let fraction = bits & ((1 << 52) - 1);
        if exponent == 0x7ff {
            self.non_finite += v;
            return;
        }
        // Subnormals share the scale of the smallest normal exponent.
        let (slot, m) = match exponent {
            0 => (1, fraction),
            e => (e, fraction | 1 << 52),
        };
        let m = i128::from(m);
        self.mantissas[slot] += if bits >> 63 == 1 { -m } else { m };
    }

    /// Adds every value of `other` exactly.
    pub(crate) fn merge(mut self, other: &ExactSum) -> ExactSum {
        for (a, b) in self.mantissas.iter_mut().zip(other.mantissas.iter()) {
            *a += b;
        }
        self.non_finite += other.non_finite;
        self
    }

    /// The total, rounded to `f64`: the accumulators from the smallest
    /// exponent up, each rounded to `f64` and added. Only the accumulators
    /// enter, so equal sets of values give equal bits.
    pub(crate) fn value(&self) -> f64 {
        let finite: f64 = self
            .mantissas
            .iter()
            .enumerate()
            .filter(|(_, m)| **m != 0)
            .map(|(e, &m)| m as f64 * power_of_two(e as i32 - 1075))
            .sum();
        finite + self.non_finite
    }
}

/// Sending the accumulators between the ranks of a distributed sum.
#[cfg(any(feature = "distributed", test))]
impl ExactSum {
    /// The accumulators as bytes, to send to another process.
    pub(crate) fn to_bytes(&self) -> Vec<u8> {
        let mut out: Vec<u8> = self
            .mantissas
            .iter()
            .flat_map(|m| m.to_le_bytes())
            .collect();
        out.extend_from_slice(&self.non_finite.to_le_bytes());
        out
    }

    /// The sum [`to_bytes`](Self::to_bytes) gave `bytes` for.
    pub(crate) fn from_bytes(bytes: &[u8]) -> ExactSum {
        let mut sum = ExactSum::new();
        for (m, b) in sum.mantissas.iter_mut().zip(bytes.chunks_exact(16)) {
            *m = i128::from_le_bytes(b.try_into().unwrap_or_default());
        }
        let tail = &bytes[bytes.len().saturating_sub(8)..];
        sum.non_finite = f64::from_le_bytes(tail.try_into().unwrap_or_default());
        sum
    }

    /// Bytes of [`to_bytes`](Self::to_bytes).
    pub(crate) const BYTES: usize = EXPONENTS * 16 + 8;
}

/// `2^k` for `k` in `[-1074, 1023]`, exactly.
fn power_of_two(k: i32) -> f64 {
    if k >= -1022 {
        f64::from_bits(((k + 1023) as u64) << 52)
    } else {
        f64::from_bits(1u64 << (k + 1074))
    }
}

/// The sum of the pixels of `region` (the whole image if `None`), the same
/// bits for any order of the pixels: each is added exactly, the total
/// rounded once per binary exponent (see the [module docs](self)). The
/// result is within a few `f64` rounding steps of the exact sum. Runs on
/// the host (a GPU image is read back).
///
/// ```
/// use hipacc::{reduce, Image};
/// let img = Image::from_fn(300, 301, |x, y| ((x * 7 + y * 13) % 97) as f32 * 0.1 - 3.0)?;
/// let flipped = Image::from_fn(300, 301, |x, y| ((x * 7 + (300 - y) * 13) % 97) as f32 * 0.1 - 3.0)?;
/// let s = reduce::exact_sum(&img, None)?;
/// assert_eq!(s.to_bits(), reduce::exact_sum(&flipped, None)?.to_bits());
/// assert!((s - reduce::sum(&hipacc::Device::cpu(), &img, None)?).abs() < 1e-9 * s.abs());
/// # Ok::<(), hipacc::Error>(())
/// ```
pub fn exact_sum<T: Pixel + Into<f64>>(image: &Image<T>, region: Option<Rect>) -> Result<f64> {
    Ok(exact_sum_parts(image, region)?.value())
}

/// The accumulators of [`exact_sum`], before rounding.
pub(crate) fn exact_sum_parts<T: Pixel + Into<f64>>(
    image: &Image<T>,
    region: Option<Rect>,
) -> Result<ExactSum> {
    with_rows(
        image,
        region,
        // Integer additions: the grouping does not change the result.
        Grouping::PerTask,
        ExactSum::new,
        |mut acc, row| {
            for &p in row {
                acc.add(p.into());
            }
            acc
        },
        |a, b| a.merge(&b),
    )
}

/// The mean of the pixels of `region` from [`exact_sum`]: the same bits
/// for any order of the pixels.
pub fn exact_mean<T: Pixel + Into<f64>>(image: &Image<T>, region: Option<Rect>) -> Result<f64> {
    let r = region.unwrap_or(Rect::full(image.width(), image.height()));
    Ok(exact_sum(image, Some(r))? / (r.width * r.height) as f64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_sum_does_not_depend_on_the_order() {
        let values: Vec<f64> = (0..10_000)
            .map(|i| {
                let h = (i as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15);
                ((h >> 11) as f64 / (1u64 << 53) as f64 - 0.5) * 2f64.powi((h % 60) as i32 - 30)
            })
            .collect();
        let sum_of = |vs: &mut dyn Iterator<Item = f64>| {
            let mut s = ExactSum::new();
            vs.for_each(|v| s.add(v));
            s
        };
        let forward = sum_of(&mut values.iter().copied());
        let backward = sum_of(&mut values.iter().rev().copied());
        let halves = sum_of(&mut values[..3333].iter().copied())
            .merge(&sum_of(&mut values[3333..].iter().copied()));
        assert_eq!(forward.value().to_bits(), backward.value().to_bits());
        assert_eq!(forward.value().to_bits(), halves.value().to_bits());
        let sent = ExactSum::from_bytes(&forward.to_bytes());
        assert_eq!(sent.value().to_bits(), forward.value().to_bits());
        assert_eq!(forward.to_bytes().len(), ExactSum::BYTES);
    }

    #[test]
    fn cancellation_and_special_values_are_exact() {
        let mut s = ExactSum::new();
        for v in [1e300, 1.0, -1e300, 5e-324, -5e-324, 2.5e-310] {
            s.add(v);
        }
        assert_eq!(s.value(), 1.0 + 2.5e-310);
        s.add(f64::INFINITY);
        assert_eq!(s.value(), f64::INFINITY);
        s.add(f64::NEG_INFINITY);
        assert!(s.value().is_nan());
    }
}
