//! Blocks and statements: `let`, assignment, `for` over constant ranges,
//! `iterate`, expression statements, and a block's tail value.

use super::call::binder;
use super::convert::{compound_ir, is_self, self_field, Converter};
use super::{reject, BinOp, Block, Expr, LetType, Stmt};
use crate::types;

impl Converter<'_> {
    /// Converts a block in a new scope. Its last expression without `;`
    /// becomes the block's value if it has one.
    pub(crate) fn block(&mut self, b: &syn::Block) -> Block {
        self.push_scope();
        let mut out = Block::default();
        let n = b.stmts.len();
        for (i, s) in b.stmts.iter().enumerate() {
            match s {
                syn::Stmt::Local(l) => out.stmts.push(self.local(l)),
                syn::Stmt::Item(item) => self.diag.error(
                    item,
                    "items (`fn`, `struct`, `use`, `const`, ..) are not allowed inside a kernel \
                     body; use `let` bindings",
                ),
                syn::Stmt::Macro(m) => {
                    let (at, msg) = reject::macro_call(&m.mac);
                    self.diag.error(at, msg);
                }
                syn::Stmt::Expr(e, semi) => match self.stmt_expr(e) {
                    Stmt::Expr(x) if i + 1 == n && semi.is_none() && x.has_value() => {
                        out.result = Some(Box::new(x));
                    }
                    st => out.stmts.push(st),
                },
            }
        }
        self.pop_scope();
        out
    }

    /// An expression in statement position: assignments, `for` and
    /// `iterate` are statements; anything else is an expression statement.
    pub(super) fn stmt_expr(&mut self, e: &syn::Expr) -> Stmt {
        match e {
            syn::Expr::Assign(a) => self.assign(&a.left, None, a.eq_token.span, &a.right),
            syn::Expr::Binary(b) => match compound_ir(&b.op) {
                Some(ir) => {
                    let op = BinOp { ir, token: b.op };
                    self.assign(&b.left, Some(op), proc_macro2::Span::call_site(), &b.right)
                }
                None => Stmt::Expr(self.expr(e)),
            },
            syn::Expr::ForLoop(f) => self.for_loop(f),
            syn::Expr::Call(c) if is_call_to(c, "iterate") => self.iterate(c),
            e => Stmt::Expr(self.expr(e)),
        }
    }

    /// `let [mut] name[: ty] = init;`
    fn local(&mut self, l: &syn::Local) -> Stmt {
        if let Some(attr) = l.attrs.first() {
            self.diag
                .error(attr, "attributes are not allowed inside a kernel body");
        }
        let (pat, ty) = match &l.pat {
            syn::Pat::Type(t) => (&*t.pat, Some(&*t.ty)),
            p => (p, None),
        };
        let ty = ty.and_then(|t| self.let_type(t));
        let init = match &l.init {
            Some(init) => {
                if let Some((else_token, _)) = &init.diverge {
                    self.diag
                        .error(else_token, "`let .. else` is not allowed in a kernel body");
                }
                self.expr(&init.expr)
            }
            None => {
                self.diag.error(
                    quote::quote!(#l),
                    "`let` without an initial value is not allowed in a kernel body; write \
                     `let name = value;` (use `if`/`else` as the value to choose it)",
                );
                Expr::Invalid
            }
        };
        match pat {
            syn::Pat::Ident(i) if i.by_ref.is_none() && i.subpat.is_none() => {
                let seen = match &ty {
                    Some(t) if t.vector => Some("Rgba"),
                    Some(t) => types::SCALARS
                        .iter()
                        .chain(&["bool"])
                        .copied()
                        .find(|s| t.scalar == s),
                    None => self.seen_type(&init),
                };
                self.declare(&i.ident.to_string(), seen);
                Stmt::Let {
                    name: i.ident.clone(),
                    mutable: i.mutability.is_some(),
                    ty,
                    init,
                }
            }
            other => {
                self.diag.error(
                    other,
                    "`let` binds one variable name in a kernel body (no tuples, `_` or other \
                     patterns)",
                );
                // Declare the names the pattern binds, so that their uses do
                // not add "not a local variable" errors.
                if let syn::Pat::Tuple(t) = other {
                    for p in &t.elems {
                        if let syn::Pat::Ident(i) = p {
                            self.declare(&i.ident.to_string(), None);
                        }
                    }
                }
                Stmt::Expr(Expr::Invalid)
            }
        }
    }

    /// A `let` annotation: a scalar, `bool` or `Rgba<scalar>`.
    fn let_type(&mut self, ty: &syn::Type) -> Option<LetType> {
        if let syn::Type::Path(p) = types::ungroup(ty) {
            if let Some(ident) = p.path.get_ident() {
                if types::scalar_name(ty).is_some() || ident == "bool" {
                    return Some(LetType {
                        scalar: ident.clone(),
                        vector: false,
                    });
                }
            }
            if let (Some(lane), Some(last)) = (types::rgba_lane(ty), p.path.segments.last()) {
                if let syn::PathArguments::AngleBracketed(a) = &last.arguments {
                    if let Some(syn::GenericArgument::Type(t)) = a.args.first() {
                        let t = match types::ungroup(t) {
                            syn::Type::Path(t) => t.path.get_ident(),
                            _ => None,
                        };
                        if let Some(ident) = t {
                            debug_assert_eq!(ident, lane);
                            return Some(LetType {
                                scalar: ident.clone(),
                                vector: true,
                            });
                        }
                    }
                }
            }
        }
        self.diag.error(
            ty,
            format!(
                "`let` types in a kernel body are scalars ({}, bool) or `Rgba<T>`",
                types::SCALARS_TEXT
            ),
        );
        None
    }

    /// `name = value` or `name op= value`, where `name` is a local.
    fn assign(
        &mut self,
        target: &syn::Expr,
        op: Option<BinOp>,
        eq: proc_macro2::Span,
        value: &syn::Expr,
    ) -> Stmt {
        let value = self.expr(value);
        let name = match target {
            syn::Expr::Path(p) if p.qself.is_none() => p.path.get_ident(),
            _ => None,
        };
        if let Some(name) = name.filter(|n| self.is_local(&n.to_string())) {
            return Stmt::Assign {
                name: name.clone(),
                op,
                eq,
                value,
            };
        }
        let msg = if let Some(field) = written_field(target) {
            format!(
                "cannot assign to `self.{field}`: kernels write only their output, the body's \
                 value; accessors, masks and parameters are read-only (use a `let mut` local)"
            )
        } else if let Some(name) = name {
            format!("cannot assign to `{name}`: it is not a local variable of the kernel body")
        } else if let syn::Expr::Field(_) = target {
            "assigning a single vector lane is not supported in a kernel body; build a new \
             vector with `Rgba::new(..)`"
                .to_string()
        } else {
            "only local variables (`let mut name`) can be assigned in a kernel body".to_string()
        };
        self.diag.error(target, msg);
        Stmt::Expr(Expr::Invalid)
    }

    /// `for var in A..B` / `A..=B` with integer-literal bounds.
    fn for_loop(&mut self, f: &syn::ExprForLoop) -> Stmt {
        if let Some(label) = &f.label {
            self.diag
                .error(label, "loop labels are not allowed in a kernel body");
        }
        let var = binder(&f.pat);
        if var.is_none() {
            self.diag.error(
                &f.pat,
                "a `for` loop in a kernel body binds one variable name: `for i in 0..4`",
            );
        }
        let bounds = match &*f.expr {
            syn::Expr::Range(r) => match (&r.start, &r.end) {
                (Some(start), Some(end)) => {
                    let inclusive = matches!(r.limits, syn::RangeLimits::Closed(_));
                    let start = self.loop_bound(start);
                    let end = self.loop_bound(end).map(|e| e + i64::from(inclusive));
                    start.zip(end)
                }
                _ => {
                    self.diag.error(
                        r,
                        "`for` loops in a kernel body need both bounds: `A..B` or `A..=B`",
                    );
                    None
                }
            },
            other => {
                self.diag.error(
                    other,
                    "`for` loops in a kernel body iterate over a constant integer range \
                     `A..B` or `A..=B`",
                );
                None
            }
        };
        self.push_scope();
        if let Some(v) = &var {
            self.declare(&v.name, Some("i32"));
        }
        let body = self.block(&f.body);
        self.pop_scope();
        match (var, bounds) {
            (Some(var), Some((start, end))) => Stmt::For {
                var,
                start,
                end,
                body,
            },
            _ => Stmt::Expr(Expr::Invalid),
        }
    }

    /// A loop bound: an integer literal, possibly negated, within `i32`.
    fn loop_bound(&mut self, e: &syn::Expr) -> Option<i64> {
        let (negative, lit) = match e {
            syn::Expr::Unary(u) if matches!(u.op, syn::UnOp::Neg(_)) => (true, &*u.expr),
            e => (false, e),
        };
        let value = match lit {
            syn::Expr::Lit(syn::ExprLit {
                lit: syn::Lit::Int(i),
                ..
            }) if matches!(i.suffix(), "" | "i32") => i.base10_parse::<i64>().ok(),
            _ => None,
        };
        let Some(value) = value.map(|v| if negative { -v } else { v }) else {
            self.diag.error(
                e,
                "`for` loop bounds in a kernel body must be integer literals (like `-2..=2`); \
                 this bound is not a constant",
            );
            return None;
        };
        if value.abs() >= i64::from(i32::MAX) {
            self.diag
                .error(e, "`for` loop bound out of range: loop variables are `i32`");
            return None;
        }
        Some(value)
    }
}

/// The kernel field an assignment target writes to: `self.f`,
/// `self.f.at(..)`, `self.f()` or a lane of one of them.
fn written_field(target: &syn::Expr) -> Option<&syn::Ident> {
    match target {
        syn::Expr::Field(f) => self_field(target).or_else(|| written_field(&f.base)),
        syn::Expr::MethodCall(m) if is_self(&m.receiver) => Some(&m.method),
        syn::Expr::MethodCall(m) => self_field(&m.receiver),
        syn::Expr::Paren(p) => written_field(&p.expr),
        _ => None,
    }
}

/// Whether `c` calls the plain function `name`.
fn is_call_to(c: &syn::ExprCall, name: &str) -> bool {
    matches!(&*c.func, syn::Expr::Path(p) if p.qself.is_none() && p.path.is_ident(name))
}
