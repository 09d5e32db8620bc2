//! Typed expressions of the kernel IR.

use super::{Block, Literal, Type, VarId};
use serde::{Deserialize, Serialize};

/// A typed expression. `ty` is the type of the value it produces.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Expr {
    /// The result type.
    pub ty: Type,
    /// What is computed.
    pub kind: ExprKind,
}

/// Which neighbourhood a local operator or `iterate` walks.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Window {
    /// Every position of mask slot `i` (`convolve`, or `reduce` over a mask).
    Mask(usize),
    /// The enabled positions of domain slot `i`.
    Domain(usize),
}

/// The combining operator of a local reduction.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum ReduceOp {
    /// `a + b` (integers wrap).
    Sum,
    /// The smaller (floats: `fmin`, NaN-ignoring).
    Min,
    /// The larger (floats: `fmax`, NaN-ignoring).
    Max,
    /// `a * b` (integers wrap).
    Prod,
}

/// Unary operators.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum UnaryOp {
    /// `-a`.
    Neg,
    /// `!a` (logical for `bool`, bitwise for integers).
    Not,
}

/// Binary operators. Arithmetic follows Rust on the operand types; a vector
/// operand combined with a scalar broadcasts the scalar.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum BinaryOp {
    /// `+`
    Add,
    /// `-`
    Sub,
    /// `*`
    Mul,
    /// `/` (integers truncate toward zero)
    Div,
    /// `%` (integers: sign of the dividend, as Rust and C)
    Rem,
    /// `&&` (short-circuit) or `&` on integers
    And,
    /// `||` (short-circuit) or `|` on integers
    Or,
    /// `^`
    BitXor,
    /// `<<`
    Shl,
    /// `>>` (arithmetic for signed)
    Shr,
    /// `==`
    Eq,
    /// `!=`
    Ne,
    /// `<`
    Lt,
    /// `<=`
    Le,
    /// `>`
    Gt,
    /// `>=`
    Ge,
}

impl BinaryOp {
    /// True for the comparisons, whose result is `bool`.
    pub fn is_comparison(self) -> bool {
        matches!(
            self,
            BinaryOp::Eq | BinaryOp::Ne | BinaryOp::Lt | BinaryOp::Le | BinaryOp::Gt | BinaryOp::Ge
        )
    }
}

/// Math functions, named as the Rust methods they come from (`a.exp()` is
/// `Exp` with one argument; `a.powf(b)` is `Powf` with two).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Intrinsic {
    /// `abs`
    Abs,
    /// `sqrt`
    Sqrt,
    /// `exp`
    Exp,
    /// `exp2`
    Exp2,
    /// `ln`
    Ln,
    /// `log2`
    Log2,
    /// `log10`
    Log10,
    /// `powf`
    Powf,
    /// `powi` (integer exponent)
    Powi,
    /// `sin`
    Sin,
    /// `cos`
    Cos,
    /// `tan`
    Tan,
    /// `atan`
    Atan,
    /// `atan2`
    Atan2,
    /// `hypot`
    Hypot,
    /// `floor`
    Floor,
    /// `ceil`
    Ceil,
    /// `round` (half away from zero, as Rust)
    Round,
    /// `min`
    Min,
    /// `max`
    Max,
    /// `clamp(lo, hi)`
    Clamp,
    /// `mul_add(b, c)` = `a*b + c`
    MulAdd,
    /// `signum`
    Signum,
}

