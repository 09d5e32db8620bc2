//! Lowering of expressions: names, literals, operators, methods, casts,
//! vectors and local reductions.

use super::bindings::SlotRef;
use super::typed::{symbol, TBlock, TExpr, TKind};
use super::unify::{Term, Tv};
use super::Lower;
use crate::ir::surface::{SBlock, SExpr};
use crate::ir::{BinaryOp, Intrinsic, Literal, ReduceOp, ScalarType, Type, UnaryOp, Window};
use crate::Result;

impl Lower<'_> {
    /// Lowers an expression used as a value.
    pub(super) fn expr(&mut self, e: &SExpr) -> Result<TExpr> {
        Ok(match e {
            SExpr::Int { value, suffix } => self.int_literal(*value, *suffix)?,
            SExpr::Float { value, suffix } => {
                let ty = match suffix {
                    None => self.types.fresh(Term::Float),
                    Some(s) => match ScalarType::from_rust_name(s).filter(|t| t.is_float()) {
                        Some(t) => self.types.known(Type::scalar(t)),
                        None => return Err(self.error(format!("invalid float suffix `{s}`"))),
                    },
                };
                TExpr::new(ty, TKind::Const(Literal::float(*value)))
            }
            SExpr::Bool(b) => TExpr::new(
                self.types.known(Type::BOOL),
                TKind::Const(Literal::Bool(*b)),
            ),
            SExpr::Local(name) => {
                let id = self.lookup(name)?;
                TExpr::new(self.vars[id.0 as usize].1, TKind::Var(id))
            }
            SExpr::Field(field) => self.field(field)?,
            SExpr::At { field, dx, dy } => self.at(field, dx, dy)?,
            SExpr::X => TExpr::new(self.i32(), TKind::X),
            SExpr::Y => TExpr::new(self.i32(), TKind::Y),
            SExpr::Unary(op, arg) => self.unary(*op, arg)?,
            SExpr::Binary(op, lhs, rhs) => {
                let (l, r) = (self.expr(lhs)?, self.expr(rhs)?);
                self.binary(*op, l, r)?
            }
            SExpr::Method { recv, name, args } => self.method(recv, name, args)?,
            SExpr::Lane(arg, lane) => {
                let arg = self.expr(arg)?;
                match self.types.lane(arg.ty) {
                    Some(l) if *lane < 4 => TExpr::new(l, TKind::Lane(Box::new(arg), *lane)),
                    _ => {
                        return Err(self.error(format!(
                            "lane access `.{}` needs an `Rgba` value, found `{}`",
                            ["r", "g", "b", "a"].get(*lane as usize).unwrap_or(&"?"),
                            self.types.describe(arg.ty)
                        )))
                    }
                }
            }
            SExpr::MakeVec(args) => self.make_vec(args)?,
            SExpr::Cast(arg, ty) => {
                let arg = self.expr(arg)?;
                let Some(to) = ScalarType::from_rust_name(ty) else {
                    return Err(self.error(format!(
                        "cannot cast to `{ty}`; casts go to u8, u16, i32, u32, f32 or f64"
                    )));
                };
                if self.types.lane(arg.ty).is_some() {
                    return Err(self.error(format!(
                        "cannot cast an `Rgba` value as `{ty}`; cast its lanes"
                    )));
                }
                TExpr::new(
                    self.types.known(Type::scalar(to)),
                    TKind::Cast(Box::new(arg)),
                )
            }
            SExpr::If(cond, then, els) => self.if_value(cond, then, els)?,
            SExpr::Block(b) => self.block_value(b)?,
            SExpr::Reduce {
                window,
                convolve,
                op,
                dx,
                dy,
                body,
            } => self.reduce(window, *convolve, *op, dx, dy, body)?,
        })
    }

    fn int_literal(&mut self, value: i64, suffix: Option<&str>) -> Result<TExpr> {
        let Some(s) = suffix else {
            return Ok(TExpr::new(
                self.types.fresh(Term::Int),
                TKind::Const(Literal::Int(value)),
            ));
        };
        match ScalarType::from_rust_name(s).filter(|t| *t != ScalarType::Bool) {
            Some(t) if t.is_float() => Ok(TExpr::new(
                self.types.known(Type::scalar(t)),
                TKind::Const(Literal::float(value as f64)),
            )),
            Some(t) => Ok(TExpr::new(
                self.types.known(Type::scalar(t)),
                TKind::Const(Literal::Int(value)),
            )),
            None => Err(self.error(format!("invalid integer suffix `{s}`"))),
        }
    }

    /// `self.name` as a value: a scalar parameter.
    fn field(&mut self, field: &str) -> Result<TExpr> {
        match self.slot(field)? {
            SlotRef::Param(i) => {
                let ty = self.bindings.params[i].slot.ty;
                Ok(TExpr::new(self.types.known(ty), TKind::Param(i)))
            }
            SlotRef::Accessor(_) => Err(self.error(format!(
                "accessor `{field}` is read with `self.{field}.at(dx, dy)` or `self.{field}()`"
            ))),
            SlotRef::Mask(_) => Err(self.error(format!(
                "mask `{field}` is read with `self.{field}.at(dx, dy)`"
            ))),
            SlotRef::Domain(_) => Err(self.error(format!(
                "domain `{field}` has no value; use it as the window of `reduce` or `iterate`"
            ))),
        }
    }

    /// `self.name.at(dx, dy)`: an accessor read or a mask coefficient.
    fn at(&mut self, field: &str, dx: &SExpr, dy: &SExpr) -> Result<TExpr> {
        let slot = self.slot(field)?;
        let (dx, dy) = (self.expr(dx)?, self.expr(dy)?);
        for d in [&dx, &dy] {
            let i = self.i32();
            self.unify(i, d.ty, &format!("offset of `self.{field}.at(..)`"))?;
        }
        let (dx, dy) = (Box::new(dx), Box::new(dy));
        match slot {
            SlotRef::Accessor(i) => {
                let ty = self.bindings.accessors[i].slot.pixel;
                Ok(TExpr::new(self.types.known(ty), TKind::Read(i, dx, dy)))
            }
            SlotRef::Mask(i) => {
                let ty = self.bindings.masks[i].slot.ty;
                Ok(TExpr::new(self.types.known(ty), TKind::MaskCoef(i, dx, dy)))
            }
            other => Err(self.error(format!(
                "`self.{field}.at(..)`: `{field}` is {}; only accessors and masks are read with `at`",
                other.kind()
            ))),
        }
    }

    fn unary(&mut self, op: UnaryOp, arg: &SExpr) -> Result<TExpr> {
        let arg = self.expr(arg)?;
        let ok = match (op, self.types.term(arg.ty)) {
            (UnaryOp::Neg, Term::Scalar(s)) => s.is_float() || s.is_signed_int(),
            (UnaryOp::Neg, _) => true,
            (UnaryOp::Not, Term::Scalar(s)) => !s.is_float(),
            (UnaryOp::Not, t) => matches!(t, Term::Int),
        };
        if !ok {
            let sym = if op == UnaryOp::Neg { "-" } else { "!" };
            return Err(self.error(format!(
                "cannot apply unary operator `{sym}` to type `{}`",
                self.types.describe(arg.ty)
            )));
        }
        Ok(TExpr::new(arg.ty, TKind::Unary(op, Box::new(arg))))
    }

    /// Types `l op r` as rustc does and builds it.
    pub(super) fn binary(&mut self, op: BinaryOp, l: TExpr, r: TExpr) -> Result<TExpr> {
        use BinaryOp::*;
        let what = format!(
            "`{} {} {}`",
            self.types.describe(l.ty),
            symbol(op),
            self.types.describe(r.ty)
        );
        let (lv, rv) = (self.types.lane(l.ty), self.types.lane(r.ty));
        let ty = match op {
            Shl | Shr => {
                for side in [&l, &r] {
                    if !self.is_int(side.ty) {
                        return Err(self.error(format!("{what}: shifts need integer operands")));
                    }
                }
                l.ty
            }
            Add | Sub | Mul | Div => match (lv, rv) {
                (Some(_), Some(_)) => {
                    self.unify(l.ty, r.ty, &what)?;
                    l.ty
                }
                (Some(lane), None) => {
                    self.unify(lane, r.ty, &what)?;
                    l.ty
                }
                (None, Some(lane)) => {
                    self.unify(lane, l.ty, &what)?;
                    r.ty
                }
                (None, None) => {
                    self.unify(l.ty, r.ty, &what)?;
                    l.ty
                }
            },
            _ if lv.is_some() || rv.is_some() => {
                return Err(self.error(format!(
                    "{what}: `Rgba` values support `+ - * /` only; apply `{}` to their lanes",
                    symbol(op)
                )))
            }
            Rem | And | Or | BitXor => {
                self.unify(l.ty, r.ty, &what)?;
                l.ty
            }
            Eq | Ne | Lt | Le | Gt | Ge => {
                self.unify(l.ty, r.ty, &what)?;
                self.types.known(Type::BOOL)
            }
        };
        self.check_operands(op, ty, &what)?;
        Ok(TExpr::new(ty, TKind::Binary(op, Box::new(l), Box::new(r))))
    }

    /// Rejects operand types an operator cannot take, where already known.
    fn check_operands(&self, op: BinaryOp, ty: Tv, what: &str) -> Result<()> {
        use BinaryOp::*;
        let lane = self.types.lane(ty).unwrap_or(ty);
        let bad = match (op, self.types.term(lane)) {
            (And | Or | BitXor, Term::Float) => true,
            (And | Or | BitXor, Term::Scalar(s)) => s.is_float(),
            (Add | Sub | Mul | Div | Rem, Term::Scalar(s)) => s == ScalarType::Bool,
            _ => false,
        };
        if bad {
            return Err(self.error(format!(
                "{what}: operator `{}` cannot take these types",
                symbol(op)
            )));
        }
        Ok(())
    }

    fn is_int(&self, ty: Tv) -> bool {
        match self.types.term(ty) {
            Term::Int => true,
            Term::Scalar(s) => s.is_int(),
            _ => false,
        }
    }

    /// `recv.name(args)`: a math method.
    fn method(&mut self, recv: &SExpr, name: &str, args: &[SExpr]) -> Result<TExpr> {
        let Some(func) = Intrinsic::from_method(name) else {
            let known: Vec<&str> = Intrinsic::ALL.iter().map(|i| i.signature().0).collect();
            return Err(self.error(format!(
                "unknown method `{name}`; the math methods are {}",
                known.join(", ")
            )));
        };
        let recv = self.expr(recv)?;
        let args = args
            .iter()
            .map(|a| self.expr(a))
            .collect::<Result<Vec<_>>>()?;
        if args.len() + 1 != func.signature().1 {
            return Err(self.error(format!(
                "`{name}` takes {} argument(s), got {}",
                func.signature().1 - 1,
                args.len()
            )));
        }
        let rty = recv.ty;
        let arg_tys = self.method_args(func, rty, name)?;
        for (a, expected) in args.iter().zip(arg_tys) {
            self.unify(expected, a.ty, &format!("argument of `{name}`"))?;
        }
        let mut all = vec![recv];
        all.extend(args);
        Ok(TExpr::new(rty, TKind::Call(func, all)))
    }

    /// The argument types of `func` on a receiver of type `recv` (which must
    /// be known, as rustc requires for method calls).
    fn method_args(&mut self, func: Intrinsic, recv: Tv, name: &str) -> Result<Vec<Tv>> {
        use Intrinsic::*;
        let n = func.signature().1 - 1;
        let same = vec![recv; n];
        match self.types.term(recv) {
            t if t.is_literal() => Err(self.error(format!(
                "can't call method `{name}` on ambiguous numeric type `{}`; give the literal a suffix (`2.0f32`) or the variable a type",
                self.types.describe(recv)
            ))),
            Term::Scalar(s) if s.is_float() => Ok(match func {
                Powi => vec![self.i32()],
                _ => same,
            }),
            Term::Scalar(s) if s.is_int() => {
                let ok = match func {
                    Min | Max | Clamp => true,
                    Abs | Signum => s.is_signed_int(),
                    _ => false,
                };
                if ok {
                    Ok(same)
                } else {
                    Err(self.error(format!("`{}` has no method `{name}`", s.rust_name())))
                }
            }
            Term::Vec(lane) if self.types.scalar(lane).is_some_and(ScalarType::is_float) => {
                match func {
                    Abs | Sqrt | Exp | Ln | Floor | Ceil | Min | Max => Ok(same),
                    Powf | Clamp => Ok(vec![lane; n]),
                    _ => Err(self.error(format!(
                        "`Rgba` has no method `{name}`; the vector methods are abs, sqrt, exp, ln, floor, ceil, min, max, powf, clamp"
                    ))),
                }
            }
            _ => Err(self.error(format!(
                "`{}` has no method `{name}`",
                self.types.describe(recv)
            ))),
        }
    }

    /// `Rgba::new(r, g, b, a)`.
    fn make_vec(&mut self, args: &[SExpr]) -> Result<TExpr> {
        if args.len() != 4 {
            return Err(self.error(format!("`Rgba::new` takes 4 lanes, got {}", args.len())));
        }
        let lane = self.types.fresh(Term::Any);
        let mut lanes = Vec::new();
        for a in args {
            let a = self.expr(a)?;
            if self.types.lane(a.ty).is_some() {
                return Err(self.error("`Rgba::new` takes scalar lanes, got an `Rgba`"));
            }
            self.unify(lane, a.ty, "lanes of `Rgba::new`")?;
            lanes.push(a);
        }
        let ty = self.types.fresh(Term::Vec(lane));
        Ok(TExpr::new(ty, TKind::MakeVec(lanes)))
    }

    /// `if c { a } else { b }` as a value.
    fn if_value(&mut self, cond: &SExpr, then: &SBlock, els: &SBlock) -> Result<TExpr> {
        let cond = self.condition(cond)?;
        let (then, els) = (self.block(then)?, self.block(els)?);
        let (Some(t), Some(e)) = (&then.result, &els.result) else {
            return Err(self
                .error("an `if` used as a value needs a value in both branches (and an `else`)"));
        };
        let (tt, et) = (t.ty, e.ty);
        self.unify(tt, et, "`if` and `else` have incompatible types")?;
        Ok(TExpr::new(
            tt,
            TKind::If(Box::new(cond), Box::new(then), Box::new(els)),
        ))
    }

    /// An `if` condition: a `bool`.
    pub(super) fn condition(&mut self, cond: &SExpr) -> Result<TExpr> {
        let cond = self.expr(cond)?;
        let b = self.types.known(Type::BOOL);
        self.unify(b, cond.ty, "`if` condition")?;
        Ok(cond)
    }

    /// `{ stmts; value }` as a value. With statements, it becomes
    /// `if true { stmts; value } else { 0 }` so that its statements run
    /// exactly where Rust runs them.
    fn block_value(&mut self, b: &SBlock) -> Result<TExpr> {
        let block = self.block(b)?;
        let Some(result) = &block.result else {
            return Err(self.error("a block used as a value must end in an expression"));
        };
        let ty = result.ty;
        if block.stmts.is_empty() {
            return Ok(*block
                .result
                .unwrap_or_else(|| unreachable!("bug: checked above")));
        }
        let yes = TExpr::new(
            self.types.known(Type::BOOL),
            TKind::Const(Literal::Bool(true)),
        );
        let zero = TBlock {
            stmts: Vec::new(),
            result: Some(Box::new(TExpr::new(ty, TKind::Zero))),
        };
        Ok(TExpr::new(
            ty,
            TKind::If(Box::new(yes), Box::new(block), Box::new(zero)),
        ))
    }

    /// The window of `reduce`/`convolve`/`iterate`.
    pub(super) fn window(&self, field: &str, convolve: bool) -> Result<Window> {
        match self.slot(field)? {
            SlotRef::Mask(i) => Ok(Window::Mask(i)),
            SlotRef::Domain(i) if !convolve => Ok(Window::Domain(i)),
            SlotRef::Domain(_) => Err(self.error(format!(
                "`convolve` needs a mask, but `{field}` is a domain; use `reduce` over a domain"
            ))),
            other => Err(self.error(format!(
                "`{field}` is {}; local operators walk a mask or a domain",
                other.kind()
            ))),
        }
    }

    fn reduce(
        &mut self,
        window: &str,
        convolve: bool,
        op: ReduceOp,
        dx: &'static str,
        dy: &'static str,
        body: &SExpr,
    ) -> Result<TExpr> {
        let window = self.window(window, convolve)?;
        self.scopes.push(Vec::new());
        let (tx, ty) = (self.i32(), self.i32());
        let (dx, dy) = (self.bind(dx, tx, false), self.bind(dy, ty, false));
        let body = match body {
            SExpr::Block(b) => self.block(b),
            e => self.expr(e).map(|e| TBlock {
                stmts: Vec::new(),
                result: Some(Box::new(e)),
            }),
        };
        self.scopes.pop();
        let body = body?;
        let Some(result) = &body.result else {
            return Err(self.error("the closure of `reduce`/`convolve` must return a value"));
        };
        if self.types.scalar(result.ty) == Some(ScalarType::Bool) {
            return Err(self.error("a local reduction cannot combine `bool` values"));
        }
        Ok(TExpr::new(
            result.ty,
            TKind::Reduce {
                window,
                op,
                dx,
                dy,
                body: Box::new(body),
            },
        ))
    }
}
