//! Offsets are whole pixels: the check of `self.f.at(dx, dy)` arguments
//! whose type the macro can see.
//!
//! The type of an expression is known syntactically where it is built from
//! literals, casts, `x()`/`y()`, loop and closure variables (`i32`) and
//! locals whose `let` gives or implies a type. An offset known to be
//! anything but an integer is rejected here, at the offset, before any
//! code is generated. Offsets built from kernel fields or pixel values are
//! left to rustc, which the emitted CPU code asks with a bound that carries
//! the same message (`hipacc_core::cpu::PixelOffset`).

use super::convert::Converter;
use super::Expr;

/// A type as far as the macro sees it: a scalar name (`f32`), `bool`,
/// `Rgba`, or an unsuffixed literal's `{integer}` / `{float}`.
pub(crate) type SeenType = &'static str;

/// An unsuffixed integer literal: becomes whatever integer type it meets.
pub(crate) const ANY_INTEGER: SeenType = "{integer}";

/// An unsuffixed float literal.
pub(crate) const ANY_FLOAT: SeenType = "{float}";

impl Converter<'_> {
    /// The type of `e`, where the macro can tell.
    pub(super) fn seen_type(&self, e: &Expr) -> Option<SeenType> {
        match e {
            Expr::Int { suffix, .. } => Some(suffix.unwrap_or(ANY_INTEGER)),
            Expr::Float { suffix, .. } => Some(suffix.unwrap_or(ANY_FLOAT)),
            Expr::Bool(_) => Some("bool"),
            Expr::Local(name) => self.local_type(&name.to_string()),
            Expr::X(_) | Expr::Y(_) => Some("i32"),
            Expr::Unary { expr, .. } | Expr::Method { recv: expr, .. } | Expr::Paren(expr) => {
                self.seen_type(expr)
            }
            Expr::Binary { op, lhs, rhs } => self.binary_type(&op.token, lhs, rhs),
            Expr::MakeVec { .. } => Some("Rgba"),
            Expr::Cast { ty, .. } => crate::types::SCALARS.iter().copied().find(|s| ty == s),
            Expr::If { then, .. } => then.result.as_ref().and_then(|r| self.seen_type(r)),
            Expr::Block(b) => b.result.as_ref().and_then(|r| self.seen_type(r)),
            Expr::Field(_)
            | Expr::At { .. }
            | Expr::Lane { .. }
            | Expr::Reduce { .. }
            | Expr::Invalid => None,
        }
    }

    fn binary_type(&self, op: &syn::BinOp, lhs: &Expr, rhs: &Expr) -> Option<SeenType> {
        use syn::BinOp as B;
        if matches!(
            op,
            B::And(_) | B::Or(_) | B::Eq(_) | B::Ne(_) | B::Lt(_) | B::Le(_) | B::Gt(_) | B::Ge(_)
        ) {
            return Some("bool");
        }
        let (l, r) = (self.seen_type(lhs), self.seen_type(rhs));
        if matches!(op, B::Shl(_) | B::Shr(_)) {
            return l;
        }
        // A concrete side decides; two literals of different kinds make a
        // type error rustc reports at the operator, so either will do.
        let concrete = |t: &Option<SeenType>| t.filter(|t| *t != ANY_INTEGER && *t != ANY_FLOAT);
        let float = [l, r].contains(&Some(ANY_FLOAT)).then_some(ANY_FLOAT);
        concrete(&l).or(concrete(&r)).or(float).or(l).or(r)
    }

    /// Reports an offset whose type is seen and is not an integer.
    pub(super) fn check_offset(&mut self, syntax: &syn::Expr, offset: &Expr) {
        let Some(ty) = self.seen_type(offset) else {
            return;
        };
        let msg = match ty {
            "i32" | ANY_INTEGER => return,
            ANY_FLOAT | "f32" | "f64" => format!(
                "offsets are whole pixels; this offset is {}. Use an interpolating accessor to \
                 read between pixels (`Accessor::new(&image).with_interpolation(\
                 Interpolation::Linear)`), or round with `as i32`",
                if ty == ANY_FLOAT {
                    "a float".to_string()
                } else {
                    format!("an `{ty}`")
                }
            ),
            "bool" | "Rgba" => {
                format!("offsets are whole pixels (`i32`); a `{ty}` is not an offset")
            }
            _ => format!(
                "offsets are whole pixels of type `i32`; this offset is a `{ty}`: convert it \
                 with `as i32`"
            ),
        };
        self.diag.error(syntax, msg);
    }
}
