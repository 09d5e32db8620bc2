//! The math methods on evaluator values, calling Rust's own functions of the
//! operand type (`f32::exp` for `f32`, so the precision is the type's).
//! `clamp` with `lo > hi` (or a NaN bound) is an error, as Rust panics.

use super::ops::{lanes, Float, Int};
use crate::ir::{Intrinsic, Value};

/// `args[0].func(args[1..])`. A vector receiver works lane by lane; vector
/// arguments give their matching lane, scalar arguments are broadcast.
pub(super) fn call(func: Intrinsic, args: &[Value]) -> Result<Value, String> {
    let Some((&recv, rest)) = args.split_first() else {
        return Err("bug: intrinsic without receiver".into());
    };
    if rest.len() + 1 != func.signature().1 {
        return Err(format!(
            "bug: `{}` with {} arguments",
            func.signature().0,
            rest.len()
        ));
    }
    if let Value::Vec4(x) = recv {
        return lanes(x, |i, lane| {
            let mut lane_args = vec![lane];
            lane_args.extend(rest.iter().map(|a| match a {
                Value::Vec4(y) => y[i].to_value(),
                s => *s,
            }));
            call(func, &lane_args)
        });
    }
    let bad = || {
        format!(
            "bug: `{}` on `{}`",
            func.signature().0,
            args.iter()
                .map(|a| a.ty().to_string())
                .collect::<Vec<_>>()
                .join(", ")
        )
    };
    match recv {
        Value::F32(x) => float(func, x, rest, |v| match v {
            Value::F32(y) => Some(y),
            _ => None,
        })
        .ok_or_else(bad)?,
        Value::F64(x) => float(func, x, rest, |v| match v {
            Value::F64(y) => Some(y),
            _ => None,
        })
        .ok_or_else(bad)?,
        Value::U8(x) => int(func, x, rest, |v| match v {
            Value::U8(y) => Some(y),
            _ => None,
        })
        .ok_or_else(bad)?,
        Value::U16(x) => int(func, x, rest, |v| match v {
            Value::U16(y) => Some(y),
            _ => None,
        })
        .ok_or_else(bad)?,
        Value::I32(x) => int(func, x, rest, |v| match v {
            Value::I32(y) => Some(y),
            _ => None,
        })
        .ok_or_else(bad)?,
        Value::U32(x) => int(func, x, rest, |v| match v {
            Value::U32(y) => Some(y),
            _ => None,
        })
        .ok_or_else(bad)?,
        Value::Bool(_) | Value::Vec4(_) => Err(bad()),
    }
}

/// A float intrinsic; `None` when the arguments do not fit it.
fn float<T: Float>(
    func: Intrinsic,
    x: T,
    rest: &[Value],
    of: impl Fn(Value) -> Option<T>,
) -> Option<Result<Value, String>> {
    use Intrinsic::*;
    let arg = |i: usize| rest.get(i).copied().and_then(&of);
    Some(Ok(match func {
        Powi => match rest.first() {
            Some(Value::I32(n)) => x.powi(*n).to_value(),
            _ => return None,
        },
        MulAdd => x.mul_add(arg(0)?, arg(1)?).to_value(),
        Clamp => {
            let (lo, hi) = (arg(0)?, arg(1)?);
            if !matches!(
                lo.partial_cmp(&hi),
                Some(std::cmp::Ordering::Less | std::cmp::Ordering::Equal)
            ) {
                return Some(Err(format!(
                    "`clamp` with min {lo:?} not at most max {hi:?}"
                )));
            }
            let v = if x < lo {
                lo
            } else if x > hi {
                hi
            } else {
                x
            };
            v.to_value()
        }
        _ if rest.is_empty() => x.unary(func)?.to_value(),
        _ => x.binary(func, arg(0)?)?.to_value(),
    }))
}

/// An integer intrinsic; `None` when the arguments do not fit it.
fn int<T: Int + std::fmt::Debug>(
    func: Intrinsic,
    x: T,
    rest: &[Value],
    of: impl Fn(Value) -> Option<T>,
) -> Option<Result<Value, String>> {
    use Intrinsic::*;
    let arg = |i: usize| rest.get(i).copied().and_then(&of);
    Some(Ok(match func {
        Abs => x.abs().to_value(),
        Signum => x.signum().to_value(),
        Min => x.min(arg(0)?).to_value(),
        Max => x.max(arg(0)?).to_value(),
        Clamp => {
            let (lo, hi) = (arg(0)?, arg(1)?);
            if lo > hi {
                return Some(Err(format!(
                    "`clamp` with min {lo:?} greater than max {hi:?}"
                )));
            }
            x.clamp(lo, hi).to_value()
        }
        _ => return None,
    }))
}
