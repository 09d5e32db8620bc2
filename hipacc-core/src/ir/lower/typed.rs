//! The typed tree before types are final: the IR's shape with a type
//! variable on every expression. [`finish`] resolves the variables (literal
//! defaults included), checks what only final types can tell (unsigned
//! negation, literal ranges, casts involving `bool`) and builds the IR.

use super::unify::{Tv, Types};
use crate::ir::{
    BinaryOp, Block, Expr, ExprKind, Intrinsic, Literal, ReduceOp, ScalarType, Stmt, Type, UnaryOp,
    VarId, Window,
};

/// An expression whose type is a variable.
pub(super) struct TExpr {
    pub(super) ty: Tv,
    pub(super) kind: TKind,
}

/// [`ExprKind`] over [`TExpr`]; `Zero` is the zero of the expression's type.
pub(super) enum TKind {
    Const(Literal),
    Zero,
    Param(usize),
    Var(VarId),
    X,
    Y,
    Read(usize, Box<TExpr>, Box<TExpr>),
    MaskCoef(usize, Box<TExpr>, Box<TExpr>),
    Unary(UnaryOp, Box<TExpr>),
    Binary(BinaryOp, Box<TExpr>, Box<TExpr>),
    Call(Intrinsic, Vec<TExpr>),
    If(Box<TExpr>, Box<TBlock>, Box<TBlock>),
    Cast(Box<TExpr>),
    Reduce {
        window: Window,
        op: ReduceOp,
        dx: VarId,
        dy: VarId,
        body: Box<TBlock>,
    },
    Lane(Box<TExpr>, u8),
    MakeVec(Vec<TExpr>),
}

/// [`Stmt`] over [`TExpr`].
pub(super) enum TStmt {
    Let(VarId, TExpr),
    Assign(VarId, TExpr),
    If(TExpr, TBlock, TBlock),
    For(VarId, i32, i32, TBlock),
    Iterate(Window, VarId, VarId, TBlock),
    Expr(TExpr),
}

/// [`Block`] over [`TExpr`].
#[derive(Default)]
pub(super) struct TBlock {
    pub(super) stmts: Vec<TStmt>,
    pub(super) result: Option<Box<TExpr>>,
}

impl TExpr {
    pub(super) fn new(ty: Tv, kind: TKind) -> TExpr {
        TExpr { ty, kind }
    }
}

/// Resolves every type of `b` and builds the IR block.
pub(super) fn finish(types: &Types, b: TBlock) -> Result<Block, String> {
    let stmts = b
        .stmts
        .into_iter()
        .map(|s| finish_stmt(types, s))
        .collect::<Result<_, _>>()?;
    let result = b.result.map(|e| finish_expr(types, *e)).transpose()?;
    Ok(Block { stmts, result })
}

fn finish_stmt(types: &Types, s: TStmt) -> Result<Stmt, String> {
    Ok(match s {
        TStmt::Let(var, value) => Stmt::Let {
            var,
            value: finish_expr(types, value)?,
        },
        TStmt::Assign(var, value) => Stmt::Assign {
            var,
            value: finish_expr(types, value)?,
        },
        TStmt::If(cond, then, els) => Stmt::If {
            cond: finish_expr(types, cond)?,
            then: finish(types, then)?,
            els: finish(types, els)?,
        },
        TStmt::For(var, start, end, body) => Stmt::For {
            var,
            start,
            end,
            body: finish(types, body)?,
        },
        TStmt::Iterate(window, dx, dy, body) => Stmt::Iterate {
            window,
            dx,
            dy,
            body: finish(types, body)?,
        },
        TStmt::Expr(e) => Stmt::Expr(finish_expr(types, e)?),
    })
}

fn boxed(types: &Types, e: TExpr) -> Result<Box<Expr>, String> {
    finish_expr(types, e).map(Box::new)
}

