//! Footprint inference: the window of offsets each accessor is read at.
//!
//! Offsets are evaluated as intervals: constants, window offsets of
//! `reduce`/`convolve`/`iterate` (the mask's or domain's extent), `for` loop
//! variables (their range), immutable `let` variables bound to such values,
//! and `+`, `-`, unary `-` and multiplication by a constant of those. Any
//! other offset makes the footprint unbounded (`None`). An accessor that is
//! never read has the footprint of `at(0, 0)`.

use super::window;
use hipacc_core::ir::{BinaryOp, Block, Expr, ExprKind, Kernel, Literal, Stmt, UnaryOp, VarId};
use std::collections::HashMap;

/// Inclusive offsets at which an accessor is read, relative to the output
/// pixel's accessor position.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Footprint {
    /// Smallest x offset.
    pub min_dx: i32,
    /// Largest x offset.
    pub max_dx: i32,
    /// Smallest y offset.
    pub min_dy: i32,
    /// Largest y offset.
    pub max_dy: i32,
}

impl Footprint {
    /// The footprint of a read at `(0, 0)` only.
    pub const POINT: Footprint = Footprint {
        min_dx: 0,
        max_dx: 0,
        min_dy: 0,
        max_dy: 0,
    };
    /// Width of the window.
    pub fn width(&self) -> u32 {
        (self.max_dx - self.min_dx) as u32 + 1
    }
    /// Height of the window.
    pub fn height(&self) -> u32 {
        (self.max_dy - self.min_dy) as u32 + 1
    }
    /// The larger of width and height.
    pub fn extent(&self) -> u32 {
        self.width().max(self.height())
    }
    fn union(self, o: Footprint) -> Footprint {
        Footprint {
            min_dx: self.min_dx.min(o.min_dx),
            max_dx: self.max_dx.max(o.max_dx),
            min_dy: self.min_dy.min(o.min_dy),
            max_dy: self.max_dy.max(o.max_dy),
        }
    }
}

/// The footprint of every accessor slot, in slot order; `None` where an
/// offset is not bounded at compile time.
pub fn footprints(kernel: &Kernel) -> Vec<Option<Footprint>> {
    let mut w = Walker {
        kernel,
        ranges: HashMap::new(),
        out: vec![Some(None); kernel.accessors.len()],
    };
    w.block(&kernel.body);
    w.out
        .into_iter()
        .zip(&kernel.accessors)
        .map(|(f, a)| match a.interpolation {
            // Interpolating reads land between pixels of another grid:
            // their window is no offset range of the output pixel.
            hipacc_core::Interpolation::None => f.map(|f| f.unwrap_or(Footprint::POINT)),
            _ => None,
        })
        .collect()
}

type Interval = (i64, i64);

struct Walker<'k> {
    kernel: &'k Kernel,
    ranges: HashMap<VarId, Interval>,
    /// Per accessor: `None` unbounded; `Some(None)` not read yet.
    out: Vec<Option<Option<Footprint>>>,
}

