//! Types and literal values of the kernel IR.

use serde::{Deserialize, Serialize};

/// A scalar element type. Pixel types are a scalar type with 1 or 4 lanes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, PartialOrd, Ord)]
pub enum ScalarType {
    /// Comparison results and `if` conditions; never a pixel type.
    Bool,
    /// 8-bit unsigned.
    U8,
    /// 16-bit unsigned.
    U16,
    /// 32-bit signed.
    I32,
    /// 32-bit unsigned.
    U32,
    /// IEEE single precision.
    F32,
    /// IEEE double precision.
    F64,
}

impl ScalarType {
    /// True for `F32` and `F64`.
    pub fn is_float(self) -> bool {
        matches!(self, ScalarType::F32 | ScalarType::F64)
    }
    /// True for the integer types (not `Bool`).
    pub fn is_int(self) -> bool {
        matches!(
            self,
            ScalarType::U8 | ScalarType::U16 | ScalarType::I32 | ScalarType::U32
        )
    }
    /// True for the signed integers.
    pub fn is_signed_int(self) -> bool {
        matches!(self, ScalarType::I32)
    }
    /// Size in bytes of one lane.
    pub fn size(self) -> usize {
        match self {
            ScalarType::Bool | ScalarType::U8 => 1,
            ScalarType::U16 => 2,
            ScalarType::I32 | ScalarType::U32 | ScalarType::F32 => 4,
            ScalarType::F64 => 8,
        }
    }
    /// The Rust name (`f32`, `u8`, …), as written in kernel bodies.
    pub fn rust_name(self) -> &'static str {
        match self {
            ScalarType::Bool => "bool",
            ScalarType::U8 => "u8",
            ScalarType::U16 => "u16",
            ScalarType::I32 => "i32",
            ScalarType::U32 => "u32",
            ScalarType::F32 => "f32",
            ScalarType::F64 => "f64",
        }
    }
    /// Parses a Rust scalar type name.
    pub fn from_rust_name(name: &str) -> Option<ScalarType> {
        Some(match name {
            "bool" => ScalarType::Bool,
            "u8" => ScalarType::U8,
            "u16" => ScalarType::U16,
            "i32" => ScalarType::I32,
            "u32" => ScalarType::U32,
            "f32" => ScalarType::F32,
            "f64" => ScalarType::F64,
            _ => return None,
        })
    }
}

/// A value type: a scalar type with 1 lane, or a 4-lane vector (RGBA).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, PartialOrd, Ord)]
pub struct Type {
    /// Element type of each lane.
    pub scalar: ScalarType,
    /// 1 (scalar) or 4 (RGBA vector).
    pub lanes: u8,
}

impl Type {
    /// A one-lane type.
    pub const fn scalar(scalar: ScalarType) -> Type {
        Type { scalar, lanes: 1 }
    }
    /// A four-lane (RGBA) type.
    pub const fn vec4(scalar: ScalarType) -> Type {
        Type { scalar, lanes: 4 }
    }
    /// `bool`.
    pub const BOOL: Type = Type::scalar(ScalarType::Bool);
    /// `i32`, the type of coordinates, offsets and loop variables.
    pub const I32: Type = Type::scalar(ScalarType::I32);
    /// `f32`.
    pub const F32: Type = Type::scalar(ScalarType::F32);
    /// `f64`.
    pub const F64: Type = Type::scalar(ScalarType::F64);
    /// True for one lane.
    pub fn is_scalar(self) -> bool {
        self.lanes == 1
    }
    /// Size in bytes of a value of this type.
    pub fn size(self) -> usize {
        self.scalar.size() * self.lanes as usize
    }
}

impl std::fmt::Display for Type {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.lanes == 1 {
            write!(f, "{}", self.scalar.rust_name())
        } else {
            write!(f, "Rgba<{}>", self.scalar.rust_name())
        }
    }
}

/// A constant scalar in the IR. Floats are stored as their `f64` bit pattern so
/// that the IR is `Eq + Hash`; the expression's [`Type`] says how to read it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Literal {
    /// `true` / `false`.
    Bool(bool),
    /// Any integer type.
    Int(i64),
    /// Any float type, as `f64::to_bits`.
    Float(u64),
}

impl Literal {
    /// A float literal.
    pub fn float(v: f64) -> Literal {
        Literal::Float(v.to_bits())
    }
    /// The value as `f64` (exact for every integer the pixel types hold).
    pub fn as_f64(self) -> f64 {
        match self {
            Literal::Bool(b) => b as i64 as f64,
            Literal::Int(i) => i as f64,
            Literal::Float(bits) => f64::from_bits(bits),
        }
    }
    /// The value as `i64` (floats truncate toward zero, saturating).
    pub fn as_i64(self) -> i64 {
        match self {
            Literal::Bool(b) => b as i64,
            Literal::Int(i) => i,
            Literal::Float(bits) => f64::from_bits(bits) as i64,
        }
    }
}

