//! Operators on evaluator [`Value`]s, each in its operand type's own
//! precision and with Rust's semantics: integers wrap (`+ - * << >>`),
//! integer division by zero and `MIN / -1` are errors (Rust panics on both),
//! `as` saturates float to integer, vectors work lane by lane and broadcast a
//! scalar operand.

use crate::ir::{BinaryOp, ReduceOp, Scalar4, ScalarType, UnaryOp, Value};
use crate::Pixel;
use std::ops::{BitAnd, BitOr, BitXor, Not};

/// Integer lane types.
pub(super) trait Int:
    Pixel
    + Ord
    + BitAnd<Output = Self>
    + BitOr<Output = Self>
    + BitXor<Output = Self>
    + Not<Output = Self>
{
    const ZERO: Self;
    fn add(self, o: Self) -> Self;
    fn sub(self, o: Self) -> Self;
    fn mul(self, o: Self) -> Self;
    fn div(self, o: Self) -> Option<Self>;
    fn rem(self, o: Self) -> Option<Self>;
    fn shl(self, n: u32) -> Self;
    fn shr(self, n: u32) -> Self;
    fn abs(self) -> Self;
    fn signum(self) -> Self;
}

macro_rules! int_impl {
    ($($t:ty: $abs:expr, $signum:expr);*) => {$(
        impl Int for $t {
            const ZERO: Self = 0;
            fn add(self, o: Self) -> Self { self.wrapping_add(o) }
            fn sub(self, o: Self) -> Self { self.wrapping_sub(o) }
            fn mul(self, o: Self) -> Self { self.wrapping_mul(o) }
            fn div(self, o: Self) -> Option<Self> { self.checked_div(o) }
            fn rem(self, o: Self) -> Option<Self> { self.checked_rem(o) }
            fn shl(self, n: u32) -> Self { self.wrapping_shl(n) }
            fn shr(self, n: u32) -> Self { self.wrapping_shr(n) }
            fn abs(self) -> Self { $abs(self) }
            fn signum(self) -> Self { $signum(self) }
        }
    )*};
}
int_impl!(
    u8: |v| v, |v| (v > 0) as u8;
    u16: |v| v, |v| (v > 0) as u16;
    i32: i32::wrapping_abs, i32::signum;
    u32: |v| v, |v| (v > 0) as u32
);

/// Float lane types, with the math functions of the intrinsics.
pub(super) trait Float:
    Pixel
    + PartialOrd
    + std::ops::Add<Output = Self>
    + std::ops::Sub<Output = Self>
    + std::ops::Mul<Output = Self>
    + std::ops::Div<Output = Self>
    + std::ops::Rem<Output = Self>
    + std::ops::Neg<Output = Self>
{
    /// A one-argument function by intrinsic name.
    fn unary(self, f: crate::ir::Intrinsic) -> Option<Self>;
    /// A two-argument function (`powf`, `atan2`, `hypot`, `min`, `max`).
    fn binary(self, f: crate::ir::Intrinsic, o: Self) -> Option<Self>;
    /// `self.powi(n)`.
    fn powi(self, n: i32) -> Self;
    /// `self.mul_add(a, b)`.
    fn mul_add(self, a: Self, b: Self) -> Self;
}

macro_rules! float_impl {
    ($($t:ty),*) => {$(
        impl Float for $t {
            fn unary(self, f: crate::ir::Intrinsic) -> Option<Self> {
                use crate::ir::Intrinsic::*;
                Some(match f {
                    Abs => self.abs(),
                    Sqrt => self.sqrt(),
                    Exp => self.exp(),
                    Exp2 => self.exp2(),
                    Ln => self.ln(),
                    Log2 => self.log2(),
                    Log10 => self.log10(),
                    Sin => self.sin(),
                    Cos => self.cos(),
                    Tan => self.tan(),
                    Atan => self.atan(),
                    Floor => self.floor(),
                    Ceil => self.ceil(),
                    Round => self.round(),
                    Signum => self.signum(),
                    _ => return None,
                })
            }
            fn binary(self, f: crate::ir::Intrinsic, o: Self) -> Option<Self> {
                use crate::ir::Intrinsic::*;
                Some(match f {
                    Powf => self.powf(o),
                    Atan2 => self.atan2(o),
                    Hypot => self.hypot(o),
                    Min => self.min(o),
                    Max => self.max(o),
                    _ => return None,
                })
            }
            fn powi(self, n: i32) -> Self { self.powi(n) }
            fn mul_add(self, a: Self, b: Self) -> Self { <$t>::mul_add(self, a, b) }
        }
    )*};
}
float_impl!(f32, f64);

