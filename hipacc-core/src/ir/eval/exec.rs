//! The interpreter: one output pixel at a time, straight from the IR.

use super::{intrinsics, ops, Inputs};
use crate::ir::{
    BinaryOp, Block, Expr, ExprKind, Scalar4, ScalarType, Stmt, Type, Value, VarId, Window,
};
use crate::{interpolate, BoundaryMode, Error, Interpolation, Result};

/// The state of one pixel's evaluation.
pub(super) struct Frame<'a> {
    pub(super) inputs: &'a Inputs<'a>,
    /// Absolute output pixel.
    pub(super) x: i64,
    pub(super) y: i64,
    /// Current value of each variable.
    pub(super) vars: Vec<Option<Value>>,
}

impl Frame<'_> {
    fn error(&self, message: impl Into<String>) -> Error {
        Error::Evaluation {
            kernel: self.inputs.kernel.name.clone(),
            x: self.x,
            y: self.y,
            message: message.into(),
        }
    }

    fn lift<T>(&self, r: std::result::Result<T, String>) -> Result<T> {
        r.map_err(|m| self.error(m))
    }

    fn set(&mut self, var: VarId, v: Value) {
        self.vars[var.0 as usize] = Some(v);
    }

    /// Runs a block and returns its value (`None` without result).
    pub(super) fn block(&mut self, b: &Block) -> Result<Option<Value>> {
        for s in &b.stmts {
            self.stmt(s)?;
        }
        b.result.as_ref().map(|e| self.expr(e)).transpose()
    }

    fn block_value(&mut self, b: &Block) -> Result<Value> {
        self.block(b)?
            .ok_or_else(|| self.error("bug: block without the value it must have"))
    }

    fn stmt(&mut self, s: &Stmt) -> Result<()> {
        match s {
            Stmt::Let { var, value } | Stmt::Assign { var, value } => {
                let v = self.expr(value)?;
                self.set(*var, v);
            }
            Stmt::If { cond, then, els } => {
                let branch = if self.condition(cond)? { then } else { els };
                self.block(branch)?;
            }
            Stmt::For {
                var,
                start,
                end,
                body,
            } => {
                for i in *start..*end {
                    self.set(*var, Value::I32(i));
                    self.block(body)?;
                }
            }
            Stmt::Iterate {
                window,
                dx,
                dy,
                body,
            } => {
                for &(px, py) in self.inputs.positions(*window) {
                    self.set(*dx, Value::I32(px));
                    self.set(*dy, Value::I32(py));
                    self.block(body)?;
                }
            }
            Stmt::Expr(e) => {
                self.expr(e)?;
            }
        }
        Ok(())
    }

    fn condition(&mut self, e: &Expr) -> Result<bool> {
        match self.expr(e)? {
            Value::Bool(b) => Ok(b),
            v => Err(self.error(format!("bug: condition of type `{}`", v.ty()))),
        }
    }

    fn offset(&mut self, e: &Expr) -> Result<i64> {
        match self.expr(e)? {
            Value::I32(v) => Ok(v as i64),
            v => Err(self.error(format!("bug: offset of type `{}`", v.ty()))),
        }
    }

    /// Evaluates an expression.
    pub(super) fn expr(&mut self, e: &Expr) -> Result<Value> {
        Ok(match &e.kind {
            ExprKind::Const(lit) => splat(e.ty, Value::from_literal(*lit, e.ty.scalar)),
            ExprKind::Param(i) => self.inputs.params[*i],
            ExprKind::Var(v) => self.vars[v.0 as usize]
                .ok_or_else(|| self.error(format!("bug: variable {} read before set", v.0)))?,
            ExprKind::X => Value::I32(self.x as i32),
            ExprKind::Y => Value::I32(self.y as i32),
            ExprKind::Read { acc, dx, dy } => {
                let (dx, dy) = (self.offset(dx)?, self.offset(dy)?);
                self.read(*acc, dx, dy)?
            }
            ExprKind::MaskCoef { mask, dx, dy } => {
                let (dx, dy) = (self.offset(dx)?, self.offset(dy)?);
                self.inputs.masks[*mask].at(dx, dy)
            }
            ExprKind::Unary { op, arg } => {
                let a = self.expr(arg)?;
                self.lift(ops::unary(*op, a))?
            }
            ExprKind::Binary { op, lhs, rhs } => self.binary(*op, lhs, rhs)?,
            ExprKind::Call { func, args } => {
                let args = args
                    .iter()
                    .map(|a| self.expr(a))
                    .collect::<Result<Vec<_>>>()?;
                self.lift(intrinsics::call(*func, &args))?
            }
            ExprKind::If { cond, then, els } => {
                let branch = if self.condition(cond)? { then } else { els };
                self.block_value(branch)?
            }
            ExprKind::Cast(arg) => {
                let a = self.expr(arg)?;
                self.lift(ops::cast(a, e.ty.scalar))?
            }
            ExprKind::Reduce {
                window,
                op,
                dx,
                dy,
                body,
            } => self.reduce(*window, *op, *dx, *dy, body)?,
            ExprKind::Lane { arg, lane } => match self.expr(arg)? {
                Value::Vec4(l) if *lane < 4 => l[*lane as usize].to_value(),
                v => return Err(self.error(format!("bug: lane {lane} of `{}`", v.ty()))),
            },
            ExprKind::MakeVec(args) => {
                let mut lanes = [Scalar4::I32(0); 4];
                if args.len() != 4 {
                    return Err(self.error("bug: `Rgba::new` without 4 lanes"));
                }
                for (l, a) in lanes.iter_mut().zip(args) {
                    let v = self.expr(a)?;
                    *l = Scalar4::from_value(v)
                        .ok_or_else(|| self.error(format!("bug: `{}` lane", v.ty())))?;
                }
                Value::Vec4(lanes)
            }
        })
    }

    /// `&&` and `||` on `bool` short-circuit; everything else evaluates
    /// both operands left to right.
    fn binary(&mut self, op: BinaryOp, lhs: &Expr, rhs: &Expr) -> Result<Value> {
        let a = self.expr(lhs)?;
        match (op, a) {
            (BinaryOp::And, Value::Bool(false)) => return Ok(a),
            (BinaryOp::Or, Value::Bool(true)) => return Ok(a),
            _ => {}
        }
        let b = self.expr(rhs)?;
        self.lift(ops::binary(op, a, b))
    }

    fn reduce(
        &mut self,
        window: Window,
        op: crate::ir::ReduceOp,
        dx: VarId,
        dy: VarId,
        body: &Block,
    ) -> Result<Value> {
        let mut acc: Option<Value> = None;
        for &(px, py) in self.inputs.positions(window) {
            self.set(dx, Value::I32(px));
            self.set(dy, Value::I32(py));
            let v = self.block_value(body)?;
            acc = Some(match acc {
                None => v,
                Some(a) => self.lift(ops::combine(op, a, v))?,
            });
        }
        acc.ok_or_else(|| self.error("bug: local reduction over an empty window"))
    }

    /// Accessor `acc` at offset `(dx, dy)` from this pixel, through its
    /// boundary condition (and its interpolation, if any).
    fn read(&self, acc: usize, dx: i64, dy: i64) -> Result<Value> {
        let a = &self.inputs.accessors[acc];
        let rx = self.x - self.inputs.origin.0;
        let ry = self.y - self.inputs.origin.1;
        if a.interpolation == Interpolation::None {
            return self.read_at(acc, rx + dx, ry + dy);
        }
        let (sw, sh) = self.inputs.extent;
        let px = interpolate::source_position(rx, sw, a.region.width, dx);
        let py = interpolate::source_position(ry, sh, a.region.height, dy);
        interpolate::sample(a.interpolation, px, py, a.constant, |ix, iy| {
            self.read_at(acc, ix, iy)
        })
    }

    /// Accessor `acc` at position `(rx, ry)` of its region, through its
    /// boundary condition.
    fn read_at(&self, acc: usize, rx: i64, ry: i64) -> Result<Value> {
        let a = &self.inputs.accessors[acc];
        let (w, h) = (a.region.width as i64, a.region.height as i64);
        match (a.mode.remap(rx, w), a.mode.remap(ry, h)) {
            (Some(cx), Some(cy)) => {
                let ix = (a.region.x as i64 + cx) as usize;
                let iy = (a.region.y as i64 + cy) as usize;
                Ok(a.pixels[iy * a.stride + ix])
            }
            _ if a.mode == BoundaryMode::Constant => Ok(a.constant),
            _ => Err(Error::UndefinedRead {
                kernel: self.inputs.kernel.name.clone(),
                accessor: self.inputs.kernel.accessors[acc].name.clone(),
                x: self.x,
                y: self.y,
                ax: rx,
                ay: ry,
                width: a.region.width,
                height: a.region.height,
            }),
        }
    }
}

/// A scalar value broadcast to `ty`'s lanes.
pub(super) fn splat(ty: Type, v: Value) -> Value {
    match Scalar4::from_value(v) {
        Some(l) if ty.lanes == 4 => Value::Vec4([l; 4]),
        _ => v,
    }
}

/// The zero of a scalar type (mask coefficients outside the mask).
pub(super) fn zero(ty: Type) -> Value {
    let z = match ty.scalar {
        ScalarType::Bool => Value::Bool(false),
        s => Value::from_literal(crate::ir::Literal::Int(0), s),
    };
    splat(ty, z)
}
