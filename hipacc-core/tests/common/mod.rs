//! Builders for hand-written surface ASTs and bindings.
#![allow(dead_code)] // each test file uses a different subset

use hipacc_core::ir::surface::{SBlock, SExpr, SStmt};
use hipacc_core::ir::{self, BinaryOp, Kernel, Type, Value};
use hipacc_core::{Bindings, Image, KernelField, Pixel, Rect, ReduceOp};

pub(crate) fn int(v: i64) -> SExpr {
    SExpr::Int {
        value: v,
        suffix: None,
    }
}
pub(crate) fn int_s(v: i64, s: &'static str) -> SExpr {
    SExpr::Int {
        value: v,
        suffix: Some(s),
    }
}
pub(crate) fn float(v: f64) -> SExpr {
    SExpr::Float {
        value: v,
        suffix: None,
    }
}
pub(crate) fn float_s(v: f64, s: &'static str) -> SExpr {
    SExpr::Float {
        value: v,
        suffix: Some(s),
    }
}
pub(crate) fn local(n: &'static str) -> SExpr {
    SExpr::Local(n)
}
pub(crate) fn field(n: &'static str) -> SExpr {
    SExpr::Field(n)
}
pub(crate) fn at(f: &'static str, dx: SExpr, dy: SExpr) -> SExpr {
    SExpr::At {
        field: f,
        dx: Box::new(dx),
        dy: Box::new(dy),
    }
}
pub(crate) fn at_c(f: &'static str, dx: i64, dy: i64) -> SExpr {
    at(f, offset(dx), offset(dy))
}
/// A constant offset as rustc sees `-1`: a negated literal.
pub(crate) fn offset(v: i64) -> SExpr {
    if v < 0 {
        neg(int(-v))
    } else {
        int(v)
    }
}
pub(crate) fn neg(e: SExpr) -> SExpr {
    SExpr::Unary(ir::UnaryOp::Neg, Box::new(e))
}
pub(crate) fn bin(op: BinaryOp, a: SExpr, b: SExpr) -> SExpr {
    SExpr::Binary(op, Box::new(a), Box::new(b))
}
pub(crate) fn add(a: SExpr, b: SExpr) -> SExpr {
    bin(BinaryOp::Add, a, b)
}
pub(crate) fn mul(a: SExpr, b: SExpr) -> SExpr {
    bin(BinaryOp::Mul, a, b)
}
pub(crate) fn method(recv: SExpr, name: &'static str, args: Vec<SExpr>) -> SExpr {
    SExpr::Method {
        recv: Box::new(recv),
        name,
        args,
    }
}
pub(crate) fn cast(e: SExpr, ty: &'static str) -> SExpr {
    SExpr::Cast(Box::new(e), ty)
}
pub(crate) fn if_(c: SExpr, t: SBlock, e: SBlock) -> SExpr {
    SExpr::If(Box::new(c), Box::new(t), Box::new(e))
}
pub(crate) fn reduce(window: &'static str, op: ReduceOp, body: SExpr) -> SExpr {
    SExpr::Reduce {
        window,
        convolve: false,
        op,
        dx: "dx",
        dy: "dy",
        body: Box::new(body),
    }
}
pub(crate) fn convolve(mask: &'static str, op: ReduceOp, body: SExpr) -> SExpr {
    SExpr::Reduce {
        window: mask,
        convolve: true,
        op,
        dx: "dx",
        dy: "dy",
        body: Box::new(body),
    }
}
pub(crate) fn let_(name: &'static str, init: SExpr) -> SStmt {
    SStmt::Let {
        name,
        mutable: false,
        ty: None,
        init,
    }
}
pub(crate) fn let_mut(name: &'static str, init: SExpr) -> SStmt {
    SStmt::Let {
        name,
        mutable: true,
        ty: None,
        init,
    }
}
pub(crate) fn let_ty(name: &'static str, ty: &'static str, init: SExpr) -> SStmt {
    SStmt::Let {
        name,
        mutable: false,
        ty: Some(ty),
        init,
    }
}
pub(crate) fn assign(name: &'static str, op: Option<BinaryOp>, value: SExpr) -> SStmt {
    SStmt::Assign { name, op, value }
}
pub(crate) fn for_(var: &'static str, start: i64, end: i64, body: SBlock) -> SStmt {
    SStmt::For {
        var,
        start,
        end,
        body,
    }
}
pub(crate) fn block(stmts: Vec<SStmt>, result: SExpr) -> SBlock {
    SBlock {
        stmts,
        result: Some(Box::new(result)),
    }
}
pub(crate) fn stmts(stmts: Vec<SStmt>) -> SBlock {
    SBlock {
        stmts,
        result: None,
    }
}
pub(crate) fn value(result: SExpr) -> SBlock {
    block(Vec::new(), result)
}

/// Adds one field to `b`.
pub(crate) fn bind<F: KernelField>(b: &mut Bindings, name: &'static str, f: &F) {
    f.bind(name, b);
}

/// Lowers `body` for an output of `T`.
pub(crate) fn lower<T: Pixel>(b: &Bindings, body: &SBlock) -> hipacc_core::Result<Kernel> {
    ir::lower("test", T::TYPE, b, body)
}

/// Lowers and evaluates `body` on a `w x h` output (full space), returning
/// the output pixels.
pub(crate) fn run<T: Pixel>(
    b: &Bindings,
    body: &SBlock,
    w: usize,
    h: usize,
) -> hipacc_core::Result<Vec<T>> {
    let k = lower::<T>(b, body)?;
    let out = Image::<T>::new(w, h)?;
    ir::evaluate(&k, b, &*out.to_dyn(), Rect::full(w, h))?;
    out.to_vec()
}

/// Evaluates a body on a 1x1 output of `T` and returns the value.
pub(crate) fn run_value<T: Pixel>(b: &Bindings, body: &SBlock) -> hipacc_core::Result<Value> {
    Ok(run::<T>(b, body, 1, 1)?[0].to_value())
}

/// The type of variable `name` (the last one of that name).
pub(crate) fn var_type(k: &Kernel, name: &str) -> Type {
    k.vars
        .iter()
        .rev()
        .find(|v| v.name == name)
        .map(|v| v.ty)
        .unwrap_or_else(|| panic!("no variable `{name}` in {:?}", k.vars))
}