fn mismatch(what: &str, a: &Value, b: &Value) -> String {
    format!("bug: {what} on `{}` and `{}`", a.ty(), b.ty())
}

/// `a op b`.
pub(super) fn binary(op: BinaryOp, a: Value, b: Value) -> Result<Value, String> {
    match (a, b) {
        (Value::Vec4(x), Value::Vec4(y)) => lanes(x, |i, l| binary(op, l, y[i].to_value())),
        (Value::Vec4(x), s) => lanes(x, |_, l| binary(op, l, s)),
        (s, Value::Vec4(y)) => lanes(y, |_, l| binary(op, s, l)),
        _ if matches!(op, BinaryOp::Shl | BinaryOp::Shr) => shift(op, a, b),
        (Value::U8(x), Value::U8(y)) => int_binary(op, x, y),
        (Value::U16(x), Value::U16(y)) => int_binary(op, x, y),
        (Value::I32(x), Value::I32(y)) => int_binary(op, x, y),
        (Value::U32(x), Value::U32(y)) => int_binary(op, x, y),
        (Value::F32(x), Value::F32(y)) => float_binary(op, x, y),
        (Value::F64(x), Value::F64(y)) => float_binary(op, x, y),
        (Value::Bool(x), Value::Bool(y)) => bool_binary(op, x, y),
        _ => Err(mismatch("operator", &a, &b)),
    }
}

/// Applies `f` to each lane and rebuilds the vector.
pub(super) fn lanes(
    x: [Scalar4; 4],
    mut f: impl FnMut(usize, Value) -> Result<Value, String>,
) -> Result<Value, String> {
    let mut out = x;
    for (i, lane) in out.iter_mut().enumerate() {
        let v = f(i, x[i].to_value())?;
        *lane = Scalar4::from_value(v).ok_or_else(|| format!("bug: `{}` lane", v.ty()))?;
    }
    Ok(Value::Vec4(out))
}

fn int_binary<T: Int>(op: BinaryOp, x: T, y: T) -> Result<Value, String> {
    use BinaryOp::*;
    let checked = |r: Option<T>| {
        if y == T::ZERO {
            Err("integer division by zero".to_string())
        } else {
            r.ok_or_else(|| "integer overflow in division".to_string())
        }
    };
    Ok(match op {
        Add => x.add(y).to_value(),
        Sub => x.sub(y).to_value(),
        Mul => x.mul(y).to_value(),
        Div => checked(x.div(y))?.to_value(),
        Rem => checked(x.rem(y))?.to_value(),
        And => (x & y).to_value(),
        Or => (x | y).to_value(),
        BitXor => (x ^ y).to_value(),
        Eq => Value::Bool(x == y),
        Ne => Value::Bool(x != y),
        Lt => Value::Bool(x < y),
        Le => Value::Bool(x <= y),
        Gt => Value::Bool(x > y),
        Ge => Value::Bool(x >= y),
        Shl | Shr => unreachable!("bug: shifts are handled by `shift`"),
    })
}

fn float_binary<T: Float>(op: BinaryOp, x: T, y: T) -> Result<Value, String> {
    use BinaryOp::*;
    Ok(match op {
        Add => (x + y).to_value(),
        Sub => (x - y).to_value(),
        Mul => (x * y).to_value(),
        Div => (x / y).to_value(),
        Rem => (x % y).to_value(),
        Eq => Value::Bool(x == y),
        Ne => Value::Bool(x != y),
        Lt => Value::Bool(x < y),
        Le => Value::Bool(x <= y),
        Gt => Value::Bool(x > y),
        Ge => Value::Bool(x >= y),
        And | Or | BitXor | Shl | Shr => return Err(format!("bug: `{op:?}` on floats")),
    })
}

