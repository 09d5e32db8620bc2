//! Emits the body as Rust for the CPU backend (`KernelBody::cpu_pixel`).
//!
//! The body keeps the user's tokens, so rustc type-checks it with spans in
//! the user's code. Field reads go through the views `#[derive(Kernel)]`
//! built; `__v` is the views struct, `(__x, __y)` the output pixel and `__M`
//! the read mode (checked or not):
//!
//! ```text
//! self.f.at(a, b)                 CpuRead::read::<__M>(&__v.f, __x, __y, a, b)
//! self.p                          __v.p
//! x(), y()                        (__x as i32), (__y as i32)
//! reduce(&self.w, Sum, |dx, dy| e)
//!     CpuWindow::reduce(&__v.w, |dx: i32, dy: i32| e, |a, b| Reducible::r_sum(a, b))
//! iterate(&self.w, |dx, dy| { s })
//!     CpuWindow::for_each(&__v.w, |dx: i32, dy: i32| { s });
//! for i in 0..2 { s }             { let i: i32 = 0i32; s } { let i: i32 = 1i32; s }
//! for i in 0..100 { s }           for i in 0i32..100i32 { s }
//! Rgba::new(..)                   <core>::Rgba::new(..)
//! ```
//!
//! The window view owns the loop, so a mask whose size is in its type gets
//! constant trip counts (unrolled, and the pixel loop vectorises). Windows
//! are never empty: the IR lowering rejects empty domains before any launch.

use crate::body::{Block, Expr, LetType, Stmt};
use crate::paths::Paths;
use proc_macro2::{Literal, TokenStream};
use quote::{quote, quote_spanned};

/// Emits Rust code of a body for one kernel.
pub(crate) struct Cpu<'p> {
    paths: &'p Paths,
}

impl<'p> Cpu<'p> {
    /// An emitter naming core items through `paths`.
    pub(crate) fn new(paths: &'p Paths) -> Self {
        Cpu { paths }
    }

    /// `{ stmts result }`
    pub(crate) fn block(&self, b: &Block) -> TokenStream {
        let stmts = b.stmts.iter().map(|s| self.stmt(s));
        let result = b.result.as_ref().map(|e| self.expr(e));
        quote!({ #(#stmts)* #result })
    }

    fn stmt(&self, s: &Stmt) -> TokenStream {
        match s {
            Stmt::Let {
                name,
                mutable,
                ty,
                init,
            } => {
                let mutable = mutable.then(|| quote!(mut));
                let ty = ty.as_ref().map(|t| {
                    let t = self.let_type(t);
                    quote!(: #t)
                });
                let init = self.expr(init);
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
                let var = &var.tokens;
                let body = self.block(body);
                if (0..=UNROLL_MAX_TRIPS).contains(&(end - start)) {
                    // Short loops are written out: LLVM's full unroll gives up
                    // on large bodies, and a loop left inside the pixel loop
                    // keeps that loop from vectorising.
                    let copies = (*start..*end).map(|k| {
                        let k = i32_literal(k);
                        quote!({ let #var: i32 = #k; #body })
                    });
                    return quote!(#(#copies)*);
                }
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
                let (dx, dy) = (&dx.tokens, &dy.tokens);
                let body = self.block(body);
                quote!(#window_trait::for_each(&__v.#window, |#dx: i32, #dy: i32| #body);)
            }
            Stmt::Expr(e) => {
                let e = self.expr(e);
                quote!(#e;)
            }
        }
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
            Expr::Field(name) => quote!(__v.#name),
            Expr::At { field, dx, dy } => {
                let read = self.paths.cpu_read();
                let (dx, dy) = (self.expr(dx), self.expr(dy));
                quote_spanned!(field.span()=> #read::read::<__M>(&__v.#field, __x, __y, #dx, #dy))
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
                let args = args.iter().map(|a| self.expr(a));
                quote!(#recv.#name(#(#args),*))
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
                let combine = quote::format_ident!("r_{}", op.to_lowercase());
                let (dx, dy) = (&dx.tokens, &dy.tokens);
                let body = self.expr(body);
                quote_spanned! {*span=>
                    #window_trait::reduce(
                        &__v.#window,
                        |#dx: i32, #dy: i32| #body,
                        |__a, __b| #reducible::#combine(__a, __b),
                    )
                }
            }
            Expr::Invalid => unreachable!("bug: emitting a body that has errors"),
        }
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
