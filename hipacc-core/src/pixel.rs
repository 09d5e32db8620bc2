//! Pixel types: the scalars `u8 u16 i32 u32 f32 f64` and the 4-lane [`Rgba`].

use crate::ir::{Scalar4, ScalarType, Type, Value};
use std::fmt::Debug;
use std::ops::{Add, Div, Mul, Neg, Sub};

mod sealed {
    pub trait Sealed {}
}

/// A type an [`Image`](crate::Image) can hold and a kernel can compute with.
///
/// Sealed: the set of pixel types is fixed because every backend must know
/// how to store and compute each of them.
pub trait Pixel:
    sealed::Sealed + Copy + Send + Sync + Default + PartialEq + Debug + Reducible + 'static
{
    /// The IR type.
    const TYPE: Type;
    /// Converts to an evaluator value.
    fn to_value(self) -> Value;
    /// Converts from an evaluator value of the same type (`None` otherwise).
    fn from_value(v: Value) -> Option<Self>;
    /// The lanes as `f64`, as interpolation weighs them (a scalar fills
    /// lane 0, the others are 0): what [`crate::interpolate::sample`] does
    /// through [`Value`], without it, for the CPU backend's reads.
    fn sample_lanes(self) -> [f64; 4];
    /// From lanes weighed in `f64`, rounded as
    /// [`crate::interpolate::sample`] rounds: floats to nearest, integers
    /// half away from zero, saturating.
    fn from_sample_lanes(lanes: [f64; 4]) -> Self;
}

/// The operators of local reductions (`reduce`, `convolve`), per pixel type.
///
/// Integer `sum`/`prod` wrap on overflow, as the GPU backends do. `min`/`max`
/// of floats return the other operand when one is NaN (C's `fmin`/`fmax`).
/// Vectors apply each lane-wise.
#[diagnostic::on_unimplemented(
    message = "`reduce` and `convolve` combine pixel values (numbers or `Rgba`), not `{Self}`",
    label = "the closure's value is a `{Self}`",
    note = "to count or test positions, reduce numbers: `if cond {{ 1 }} else {{ 0 }}` with `Sum` \
            or `Max`"
)]
pub trait Reducible: Copy {
    /// `a + b`.
    fn r_sum(self, other: Self) -> Self;
    /// `a * b`.
    fn r_prod(self, other: Self) -> Self;
    /// The smaller.
    fn r_min(self, other: Self) -> Self;
    /// The larger.
    fn r_max(self, other: Self) -> Self;
}

macro_rules! int_pixel {
    ($t:ty, $st:ident) => {
        impl sealed::Sealed for $t {}
        impl Pixel for $t {
            const TYPE: Type = Type::scalar(ScalarType::$st);
            fn to_value(self) -> Value {
                Value::$st(self)
            }
            fn from_value(v: Value) -> Option<Self> {
                match v {
                    Value::$st(x) => Some(x),
                    _ => None,
                }
            }
            #[inline(always)]
            fn sample_lanes(self) -> [f64; 4] {
                [self as f64, 0.0, 0.0, 0.0]
            }
            #[inline(always)]
            fn from_sample_lanes(lanes: [f64; 4]) -> Self {
                lanes[0].round() as $t
            }
        }
        impl Reducible for $t {
            #[inline(always)]
            fn r_sum(self, o: Self) -> Self {
                self.wrapping_add(o)
            }
            #[inline(always)]
            fn r_prod(self, o: Self) -> Self {
                self.wrapping_mul(o)
            }
            #[inline(always)]
            fn r_min(self, o: Self) -> Self {
                Ord::min(self, o)
            }
            #[inline(always)]
            fn r_max(self, o: Self) -> Self {
                Ord::max(self, o)
            }
        }
        impl LaneScalar for $t {
            fn to_lane(self) -> Scalar4 {
                Scalar4::$st(self)
            }
            fn from_lane(l: Scalar4) -> Option<Self> {
                match l {
                    Scalar4::$st(x) => Some(x),
                    _ => None,
                }
            }
        }
    };
}

