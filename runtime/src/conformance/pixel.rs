//! Test data and comparison per pixel type.

use hipacc_core::{Boundary, BoundaryMode, Pixel, Rgba};

/// A pixel type the suite tests: how to make input data, boundary constants
/// and sentinels, and how to compare results.
pub(crate) trait TestPixel: Pixel {
    /// The type of mask coefficients a weighted window over this type uses
    /// (integers widen to `i32` so sums cannot overflow).
    type Coef: Pixel;
    /// Type name for reports.
    const NAME: &'static str;
    /// Machine epsilon of the lanes; 0 for integers (compared exactly).
    const EPSILON: f64;
    /// An input value from a hash. Floats are multiples of 1/16 in
    /// `[0.5, 1.5)`, so window sums and products with small integer
    /// coefficients are exact; integers span their range (`u8`) or
    /// `-1000..1000` (`i32`).
    fn sample(hash: u32) -> Self;
    /// A mask coefficient from a hash: a small positive integer.
    fn coef(hash: u32) -> Self::Coef;
    /// The non-zero constant of `Boundary::Constant` in the suite.
    fn constant() -> Self;
    /// What output pixels hold before a launch: any pixel outside the
    /// iteration space must still hold it afterwards.
    fn sentinel() -> Self;
    /// The lanes as `f64` (exact for every type tested).
    fn lanes(self) -> Vec<f64>;
}

impl TestPixel for u8 {
    type Coef = i32;
    const NAME: &'static str = "u8";
    const EPSILON: f64 = 0.0;
    fn sample(hash: u32) -> u8 {
        (hash >> 8) as u8
    }
    fn coef(hash: u32) -> i32 {
        1 + (hash % 4) as i32
    }
    fn constant() -> u8 {
        201
    }
    fn sentinel() -> u8 {
        0xAB
    }
    fn lanes(self) -> Vec<f64> {
        vec![f64::from(self)]
    }
}

impl TestPixel for i32 {
    type Coef = i32;
    const NAME: &'static str = "i32";
    const EPSILON: f64 = 0.0;
    fn sample(hash: u32) -> i32 {
        ((hash >> 4) % 2000) as i32 - 1000
    }
    fn coef(hash: u32) -> i32 {
        1 + (hash % 4) as i32
    }
    fn constant() -> i32 {
        -317
    }
    fn sentinel() -> i32 {
        -123_456_789
    }
    fn lanes(self) -> Vec<f64> {
        vec![f64::from(self)]
    }
}

impl TestPixel for f32 {
    type Coef = f32;
    const NAME: &'static str = "f32";
    const EPSILON: f64 = f32::EPSILON as f64;
    fn sample(hash: u32) -> f32 {
        ((hash >> 8) % 16 + 8) as f32 / 16.0
    }
    fn coef(hash: u32) -> f32 {
        (1 + hash % 4) as f32
    }
    fn constant() -> f32 {
        2.75
    }
    fn sentinel() -> f32 {
        -1.0e6
    }
    fn lanes(self) -> Vec<f64> {
        vec![f64::from(self)]
    }
}

impl TestPixel for f64 {
    type Coef = f64;
    const NAME: &'static str = "f64";
    const EPSILON: f64 = f64::EPSILON;
    fn sample(hash: u32) -> f64 {
        f64::from((hash >> 8) % 16 + 8) / 16.0
    }
    fn coef(hash: u32) -> f64 {
        f64::from(1 + hash % 4)
    }
    fn constant() -> f64 {
        -3.25
    }
    fn sentinel() -> f64 {
        -1.0e9
    }
    fn lanes(self) -> Vec<f64> {
        vec![self]
    }
}

