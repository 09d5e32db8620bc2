//! Emits the code that builds the body's surface AST
//! (`ir::surface::{SBlock, SStmt, SExpr}`), which the IR lowering resolves
//! and types at run time.
//!
//! ```text
//! SBlock { stmts: vec![SStmt::Let { name: "s", mutable: false, ty: None, init: SExpr::X }],
//!          result: Some(Box::new(SExpr::Local("s"))) }
//! ```

use crate::body::{Binder, Block, Expr, Stmt};
use crate::paths::Paths;
use proc_macro2::{Literal, TokenStream};
use quote::{format_ident, quote};

/// Builds `SBlock` expressions for one kernel.
pub(crate) struct Surface<'p> {
    paths: &'p Paths,
}

impl<'p> Surface<'p> {
    /// An emitter naming core types through `paths`.
    pub(crate) fn new(paths: &'p Paths) -> Self {
        Surface { paths }
    }

    /// `SBlock { stmts: vec![..], result: .. }`
    pub(crate) fn block(&self, b: &Block) -> TokenStream {
        let sblock = self.paths.surface("SBlock");
        let stmts = b.stmts.iter().map(|s| self.stmt(s));
        let result = option(b.result.as_ref().map(|e| boxed(self.expr(e))));
        quote!(#sblock { stmts: ::std::vec![#(#stmts),*], result: #result })
    }

    fn stmt(&self, s: &Stmt) -> TokenStream {
        let sstmt = self.paths.surface("SStmt");
        match s {
            Stmt::Let {
                name,
                mutable,
                ty,
                init,
            } => {
                let name = name.to_string();
                let ty = option(ty.as_ref().map(|t| {
                    let t = t.text();
                    quote!(#t)
                }));
                let init = self.expr(init);
                quote!(#sstmt::Let { name: #name, mutable: #mutable, ty: #ty, init: #init })
            }
            Stmt::Assign {
                name, op, value, ..
            } => {
                let name = name.to_string();
                let op = option(op.as_ref().map(|op| self.binary_op(op.ir)));
                let value = self.expr(value);
                quote!(#sstmt::Assign { name: #name, op: #op, value: #value })
            }
            Stmt::For {
                var,
                start,
                end,
                body,
            } => {
                let var = &var.name;
                let (start, end) = (Literal::i64_suffixed(*start), Literal::i64_suffixed(*end));
                let body = self.block(body);
                quote!(#sstmt::For { var: #var, start: #start, end: #end, body: #body })
            }
            Stmt::Iterate {
                window,
                dx,
                dy,
                body,
            } => {
                let window = window.to_string();
                let (dx, dy) = (&dx.name, &dy.name);
                let body = self.block(body);
                quote!(#sstmt::Iterate { window: #window, dx: #dx, dy: #dy, body: #body })
            }
            Stmt::Expr(e) => {
                let e = self.expr(e);
                quote!(#sstmt::Expr(#e))
            }
        }
    }

    fn expr(&self, e: &Expr) -> TokenStream {
        let sexpr = self.paths.surface("SExpr");
        match e {
            Expr::Int { value, suffix, .. } => {
                let value = Literal::i64_suffixed(*value);
                let suffix = option(suffix.map(|s| quote!(#s)));
                quote!(#sexpr::Int { value: #value, suffix: #suffix })
            }
            Expr::Float { value, suffix, .. } => {
                let value = Literal::f64_suffixed(*value);
                let suffix = option(suffix.map(|s| quote!(#s)));
                quote!(#sexpr::Float { value: #value, suffix: #suffix })
            }
            Expr::Bool(b) => {
                let b = b.value;
                quote!(#sexpr::Bool(#b))
            }
            Expr::Local(name) => {
                let name = name.to_string();
                quote!(#sexpr::Local(#name))
            }
            Expr::Field(name) => {
                let name = name.to_string();
                quote!(#sexpr::Field(#name))
            }
            Expr::At { field, dx, dy } => {
                let field = field.to_string();
                let (dx, dy) = (boxed(self.expr(dx)), boxed(self.expr(dy)));
                quote!(#sexpr::At { field: #field, dx: #dx, dy: #dy })
            }
            Expr::X(_) => quote!(#sexpr::X),
            Expr::Y(_) => quote!(#sexpr::Y),
            Expr::Unary { ir, expr, .. } => {
                let op = self.ir_variant("UnaryOp", ir);
                let e = boxed(self.expr(expr));
                quote!(#sexpr::Unary(#op, #e))
            }
            Expr::Binary { op, lhs, rhs } => {
                let op = self.binary_op(op.ir);
                let (l, r) = (boxed(self.expr(lhs)), boxed(self.expr(rhs)));
                quote!(#sexpr::Binary(#op, #l, #r))
            }
            Expr::Method { recv, name, args } => {
                let recv = boxed(self.expr(recv));
                let name = name.to_string();
                let args = args.iter().map(|a| self.expr(a));
                quote!(#sexpr::Method { recv: #recv, name: #name, args: ::std::vec![#(#args),*] })
            }
            Expr::Lane { base, lane, .. } => {
                let base = boxed(self.expr(base));
                let lane = Literal::u8_suffixed(*lane);
                quote!(#sexpr::Lane(#base, #lane))
            }
            Expr::MakeVec { args, .. } => {
                let args = args.iter().map(|a| self.expr(a));
                quote!(#sexpr::MakeVec(::std::vec![#(#args),*]))
            }
            Expr::Cast { expr, ty } => {
                let e = boxed(self.expr(expr));
                let ty = ty.to_string();
                quote!(#sexpr::Cast(#e, #ty))
            }
            Expr::If {
                cond,
                then,
                otherwise,
            } => {
                let cond = boxed(self.expr(cond));
                let then = boxed(self.block(then));
                let otherwise = boxed(match otherwise {
                    Some(b) => self.block(b),
                    None => self.block(&Block::default()),
                });
                quote!(#sexpr::If(#cond, #then, #otherwise))
            }
            Expr::Block(b) => {
                let b = boxed(self.block(b));
                quote!(#sexpr::Block(#b))
            }
            Expr::Paren(e) => self.expr(e),
            Expr::Reduce {
                window,
                convolve,
                op,
                dx,
                dy,
                body,
                ..
            } => self.reduce(&window.to_string(), *convolve, op, dx, dy, body),
            Expr::Invalid => unreachable!("bug: emitting a body that has errors"),
        }
    }

    fn reduce(
        &self,
        window: &str,
        convolve: bool,
        op: &str,
        dx: &Binder,
        dy: &Binder,
        body: &Expr,
    ) -> TokenStream {
        let sexpr = self.paths.surface("SExpr");
        let op = self.ir_variant("ReduceOp", op);
        let (dx, dy) = (&dx.name, &dy.name);
        let body = boxed(self.expr(body));
        quote! {
            #sexpr::Reduce {
                window: #window, convolve: #convolve, op: #op, dx: #dx, dy: #dy, body: #body,
            }
        }
    }

    fn binary_op(&self, ir: &str) -> TokenStream {
        self.ir_variant("BinaryOp", ir)
    }

    /// `ir::Enum::Variant`.
    fn ir_variant(&self, ty: &str, variant: &str) -> TokenStream {
        let ty = self.paths.ir(ty);
        let variant = format_ident!("{variant}");
        quote!(#ty::#variant)
    }
}

fn boxed(e: TokenStream) -> TokenStream {
    quote!(::std::boxed::Box::new(#e))
}

fn option(e: Option<TokenStream>) -> TokenStream {
    match e {
        Some(e) => quote!(::core::option::Option::Some(#e)),
        None => quote!(::core::option::Option::None),
    }
}
