//! Emits the body as Rust for the CPU backend (`KernelBody::cpu_pixel`).
//!
//! The body keeps the user's tokens, so rustc type-checks it with spans in
//! the user's code. Field reads go through the views `#[derive(Kernel)]`
//! built; `__v` is the views struct, `(__x, __y)` the output pixel and `__M`
//! the read mode (checked or not), `__S` the launch's window shape:
//!
//! ```text
//! self.f.at(a, b)                 ({ let __dx: i32 = pixel_offset(a); let __dy: i32 = pixel_offset(b);
//!                                    CpuRead::read_in::<__M, __S>(&__v.f, __x, __y, __dx, __dy, None, None) })
//! self.p                          ({ let __p = param_value(&__v.p); __p })
//! x(), y()                        (__x as i32), (__y as i32)
//! reduce(&self.w, Sum, |dx, dy| e)    (the k-th `reduce`/`convolve` emitted, from 0)
//!     CpuWindow::reduce_at::<__S, _>(&__v.w, k, __x, |dx: i32, dy: i32| e,
//!                                    |a, b| Reducible::r_sum(a, b))
//! iterate(&self.w, |dx, dy| { s })
//!     CpuWindow::for_each::<__S>(&__v.w, |dx: i32, dy: i32| { s });
//! a.min(b), a.max(b)              Extremes::least::<__M>(a, b), Extremes::most::<__M>(a, b)
//! for i in 0..2 { s }             { let i: i32 = 0i32; s } { let i: i32 = 1i32; s }
//! for i in 0..100 { s }           for i in 0i32..100i32 { s }
//! Rgba::new(..)                   <core>::Rgba::new(..)
//! ```
//!
//! `min` and `max` go through `Extremes`, which the read mode lets drop
//! the NaN rule where the launch proved no operand NaN.
//!
//! `pixel_offset` and `param_value` are identities whose trait bounds say,
//! at the user's token, that offsets are whole pixels and that only scalar
//! parameters are values; the tokens the emitter adds around a field are
//! located at the field, so rustc's type errors point into the body.
//!
//! The window view owns the loop, so a mask whose size is in its type, or a
//! window whose size the launch's shape `__S` gives, gets its positions
//! written out (and the pixel loop vectorises). Windows
//! are never empty: the IR lowering rejects empty domains before any launch.

use crate::affine::{affine, Affine, Position};
use crate::body::{Block, Expr, LetType, Stmt};
use crate::paths::Paths;
use proc_macro2::{Delimiter, Group, Ident, Literal, Span, TokenStream, TokenTree};
use quote::{quote, quote_spanned};
use std::cell::RefCell;

/// Emits Rust code of a body for one kernel.
pub(crate) struct Cpu<'p> {
    paths: &'p Paths,
    /// The locals in scope where the emitter is, innermost last, with their
    /// affine form where they have one (immutable, see [`crate::affine`]).
    scope: RefCell<Vec<(String, Option<Affine>)>>,
    /// Reductions emitted so far: the next one's call site number, by
    /// which the core's `cpu::Given` window shape returns the value
    /// the backend computed for it (the IR numbers its reductions in the
    /// same order).
    sites: std::cell::Cell<usize>,
    /// Whether a `min` or `max` was emitted (`KernelBody::EXTREMES`).
    extremes: std::cell::Cell<bool>,
}

impl<'p> Cpu<'p> {
    /// An emitter naming core items through `paths`.
    pub(crate) fn new(paths: &'p Paths) -> Self {
        Cpu {
            paths,
            scope: RefCell::default(),
            sites: std::cell::Cell::new(0),
            extremes: std::cell::Cell::new(false),
        }
    }

    /// Whether the blocks emitted so far call `min` or `max`.
    pub(crate) fn emitted_extremes(&self) -> bool {
        self.extremes.get()
    }