fn bool_binary(op: BinaryOp, x: bool, y: bool) -> Result<Value, String> {
    use BinaryOp::*;
    Ok(Value::Bool(match op {
        And => x && y,
        Or => x || y,
        BitXor | Ne => x != y,
        Eq => x == y,
        Lt => !x & y,
        Le => x <= y,
        Gt => x & !y,
        Ge => x >= y,
        Add | Sub | Mul | Div | Rem | Shl | Shr => return Err(format!("bug: `{op:?}` on bool")),
    }))
}

/// `a << b`, `a >> b`: the amount may be any integer type; like Rust
/// without overflow checks, it is taken modulo the bit width.
fn shift(op: BinaryOp, a: Value, b: Value) -> Result<Value, String> {
    let n = match b {
        Value::U8(v) => v as u32,
        Value::U16(v) => v as u32,
        Value::I32(v) => v as u32,
        Value::U32(v) => v,
        _ => return Err(mismatch("shift", &a, &b)),
    };
    fn go<T: Int>(op: BinaryOp, x: T, n: u32) -> Value {
        if op == BinaryOp::Shl {
            x.shl(n).to_value()
        } else {
            x.shr(n).to_value()
        }
    }
    Ok(match a {
        Value::U8(x) => go(op, x, n),
        Value::U16(x) => go(op, x, n),
        Value::I32(x) => go(op, x, n),
        Value::U32(x) => go(op, x, n),
        _ => return Err(mismatch("shift", &a, &b)),
    })
}

/// `-a`, `!a`.
pub(super) fn unary(op: UnaryOp, a: Value) -> Result<Value, String> {
    Ok(match (op, a) {
        (_, Value::Vec4(x)) => return lanes(x, |_, l| unary(op, l)),
        (UnaryOp::Neg, Value::I32(v)) => Value::I32(v.wrapping_neg()),
        (UnaryOp::Neg, Value::F32(v)) => Value::F32(-v),
        (UnaryOp::Neg, Value::F64(v)) => Value::F64(-v),
        (UnaryOp::Not, Value::Bool(v)) => Value::Bool(!v),
        (UnaryOp::Not, Value::U8(v)) => Value::U8(!v),
        (UnaryOp::Not, Value::U16(v)) => Value::U16(!v),
        (UnaryOp::Not, Value::I32(v)) => Value::I32(!v),
        (UnaryOp::Not, Value::U32(v)) => Value::U32(!v),
        _ => return Err(format!("bug: `{op:?}` on `{}`", a.ty())),
    })
}

/// `a as to`, with Rust's semantics.
pub(super) fn cast(a: Value, to: ScalarType) -> Result<Value, String> {
    macro_rules! to {
        ($x:expr) => {
            match to {
                ScalarType::U8 => Value::U8($x as u8),
                ScalarType::U16 => Value::U16($x as u16),
                ScalarType::I32 => Value::I32($x as i32),
                ScalarType::U32 => Value::U32($x as u32),
                ScalarType::F32 => Value::F32($x as f32),
                ScalarType::F64 => Value::F64($x as f64),
                ScalarType::Bool => return Err(format!("bug: cast of `{}` to bool", a.ty())),
            }
        };
    }
    Ok(match a {
        Value::Bool(b) if to == ScalarType::Bool => Value::Bool(b),
        Value::Bool(b) if to.is_int() => to!(b as u8),
        Value::U8(x) => to!(x),
        Value::U16(x) => to!(x),
        Value::I32(x) => to!(x),
        Value::U32(x) => to!(x),
        Value::F32(x) => to!(x),
        Value::F64(x) => to!(x),
        _ => return Err(format!("bug: cast of `{}` to `{}`", a.ty(), to.rust_name())),
    })
}

/// One step of a local reduction: `acc op v` (Min/Max as Rust's `min`/`max`).
pub(super) fn combine(op: ReduceOp, acc: Value, v: Value) -> Result<Value, String> {
    use crate::ir::Intrinsic;
    match op {
        ReduceOp::Sum => binary(BinaryOp::Add, acc, v),
        ReduceOp::Prod => binary(BinaryOp::Mul, acc, v),
        ReduceOp::Min => super::intrinsics::call(Intrinsic::Min, &[acc, v]),
        ReduceOp::Max => super::intrinsics::call(Intrinsic::Max, &[acc, v]),
    }
}
