//! Expressions: from `syn` to the body model, checking the subset.
//!
//! Statements and blocks are in [`stmt`](super::stmt), calls and methods in
//! [`call`](super::call), the messages for rejected constructs in
//! [`reject`](super::reject).

use super::offset::SeenType;
use super::{reject, BinOp, Expr};
use crate::diag::Diag;
use crate::types;
use quote::ToTokens;
use syn::{Lit, Member};

/// Walks a body, collecting errors in `diag` and tracking local scopes.
pub(crate) struct Converter<'d> {
    pub(super) diag: &'d mut Diag,
    /// Local names in scope with their type where it is seen, innermost
    /// scope last.
    scopes: Vec<Vec<(String, Option<SeenType>)>>,
}

impl<'d> Converter<'d> {
    /// A converter reporting to `diag`.
    pub(crate) fn new(diag: &'d mut Diag) -> Self {
        Converter {
            diag,
            scopes: Vec::new(),
        }
    }

    /// Opens a scope for locals.
    pub(super) fn push_scope(&mut self) {
        self.scopes.push(Vec::new());
    }

    /// Closes the innermost scope.
    pub(super) fn pop_scope(&mut self) {
        self.scopes.pop();
    }

    /// Declares a local in the innermost scope, with its type if seen.
    pub(super) fn declare(&mut self, name: &str, ty: Option<SeenType>) {
        match self.scopes.last_mut() {
            Some(s) => s.push((name.to_string(), ty)),
            None => unreachable!("bug: local declared outside any scope"),
        }
    }

    /// Whether `name` is a local in scope.
    pub(super) fn is_local(&self, name: &str) -> bool {
        self.scopes.iter().flatten().any(|(n, _)| n == name)
    }

    /// The seen type of the local `name` (the innermost one of that name).
    pub(super) fn local_type(&self, name: &str) -> Option<SeenType> {
        let mut locals = self.scopes.iter().flatten().rev();
        locals.find(|(n, _)| n == name).and_then(|(_, t)| *t)
    }

    /// Converts a value expression.
    pub(crate) fn expr(&mut self, e: &syn::Expr) -> Expr {
        match e {
            syn::Expr::Lit(l) => self.literal(&l.lit),
            syn::Expr::Path(p) => self.path(p),
            syn::Expr::Field(f) => self.field(f),
            syn::Expr::MethodCall(m) => self.method_call(m),
            syn::Expr::Call(c) => self.call(c),
            syn::Expr::Unary(u) => self.unary(u),
            syn::Expr::Binary(b) => self.binary(b),
            syn::Expr::Cast(c) => self.cast(c),
            syn::Expr::Paren(p) => Expr::Paren(Box::new(self.expr(&p.expr))),
            syn::Expr::Group(g) => Expr::Paren(Box::new(self.expr(&g.expr))),
            syn::Expr::Block(b) => {
                if let Some(label) = &b.label {
                    self.diag
                        .error(label, "block labels are not allowed in a kernel body");
                }
                Expr::Block(self.block(&b.block))
            }
            syn::Expr::If(i) => self.if_expr(i),
            other => {
                let (at, msg) = reject::expr(other);
                self.diag.error(at, msg);
                Expr::Invalid
            }
        }
    }

    fn literal(&mut self, lit: &Lit) -> Expr {
        let tokens = lit.to_token_stream();
        match lit {
            Lit::Int(i) => match literal_suffix(i.suffix()) {
                Some(Some(s)) if s.starts_with('f') => self.float_value(i.base10_digits(), s, lit),
                Some(suffix) => match i.base10_parse::<i64>() {
                    Ok(value) => Expr::Int {
                        value,
                        suffix,
                        lit: tokens,
                    },
                    Err(_) => {
                        self.diag
                            .error(lit, "integer literal too large for a kernel body");
                        Expr::Invalid
                    }
                },
                None => self.bad_suffix(lit, i.suffix()),
            },
            Lit::Float(f) => match literal_suffix(f.suffix()) {
                Some(Some(s)) if s.starts_with('f') => self.float_value(f.base10_digits(), s, lit),
                Some(None) => self.float_value(f.base10_digits(), "", lit),
                _ => self.bad_suffix(lit, f.suffix()),
            },
            Lit::Bool(b) => Expr::Bool(b.clone()),
            _ => {
                self.diag.error(
                    lit,
                    "this literal is not allowed in a kernel body; kernel values are numbers, \
                     `true`/`false` and `Rgba` vectors",
                );
                Expr::Invalid
            }
        }
    }

