//! Calls and method calls: `x()`, `y()`, `reduce`, `convolve`, `iterate`,
//! `Rgba::new`, field reads `self.f.at(dx, dy)` / `self.f()` and math
//! methods.

use super::convert::{is_self, self_field, Converter};
use super::{reject, Binder, Block, Expr, Stmt, MATH_METHODS};
use proc_macro2::Span;
use quote::ToTokens;
use syn::punctuated::Punctuated;
use syn::spanned::Spanned;
use syn::{Pat, Token};

/// The functions a body may call, for "did you mean" hints.
const FUNCTIONS: [&str; 5] = ["x", "y", "reduce", "convolve", "iterate"];

/// The reduction operators.
const REDUCE_OPS: [&str; 4] = ["Sum", "Min", "Max", "Prod"];

/// The parts of `reduce(&self.w, Op, |dx, dy| body)` and `iterate(..)`.
struct WindowCall<'a> {
    window: Option<syn::Ident>,
    op: Option<&'static str>,
    closure: Option<&'a syn::ExprClosure>,
}

impl Converter<'_> {
    /// `f(args)`: one of the kernel functions or `Rgba::new`.
    pub(super) fn call(&mut self, c: &syn::ExprCall) -> Expr {
        let syn::Expr::Path(p) = &*c.func else {
            self.diag.error(
                &c.func,
                "only named functions can be called in a kernel body: `x()`, `y()`, \
                 `reduce(..)`, `convolve(..)`, `iterate(..)` and `Rgba::new(..)`",
            );
            return Expr::Invalid;
        };
        let segments: Vec<String> = p
            .path
            .segments
            .iter()
            .map(|s| s.ident.to_string())
            .collect();
        let names: Vec<&str> = segments.iter().map(String::as_str).collect();
        match names.as_slice() {
            ["x"] | ["y"] if p.qself.is_none() => {
                if !c.args.is_empty() {
                    self.diag
                        .error(&c.args, format!("`{}()` takes no arguments", names[0]));
                }
                let span = p.path.span();
                if names[0] == "x" {
                    Expr::X(span)
                } else {
                    Expr::Y(span)
                }
            }
            ["reduce"] | ["convolve"] => self.reduce(c, names[0] == "convolve"),
            ["iterate"] => {
                self.diag.error(
                    &c.func,
                    "`iterate(..)` is a statement and has no value; compute a value over a \
                     window with `reduce(&self.window, Sum, |dx, dy| ..)`",
                );
                Expr::Invalid
            }
            [.., "Rgba", "new"] => self.make_vec(p, c),
            _ => {
                let (at, msg) = reject::unknown_function(p, &names, &FUNCTIONS);
                self.diag.error(at, msg);
                Expr::Invalid
            }
        }
    }

    /// `Rgba::new(r, g, b, a)`, optionally `Rgba::<T>::new`.
    fn make_vec(&mut self, p: &syn::ExprPath, c: &syn::ExprCall) -> Expr {
        let n = p.path.segments.len();
        let rgba = &p.path.segments[n - 2];
        let lane = match &rgba.arguments {
            syn::PathArguments::None => None,
            syn::PathArguments::AngleBracketed(a) => match a.args.first() {
                Some(syn::GenericArgument::Type(t))
                    if a.args.len() == 1 && crate::types::scalar_name(t).is_some() =>
                {
                    Some(t.clone())
                }
                _ => {
                    self.diag.error(
                        a,
                        format!(
                            "`Rgba::<T>` takes one scalar lane type: {}",
                            crate::types::SCALARS_TEXT
                        ),
                    );
                    None
                }
            },
            syn::PathArguments::Parenthesized(a) => {
                self.diag
                    .error(a, "`Rgba` takes a lane type: `Rgba::<f32>::new`");
                None
            }
        };
        if c.args.len() != 4 {
            self.diag.error(
                p,
                format!(
                    "`Rgba::new` takes four lanes (r, g, b, a), {} given",
                    c.args.len()
                ),
            );
        }
        Expr::MakeVec {
            lane,
            args: c.args.iter().map(|a| self.expr(a)).collect(),
            span: p.span(),
        }
    }

    /// `recv.name(args)`: a field read or a math method.
    pub(super) fn method_call(&mut self, m: &syn::ExprMethodCall) -> Expr {
        if let Some(t) = &m.turbofish {
            self.diag.error(
                t,
                "type arguments on methods are not allowed in a kernel body",
            );
        }
        let name = &m.method;
        if is_self(&m.receiver) {
            if !m.args.is_empty() {
                self.diag.error(
                    &m.args,
                    format!(
                        "`self.{name}()` reads the current pixel and takes no arguments; read \
                         other positions with `self.{name}.at(dx, dy)`"
                    ),
                );
            }
            let zero = || Box::new(zero_literal(name.span()));
            return Expr::At {
                field: name.clone(),
                dx: zero(),
                dy: zero(),
            };
        }
        if name == "at" {
            let Some(field) = self_field(&m.receiver) else {
                self.diag.error(
                    name,
                    "`.at(dx, dy)` reads a kernel field: write `self.field.at(dx, dy)`",
                );
                return Expr::Invalid;
            };
            if m.args.len() != 2 {
                self.diag.error(
                    name,
                    format!("`.at` takes two offsets: `self.{field}.at(dx, dy)`"),
                );
                return Expr::Invalid;
            }
            let (dx, dy) = (self.expr(&m.args[0]), self.expr(&m.args[1]));
            self.check_offset(&m.args[0], &dx);
            self.check_offset(&m.args[1], &dy);
            return Expr::At {
                field: field.clone(),
                dx: Box::new(dx),
                dy: Box::new(dy),
            };
        }
        let Some(&(_, arity)) = MATH_METHODS.iter().find(|(n, _)| name == n) else {
            let (at, msg) = reject::unknown_method(name);
            self.diag.error(at, msg);
            return Expr::Invalid;
        };
        if m.args.len() != arity {
            self.diag.error(
                name,
                format!(
                    "`.{name}(..)` takes {arity} argument{}, {} given",
                    if arity == 1 { "" } else { "s" },
                    m.args.len()
                ),
            );
        }
        Expr::Method {
            recv: Box::new(self.expr(&m.receiver)),
            name: name.clone(),
            args: m.args.iter().map(|a| self.expr(a)).collect(),
        }
    }

    /// `reduce(&self.w, Op, |dx, dy| body)` or `convolve(..)`.
    fn reduce(&mut self, c: &syn::ExprCall, convolve: bool) -> Expr {
        let what = if convolve { "convolve" } else { "reduce" };
        let parts = self.window_call(c, what, true);
        let (Some(window), Some(op), Some(closure)) = (parts.window, parts.op, parts.closure)
        else {
            return Expr::Invalid;
        };
        let Some((dx, dy)) = self.closure_params(closure, what) else {
            return Expr::Invalid;
        };
        self.push_scope();
        self.declare(&dx.name, Some("i32"));
        self.declare(&dy.name, Some("i32"));
        let body = self.expr(&closure.body);
        self.pop_scope();
        Expr::Reduce {
            window,
            convolve,
            op,
            dx,
            dy,
            body: Box::new(body),
            span: c.func.span(),
        }
    }

    /// `iterate(&self.w, |dx, dy| { stmts })` as a statement.
    pub(super) fn iterate(&mut self, c: &syn::ExprCall) -> Stmt {
        let parts = self.window_call(c, "iterate", false);
        let (Some(window), Some(closure)) = (parts.window, parts.closure) else {
            return Stmt::Expr(Expr::Invalid);
        };
        let Some((dx, dy)) = self.closure_params(closure, "iterate") else {
            return Stmt::Expr(Expr::Invalid);
        };
        self.push_scope();
        self.declare(&dx.name, Some("i32"));
        self.declare(&dy.name, Some("i32"));
        let body = match &*closure.body {
            syn::Expr::Block(b) if b.label.is_none() => self.block(&b.block),
            other => Block {
                stmts: vec![self.stmt_expr(other)],
                result: None,
            },
        };
        self.pop_scope();
        Stmt::Iterate {
            window,
            dx,
            dy,
            body,
        }
    }

    /// Splits and checks the arguments of `reduce`/`convolve` (with an
    /// operator) or `iterate` (without).
    fn window_call<'a>(
        &mut self,
        c: &'a syn::ExprCall,
        what: &str,
        with_op: bool,
    ) -> WindowCall<'a> {
        let mut out = WindowCall {
            window: None,
            op: None,
            closure: None,
        };
        let expected = if with_op { 3 } else { 2 };
        if c.args.len() != expected {
            let form = if with_op {
                format!("`{what}(&self.window, Sum, |dx, dy| ..)`")
            } else {
                "`iterate(&self.window, |dx, dy| { .. })`".to_string()
            };
            self.diag.error(
                &c.func,
                format!(
                    "`{what}` takes {expected} arguments: {form}, {} given",
                    c.args.len()
                ),
            );
            return out;
        }
        out.window = self.window_arg(&c.args[0], what);
        if with_op {
            out.op = self.reduce_op(&c.args[1], what);
        }
        match &c.args[expected - 1] {
            syn::Expr::Closure(cl) => out.closure = Some(cl),
            other => self.diag.error(
                other,
                format!("the last argument of `{what}` is a closure `|dx, dy| ..`"),
            ),
        }
        out
    }

    /// `&self.w`: the window field.
    fn window_arg(&mut self, arg: &syn::Expr, what: &str) -> Option<syn::Ident> {
        if let syn::Expr::Reference(r) = arg {
            if let (None, Some(field)) = (&r.mutability, self_field(&r.expr)) {
                return Some(field.clone());
            }
        }
        self.diag.error(
            arg,
            format!(
                "the first argument of `{what}` must be `&self.window`, a `Mask` or `Domain` \
                 field of the kernel"
            ),
        );
        None
    }

    /// `Sum`, `Min`, `Max` or `Prod` (any path ending in one).
    fn reduce_op(&mut self, arg: &syn::Expr, what: &str) -> Option<&'static str> {
        if let syn::Expr::Path(p) = arg {
            if let Some(last) = p.path.segments.last() {
                if let Some(op) = REDUCE_OPS.iter().find(|op| last.ident == op) {
                    return Some(op);
                }
            }
        }
        self.diag.error(
            arg,
            format!("the operator of `{what}` must be `Sum`, `Min`, `Max` or `Prod`"),
        );
        None
    }

    /// The two offset parameters of a window closure.
    fn closure_params(&mut self, c: &syn::ExprClosure, what: &str) -> Option<(Binder, Binder)> {
        let form = format!("the closure of `{what}` takes the two offsets `|dx, dy|`");
        let mut ok = true;
        if let Some(m) = &c.movability {
            self.diag
                .error(m, format!("{form}; `static` is not allowed"));
            ok = false;
        }
        if let Some(a) = &c.asyncness {
            self.diag
                .error(a, format!("{form}; `async` is not allowed"));
            ok = false;
        }
        if let Some(m) = &c.capture {
            self.diag.error(m, format!("{form}; `move` is not allowed"));
            ok = false;
        }
        if let syn::ReturnType::Type(arrow, ty) = &c.output {
            self.diag.error(
                quote::quote!(#arrow #ty),
                format!("{form}; leave out the return type"),
            );
            ok = false;
        }
        let params = binders(&c.inputs);
        match params {
            Some([dx, dy]) if ok => Some((dx, dy)),
            Some(_) => None,
            None => {
                let (or1, inputs, or2) = (&c.or1_token, &c.inputs, &c.or2_token);
                self.diag.error(
                    quote::quote!(#or1 #inputs #or2),
                    format!("{form} (plain names, optionally typed `i32`)"),
                );
                None
            }
        }
    }
}

/// Two closure parameters that are names or `_`, optionally `: i32`.
fn binders(inputs: &Punctuated<Pat, Token![,]>) -> Option<[Binder; 2]> {
    let mut it = inputs.iter().map(binder);
    match (it.next(), it.next(), it.next()) {
        (Some(Some(a)), Some(Some(b)), None) => Some([a, b]),
        _ => None,
    }
}

/// A name or `_` (optionally annotated `i32`) as a binder.
pub(super) fn binder(p: &Pat) -> Option<Binder> {
    match p {
        Pat::Ident(i) if i.by_ref.is_none() && i.mutability.is_none() && i.subpat.is_none() => {
            Some(Binder {
                name: i.ident.to_string(),
                tokens: i.ident.to_token_stream(),
            })
        }
        Pat::Wild(w) => Some(Binder {
            name: "_".to_string(),
            tokens: w.to_token_stream(),
        }),
        Pat::Type(t) if is_i32(&t.ty) => binder(&t.pat),
        _ => None,
    }
}

fn is_i32(ty: &syn::Type) -> bool {
    crate::types::scalar_name(ty) == Some("i32")
}

/// The literal `0` (offsets of `self.f()`).
fn zero_literal(span: Span) -> Expr {
    Expr::Int {
        value: 0,
        suffix: None,
        lit: syn::LitInt::new("0", span).to_token_stream(),
    }
}