/// A run-time value: what the evaluator computes with and what parameters and
/// pixels convert to. Each variant keeps its own precision, so the evaluator
/// rounds exactly as the backends do.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Value {
    /// `bool`.
    Bool(bool),
    /// `u8`.
    U8(u8),
    /// `u16`.
    U16(u16),
    /// `i32`.
    I32(i32),
    /// `u32`.
    U32(u32),
    /// `f32`.
    F32(f32),
    /// `f64`.
    F64(f64),
    /// A four-lane vector; every lane holds the same variant.
    Vec4([Scalar4; 4]),
}

/// One lane of a [`Value::Vec4`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Scalar4 {
    /// `u8` lane.
    U8(u8),
    /// `u16` lane.
    U16(u16),
    /// `i32` lane.
    I32(i32),
    /// `u32` lane.
    U32(u32),
    /// `f32` lane.
    F32(f32),
    /// `f64` lane.
    F64(f64),
}

impl Scalar4 {
    /// The lane as a scalar [`Value`].
    pub fn to_value(self) -> Value {
        match self {
            Scalar4::U8(v) => Value::U8(v),
            Scalar4::U16(v) => Value::U16(v),
            Scalar4::I32(v) => Value::I32(v),
            Scalar4::U32(v) => Value::U32(v),
            Scalar4::F32(v) => Value::F32(v),
            Scalar4::F64(v) => Value::F64(v),
        }
    }
    /// A scalar [`Value`] as a lane (`None` for `Bool` and vectors).
    pub fn from_value(v: Value) -> Option<Scalar4> {
        Some(match v {
            Value::U8(v) => Scalar4::U8(v),
            Value::U16(v) => Scalar4::U16(v),
            Value::I32(v) => Scalar4::I32(v),
            Value::U32(v) => Scalar4::U32(v),
            Value::F32(v) => Scalar4::F32(v),
            Value::F64(v) => Scalar4::F64(v),
            Value::Bool(_) | Value::Vec4(_) => return None,
        })
    }
}

impl Value {
    /// The IR type of this value.
    pub fn ty(&self) -> Type {
        match self {
            Value::Bool(_) => Type::BOOL,
            Value::U8(_) => Type::scalar(ScalarType::U8),
            Value::U16(_) => Type::scalar(ScalarType::U16),
            Value::I32(_) => Type::I32,
            Value::U32(_) => Type::scalar(ScalarType::U32),
            Value::F32(_) => Type::F32,
            Value::F64(_) => Type::F64,
            Value::Vec4(l) => Type::vec4(l[0].to_value().ty().scalar),
        }
    }
    /// A scalar value as `f64` (`bool` as 0/1); vectors give lane 0.
    pub fn as_f64(&self) -> f64 {
        match *self {
            Value::Bool(b) => b as u8 as f64,
            Value::U8(v) => v as f64,
            Value::U16(v) => v as f64,
            Value::I32(v) => v as f64,
            Value::U32(v) => v as f64,
            Value::F32(v) => v as f64,
            Value::F64(v) => v,
            Value::Vec4(l) => l[0].to_value().as_f64(),
        }
    }
    /// The literal of a scalar value (`None` for vectors).
    pub fn to_literal(&self) -> Option<Literal> {
        Some(match *self {
            Value::Bool(b) => Literal::Bool(b),
            Value::U8(v) => Literal::Int(v as i64),
            Value::U16(v) => Literal::Int(v as i64),
            Value::I32(v) => Literal::Int(v as i64),
            Value::U32(v) => Literal::Int(v as i64),
            Value::F32(v) => Literal::float(v as f64),
            Value::F64(v) => Literal::float(v),
            Value::Vec4(_) => return None,
        })
    }
    /// The value of a scalar literal read as type `ty` (one lane).
    pub fn from_literal(lit: Literal, ty: ScalarType) -> Value {
        match ty {
            ScalarType::Bool => Value::Bool(lit.as_i64() != 0),
            ScalarType::U8 => Value::U8(lit.as_i64() as u8),
            ScalarType::U16 => Value::U16(lit.as_i64() as u16),
            ScalarType::I32 => Value::I32(lit.as_i64() as i32),
            ScalarType::U32 => Value::U32(lit.as_i64() as u32),
            ScalarType::F32 => Value::F32(lit.as_f64() as f32),
            ScalarType::F64 => Value::F64(lit.as_f64()),
        }
    }
}
