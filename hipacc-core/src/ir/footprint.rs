//! Footprints: the window of offsets each accessor is read at.
//!
//! An interval analysis over the offsets of every read: constants, loop
//! variables (their ranges), window offset variables (a mask's extent; a
//! domain's enabled rows and columns), immutable `let` variables holding such
//! intervals, `+`, `-`, unary `-`, `*`, division by a positive constant,
//! `as i32`, and `if` (the union of both branches). Anything else (offsets
//! from parameters, from pixel values, from variables that are assigned, or
//! any intermediate outside the `i32` range, where the arithmetic would
//! wrap) is unknown, and the accessor's footprint is `None`. Reads inside a
//! loop that never runs are ignored.
//!
//! Offsets computed from the coordinates (how a kernel reads an image of
//! another size: `x() + i` reads position `2x + i`, `x() / 2 - x()`
//! position `x / 2`) are tracked as affine functions `c · x() + [lo, hi]`
//! ([`affine_footprints`]): `x()`/`y()` have coefficient 1, sums add, a
//! product with a constant scales, and division by a positive constant
//! divides with one unit of slack either side for the truncation.
//! [`footprints`] is the special case without coordinate terms.

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
/// offset is not bounded by the analysis (or depends on the coordinates).
pub fn footprints(k: &Kernel) -> Vec<Option<Footprint>> {
    affine_footprints(k)
        .into_iter()
        .map(|a| a.and_then(AffineFootprint::constant))
        .collect()
}

/// One axis of an [`AffineFootprint`]: the offsets along it are
/// `coef · c + [lo, hi]` for the output coordinate `c` (`x()` or `y()`).
/// Coefficients and bounds are dyadic rationals (exact in `f64`) unless a
/// division by a constant other than a power of two is involved; the
/// bounds then include the rounding.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct AffineAxis {
    /// Coefficient of the output coordinate.
    pub coef: f64,
    /// Smallest constant part.
    pub lo: f64,
    /// Largest constant part.
    pub hi: f64,
}

/// The offsets an accessor is read at, as affine functions of the output
/// pixel: the x offset depends on `x()` only, the y offset on `y()` only.
///
/// ```
/// use hipacc_core::ir::footprint::{AffineAxis, AffineFootprint};
/// // Reads at x() + 0 ..= x() + 1: position 2x ..= 2x + 1 (a 2:1 reduction).
/// let a = AffineFootprint {
///     x: AffineAxis { coef: 1.0, lo: 0.0, hi: 1.0 },
///     y: AffineAxis { coef: 0.0, lo: -1.0, hi: 1.0 },
/// };
/// assert_eq!(a.constant(), None);
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct AffineFootprint {
    /// Horizontal offsets.
    pub x: AffineAxis,
    /// Vertical offsets.
    pub y: AffineAxis,
}

impl AffineFootprint {
    /// The footprint when no offset depends on the coordinates.
    pub fn constant(self) -> Option<Footprint> {
        if self.x.coef != 0.0 || self.y.coef != 0.0 {
            return None;
        }
        let int = |v: f64| {
            (v.fract() == 0.0 && v >= f64::from(i32::MIN) && v <= f64::from(i32::MAX))
                .then_some(v as i32)
        };
        Some(Footprint {
            min_dx: int(self.x.lo)?,
            max_dx: int(self.x.hi)?,
            min_dy: int(self.y.lo)?,
            max_dy: int(self.y.hi)?,
        })
    }

    /// The smallest affine footprint holding both, if they have the same
    /// coefficients.
    fn union(self, other: AffineFootprint) -> Option<AffineFootprint> {
        Some(AffineFootprint {
            x: self.x.union(other.x)?,
            y: self.y.union(other.y)?,
        })
    }
}

impl AffineAxis {
    fn union(self, o: AffineAxis) -> Option<AffineAxis> {
        (self.coef == o.coef).then_some(AffineAxis {
            coef: self.coef,
            lo: self.lo.min(o.lo),
            hi: self.hi.max(o.hi),
        })
    }
}

/// The affine footprint of each accessor of `k`, in slot order; `None`
/// where an offset is not affine in the coordinates (see the module docs).
/// An accessor that is never read has the zero footprint.
pub fn affine_footprints(k: &Kernel) -> Vec<Option<AffineFootprint>> {
    let mut assigned = HashSet::new();
    collect_assigned(&k.body, &mut assigned);
    let mut a = Analysis {
        kernel: k,
        assigned,
        env: vec![None; k.vars.len()],
        found: vec![Found::Unread; k.accessors.len()],
    };
    a.block(&k.body);
    let zero = AffineAxis {
        coef: 0.0,
        lo: 0.0,
        hi: 0.0,
    };
    a.found
        .into_iter()
        .map(|f| match f {
            Found::Unread => Some(AffineFootprint { x: zero, y: zero }),
            Found::Bounded(f) => Some(f),
            Found::Unbounded => None,
        })
        .collect()
}

/// The abstract value of an `i32` expression: `cx · x() + cy · y() + [lo, hi]`.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Affine {
    cx: f64,
    cy: f64,
    lo: f64,
    hi: f64,
}

impl Affine {
    fn interval(lo: f64, hi: f64) -> Affine {
        Affine {
            cx: 0.0,
            cy: 0.0,
            lo,
            hi,
        }
    }

    fn is_interval(&self) -> bool {
        self.cx == 0.0 && self.cy == 0.0
    }