fn finish_expr(types: &Types, e: TExpr) -> Result<Expr, String> {
    let ty = types.resolve(e.ty)?;
    let kind = match e.kind {
        TKind::Const(lit) => ExprKind::Const(check_literal(lit, ty)?),
        TKind::Zero => ExprKind::Const(match ty.scalar {
            ScalarType::Bool => Literal::Bool(false),
            s if s.is_float() => Literal::float(0.0),
            _ => Literal::Int(0),
        }),
        TKind::Param(i) => ExprKind::Param(i),
        TKind::Var(v) => ExprKind::Var(v),
        TKind::X => ExprKind::X,
        TKind::Y => ExprKind::Y,
        TKind::Read(acc, dx, dy) => ExprKind::Read {
            acc,
            dx: boxed(types, *dx)?,
            dy: boxed(types, *dy)?,
        },
        TKind::MaskCoef(mask, dx, dy) => ExprKind::MaskCoef {
            mask,
            dx: boxed(types, *dx)?,
            dy: boxed(types, *dy)?,
        },
        TKind::Unary(op, arg) => {
            let arg = boxed(types, *arg)?;
            check_unary(op, arg.ty)?;
            ExprKind::Unary { op, arg }
        }
        TKind::Binary(op, lhs, rhs) => {
            let (lhs, rhs) = (boxed(types, *lhs)?, boxed(types, *rhs)?);
            check_binary(op, lhs.ty, rhs.ty)?;
            ExprKind::Binary { op, lhs, rhs }
        }
        TKind::Call(func, args) => ExprKind::Call {
            func,
            args: args
                .into_iter()
                .map(|a| finish_expr(types, a))
                .collect::<Result<_, _>>()?,
        },
        TKind::If(cond, then, els) => ExprKind::If {
            cond: boxed(types, *cond)?,
            then: Box::new(finish(types, *then)?),
            els: Box::new(finish(types, *els)?),
        },
        TKind::Cast(arg) => {
            let arg = boxed(types, *arg)?;
            check_cast(arg.ty, ty)?;
            ExprKind::Cast(arg)
        }
        TKind::Reduce {
            window,
            op,
            dx,
            dy,
            body,
        } => {
            if ty.scalar == ScalarType::Bool {
                return Err("a local reduction cannot combine `bool` values".into());
            }
            ExprKind::Reduce {
                window,
                op,
                dx,
                dy,
                body: Box::new(finish(types, *body)?),
            }
        }
        TKind::Lane(arg, lane) => ExprKind::Lane {
            arg: boxed(types, *arg)?,
            lane,
        },
        TKind::MakeVec(args) => ExprKind::MakeVec(
            args.into_iter()
                .map(|a| finish_expr(types, a))
                .collect::<Result<_, _>>()?,
        ),
    };
    Ok(Expr::new(ty, kind))
}

/// Rejects literals out of range for their final type, as rustc's
/// `overflowing_literals` does (a literal is never negative here: `-1` is a
/// negation of `1`, so signed types admit one more than their maximum).
fn check_literal(lit: Literal, ty: Type) -> Result<Literal, String> {
    let Literal::Int(v) = lit else {
        return Ok(lit);
    };
    let max: i64 = match ty.scalar {
        ScalarType::U8 => u8::MAX as i64,
        ScalarType::U16 => u16::MAX as i64,
        ScalarType::I32 => i32::MAX as i64 + 1,
        ScalarType::U32 => u32::MAX as i64,
        ScalarType::F32 | ScalarType::F64 => return Ok(Literal::float(v as f64)),
        ScalarType::Bool => return Err("an integer literal cannot be a `bool`".into()),
    };
    if (0..=max).contains(&v) {
        Ok(lit)
    } else {
        Err(format!("literal `{v}` is out of range for `{ty}`"))
    }
}

fn check_unary(op: UnaryOp, ty: Type) -> Result<(), String> {
    let ok = match op {
        UnaryOp::Neg => ty.scalar.is_float() || ty.scalar.is_signed_int(),
        UnaryOp::Not => ty.is_scalar() && !ty.scalar.is_float(),
    };
    if ok {
        Ok(())
    } else {
        let sym = if op == UnaryOp::Neg { "-" } else { "!" };
        Err(format!(
            "cannot apply unary operator `{sym}` to type `{ty}`"
        ))
    }
}

fn check_binary(op: BinaryOp, lhs: Type, rhs: Type) -> Result<(), String> {
    use BinaryOp::*;
    let bool_ok = matches!(op, And | Or | BitXor) || op.is_comparison();
    let float_ok = !matches!(op, And | Or | BitXor | Shl | Shr);
    let bad =
        |t: Type| (t.scalar == ScalarType::Bool && !bool_ok) || (t.scalar.is_float() && !float_ok);
    if bad(lhs) || bad(rhs) {
        return Err(format!(
            "operator `{}` cannot be applied to `{lhs}` and `{rhs}`",
            symbol(op)
        ));
    }
    Ok(())
}

/// Rust's `as`: numeric to numeric, `bool` to integers; nothing else.
fn check_cast(from: Type, to: Type) -> Result<(), String> {
    let ok = from.is_scalar()
        && match (from.scalar, to.scalar) {
            (ScalarType::Bool, t) => t == ScalarType::Bool || t.is_int(),
            (_, ScalarType::Bool) => false,
            _ => true,
        };
    if ok {
        Ok(())
    } else {
        Err(format!("cannot cast `{from}` as `{to}`"))
    }
}

/// The Rust spelling of a binary operator.
pub(super) fn symbol(op: BinaryOp) -> &'static str {
    use BinaryOp::*;
    match op {
        Add => "+",
        Sub => "-",
        Mul => "*",
        Div => "/",
        Rem => "%",
        And => "&&",
        Or => "||",
        BitXor => "^",
        Shl => "<<",
        Shr => ">>",
        Eq => "==",
        Ne => "!=",
        Lt => "<",
        Le => "<=",
        Gt => ">",
        Ge => ">=",
    }
}
