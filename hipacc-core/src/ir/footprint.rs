//! Footprints: the window of offsets each accessor is read at.
//!
//! An interval analysis over the offsets of every read: constants, loop
//! variables (their ranges), window offset variables (a mask's extent; a
//! domain's enabled rows and columns), immutable `let` variables holding such
//! intervals, `+`, `-`, unary `-`, `*`, division by a positive constant,
//! `as i32`, and `if` (the union of both branches). Anything else (offsets
//! from parameters, from `x()`/`y()`, from pixel values, from variables that
//! are assigned, or any intermediate outside the `i32` range, where the
//! arithmetic would wrap) is unknown, and the accessor's footprint is
//! `None`. Reads inside a loop that never runs are ignored.

use super::{BinaryOp, UnaryOp};
use super::{Block, Expr, ExprKind, Kernel, Literal, Stmt, VarId, Window};
use std::collections::HashSet;

/// Inclusive offsets relative to the output pixel that an accessor is read at.
///
/// ```
/// use hipacc_core::ir::Footprint;
/// let f = Footprint { min_dx: -2, max_dx: 2, min_dy: 0, max_dy: 0 };
/// assert_eq!((f.width(), f.height()), (5, 1));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub struct Footprint {
    /// Smallest horizontal offset.
    pub min_dx: i32,
    /// Largest horizontal offset.
    pub max_dx: i32,
    /// Smallest vertical offset.
    pub min_dy: i32,
    /// Largest vertical offset.
    pub max_dy: i32,
}

impl Footprint {
    /// Only offset `(0, 0)`: a point-wise read (also an accessor never read).
    pub const ZERO: Footprint = Footprint {
        min_dx: 0,
        max_dx: 0,
        min_dy: 0,
        max_dy: 0,
    };

    /// The smallest footprint holding both.
    pub fn union(self, other: Footprint) -> Footprint {
        Footprint {
            min_dx: self.min_dx.min(other.min_dx),
            max_dx: self.max_dx.max(other.max_dx),
            min_dy: self.min_dy.min(other.min_dy),
            max_dy: self.max_dy.max(other.max_dy),
        }
    }

    /// Number of columns, `max_dx - min_dx + 1`.
    pub fn width(&self) -> u32 {
        (self.max_dx as i64 - self.min_dx as i64 + 1) as u32
    }

    /// Number of rows, `max_dy - min_dy + 1`.
    pub fn height(&self) -> u32 {
        (self.max_dy as i64 - self.min_dy as i64 + 1) as u32
    }
}

/// The footprint of each accessor of `k`, in slot order; `None` where an
/// offset is not bounded by the analysis.
pub fn footprints(k: &Kernel) -> Vec<Option<Footprint>> {
    let mut assigned = HashSet::new();
    collect_assigned(&k.body, &mut assigned);
    let mut a = Analysis {
        kernel: k,
        assigned,
        env: vec![None; k.vars.len()],
        found: vec![Found::Unread; k.accessors.len()],
    };
    a.block(&k.body);
    a.found
        .into_iter()
        .map(|f| match f {
            Found::Unread => Some(Footprint::ZERO),
            Found::Bounded(f) => Some(f),
            Found::Unbounded => None,
        })
        .collect()
}

/// An inclusive interval of `i64`.
type Interval = (i64, i64);

#[derive(Clone, Copy)]
enum Found {
    Unread,
    Bounded(Footprint),
    Unbounded,
}

struct Analysis<'a> {
    kernel: &'a Kernel,
    /// Variables that are the target of an assignment somewhere.
    assigned: HashSet<VarId>,
    /// Known interval of each variable.
    env: Vec<Option<Interval>>,
    found: Vec<Found>,
}

fn collect_assigned(b: &Block, out: &mut HashSet<VarId>) {
    for s in &b.stmts {
        match s {
            Stmt::Assign { var, value } => {
                out.insert(*var);
                collect_assigned_expr(value, out);
            }
            Stmt::Let { value: e, .. } | Stmt::Expr(e) => collect_assigned_expr(e, out),
            Stmt::If { cond, then, els } => {
                collect_assigned_expr(cond, out);
                collect_assigned(then, out);
                collect_assigned(els, out);
            }
            Stmt::For { body, .. } | Stmt::Iterate { body, .. } => collect_assigned(body, out),
        }
    }
    if let Some(r) = &b.result {
        collect_assigned_expr(r, out);
    }
}

fn collect_assigned_expr(e: &Expr, out: &mut HashSet<VarId>) {
    match &e.kind {
        ExprKind::If { then, els, .. } => {
            collect_assigned(then, out);
            collect_assigned(els, out);
        }
        ExprKind::Reduce { body, .. } => collect_assigned(body, out),
        _ => each_child(e, &mut |c| collect_assigned_expr(c, out)),
    }
}