    fn scale(self, c: f64) -> Affine {
        let (a, b) = (self.lo * c, self.hi * c);
        Affine {
            cx: self.cx * c,
            cy: self.cy * c,
            lo: a.min(b),
            hi: a.max(b),
        }
    }
}

#[derive(Clone, Copy)]
enum Found {
    Unread,
    Bounded(AffineFootprint),
    Unbounded,
}

struct Analysis<'a> {
    kernel: &'a Kernel,
    /// Variables that are the target of an assignment somewhere.
    assigned: HashSet<VarId>,
    /// Known value of each variable.
    env: Vec<Option<Affine>>,
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
                    self.value(value)
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
                    self.env[var.0 as usize] =
                        Some(Affine::interval(f64::from(*start), f64::from(*end) - 1.0));
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
                let (ix, iy) = (self.value(dx), self.value(dy));
                self.found[*acc] = match (self.found[*acc], ix.zip(iy).and_then(to_footprint)) {
                    (Found::Unbounded, _) | (_, None) => Found::Unbounded,
                    (Found::Unread, Some(f)) => Found::Bounded(f),
                    (Found::Bounded(g), Some(f)) => {
                        g.union(f).map_or(Found::Unbounded, Found::Bounded)
                    }
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
        let interval = |i: Option<(i64, i64)>| i.map(|(a, b)| Affine::interval(a as f64, b as f64));
        self.env[dx.0 as usize] = interval(ix);
        self.env[dy.0 as usize] = interval(iy);
    }

    /// The value of an `i32` expression, when bounded and affine.
    fn value(&self, e: &Expr) -> Option<Affine> {
        match &e.kind {
            ExprKind::Const(Literal::Int(v)) => Some(Affine::interval(*v as f64, *v as f64)),
            ExprKind::Var(v) => self.env[v.0 as usize],
            ExprKind::X => Some(Affine {
                cx: 1.0,
                ..Affine::interval(0.0, 0.0)
            }),
            ExprKind::Y => Some(Affine {
                cy: 1.0,
                ..Affine::interval(0.0, 0.0)
            }),
            ExprKind::Unary {
                op: UnaryOp::Neg,
                arg,
            } => self.value(arg).map(|a| a.scale(-1.0)),
            ExprKind::Binary { op, lhs, rhs } => {
                let (a, b) = (self.value(lhs)?, self.value(rhs)?);
                match op {
                    BinaryOp::Add => Some(Affine {
                        cx: a.cx + b.cx,
                        cy: a.cy + b.cy,
                        lo: a.lo + b.lo,
                        hi: a.hi + b.hi,
                    }),
                    BinaryOp::Sub => Some(Affine {
                        cx: a.cx - b.cx,
                        cy: a.cy - b.cy,
                        lo: a.lo - b.hi,
                        hi: a.hi - b.lo,
                    }),
                    BinaryOp::Mul if a.is_interval() && b.is_interval() => {
                        let p = [a.lo * b.lo, a.lo * b.hi, a.hi * b.lo, a.hi * b.hi];
                        Some(Affine::interval(
                            p.iter().copied().fold(f64::MAX, f64::min),
                            p.iter().copied().fold(f64::MIN, f64::max),
                        ))
                    }
                    BinaryOp::Mul if b.is_interval() && b.lo == b.hi => Some(a.scale(b.lo)),
                    BinaryOp::Mul if a.is_interval() && a.lo == a.hi => Some(b.scale(a.lo)),
                    BinaryOp::Div if b.is_interval() && b.lo == b.hi && b.lo > 0.0 => {
                        let d = b.lo;
                        if a.is_interval() {
                            // Truncating division is monotonic: exact bounds.
                            Some(Affine::interval((a.lo / d).trunc(), (a.hi / d).trunc()))
                        } else {
                            // trunc(q) lies in (q - 1, q + 1).
                            let q = a.scale(1.0 / d);
                            Some(Affine {
                                lo: q.lo - 1.0,
                                hi: q.hi + 1.0,
                                ..q
                            })
                        }
                    }
                    _ => None,
                }
            }
            ExprKind::Cast(arg) if arg.ty == e.ty => self.value(arg),
            ExprKind::If { then, els, .. } if then.stmts.is_empty() && els.stmts.is_empty() => {
                let (t, f) = (then.result.as_ref()?, els.result.as_ref()?);
                let (t, f) = (self.value(t)?, self.value(f)?);
                (t.cx == f.cx && t.cy == f.cy).then_some(Affine {
                    lo: t.lo.min(f.lo),
                    hi: t.hi.max(f.hi),
                    ..t
                })
            }
            _ => None,
        }
        .filter(|a| a.lo >= f64::from(i32::MIN) && a.hi <= f64::from(i32::MAX))
    }
}

fn hull(acc: Option<(i64, i64)>, i: (i64, i64)) -> Option<(i64, i64)> {
    Some(match acc {
        None => i,
        Some((a, b)) => (a.min(i.0), b.max(i.1)),
    })
}

/// The footprint of a read at offsets `(x, y)`: the x offset may depend on
/// `x()` only and the y offset on `y()` only.
fn to_footprint((x, y): (Affine, Affine)) -> Option<AffineFootprint> {
    if x.cy != 0.0 || y.cx != 0.0 {
        return None;
    }
    Some(AffineFootprint {
        x: AffineAxis {
            coef: x.cx,
            lo: x.lo,
            hi: x.hi,
        },
        y: AffineAxis {
            coef: y.cy,
            lo: y.lo,
            hi: y.hi,
        },
    })
}