    /// A float literal's value; `f32` literals are parsed as `f32` so the
    /// value is exactly the one rustc gives them.
    fn float_value(&mut self, digits: &str, suffix: &'static str, lit: &Lit) -> Expr {
        let value = match suffix {
            "f32" => digits.parse::<f32>().map(f64::from).ok(),
            _ => digits.parse::<f64>().ok(),
        };
        match value {
            Some(value) if value.is_finite() => Expr::Float {
                value,
                suffix: (!suffix.is_empty()).then_some(suffix),
                lit: lit.to_token_stream(),
            },
            _ => {
                self.diag
                    .error(lit, "float literal out of range for a kernel body");
                Expr::Invalid
            }
        }
    }

    fn bad_suffix(&mut self, lit: &Lit, suffix: &str) -> Expr {
        self.diag.error(
            lit,
            format!(
                "literal suffix `{suffix}` is not allowed in a kernel body; kernel scalars are {}",
                types::SCALARS_TEXT
            ),
        );
        Expr::Invalid
    }

    fn path(&mut self, p: &syn::ExprPath) -> Expr {
        let Some(ident) = p.path.get_ident().filter(|_| p.qself.is_none()) else {
            self.diag.error(
                p,
                format!(
                    "paths like `{}` are not allowed in a kernel body; write constants as \
                     literals and read kernel fields as `self.name`",
                    p.to_token_stream().to_string().replace(' ', "")
                ),
            );
            return Expr::Invalid;
        };
        if ident == "self" {
            self.diag.error(
                ident,
                "`self` is not a value in a kernel body; read fields as `self.name`",
            );
            return Expr::Invalid;
        }
        if !self.is_local(&ident.to_string()) {
            self.diag.error(
                ident,
                format!(
                    "`{ident}` is not a local variable of the kernel body; a body reads `let` \
                     bindings, loop and closure parameters, and kernel fields as `self.{ident}`"
                ),
            );
            return Expr::Invalid;
        }
        Expr::Local(ident.clone())
    }

    fn field(&mut self, f: &syn::ExprField) -> Expr {
        let name = match &f.member {
            Member::Named(name) => name,
            Member::Unnamed(index) => {
                self.diag.error(
                    index,
                    "tuple fields (`.0`) are not allowed in a kernel body; vector lanes are \
                     `.r`, `.g`, `.b` and `.a`",
                );
                return Expr::Invalid;
            }
        };
        if is_self(&f.base) {
            return Expr::Field(name.clone());
        }
        let Some(lane) = ["r", "g", "b", "a"].iter().position(|l| name == l) else {
            self.diag.error(
                name,
                format!(
                    "unknown field `.{name}`; vector lanes are `.r`, `.g`, `.b` and `.a`, and \
                     kernel fields are read as `self.{name}`"
                ),
            );
            return Expr::Invalid;
        };
        Expr::Lane {
            base: Box::new(self.expr(&f.base)),
            lane: lane as u8,
            member: name.clone(),
        }
    }

    fn unary(&mut self, u: &syn::ExprUnary) -> Expr {
        let ir = match u.op {
            syn::UnOp::Neg(_) => "Neg",
            syn::UnOp::Not(_) => "Not",
            _ => {
                self.diag.error(
                    u.op,
                    "dereferencing (`*`) is not allowed in a kernel body; there are no \
                     references",
                );
                return Expr::Invalid;
            }
        };
        Expr::Unary {
            ir,
            token: u.op,
            expr: Box::new(self.expr(&u.expr)),
        }
    }

    fn binary(&mut self, b: &syn::ExprBinary) -> Expr {
        let Some(ir) = binary_ir(&b.op) else {
            self.diag.error(
                b.op,
                "compound assignment is a statement: write it on its own line, \
                 `name op= value;`, with `name` a `let mut` variable",
            );
            return Expr::Invalid;
        };
        Expr::Binary {
            op: BinOp { ir, token: b.op },
            lhs: Box::new(self.expr(&b.left)),
            rhs: Box::new(self.expr(&b.right)),
        }
    }