/// Calls `f` on the direct sub-expressions of `e` (not those inside blocks).
fn each_child(e: &Expr, f: &mut dyn FnMut(&Expr)) {
    match &e.kind {
        ExprKind::Read { dx, dy, .. } | ExprKind::MaskCoef { dx, dy, .. } => {
            f(dx);
            f(dy);
        }
        ExprKind::Unary { arg, .. } | ExprKind::Cast(arg) | ExprKind::Lane { arg, .. } => f(arg),
        ExprKind::Binary { lhs, rhs, .. } => {
            f(lhs);
            f(rhs);
        }
        ExprKind::Call { args, .. } | ExprKind::MakeVec(args) => args.iter().for_each(f),
        ExprKind::If { cond, .. } => f(cond),
        ExprKind::Const(_)
        | ExprKind::Param(_)
        | ExprKind::Var(_)
        | ExprKind::X
        | ExprKind::Y
        | ExprKind::Reduce { .. } => {}
    }
}

impl Analysis<'_> {
    fn block(&mut self, b: &Block) {
        for s in &b.stmts {
            self.stmt(s);
        }
        if let Some(r) = &b.result {
            self.expr(r);
        }
    }

    fn stmt(&mut self, s: &Stmt) {
        match s {
            Stmt::Let { var, value } => {
                self.expr(value);
                self.env[var.0 as usize] = if self.assigned.contains(var) {
                    None
                } else {
                    self.interval(value)
                };
            }
            Stmt::Assign { value, .. } | Stmt::Expr(value) => self.expr(value),
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
                    self.env[var.0 as usize] = Some((*start as i64, *end as i64 - 1));
                    self.block(body);
                }
            }
            Stmt::Iterate {
                window,
                dx,
                dy,
                body,
            } => {
                self.bind_window(*window, *dx, *dy);
                self.block(body);
            }
        }
    }

    /// Records reads in `e` and everything below it.
    fn expr(&mut self, e: &Expr) {
        match &e.kind {
            ExprKind::Read { acc, dx, dy } => {
                let (ix, iy) = (self.interval(dx), self.interval(dy));
                self.found[*acc] = match (self.found[*acc], ix.zip(iy).and_then(to_footprint)) {
                    (Found::Unbounded, _) | (_, None) => Found::Unbounded,
                    (Found::Unread, Some(f)) => Found::Bounded(f),
                    (Found::Bounded(g), Some(f)) => Found::Bounded(g.union(f)),
                };
            }
            ExprKind::If { then, els, .. } => {
                self.block(then);
                self.block(els);
            }
            ExprKind::Reduce {
                window,
                dx,
                dy,
                body,
                ..
            } => {
                self.bind_window(*window, *dx, *dy);
                self.block(body);
            }
            _ => {}
        }
        each_child(e, &mut |c| self.expr(c));
    }

    fn bind_window(&mut self, window: Window, dx: VarId, dy: VarId) {
        let (ix, iy) = match window {
            Window::Mask(i) => {
                let m = &self.kernel.masks[i];
                let (hw, hh) = ((m.width / 2) as i64, (m.height / 2) as i64);
                (Some((-hw, hw)), Some((-hh, hh)))
            }
            Window::Domain(i) => {
                let d = &self.kernel.domains[i];
                let (w, h) = (d.width as i64, d.height as i64);
                let on = (0..h)
                    .flat_map(|y| (0..w).map(move |x| (x, y)))
                    .filter(|&(x, y)| d.enabled.get((y * w + x) as usize) == Some(&true))
                    .map(|(x, y)| (x - w / 2, y - h / 2));
                on.fold((None, None), |(ix, iy), (x, y)| {
                    (hull(ix, (x, x)), hull(iy, (y, y)))
                })
            }
        };
        self.env[dx.0 as usize] = ix;
        self.env[dy.0 as usize] = iy;
    }

    /// The interval of an `i32` expression's values, when bounded.
    fn interval(&self, e: &Expr) -> Option<Interval> {
        match &e.kind {
            ExprKind::Const(Literal::Int(v)) => Some((*v, *v)),
            ExprKind::Var(v) => self.env[v.0 as usize],
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
                    BinaryOp::Div if b.0 == b.1 && b.0 > 0 => Some((a.0 / b.0, a.1 / b.0)),
                    _ => None,
                }
            }
            ExprKind::Cast(arg) if arg.ty == e.ty => self.interval(arg),
            ExprKind::If { then, els, .. } if then.stmts.is_empty() && els.stmts.is_empty() => {
                let (t, f) = (then.result.as_ref()?, els.result.as_ref()?);
                let (t, f) = (self.interval(t)?, self.interval(f)?);
                Some((t.0.min(f.0), t.1.max(f.1)))
            }
            _ => None,
        }
        .filter(|&(a, b)| a >= i32::MIN as i64 && b <= i32::MAX as i64)
    }
}

fn hull(acc: Option<Interval>, i: Interval) -> Option<Interval> {
    Some(match acc {
        None => i,
        Some((a, b)) => (a.min(i.0), b.max(i.1)),
    })
}

fn to_footprint((x, y): (Interval, Interval)) -> Option<Footprint> {
    Some(Footprint {
        min_dx: i32::try_from(x.0).ok()?,
        max_dx: i32::try_from(x.1).ok()?,
        min_dy: i32::try_from(y.0).ok()?,
        max_dy: i32::try_from(y.1).ok()?,
    })
}
