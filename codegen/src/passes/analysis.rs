//! Small whole-kernel analyses the heuristics and validation use.

use super::reach::footprints;
use crate::vocab::OperatorClass;
use hipacc_core::ir::footprint::Footprint;
use hipacc_core::ir::{AccessorSlot, Block, Expr, ExprKind, Kernel, ScalarType, Stmt};
use hipacc_core::{BoundaryMode, Interpolation};

/// `Point` when every accessor is read at `(0, 0)` only, else `Local`.
pub(crate) fn operator_class(kernel: &Kernel) -> OperatorClass {
    if footprints(kernel)
        .iter()
        .all(|f| *f == Some(Footprint::ZERO))
    {
        OperatorClass::Point
    } else {
        OperatorClass::Local
    }
}

/// True when reads outside the accessor's region must be checked (every
/// mode but `Undefined`).
pub(crate) fn needs_checks(acc: &AccessorSlot) -> bool {
    acc.boundary != BoundaryMode::Undefined
}

/// True when any value of the kernel is `f64` (interpolating reads
/// compute their weights in `f64`): a device without `f64` arithmetic
/// cannot run it.
pub fn uses_f64(kernel: &Kernel) -> bool {
    kernel.output.scalar == ScalarType::F64
        || kernel
            .accessors
            .iter()
            .any(|a| a.pixel.scalar == ScalarType::F64 || a.interpolation != Interpolation::None)
        || kernel.params.iter().any(|p| p.ty.scalar == ScalarType::F64)
        || kernel.masks.iter().any(|m| m.ty.scalar == ScalarType::F64)
        || kernel.vars.iter().any(|v| v.ty.scalar == ScalarType::F64)
        || block_uses_f64(&kernel.body)
}

fn block_uses_f64(b: &Block) -> bool {
    b.stmts.iter().any(stmt_uses_f64) || b.result.as_ref().is_some_and(expr_uses_f64)
}

fn stmt_uses_f64(s: &Stmt) -> bool {
    match s {
        Stmt::Let { value, .. } | Stmt::Assign { value, .. } | Stmt::Expr(value) => {
            expr_uses_f64(value)
        }
        Stmt::If { cond, then, els } => {
            expr_uses_f64(cond) || block_uses_f64(then) || block_uses_f64(els)
        }
        Stmt::For { body, .. } | Stmt::Iterate { body, .. } => block_uses_f64(body),
    }
}

fn expr_uses_f64(e: &Expr) -> bool {
    if e.ty.scalar == ScalarType::F64 {
        return true;
    }
    match &e.kind {
        ExprKind::Read { dx, dy, .. } | ExprKind::MaskCoef { dx, dy, .. } => {
            expr_uses_f64(dx) || expr_uses_f64(dy)
        }
        ExprKind::Unary { arg, .. } | ExprKind::Cast(arg) | ExprKind::Lane { arg, .. } => {
            expr_uses_f64(arg)
        }
        ExprKind::Binary { lhs, rhs, .. } => expr_uses_f64(lhs) || expr_uses_f64(rhs),
        ExprKind::Call { args, .. } | ExprKind::MakeVec(args) => args.iter().any(expr_uses_f64),
        ExprKind::If { cond, then, els } => {
            expr_uses_f64(cond) || block_uses_f64(then) || block_uses_f64(els)
        }
        ExprKind::Reduce { body, .. } => block_uses_f64(body),
        ExprKind::Const(_) | ExprKind::Param(_) | ExprKind::Var(_) | ExprKind::X | ExprKind::Y => {
            false
        }
    }
}