    fn cast(&mut self, c: &syn::ExprCast) -> Expr {
        let expr = Box::new(self.expr(&c.expr));
        match types::scalar_name(&c.ty) {
            Some(_) => match types::ungroup(&c.ty) {
                syn::Type::Path(p) => match p.path.get_ident() {
                    Some(ty) => Expr::Cast {
                        expr,
                        ty: ty.clone(),
                    },
                    None => unreachable!("bug: scalar type without identifier"),
                },
                _ => unreachable!("bug: scalar type that is not a path"),
            },
            None => {
                self.diag.error(
                    &c.ty,
                    format!(
                        "casts in a kernel body go to a scalar type: {}",
                        types::SCALARS_TEXT
                    ),
                );
                Expr::Invalid
            }
        }
    }

    fn if_expr(&mut self, i: &syn::ExprIf) -> Expr {
        if let syn::Expr::Let(l) = &*i.cond {
            self.diag.error(
                l.let_token,
                "`if let` is not allowed in a kernel body; use a boolean condition",
            );
            return Expr::Invalid;
        }
        let cond = Box::new(self.expr(&i.cond));
        let then = self.block(&i.then_branch);
        let otherwise = i.else_branch.as_ref().map(|(_, e)| match &**e {
            syn::Expr::Block(b) if b.label.is_none() => self.block(&b.block),
            other => super::Block {
                stmts: Vec::new(),
                result: Some(Box::new(self.expr(other))),
            },
        });
        Expr::If {
            cond,
            then,
            otherwise,
        }
    }
}

/// `Some(suffix)` if `suffix` is allowed on a literal (`Some(None)` for
/// none), `None` otherwise.
fn literal_suffix(suffix: &str) -> Option<Option<&'static str>> {
    if suffix.is_empty() {
        return Some(None);
    }
    types::SCALARS
        .iter()
        .find(|s| **s == suffix)
        .map(|s| Some(*s))
}

/// Whether `e` is the path `self`.
pub(super) fn is_self(e: &syn::Expr) -> bool {
    matches!(e, syn::Expr::Path(p) if p.qself.is_none() && p.path.is_ident("self"))
}

/// `f` if `e` is `self.f`.
pub(super) fn self_field(e: &syn::Expr) -> Option<&syn::Ident> {
    match e {
        syn::Expr::Field(f) if is_self(&f.base) => match &f.member {
            Member::Named(n) => Some(n),
            Member::Unnamed(_) => None,
        },
        _ => None,
    }
}

/// The `ir::BinaryOp` of a (non-assigning) operator.
fn binary_ir(op: &syn::BinOp) -> Option<&'static str> {
    use syn::BinOp as B;
    Some(match op {
        B::Add(_) => "Add",
        B::Sub(_) => "Sub",
        B::Mul(_) => "Mul",
        B::Div(_) => "Div",
        B::Rem(_) => "Rem",
        B::And(_) | B::BitAnd(_) => "And",
        B::Or(_) | B::BitOr(_) => "Or",
        B::BitXor(_) => "BitXor",
        B::Shl(_) => "Shl",
        B::Shr(_) => "Shr",
        B::Eq(_) => "Eq",
        B::Ne(_) => "Ne",
        B::Lt(_) => "Lt",
        B::Le(_) => "Le",
        B::Gt(_) => "Gt",
        B::Ge(_) => "Ge",
        _ => return None,
    })
}

/// The `ir::BinaryOp` of a compound assignment operator (`+=` is `Add`).
pub(super) fn compound_ir(op: &syn::BinOp) -> Option<&'static str> {
    use syn::BinOp as B;
    Some(match op {
        B::AddAssign(_) => "Add",
        B::SubAssign(_) => "Sub",
        B::MulAssign(_) => "Mul",
        B::DivAssign(_) => "Div",
        B::RemAssign(_) => "Rem",
        B::BitAndAssign(_) => "And",
        B::BitOrAssign(_) => "Or",
        B::BitXorAssign(_) => "BitXor",
        B::ShlAssign(_) => "Shl",
        B::ShrAssign(_) => "Shr",
        _ => return None,
    })
}
