//! The surface AST: the kernel body as `#[kernel_body]` captured it, before
//! names are resolved and types inferred.
//!
//! The macro has already checked that the body is in the kernel subset and
//! rustc has type-checked the same body as Rust (the CPU backend compiles it),
//! so [`lower`](super::lower) only resolves names against the kernel's slots
//! and infers types exactly as rustc did (literals included).
//!
//! Names are `&'static str` because every surface AST is built by code the
//! macro generated.

/// A captured expression.
#[derive(Clone, Debug, PartialEq)]
pub enum SExpr {
    /// An integer literal; `suffix` is its type suffix if written (`3u8`).
    Int {
        /// The value.
        value: i64,
        /// `Some("u8")` for `3u8`.
        suffix: Option<&'static str>,
    },
    /// A float literal; `suffix` is `f32`/`f64` if written.
    Float {
        /// The value.
        value: f64,
        /// `Some("f32")` for `1.0f32`.
        suffix: Option<&'static str>,
    },
    /// `true` / `false`.
    Bool(bool),
    /// A local variable (let, loop or closure parameter).
    Local(&'static str),
    /// `self.name` used as a value: a scalar parameter.
    Field(&'static str),
    /// `self.name.at(dx, dy)` (accessor read or mask coefficient: resolved by
    /// the slot kind); `self.name()` is `At` with offsets `0, 0`.
    At {
        /// Field name.
        field: &'static str,
        /// Horizontal offset.
        dx: Box<SExpr>,
        /// Vertical offset.
        dy: Box<SExpr>,
    },
    /// `x()`.
    X,
    /// `y()`.
    Y,
    /// `-a`, `!a`.
    Unary(super::UnaryOp, Box<SExpr>),
    /// `a op b`.
    Binary(super::BinaryOp, Box<SExpr>, Box<SExpr>),
    /// `recv.method(args)`: a math method, or `r`/`g`/`b`/`a` lane access when
    /// written as a field (`p.r`), which the macro turns into `Lane`.
    Method {
        /// The receiver.
        recv: Box<SExpr>,
        /// The method's name.
        name: &'static str,
        /// The arguments after the receiver.
        args: Vec<SExpr>,
    },
    /// `p.r`, `p.g`, `p.b`, `p.a`: lane 0..3 of a vector.
    Lane(Box<SExpr>, u8),
    /// `Rgba::new(r, g, b, a)`.
    MakeVec(Vec<SExpr>),
    /// `a as ty`; `ty` is a Rust scalar type name.
    Cast(Box<SExpr>, &'static str),
    /// `if cond { .. } else { .. }` used as a value.
    If(Box<SExpr>, Box<SBlock>, Box<SBlock>),
    /// `{ .. }`.
    Block(Box<SBlock>),
    /// `reduce(&self.window, Op, |dx, dy| body)` or
    /// `convolve(&self.mask, Op, |dx, dy| body)`.
    Reduce {
        /// Field name of the mask or domain.
        window: &'static str,
        /// True for `convolve` (the window must be a mask).
        convolve: bool,
        /// The operator.
        op: super::ReduceOp,
        /// Closure parameter bound to the x offset.
        dx: &'static str,
        /// Closure parameter bound to the y offset.
        dy: &'static str,
        /// The closure body.
        body: Box<SExpr>,
    },
}

/// A captured statement.
#[derive(Clone, Debug, PartialEq)]
pub enum SStmt {
    /// `let [mut] name[: ty] = init;` (`ty` a Rust type name: scalar or `Rgba<T>`).
    Let {
        /// Variable name.
        name: &'static str,
        /// Declared `mut`.
        mutable: bool,
        /// Type annotation if written, e.g. `"f32"` or `"Rgba<f32>"`.
        ty: Option<&'static str>,
        /// Initial value.
        init: SExpr,
    },
    /// `name = value;` or `name op= value;` (`op` set for compound forms).
    Assign {
        /// Target variable.
        name: &'static str,
        /// `Some(Add)` for `+=`.
        op: Option<super::BinaryOp>,
        /// The value.
        value: SExpr,
    },
    /// `for var in start..end` (or `..=`, normalised to exclusive `end`).
    For {
        /// The loop variable (`i32`).
        var: &'static str,
        /// First value.
        start: i64,
        /// One past the last value.
        end: i64,
        /// The body.
        body: SBlock,
    },
    /// `iterate(&self.window, |dx, dy| { body });`
    Iterate {
        /// Field name of the mask or domain.
        window: &'static str,
        /// Closure parameter bound to the x offset.
        dx: &'static str,
        /// Closure parameter bound to the y offset.
        dy: &'static str,
        /// The body.
        body: SBlock,
    },
    /// An expression statement (`if` without value, or a block).
    Expr(SExpr),
}

/// A captured block: statements and an optional tail expression.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct SBlock {
    /// Statements in order.
    pub stmts: Vec<SStmt>,
    /// The tail expression (the block's value).
    pub result: Option<Box<SExpr>>,
}
