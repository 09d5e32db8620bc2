//! The kernel body language: a checked model of the `kernel()` body.
//!
//! [`convert`] reads the `syn` tree of the body, checks every construct
//! against the kernel subset (reporting each violation, with a span and a
//! hint, to a [`Diag`]) and builds this model, which the two emitters
//! ([`emit_surface`](crate::emit_surface), [`emit_cpu`](crate::emit_cpu))
//! turn into tokens. The model keeps the user's tokens (identifiers,
//! literals, operators) so that rustc's errors in the CPU code point into
//! the user's body.

mod call;
mod convert;
mod offset;
mod reject;
mod stmt;

use crate::diag::Diag;
use proc_macro2::{Span, TokenStream};

/// The math methods a body may call on values, with their number of
/// arguments after the receiver.
pub(crate) const MATH_METHODS: [(&str, usize); 23] = [
    ("abs", 0),
    ("sqrt", 0),
    ("exp", 0),
    ("exp2", 0),
    ("ln", 0),
    ("log2", 0),
    ("log10", 0),
    ("powf", 1),
    ("powi", 1),
    ("sin", 0),
    ("cos", 0),
    ("tan", 0),
    ("atan", 0),
    ("atan2", 1),
    ("hypot", 1),
    ("floor", 0),
    ("ceil", 0),
    ("round", 0),
    ("min", 1),
    ("max", 1),
    ("clamp", 2),
    ("mul_add", 2),
    ("signum", 0),
];

/// Converts and checks the body of `fn kernel(&self)`.
pub(crate) fn convert(block: &syn::Block, diag: &mut Diag) -> Block {
    convert::Converter::new(diag).block(block)
}

/// A block: statements and an optional value.
#[derive(Default)]
pub(crate) struct Block {
    /// The statements in order.
    pub(crate) stmts: Vec<Stmt>,
    /// The tail expression (the block's value), if any.
    pub(crate) result: Option<Box<Expr>>,
}

/// A name bound by a loop or closure: an identifier or `_`.
pub(crate) struct Binder {
    /// The name (`_` for the wildcard).
    pub(crate) name: String,
    /// The user's tokens.
    pub(crate) tokens: TokenStream,
}

/// The declared type of a `let`: a scalar or `Rgba<lane>`.
pub(crate) struct LetType {
    /// The scalar (or lane) type, with the user's span.
    pub(crate) scalar: syn::Ident,
    /// True for `Rgba<scalar>`.
    pub(crate) vector: bool,
}

impl LetType {
    /// The type as the surface AST names it (`f32`, `Rgba<u8>`).
    pub(crate) fn text(&self) -> String {
        if self.vector {
            format!("Rgba<{}>", self.scalar)
        } else {
            self.scalar.to_string()
        }
    }
}

/// A binary operator: its IR name and the user's token.
pub(crate) struct BinOp {
    /// The `ir::BinaryOp` variant (`Add`); for `+=` the operation (`Add`).
    pub(crate) ir: &'static str,
    /// The operator as written (`+`, `+=`).
    pub(crate) token: syn::BinOp,
}

/// A statement.
pub(crate) enum Stmt {
    /// `let [mut] name[: ty] = init;`
    Let {
        /// The variable.
        name: syn::Ident,
        /// Whether declared `mut`.
        mutable: bool,
        /// The annotation, if written.
        ty: Option<LetType>,
        /// The initial value.
        init: Expr,
    },
    /// `name = value;` or `name op= value;`
    Assign {
        /// The assigned local.
        name: syn::Ident,
        /// `None` for `=`, else the compound operator.
        op: Option<BinOp>,
        /// The `=` token of a plain assignment (for its span).
        eq: Span,
        /// The value.
        value: Expr,
    },
    /// `for var in start..end` (exclusive end).
    For {
        /// The loop variable.
        var: Binder,
        /// First value.
        start: i64,
        /// One past the last value.
        end: i64,
        /// The body.
        body: Block,
    },
    /// `iterate(&self.window, |dx, dy| { body });`
    Iterate {
        /// The mask or domain field.
        window: syn::Ident,
        /// Closure parameter bound to the x offset.
        dx: Binder,
        /// Closure parameter bound to the y offset.
        dy: Binder,
        /// The body.
        body: Block,
    },
    /// An expression statement.
    Expr(Expr),
}

/// An expression.
pub(crate) enum Expr {
    /// An integer literal (`suffix` as written, `None` if unsuffixed).
    Int {
        value: i64,
        suffix: Option<&'static str>,
        lit: TokenStream,
    },
    /// A float literal (or an integer literal with a float suffix).
    Float {
        value: f64,
        suffix: Option<&'static str>,
        lit: TokenStream,
    },
    /// `true` / `false`.
    Bool(syn::LitBool),
    /// A local variable.
    Local(syn::Ident),
    /// `self.name` as a value (a scalar parameter).
    Field(syn::Ident),
    /// `self.field.at(dx, dy)` or `self.field()`.
    At {
        field: syn::Ident,
        dx: Box<Expr>,
        dy: Box<Expr>,
    },
    /// `x()`.
    X(Span),
    /// `y()`.
    Y(Span),
    /// `-a` (`ir` is `Neg`) or `!a` (`Not`).
    Unary {
        ir: &'static str,
        token: syn::UnOp,
        expr: Box<Expr>,
    },
    /// `a op b`.
    Binary {
        op: BinOp,
        lhs: Box<Expr>,
        rhs: Box<Expr>,
    },
    /// `recv.name(args)`, a math method.
    Method {
        recv: Box<Expr>,
        name: syn::Ident,
        args: Vec<Expr>,
    },
    /// `base.r` etc.: lane `lane` of a vector.
    Lane {
        base: Box<Expr>,
        lane: u8,
        member: syn::Ident,
    },
    /// `Rgba::new(..)` (`lane` set for `Rgba::<T>::new`).
    MakeVec {
        lane: Option<syn::Type>,
        args: Vec<Expr>,
        span: Span,
    },
    /// `expr as ty`.
    Cast { expr: Box<Expr>, ty: syn::Ident },
    /// `if cond { .. } [else { .. }]`.
    If {
        cond: Box<Expr>,
        then: Block,
        otherwise: Option<Block>,
    },
    /// `{ .. }`.
    Block(Block),
    /// `( .. )`.
    Paren(Box<Expr>),
    /// `reduce(&self.w, Op, |dx, dy| body)` / `convolve(..)`.
    Reduce {
        window: syn::Ident,
        convolve: bool,
        /// `Sum`, `Min`, `Max` or `Prod`.
        op: &'static str,
        dx: Binder,
        dy: Binder,
        body: Box<Expr>,
        span: Span,
    },
    /// Stands for a construct already reported as an error; never emitted.
    Invalid,
}

impl Expr {
    /// Whether the expression has a value (as opposed to `()`, which an
    /// `if` without `else` or a block without tail expression has).
    pub(crate) fn has_value(&self) -> bool {
        match self {
            Expr::If {
                then,
                otherwise: Some(_),
                ..
            } => then.result.is_some(),
            Expr::If {
                otherwise: None, ..
            } => false,
            Expr::Block(b) => b.result.is_some(),
            Expr::Paren(e) => e.has_value(),
            _ => true,
        }
    }
}