macro_rules! float_pixel {
    ($t:ty, $st:ident) => {
        impl sealed::Sealed for $t {}
        impl Pixel for $t {
            const TYPE: Type = Type::scalar(ScalarType::$st);
            fn to_value(self) -> Value {
                Value::$st(self)
            }
            fn from_value(v: Value) -> Option<Self> {
                match v {
                    Value::$st(x) => Some(x),
                    _ => None,
                }
            }
            #[inline(always)]
            fn sample_lanes(self) -> [f64; 4] {
                [self as f64, 0.0, 0.0, 0.0]
            }
            #[inline(always)]
            fn from_sample_lanes(lanes: [f64; 4]) -> Self {
                lanes[0] as $t
            }
        }
        impl Reducible for $t {
            #[inline(always)]
            fn r_sum(self, o: Self) -> Self {
                self + o
            }
            #[inline(always)]
            fn r_prod(self, o: Self) -> Self {
                self * o
            }
            #[inline(always)]
            fn r_min(self, o: Self) -> Self {
                self.min(o)
            }
            #[inline(always)]
            fn r_max(self, o: Self) -> Self {
                self.max(o)
            }
        }
        impl LaneScalar for $t {
            fn to_lane(self) -> Scalar4 {
                Scalar4::$st(self)
            }
            fn from_lane(l: Scalar4) -> Option<Self> {
                match l {
                    Scalar4::$st(x) => Some(x),
                    _ => None,
                }
            }
        }
    };
}

/// A scalar that can be a lane of [`Rgba`].
pub trait LaneScalar: Pixel {
    /// As an evaluator lane.
    fn to_lane(self) -> Scalar4;
    /// From an evaluator lane of the same type.
    fn from_lane(l: Scalar4) -> Option<Self>;
}

int_pixel!(u8, U8);
int_pixel!(u16, U16);
int_pixel!(i32, I32);
int_pixel!(u32, U32);
float_pixel!(f32, F32);
float_pixel!(f64, F64);

/// A four-lane pixel (red, green, blue, alpha). Arithmetic is lane-wise;
/// a vector combines with a scalar of its lane type by broadcasting.
///
/// ```
/// use hipacc_core::Rgba;
/// let p = Rgba::new(1.0f32, 2.0, 3.0, 4.0) * 0.5;
/// assert_eq!(p.g, 1.0);
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq)]
#[repr(C)]
pub struct Rgba<T> {
    /// Red.
    pub r: T,
    /// Green.
    pub g: T,
    /// Blue.
    pub b: T,
    /// Alpha.
    pub a: T,
}

impl<T: Copy> Rgba<T> {
    /// A pixel from its four lanes.
    pub const fn new(r: T, g: T, b: T, a: T) -> Self {
        Rgba { r, g, b, a }
    }
    /// All four lanes set to `v`.
    pub const fn splat(v: T) -> Self {
        Rgba {
            r: v,
            g: v,
            b: v,
            a: v,
        }
    }
    /// Applies `f` to every lane.
    #[inline(always)]
    pub fn map(self, f: impl Fn(T) -> T) -> Self {
        Rgba::new(f(self.r), f(self.g), f(self.b), f(self.a))
    }
    /// Combines two pixels lane by lane.
    #[inline(always)]
    pub fn zip(self, o: Self, f: impl Fn(T, T) -> T) -> Self {
        Rgba::new(
            f(self.r, o.r),
            f(self.g, o.g),
            f(self.b, o.b),
            f(self.a, o.a),
        )
    }
    /// The lanes as an array.
    pub fn to_array(self) -> [T; 4] {
        [self.r, self.g, self.b, self.a]
    }
}

impl<T: LaneScalar> sealed::Sealed for Rgba<T> {}
impl<T: LaneScalar> Pixel for Rgba<T> {
    const TYPE: Type = Type::vec4(T::TYPE.scalar);
    fn to_value(self) -> Value {
        Value::Vec4([
            self.r.to_lane(),
            self.g.to_lane(),
            self.b.to_lane(),
            self.a.to_lane(),
        ])
    }
    fn from_value(v: Value) -> Option<Self> {
        match v {
            Value::Vec4([r, g, b, a]) => Some(Rgba::new(
                T::from_lane(r)?,
                T::from_lane(g)?,
                T::from_lane(b)?,
                T::from_lane(a)?,
            )),
            _ => None,
        }
    }
    #[inline(always)]
    fn sample_lanes(self) -> [f64; 4] {
        self.to_array().map(|l| l.sample_lanes()[0])
    }
    #[inline(always)]
    fn from_sample_lanes(lanes: [f64; 4]) -> Self {
        let [r, g, b, a] = lanes.map(|l| T::from_sample_lanes([l, 0.0, 0.0, 0.0]));
        Rgba::new(r, g, b, a)
    }
}

