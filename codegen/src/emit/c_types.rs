//! The C names of IR types, shared by every part of the printer.

use hipacc_core::ir::{ScalarType, Type};

/// The C name of a scalar type (CUDA programs typedef the OpenCL names).
pub(crate) fn scalar_c(s: ScalarType) -> &'static str {
    match s {
        ScalarType::Bool => "bool",
        ScalarType::U8 => "uchar",
        ScalarType::U16 => "ushort",
        ScalarType::I32 => "int",
        ScalarType::U32 => "uint",
        ScalarType::F32 => "float",
        ScalarType::F64 => "double",
    }
}

/// The C name of a type: `float`, `uchar4`, …
pub(crate) fn c_type(t: Type) -> String {
    if t.lanes == 4 {
        format!("{}4", scalar_c(t.scalar))
    } else {
        scalar_c(t.scalar).to_string()
    }
}