    /// `{ stmts result }`
    pub(crate) fn block(&self, b: &Block) -> TokenStream {
        self.scoped(&[], || {
            let stmts: Vec<_> = b.stmts.iter().map(|s| self.stmt(s)).collect();
            let result = b.result.as_ref().map(|e| self.expr(e));
            quote!({ #(#stmts)* #result })
        })
    }

    /// Runs `emit` with `names` bound (and whatever it binds) in a scope of
    /// its own.
    fn scoped<R>(&self, names: &[(String, Option<Affine>)], emit: impl FnOnce() -> R) -> R {
        let mark = self.scope.borrow().len();
        self.scope.borrow_mut().extend(names.iter().cloned());
        let r = emit();
        self.scope.borrow_mut().truncate(mark);
        r
    }

    /// The affine form of `e` in the current scope.
    fn affine(&self, e: &Expr) -> Option<Affine> {
        let scope = self.scope.borrow();
        affine(e, &|name: &str| {
            scope
                .iter()
                .rev()
                .find(|(n, _)| n == name)
                .and_then(|(_, a)| *a)
        })
    }

    fn stmt(&self, s: &Stmt) -> TokenStream {
        match s {
            Stmt::Let {
                name,
                mutable,
                ty,
                init,
            } => {
                let form = if *mutable { None } else { self.affine(init) };
                let mutable = mutable.then(|| quote!(mut));
                let ty = ty.as_ref().map(|t| {
                    let t = self.let_type(t);
                    quote!(: #t)
                });
                let init = self.expr(init);
                self.scope.borrow_mut().push((name.to_string(), form));
                quote!(let #mutable #name #ty = #init;)
            }
            Stmt::Assign {
                name,
                op,
                eq,
                value,
            } => {
                let value = self.expr(value);
                match op {
                    Some(op) => {
                        let token = &op.token;
                        quote!(#name #token #value;)
                    }
                    None => quote_spanned!(*eq=> #name = #value;),
                }
            }
            Stmt::For {
                var,
                start,
                end,
                body,
            } => {
                let name = &var.name;
                let var = &var.tokens;
                if (0..=UNROLL_MAX_TRIPS).contains(&(end - start)) {
                    // Short loops are written out: LLVM's full unroll gives up
                    // on large bodies, and a loop left inside the pixel loop
                    // keeps that loop from vectorising. Each copy knows its
                    // value, so offsets from it stay affine.
                    let copies = (*start..*end).map(|k| {
                        let bound = [(name.clone(), Affine::constant(k))];
                        let body = self.scoped(&bound, || self.block(body));
                        let k = i32_literal(k);
                        quote!({ let #var: i32 = #k; #body })
                    });
                    return quote!(#(#copies)*);
                }
                let bound = [(name.clone(), Some(Affine::OPAQUE))];
                let body = self.scoped(&bound, || self.block(body));
                let (start, end) = (i32_literal(*start), i32_literal(*end));
                quote!(for #var in #start..#end #body)
            }
            Stmt::Iterate {
                window,
                dx,
                dy,
                body,
            } => {
                let window_trait = self.paths.cpu_window();
                let bound = [
                    (dx.name.clone(), Some(Affine::OPAQUE)),
                    (dy.name.clone(), Some(Affine::OPAQUE)),
                ];
                let body = self.scoped(&bound, || self.block(body));
                let (dx, dy) = (&dx.tokens, &dy.tokens);
                let call = located(window.span(), quote!(#window_trait::for_each::<__S>));
                let window = field_ref(window);
                quote!(#call(#window, |#dx: i32, #dy: i32| #body);)
            }
            Stmt::Expr(e) => {
                let e = self.expr(e);
                quote!(#e;)
            }
        }
    }

    /// `pixel_offset(e)`, located at the user's offset so that a type
    /// error names the offset.
    fn offset(&self, e: &Expr) -> TokenStream {
        let tokens = self.expr(e);
        let span = tokens
            .clone()
            .into_iter()
            .next()
            .map_or_else(Span::call_site, |t| t.span());
        let offset = located(span, self.paths.pixel_offset());
        let mut args = Group::new(Delimiter::Parenthesis, tokens);
        args.set_span(span.resolved_at(Span::call_site()));
        quote!(#offset #args)
    }

    fn let_type(&self, t: &LetType) -> TokenStream {
        let scalar = &t.scalar;
        if t.vector {
            let rgba = self.paths.rgba();
            quote!(#rgba<#scalar>)
        } else {
            quote!(#scalar)
        }
    }

    fn expr(&self, e: &Expr) -> TokenStream {
        match e {
            Expr::Int { lit, .. } | Expr::Float { lit, .. } => lit.clone(),
            Expr::Bool(b) => quote!(#b),
            Expr::Local(name) => quote!(#name),
            Expr::Field(name) => {
                // Bound to a local first, so that the parameter's type comes
                // from the field alone: a mismatch is then reported as the
                // field's, not as `param_value`'s argument.
                let (param, view) = (self.paths.param_value(), field_ref(name));
                let block = located(name.span(), quote!({ let __p = #param(#view); __p }));
                let mut paren = Group::new(Delimiter::Parenthesis, block);
                paren.set_span(name.span().resolved_at(Span::call_site()));
                quote!(#paren)
            }
            Expr::At { field, dx, dy } => {
                let read = self.paths.cpu_read();
                let column = self.affine(dx).and_then(Affine::column);
                let row = self.affine(dy).and_then(Affine::row);
                // Each offset is computed once, into a local the body cannot
                // name, through `pixel_offset`, whose bound reports a
                // non-`i32` offset at the user's expression.
                let names = ["__dx", "__dy"].map(|n| Ident::new(n, Span::mixed_site()));
                let [dx_name, dy_name] = &names;
                let (dx, dy) = (self.offset(dx), self.offset(dy));
                let column = position(column, &quote!(#dx_name), quote!((__x as i32)));
                let row = position(row, &quote!(#dy_name), quote!((__y as i32)));
                let call = located(field.span(), quote!(#read::read_in::<__M, __S>));
                let view = field_ref(field);
                // In parentheses: a block first in a statement would end it.
                quote_spanned!(field.span()=> ({
                    let #dx_name: i32 = #dx;
                    let #dy_name: i32 = #dy;
                    #call(#view, __x, __y, #dx_name, #dy_name, #column, #row)
                }))
            }
            Expr::X(span) => quote_spanned!(*span=> (__x as i32)),
            Expr::Y(span) => quote_spanned!(*span=> (__y as i32)),
            Expr::Unary { token, expr, .. } => {
                let e = self.expr(expr);
                quote!(#token #e)
            }
            Expr::Binary { op, lhs, rhs } => {
                let (l, r) = (self.expr(lhs), self.expr(rhs));
                let token = &op.token;
                quote!(#l #token #r)
            }
            Expr::Method { recv, name, args } => {
                let recv = self.expr(recv);
                let args: Vec<_> = args.iter().map(|a| self.expr(a)).collect();
                let extreme = match name.to_string().as_str() {
                    "min" => Some(quote::format_ident!("least", span = name.span())),
                    "max" => Some(quote::format_ident!("most", span = name.span())),
                    _ => None,
                };
                match (extreme, args.as_slice()) {
                    (Some(f), [arg]) => {
                        self.extremes.set(true);
                        let extremes = self.paths.extremes();
                        quote_spanned!(name.span()=> #extremes::#f::<__M>(#recv, #arg))
                    }
                    _ => quote!(#recv.#name(#(#args),*)),
                }
            }
            Expr::Lane { base, member, .. } => {
                let base = self.expr(base);
                quote!(#base.#member)
            }
            Expr::MakeVec { lane, args, span } => {
                let rgba = self.paths.rgba();
                let lane = lane.as_ref().map(|t| quote!(::<#t>));
                let args = args.iter().map(|a| self.expr(a));
                quote_spanned!(*span=> #rgba #lane::new(#(#args),*))
            }
            Expr::Cast { expr, ty } => {
                let e = self.expr(expr);
                quote!(#e as #ty)
            }
            Expr::If {
                cond,
                then,
                otherwise,
            } => {
                let cond = self.expr(cond);
                let then = self.block(then);
                let otherwise = otherwise.as_ref().map(|b| {
                    let b = self.block(b);
                    quote!(else #b)
                });
                quote!(if #cond #then #otherwise)
            }
            Expr::Block(b) => self.block(b),
            Expr::Paren(e) => {
                let e = self.expr(e);
                quote!((#e))
            }
            Expr::Reduce {
                window,
                op,
                dx,
                dy,
                body,
                span,
                ..
            } => {
                let (window_trait, reducible) = (self.paths.cpu_window(), self.paths.reducible());
                let site = Literal::usize_unsuffixed(self.sites.replace(self.sites.get() + 1));
                let combine = quote::format_ident!("r_{}", op.to_lowercase());
                let bound = [
                    (dx.name.clone(), Some(Affine::OPAQUE)),
                    (dy.name.clone(), Some(Affine::OPAQUE)),
                ];
                let body = self.scoped(&bound, || self.expr(body));
                let (dx, dy) = (&dx.tokens, &dy.tokens);
                // Located at `reduce`: a value of the wrong type is the
                // reduction's, not the window's.
                let call = located(*span, quote!(#window_trait::reduce_at::<__S, _>));
                let combine = located(*span, quote!(|__a, __b| #reducible::#combine(__a, __b)));
                let window = field_ref(window);
                quote_spanned! {*span=>
                    #call(#window, #site, __x, |#dx: i32, #dy: i32| #body, #combine)
                }
            }
            Expr::Invalid => unreachable!("bug: emitting a body that has errors"),
        }
    }
}

/// `&__v.name`: the view of field `name`, located at the user's `name` so
/// that rustc's errors about the field point there.
fn field_ref(name: &syn::Ident) -> TokenStream {
    let views = located(name.span(), quote!(&__v.));
    quote!(#views #name)
}

/// The macro's own `tokens`, every one located at `span` and resolved
/// where the macro's tokens resolve.
fn located(span: Span, tokens: TokenStream) -> TokenStream {
    let here = span.resolved_at(Span::call_site());
    tokens
        .into_iter()
        .map(|t| match t {
            TokenTree::Group(g) => {
                let mut inner = Group::new(g.delimiter(), located(span, g.stream()));
                inner.set_span(here);
                TokenTree::Group(inner)
            }
            mut t => {
                t.set_span(here);
                t
            }
        })
        .collect()
}

/// `Some((a, b, k, q))` for a read position `a·p + b + k·(p / q)` along an
/// axis with coordinate `p` (the body's value `coord`), `None` where the
/// offset is not affine. An opaque `b` is the body's `offset` minus its
/// coordinate terms, in the body's `i32` arithmetic, which LLVM folds to
/// the term the body added.
fn position(p: Option<Position>, offset: &TokenStream, coord: TokenStream) -> TokenStream {
    let Some(Position { a, b, k, q, opaque }) = p else {
        return quote!(::core::option::Option::None);
    };
    let b = if opaque {
        let scaled = i32_literal(a - 1);
        let mut rest = quote!((#offset).wrapping_sub(#scaled.wrapping_mul(#coord)));
        if k != 0 {
            let (k, q) = (i32_literal(k), i32_literal(q));
            rest = quote!(#rest.wrapping_sub(#k.wrapping_mul(#coord / #q)));
        }
        quote!((#rest as isize))
    } else {
        isize_literal(b)
    };
    let [a, k, q] = [a, k, q].map(isize_literal);
    quote!(::core::option::Option::Some((#a, #b, #k, #q)))
}

/// An `isize` literal token (`-2isize`); [`Affine`] bounds the value.
fn isize_literal(v: i64) -> TokenStream {
    let lit = Literal::isize_suffixed(v.unsigned_abs() as isize);
    if v < 0 {
        quote!(-#lit)
    } else {
        quote!(#lit)
    }
}

/// Loops of at most this many trips are written out as copies of their
/// body. Their bounds are literals, so the copies are exact; eight covers
/// the taps of the usual 2x2 to 7x7 stencils per axis.
const UNROLL_MAX_TRIPS: i64 = 8;

/// An `i32` literal token for a loop bound (`-2i32`); the checker keeps
/// bounds strictly inside the `i32` range.
fn i32_literal(v: i64) -> TokenStream {
    let magnitude = i32::try_from(v.abs())
        .unwrap_or_else(|_| unreachable!("bug: loop bound {v} not checked against the i32 range"));
    let lit = Literal::i32_suffixed(magnitude);
    if v < 0 {
        quote!(-#lit)
    } else {
        quote!(#lit)
    }
}