impl Walker<'_> {
    fn block(&mut self, b: &Block) {
        for s in &b.stmts {
            self.stmt(s);
        }
        if let Some(e) = &b.result {
            self.expr(e);
        }
    }

    fn stmt(&mut self, s: &Stmt) {
        match s {
            Stmt::Let { var, value } => {
                self.expr(value);
                let mutable = self
                    .kernel
                    .vars
                    .get(var.0 as usize)
                    .is_some_and(|v| v.mutable);
                match self.interval(value) {
                    Some(iv) if !mutable => {
                        self.ranges.insert(*var, iv);
                    }
                    _ => {
                        self.ranges.remove(var);
                    }
                }
            }
            Stmt::Assign { var, value } => {
                self.expr(value);
                self.ranges.remove(var);
            }
            Stmt::If { cond, then, els } => {
                self.expr(cond);
                self.block(then);
                self.block(els);
            }
            Stmt::For {
                var,
                start,
                end,
                body,
            } => {
                if start < end {
                    self.ranges.insert(*var, (*start as i64, *end as i64 - 1));
                    self.block(body);
                }
            }
            Stmt::Iterate {
                window: win,
                dx,
                dy,
                body,
            } => {
                self.bind_window(*win, *dx, *dy);
                self.block(body);
            }
            Stmt::Expr(e) => self.expr(e),
        }
    }

    fn bind_window(&mut self, win: hipacc_core::ir::Window, dx: VarId, dy: VarId) {
        let (x, y) = window::offset_ranges(self.kernel, win);
        self.ranges.insert(dx, (x.0 as i64, x.1 as i64));
        self.ranges.insert(dy, (y.0 as i64, y.1 as i64));
    }

    fn expr(&mut self, e: &Expr) {
        match &e.kind {
            ExprKind::Read { acc, dx, dy } => {
                self.expr(dx);
                self.expr(dy);
                let fp = match (self.interval(dx), self.interval(dy)) {
                    (Some(x), Some(y)) if fits(x) && fits(y) => Some(Footprint {
                        min_dx: x.0 as i32,
                        max_dx: x.1 as i32,
                        min_dy: y.0 as i32,
                        max_dy: y.1 as i32,
                    }),
                    _ => None,
                };
                if let Some(slot) = self.out.get_mut(*acc) {
                    *slot = match (*slot, fp) {
                        (Some(None), Some(f)) => Some(Some(f)),
                        (Some(Some(old)), Some(f)) => Some(Some(old.union(f))),
                        _ => None,
                    };
                }
            }
            ExprKind::MaskCoef { dx, dy, .. } => {
                self.expr(dx);
                self.expr(dy);
            }
            ExprKind::Unary { arg, .. } | ExprKind::Cast(arg) | ExprKind::Lane { arg, .. } => {
                self.expr(arg)
            }
            ExprKind::Binary { lhs, rhs, .. } => {
                self.expr(lhs);
                self.expr(rhs);
            }
            ExprKind::Call { args, .. } | ExprKind::MakeVec(args) => {
                args.iter().for_each(|a| self.expr(a))
            }
            ExprKind::If { cond, then, els } => {
                self.expr(cond);
                self.block(then);
                self.block(els);
            }
            ExprKind::Reduce {
                window: win,
                dx,
                dy,
                body,
                ..
            } => {
                self.bind_window(*win, *dx, *dy);
                self.block(body);
            }
            ExprKind::Const(_)
            | ExprKind::Param(_)
            | ExprKind::Var(_)
            | ExprKind::X
            | ExprKind::Y => {}
        }
    }

    fn interval(&self, e: &Expr) -> Option<Interval> {
        if !e.ty.is_scalar() || !e.ty.scalar.is_int() {
            return None;
        }
        match &e.kind {
            ExprKind::Const(Literal::Int(v)) => Some((*v, *v)),
            ExprKind::Var(v) => self.ranges.get(v).copied(),
            ExprKind::Unary {
                op: UnaryOp::Neg,
                arg,
            } => self.interval(arg).map(|(a, b)| (-b, -a)),
            ExprKind::Binary { op, lhs, rhs } => {
                let (a, b) = (self.interval(lhs)?, self.interval(rhs)?);
                match op {
                    BinaryOp::Add => Some((a.0 + b.0, a.1 + b.1)),
                    BinaryOp::Sub => Some((a.0 - b.1, a.1 - b.0)),
                    BinaryOp::Mul => {
                        let p = [a.0 * b.0, a.0 * b.1, a.1 * b.0, a.1 * b.1];
                        Some((*p.iter().min()?, *p.iter().max()?))
                    }
                    _ => None,
                }
            }
            _ => None,
        }
    }
}

fn fits(iv: Interval) -> bool {
    iv.0 >= -(1 << 20) && iv.1 <= (1 << 20)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_kernels as tk;

    #[test]
    fn stencil_footprint() {
        let k = tk::jacobi();
        let fps = footprints(&k);
        assert_eq!(
            fps[0],
            Some(Footprint {
                min_dx: -1,
                max_dx: 1,
                min_dy: -1,
                max_dy: 1
            })
        );
        assert_eq!(fps[1], Some(Footprint::POINT));
    }

    #[test]
    fn mask_window_footprint() {
        let k = tk::convolve(5, 3);
        let fp = footprints(&k)[0].unwrap();
        assert_eq!((fp.min_dx, fp.max_dx, fp.min_dy, fp.max_dy), (-2, 2, -1, 1));
        assert_eq!(fp.extent(), 5);
    }

    #[test]
    fn computed_offset_is_unbounded() {
        let k = tk::read_at_x();
        assert_eq!(footprints(&k), vec![None]);
    }

    #[test]
    fn loop_footprint() {
        let k = tk::row_loop(-3, 4);
        let fp = footprints(&k)[0].unwrap();
        assert_eq!((fp.min_dx, fp.max_dx, fp.min_dy, fp.max_dy), (-3, 3, 0, 0));
    }
}