impl<T: Reducible> Reducible for Rgba<T> {
    #[inline(always)]
    fn r_sum(self, o: Self) -> Self {
        Rgba::new(
            self.r.r_sum(o.r),
            self.g.r_sum(o.g),
            self.b.r_sum(o.b),
            self.a.r_sum(o.a),
        )
    }
    #[inline(always)]
    fn r_prod(self, o: Self) -> Self {
        Rgba::new(
            self.r.r_prod(o.r),
            self.g.r_prod(o.g),
            self.b.r_prod(o.b),
            self.a.r_prod(o.a),
        )
    }
    #[inline(always)]
    fn r_min(self, o: Self) -> Self {
        Rgba::new(
            self.r.r_min(o.r),
            self.g.r_min(o.g),
            self.b.r_min(o.b),
            self.a.r_min(o.a),
        )
    }
    #[inline(always)]
    fn r_max(self, o: Self) -> Self {
        Rgba::new(
            self.r.r_max(o.r),
            self.g.r_max(o.g),
            self.b.r_max(o.b),
            self.a.r_max(o.a),
        )
    }
}

macro_rules! rgba_binop {
    ($tr:ident, $f:ident) => {
        impl<T: Copy + $tr<Output = T>> $tr for Rgba<T> {
            type Output = Rgba<T>;
            #[inline(always)]
            fn $f(self, o: Self) -> Self {
                self.zip(o, |a, b| a.$f(b))
            }
        }
        impl<T: Copy + $tr<Output = T>> $tr<T> for Rgba<T> {
            type Output = Rgba<T>;
            #[inline(always)]
            fn $f(self, o: T) -> Self {
                self.map(|a| a.$f(o))
            }
        }
    };
}
rgba_binop!(Add, add);
rgba_binop!(Sub, sub);
rgba_binop!(Mul, mul);
rgba_binop!(Div, div);

macro_rules! scalar_rgba_binop {
    ($($t:ty),*) => {$(
        impl Add<Rgba<$t>> for $t { type Output = Rgba<$t>; #[inline(always)] fn add(self, o: Rgba<$t>) -> Rgba<$t> { o.map(|b| self + b) } }
        impl Sub<Rgba<$t>> for $t { type Output = Rgba<$t>; #[inline(always)] fn sub(self, o: Rgba<$t>) -> Rgba<$t> { o.map(|b| self - b) } }
        impl Mul<Rgba<$t>> for $t { type Output = Rgba<$t>; #[inline(always)] fn mul(self, o: Rgba<$t>) -> Rgba<$t> { o.map(|b| self * b) } }
        impl Div<Rgba<$t>> for $t { type Output = Rgba<$t>; #[inline(always)] fn div(self, o: Rgba<$t>) -> Rgba<$t> { o.map(|b| self / b) } }
    )*};
}
scalar_rgba_binop!(u8, u16, i32, u32, f32, f64);

impl<T: Copy + Neg<Output = T>> Neg for Rgba<T> {
    type Output = Rgba<T>;
    #[inline(always)]
    fn neg(self) -> Self {
        self.map(|a| -a)
    }
}

macro_rules! rgba_float_methods {
    ($t:ty) => {
        impl Rgba<$t> {
            /// Lane-wise absolute value.
            #[inline(always)]
            pub fn abs(self) -> Self {
                self.map(<$t>::abs)
            }
            /// Lane-wise square root.
            #[inline(always)]
            pub fn sqrt(self) -> Self {
                self.map(<$t>::sqrt)
            }
            /// Lane-wise `e^x`.
            #[inline(always)]
            pub fn exp(self) -> Self {
                self.map(<$t>::exp)
            }
            /// Lane-wise natural logarithm.
            #[inline(always)]
            pub fn ln(self) -> Self {
                self.map(<$t>::ln)
            }
            /// Lane-wise floor.
            #[inline(always)]
            pub fn floor(self) -> Self {
                self.map(<$t>::floor)
            }
            /// Lane-wise ceiling.
            #[inline(always)]
            pub fn ceil(self) -> Self {
                self.map(<$t>::ceil)
            }
            /// Lane-wise minimum.
            #[inline(always)]
            pub fn min(self, o: Self) -> Self {
                self.zip(o, <$t>::min)
            }
            /// Lane-wise maximum.
            #[inline(always)]
            pub fn max(self, o: Self) -> Self {
                self.zip(o, <$t>::max)
            }
            /// Lane-wise power with a scalar exponent.
            #[inline(always)]
            pub fn powf(self, e: $t) -> Self {
                self.map(|a| a.powf(e))
            }
            /// Lane-wise clamp.
            #[inline(always)]
            pub fn clamp(self, lo: $t, hi: $t) -> Self {
                self.map(|a| a.clamp(lo, hi))
            }
        }
    };
}
rgba_float_methods!(f32);
rgba_float_methods!(f64);