impl TestPixel for Rgba<f32> {
    type Coef = f32;
    const NAME: &'static str = "Rgba<f32>";
    const EPSILON: f64 = f32::EPSILON as f64;
    fn sample(hash: u32) -> Rgba<f32> {
        Rgba::new(
            f32::sample(hash),
            f32::sample(mix(hash, 1)),
            f32::sample(mix(hash, 2)),
            f32::sample(mix(hash, 3)),
        )
    }
    fn coef(hash: u32) -> f32 {
        f32::coef(hash)
    }
    fn constant() -> Rgba<f32> {
        Rgba::new(2.75, -1.5, 0.25, 4.0)
    }
    fn sentinel() -> Rgba<f32> {
        Rgba::splat(-1.0e6)
    }
    fn lanes(self) -> Vec<f64> {
        self.to_array().iter().map(|&l| f64::from(l)).collect()
    }
}

/// A well-mixed 32-bit hash of `(a, b)`.
pub(crate) fn mix(a: u32, b: u32) -> u32 {
    let mut h = a.wrapping_mul(0x9E37_79B1) ^ b.wrapping_mul(0x85EB_CA77);
    h ^= h >> 15;
    h = h.wrapping_mul(0x2C1B_3C6D);
    h ^= h >> 12;
    h = h.wrapping_mul(0x297A_2D39);
    h ^ (h >> 15)
}

/// The hash of pixel `(x, y)` of test image number `salt`.
pub(crate) fn pixel_hash(x: usize, y: usize, salt: u32) -> u32 {
    mix(mix(x as u32, y as u32), salt)
}

/// The boundary of `mode` with the suite's constant.
pub(crate) fn boundary<T: TestPixel>(mode: BoundaryMode) -> Boundary<T> {
    match mode {
        BoundaryMode::Undefined => Boundary::Undefined,
        BoundaryMode::Clamp => Boundary::Clamp,
        BoundaryMode::Repeat => Boundary::Repeat,
        BoundaryMode::Mirror => Boundary::Mirror,
        BoundaryMode::MirrorInterior => Boundary::MirrorInterior,
        BoundaryMode::Constant => Boundary::Constant(T::constant()),
    }
}

/// Whether `actual` matches `expected` for a result combining `terms`
/// values: exactly for integers, within the bound of the module docs for
/// floats. NaN matches NaN.
pub(crate) fn matches<T: TestPixel>(expected: T, actual: T, terms: usize) -> bool {
    if T::EPSILON == 0.0 {
        return expected == actual;
    }
    let k = (terms + 4) as f64;
    expected
        .lanes()
        .into_iter()
        .zip(actual.lanes())
        .all(|(e, a)| {
            (e.is_nan() && a.is_nan())
                || e == a
                || (a - e).abs() <= k * T::EPSILON * e.abs().max(1.0)
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integers_compare_exactly() {
        assert!(matches(5u8, 5u8, 9));
        assert!(!matches(5u8, 6u8, 225));
        assert!(!matches(-1000i32, -999i32, 225));
    }

    #[test]
    fn float_bound_admits_rounding_but_not_a_wrong_read() {
        let e = 1350.0f32;
        let ulps = |n: i32| e + n as f32 * f32::EPSILON * e;
        assert!(matches(e, ulps(100), 225));
        // The smallest change a wrong read makes with the suite's data.
        assert!(!matches(e, e + 1.0 / 16.0, 225));
        assert!(!matches(1.0f32, 1.0 + 1.0 / 64.0, 9));
        assert!(matches(f32::NAN, f32::NAN, 1));
        assert!(!matches(1.0f64, 1.0 + 1e-12, 225));
        let v = Rgba::new(1.0f32, 2.0, 3.0, 4.0);
        assert!(!matches(v, Rgba::new(1.0, 2.0, 3.0, 4.5), 1));
    }

    #[test]
    fn float_samples_are_sixteenths_in_range() {
        for h in (0..100_000u32).map(|i| mix(i, 7)) {
            let v = f32::sample(h);
            assert!((0.5..1.5).contains(&v));
            assert_eq!((v * 16.0).fract(), 0.0);
        }
    }
}