impl Intrinsic {
    /// The method name and number of arguments including the receiver.
    pub fn signature(self) -> (&'static str, usize) {
        use Intrinsic::*;
        match self {
            Abs => ("abs", 1),
            Sqrt => ("sqrt", 1),
            Exp => ("exp", 1),
            Exp2 => ("exp2", 1),
            Ln => ("ln", 1),
            Log2 => ("log2", 1),
            Log10 => ("log10", 1),
            Powf => ("powf", 2),
            Powi => ("powi", 2),
            Sin => ("sin", 1),
            Cos => ("cos", 1),
            Tan => ("tan", 1),
            Atan => ("atan", 1),
            Atan2 => ("atan2", 2),
            Hypot => ("hypot", 2),
            Floor => ("floor", 1),
            Ceil => ("ceil", 1),
            Round => ("round", 1),
            Min => ("min", 2),
            Max => ("max", 2),
            Clamp => ("clamp", 3),
            MulAdd => ("mul_add", 3),
            Signum => ("signum", 1),
        }
    }
    /// Every intrinsic.
    pub const ALL: [Intrinsic; 23] = {
        use Intrinsic::*;
        [
            Abs, Sqrt, Exp, Exp2, Ln, Log2, Log10, Powf, Powi, Sin, Cos, Tan, Atan, Atan2, Hypot,
            Floor, Ceil, Round, Min, Max, Clamp, MulAdd, Signum,
        ]
    };
    /// Looks an intrinsic up by its Rust method name.
    pub fn from_method(name: &str) -> Option<Intrinsic> {
        Intrinsic::ALL.into_iter().find(|i| i.signature().0 == name)
    }
}

/// The computation of an [`Expr`].
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum ExprKind {
    /// A constant of the expression's type (vectors: broadcast).
    Const(Literal),
    /// Scalar parameter slot `i`.
    Param(usize),
    /// A local variable (a `let`, a loop or a window offset variable).
    Var(VarId),
    /// The x coordinate of the output pixel (absolute, in the output image).
    X,
    /// The y coordinate of the output pixel.
    Y,
    /// Accessor slot `acc` read at offset `(dx, dy)` from the accessor position
    /// of the output pixel; the accessor's boundary condition applies.
    Read {
        /// Accessor slot.
        acc: usize,
        /// Horizontal offset (`i32`).
        dx: Box<Expr>,
        /// Vertical offset (`i32`).
        dy: Box<Expr>,
    },
    /// Coefficient of mask slot `mask` at offset `(dx, dy)` from its centre.
    MaskCoef {
        /// Mask slot.
        mask: usize,
        /// Horizontal offset from the centre (`i32`).
        dx: Box<Expr>,
        /// Vertical offset from the centre (`i32`).
        dy: Box<Expr>,
    },
    /// A unary operation.
    Unary {
        /// The operator.
        op: UnaryOp,
        /// The operand.
        arg: Box<Expr>,
    },
    /// A binary operation.
    Binary {
        /// The operator.
        op: BinaryOp,
        /// Left operand.
        lhs: Box<Expr>,
        /// Right operand.
        rhs: Box<Expr>,
    },
    /// A math function; `args[0]` is the receiver.
    Call {
        /// The function.
        func: Intrinsic,
        /// Receiver and arguments.
        args: Vec<Expr>,
    },
    /// `if cond { then } else { els }` as an expression.
    If {
        /// `bool` condition.
        cond: Box<Expr>,
        /// Taken when true; its result has the expression's type.
        then: Box<Block>,
        /// Taken when false.
        els: Box<Block>,
    },
    /// `arg as ty`, with Rust's semantics (float to int saturates, NaN to 0).
    Cast(Box<Expr>),
    /// A local reduction: combines `body` evaluated at each position of
    /// `window` with `op`, binding the offsets to `dx`/`dy`.
    Reduce {
        /// Positions visited.
        window: Window,
        /// Combining operator.
        op: ReduceOp,
        /// Variable holding the x offset (`i32`).
        dx: VarId,
        /// Variable holding the y offset (`i32`).
        dy: VarId,
        /// Evaluated at each position; its result has the expression's type.
        body: Box<Block>,
    },
    /// Lane `lane` (0 = r … 3 = a) of a vector.
    Lane {
        /// The vector.
        arg: Box<Expr>,
        /// Lane index.
        lane: u8,
    },
    /// A vector from four scalars (`Rgba::new`).
    MakeVec(Vec<Expr>),
}

impl Expr {
    /// A new expression.
    pub fn new(ty: Type, kind: ExprKind) -> Expr {
        Expr { ty, kind }
    }
}
