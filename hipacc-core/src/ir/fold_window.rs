//! Folding a producer kernel into a consumer that reads it through a
//! window, by recomputing the producer's value at every position read.
//!
//! [`fold`](super::fold) handles a consumer that reads the intermediate
//! only at its own pixel. A consumer that reads it at offsets (a gradient,
//! a blur of a point-wise stage) can take the producer in too: each read
//! of the intermediate at offset `(dx, dy)` becomes the producer's body
//! evaluated at the intermediate's pixel that read lands on. That pixel is
//! the one the unfused read returns, found with the reading accessor's
//! boundary condition at any distance (`Clamp`, `Repeat`, `Mirror`,
//! `MirrorInterior`; `Constant` returns its constant outside and evaluates
//! nothing), printed as `i32` arithmetic from the intermediate's extent,
//! which the folded kernel takes as two parameters. The producer's own
//! reads then start from that pixel, through their own boundary
//! conditions, as they did when it ran alone. So the folded kernel equals
//! the two launches value for value: each recomputed value is the
//! producer's body on the same inputs, bound to a local of the
//! intermediate's pixel type before the consumer uses it.
//!
//! Recomputation costs the producer's work once per consumer read instead
//! of once per pixel; [`recompute_reads`] counts both, so a caller can
//! weigh that against the intermediate's write and read that folding
//! saves.
//!
//! Conditions checked here: the consumer's accessor does not interpolate,
//! has a boundary condition (an `Undefined` read outside the intermediate
//! has no defined pixel to recompute), and reads the producer's output
//! type; no producer accessor interpolates (its positions scale with the
//! iteration space, not with offsets). The caller checks the bindings: the
//! producer covers its whole output image, the consumer's iteration space
//! is that same rectangle, and its accessor reads the whole image.

use super::fold::{merge_slots, Rewrite, Shift};
use super::Value;
use super::{
    BinaryOp, Block, Expr, ExprKind, Kernel, Literal, ParamSlot, Stmt, Type, VarId, VarInfo, Window,
};
use crate::kernel::ParamBinding;
use crate::{Bindings, BoundaryMode, Interpolation};
use std::cell::RefCell;

/// The consumer with the producer recomputed at each of its reads of
/// accessor slot `acc`, and the bindings to launch it over the producer's
/// output image of `width` x `height` pixels; `None` when a condition of
/// the module documentation fails.
pub fn fold_window(
    producer: &Kernel,
    producer_bindings: &Bindings,
    consumer: &Kernel,
    consumer_bindings: &Bindings,
    acc: usize,
    (width, height): (usize, usize),
) -> Option<(Kernel, Bindings)> {
    let slot = consumer.accessors.get(acc)?;
    if slot.interpolation != Interpolation::None
        || slot.pixel != producer.output
        || slot.boundary == BoundaryMode::Undefined
        || producer
            .accessors
            .iter()
            .any(|a| a.interpolation != Interpolation::None)
    {
        return None;
    }
    producer.body.result.as_ref()?;
    let (w, h) = (i32::try_from(width).ok()?, i32::try_from(height).ok()?);
    let mode = slot.boundary;
    let outside = match mode {
        BoundaryMode::Constant => Some(constant(producer.output, &slot.constant)?),
        _ => None,
    };
    let (mut kernel, mut bindings) = (consumer.clone(), consumer_bindings.clone());
    kernel.name = format!("{}_{}", producer.name, consumer.name);
    kernel.accessors.remove(acc);
    bindings.accessors.remove(acc);
    let shift = merge_slots(producer, producer_bindings, &mut kernel, &mut bindings);
    let extent = [("width", w), ("height", h)].map(|(what, v)| {
        let name = unused_param(&kernel, &format!("{}_{what}", producer.name.to_lowercase()));
        let slot = ParamSlot {
            name,
            ty: Type::I32,
        };
        kernel.params.push(slot.clone());
        bindings.params.push(ParamBinding {
            slot,
            value: Value::I32(v),
        });
        Expr::new(Type::I32, ExprKind::Param(kernel.params.len() - 1))
    });
    let inline = Inline {
        acc,
        producer,
        shift,
        extent,
        mode,
        outside,
        vars: RefCell::new(std::mem::take(&mut kernel.vars)),
    };
    let mut body = kernel.body.clone();
    inline.block(&mut body);
    kernel.vars = inline.vars.into_inner();
    kernel.body = body;
    Some((kernel, bindings))
}

/// Reads of accessor `acc` one launch of `kernel` makes per pixel, each
/// read counted once per window position and loop trip it runs under
/// (both branches of an `if` counted).
pub fn reads_per_pixel(kernel: &Kernel, acc: Option<usize>) -> u64 {
    count_block(kernel, &kernel.body, acc)
}

/// `(recomputed, saved)`: the producer's reads that folding it into the
/// consumer's reads of `acc` adds per pixel beyond running it once, and the
/// intermediate's accesses it saves (its write and the consumer's read of
/// each pixel from memory).
pub fn recompute_reads(producer: &Kernel, consumer: &Kernel, acc: usize) -> (u64, u64) {
    let per_value = reads_per_pixel(producer, None);
    let values = reads_per_pixel(consumer, Some(acc));
    (values.saturating_sub(1).saturating_mul(per_value), 2)
}

fn count_block(k: &Kernel, b: &Block, acc: Option<usize>) -> u64 {
    let mut n = 0u64;
    for s in &b.stmts {
        n = n.saturating_add(match s {
            Stmt::Let { value, .. } | Stmt::Assign { value, .. } | Stmt::Expr(value) => {
                count_expr(k, value, acc)
            }
            Stmt::If { cond, then, els } => count_expr(k, cond, acc)
                .saturating_add(count_block(k, then, acc))
                .saturating_add(count_block(k, els, acc)),
            Stmt::For {
                start, end, body, ..
            } => count_block(k, body, acc).saturating_mul((end - start).max(0) as u64),
            Stmt::Iterate { window, body, .. } => {
                count_block(k, body, acc).saturating_mul(positions(k, *window))
            }
        });
    }
    if let Some(r) = &b.result {
        n = n.saturating_add(count_expr(k, r, acc));
    }
    n
}

fn count_expr(k: &Kernel, e: &Expr, acc: Option<usize>) -> u64 {
    let mut n = 0u64;
    let mut visit = |e: &Expr| match &e.kind {
        ExprKind::Read { acc: a, .. } if acc.is_none_or(|acc| acc == *a) => n += 1,
        _ => {}
    };
    match &e.kind {
        ExprKind::Reduce { window, body, .. } => {
            return count_block(k, body, acc).saturating_mul(positions(k, *window));
        }
        ExprKind::If { cond, then, els } => {
            return count_expr(k, cond, acc)
                .saturating_add(count_block(k, then, acc))
                .saturating_add(count_block(k, els, acc));
        }
        _ => visit(e),
    }
    let children: Vec<&Expr> = match &e.kind {
        ExprKind::Read { dx, dy, .. } | ExprKind::MaskCoef { dx, dy, .. } => vec![dx, dy],
        ExprKind::Unary { arg, .. } | ExprKind::Cast(arg) | ExprKind::Lane { arg, .. } => {
            vec![arg]
        }
        ExprKind::Binary { lhs, rhs, .. } => vec![lhs, rhs],
        ExprKind::Call { args, .. } | ExprKind::MakeVec(args) => args.iter().collect(),
        _ => vec![],
    };
    children
        .into_iter()
        .fold(n, |n, c| n.saturating_add(count_expr(k, c, acc)))
}

/// The positions a window visits.
fn positions(k: &Kernel, w: Window) -> u64 {
    match w {
        Window::Mask(m) => k.masks.get(m).map_or(0, |m| (m.width * m.height) as u64),
        Window::Domain(d) => k
            .domains
            .get(d)
            .map_or(0, |d| d.enabled.iter().filter(|&&e| e).count() as u64),
    }
}

/// The literal a `Constant` read returns, as an expression of `ty`.
fn constant(ty: Type, lanes: &[Literal]) -> Option<Expr> {
    let lane = Type::scalar(ty.scalar);
    match (ty.lanes, lanes) {
        (1, [c]) => Some(Expr::new(ty, ExprKind::Const(*c))),
        (4, [c]) => Some(Expr::new(ty, ExprKind::Const(*c))),
        (4, [_, _, _, _]) => Some(Expr::new(
            ty,
            ExprKind::MakeVec(
                lanes
                    .iter()
                    .map(|c| Expr::new(lane, ExprKind::Const(*c)))
                    .collect(),
            ),
        )),
        _ => None,
    }
}

/// `base`, numbered on while a parameter of `k` has the name.
fn unused_param(k: &Kernel, base: &str) -> String {
    (0..)
        .map(|i| {
            if i == 0 {
                base.to_string()
            } else {
                format!("{base}_{i}")
            }
        })
        .find(|n| !k.params.iter().any(|p| &p.name == n))
        .unwrap_or_else(|| base.to_string())
}

/// Replaces each read of the intermediate by the producer recomputed at
/// the pixel it lands on (the consumer's other accessors renumbered past
/// the removed slot).
struct Inline<'a> {
    acc: usize,
    producer: &'a Kernel,
    shift: Shift,
    /// The intermediate's width and height (`i32` parameters).
    extent: [Expr; 2],
    mode: BoundaryMode,
    /// What a `Constant` read returns outside the intermediate.
    outside: Option<Expr>,
    /// The folded kernel's variables, grown by each inlined copy.
    vars: RefCell<Vec<VarInfo>>,
}

impl Rewrite for Inline<'_> {
    fn rewrite(&self, e: &mut Expr) {
        if let ExprKind::Read { acc, dx, dy } = &mut e.kind {
            if *acc == self.acc {
                let (dx, dy) = (std::mem::replace(&mut **dx, i32c(0)), (**dy).clone());
                *e = self.recompute(dx, dy);
            } else if *acc > self.acc {
                *acc -= 1;
            }
        }
    }
}

impl Inline<'_> {
    /// A new immutable variable of the folded kernel.
    fn fresh(&self, name: &str, ty: Type) -> VarId {
        let mut vars = self.vars.borrow_mut();
        vars.push(VarInfo {
            name: name.to_string(),
            ty,
            mutable: false,
        });
        VarId(vars.len() as u32 - 1)
    }

    /// The index `i` of an extent `n` lands on under the reading
    /// accessor's mode (`Constant`, whose in-range index is `i`, returns
    /// `i`): the formulas of [`crate::boundary`], the in-range case first.
    fn remap(&self, i: Expr, n: Expr) -> Expr {
        let one = i32c(1);
        let outside = match self.mode {
            BoundaryMode::Undefined | BoundaryMode::Constant => return i,
            BoundaryMode::Clamp => if_else(
                binary(BinaryOp::Lt, i.clone(), i32c(0)),
                i32c(0),
                binary(BinaryOp::Sub, n.clone(), one),
            ),
            BoundaryMode::Repeat => {
                let mut stmts = vec![];
                let (_, m) = self.rem_euclid(&mut stmts, i.clone(), n.clone());
                block_expr(stmts, m)
            }
            BoundaryMode::Mirror => {
                let mut stmts = vec![];
                let period = binary(BinaryOp::Mul, i32c(2), n.clone());
                let (p, m) = self.rem_euclid(&mut stmts, i.clone(), period);
                let back = binary(BinaryOp::Sub, binary(BinaryOp::Sub, p, one), m.clone());
                let value = if_else(binary(BinaryOp::Lt, m.clone(), n.clone()), m, back);
                block_expr(stmts, value)
            }
            BoundaryMode::MirrorInterior => {
                let mut stmts = vec![];
                let period = binary(
                    BinaryOp::Mul,
                    i32c(2),
                    binary(BinaryOp::Sub, n.clone(), one),
                );
                let (p, m) = self.rem_euclid(&mut stmts, i.clone(), period);
                let back = binary(BinaryOp::Sub, p, m.clone());
                let value = if_else(binary(BinaryOp::Lt, m.clone(), n.clone()), m, back);
                if_else(
                    binary(BinaryOp::Eq, n.clone(), i32c(1)),
                    i32c(0),
                    block_expr(stmts, value),
                )
            }
        };
        if_else(in_range(i.clone(), n), i, outside)
    }

    /// Pushes `let p = period; let r = i % p; let m = if r < 0 { r + p }
    /// else { r };` (`i.rem_euclid(p)` from `%`, whose sign is the
    /// dividend's) and returns `(p, m)`.
    fn rem_euclid(&self, stmts: &mut Vec<Stmt>, i: Expr, period: Expr) -> (Expr, Expr) {
        let (p, r, m) = (
            self.fresh("period", Type::I32),
            self.fresh("r", Type::I32),
            self.fresh("m", Type::I32),
        );
        let rem = binary(BinaryOp::Rem, i, var(p));
        let wrapped = if_else(
            binary(BinaryOp::Lt, var(r), i32c(0)),
            binary(BinaryOp::Add, var(r), var(p)),
            var(r),
        );
        for (v, value) in [(p, period), (r, rem), (m, wrapped)] {
            stmts.push(Stmt::Let { var: v, value });
        }
        (var(p), var(m))
    }

    /// The producer's value at the intermediate's pixel that a read at
    /// `(dx, dy)` lands on:
    ///
    /// ```text
    /// if <inside, for Constant; else true> {
    ///     let rx = x + dx; let ry = y + dy;
    ///     let qx = remap(rx, width); let qy = remap(ry, height);
    ///     let sx = qx - x; let sy = qy - y;
    ///     <the producer's statements, reads shifted by (sx, sy), x() = qx, y() = qy>
    ///     let value = <its result>;
    ///     value
    /// } else { <the constant> }
    /// ```
    fn recompute(&self, dx: Expr, dy: Expr) -> Expr {
        let ty = self.producer.output;
        let at = |base: ExprKind, d: Expr| binary(BinaryOp::Add, Expr::new(Type::I32, base), d);
        let (rx_e, ry_e) = (at(ExprKind::X, dx), at(ExprKind::Y, dy));
        let [w, h] = self.extent.clone();
        let (rx, ry) = (self.fresh("rx", Type::I32), self.fresh("ry", Type::I32));
        let (qx, qy) = (self.fresh("qx", Type::I32), self.fresh("qy", Type::I32));
        let (sx, sy) = (self.fresh("sx", Type::I32), self.fresh("sy", Type::I32));
        let mut stmts = vec![
            Stmt::Let {
                var: rx,
                value: rx_e.clone(),
            },
            Stmt::Let {
                var: ry,
                value: ry_e.clone(),
            },
            Stmt::Let {
                var: qx,
                value: self.remap(var(rx), w.clone()),
            },
            Stmt::Let {
                var: qy,
                value: self.remap(var(ry), h.clone()),
            },
            Stmt::Let {
                var: sx,
                value: binary(BinaryOp::Sub, var(qx), Expr::new(Type::I32, ExprKind::X)),
            },
            Stmt::Let {
                var: sy,
                value: binary(BinaryOp::Sub, var(qy), Expr::new(Type::I32, ExprKind::Y)),
            },
        ];
        // A fresh copy of the producer's variables for this site.
        let base = {
            let mut vars = self.vars.borrow_mut();
            let base = vars.len() as u32;
            vars.extend(self.producer.vars.iter().cloned());
            base
        };
        let at_site = AtSite {
            shift: Shift {
                vars: base,
                ..self.shift
            },
            at: (qx, qy),
            by: (sx, sy),
        };
        let mut body = self.producer.body.clone();
        at_site.block(&mut body);
        stmts.extend(body.stmts);
        let value = self.fresh(&format!("{}_value", self.producer.name), ty);
        stmts.push(Stmt::Let {
            var: value,
            value: body
                .result
                .unwrap_or_else(|| unreachable!("checked: a result")),
        });
        let value = var_of(value, ty);
        match &self.outside {
            Some(c) => if_else(
                inside(rx_e, ry_e, w, h),
                block_expr(stmts, value),
                c.clone(),
            ),
            None => block_expr(stmts, value),
        }
    }
}

/// The producer's body moved to one read site: its slots and variables
/// shifted, its coordinates the landed pixel, its reads from there.
struct AtSite {
    shift: Shift,
    at: (VarId, VarId),
    by: (VarId, VarId),
}

impl Rewrite for AtSite {
    fn rewrite(&self, e: &mut Expr) {
        self.shift.rewrite(e);
        match &mut e.kind {
            ExprKind::X => e.kind = ExprKind::Var(self.at.0),
            ExprKind::Y => e.kind = ExprKind::Var(self.at.1),
            ExprKind::Read { dx, dy, .. } => {
                for (d, by) in [(dx, self.by.0), (dy, self.by.1)] {
                    let old = std::mem::replace(&mut **d, i32c(0));
                    **d = binary(BinaryOp::Add, old, var(by));
                }
            }
            _ => {}
        }
    }
    fn var(&self, v: &mut VarId) {
        self.shift.var(v);
    }
    fn window(&self, w: &mut Window) {
        self.shift.window(w);
    }
}

fn in_range(i: Expr, n: Expr) -> Expr {
    binary(
        BinaryOp::And,
        binary(BinaryOp::Ge, i.clone(), i32c(0)),
        binary(BinaryOp::Lt, i, n),
    )
}

fn inside(x: Expr, y: Expr, w: Expr, h: Expr) -> Expr {
    binary(BinaryOp::And, in_range(x, w), in_range(y, h))
}

/// `{ stmts; value }` as an expression (an `if true`).
fn block_expr(stmts: Vec<Stmt>, value: Expr) -> Expr {
    let ty = value.ty;
    Expr::new(
        ty,
        ExprKind::If {
            cond: Box::new(Expr::new(Type::BOOL, ExprKind::Const(Literal::Bool(true)))),
            then: Box::new(Block {
                stmts,
                result: Some(value),
            }),
            els: Box::new(Block {
                stmts: vec![],
                result: Some(zero(ty)),
            }),
        },
    )
}

fn if_else(cond: Expr, then: Expr, els: Expr) -> Expr {
    let ty = then.ty;
    let block = |e| {
        Box::new(Block {
            stmts: vec![],
            result: Some(e),
        })
    };
    Expr::new(
        ty,
        ExprKind::If {
            cond: Box::new(cond),
            then: block(then),
            els: block(els),
        },
    )
}

fn binary(op: BinaryOp, lhs: Expr, rhs: Expr) -> Expr {
    let ty = if op.is_comparison() || (op == BinaryOp::And && lhs.ty == Type::BOOL) {
        Type::BOOL
    } else {
        lhs.ty
    };
    Expr::new(
        ty,
        ExprKind::Binary {
            op,
            lhs: Box::new(lhs),
            rhs: Box::new(rhs),
        },
    )
}

fn i32c(v: i64) -> Expr {
    Expr::new(Type::I32, ExprKind::Const(Literal::Int(v)))
}

fn var(v: VarId) -> Expr {
    var_of(v, Type::I32)
}

fn var_of(v: VarId, ty: Type) -> Expr {
    Expr::new(ty, ExprKind::Var(v))
}

/// A placeholder of `ty` for the branch that is never taken.
fn zero(ty: Type) -> Expr {
    let lit = if ty.scalar.is_float() {
        Literal::float(0.0)
    } else if ty.scalar == super::ScalarType::Bool {
        Literal::Bool(false)
    } else {
        Literal::Int(0)
    };
    Expr::new(ty, ExprKind::Const(lit))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::evaluate;
    use crate::{kernel_body, Accessor, Boundary, Domain, Image, Kernel, Mask, Rect, Rgba};

    /// Point-wise, and it reads its coordinates.
    #[derive(Kernel)]
    #[kernel(output = f32)]
    struct Poly {
        input: Accessor<f32>,
        a: f32,
    }

    #[kernel_body]
    impl Poly {
        fn kernel(&self) -> f32 {
            let v = self.input();
            v * v * self.a + v - (x() * 3 + y()) as f32 * 0.125
        }
    }

    /// A domain sum with a local inside the window.
    #[derive(Kernel)]
    #[kernel(output = f32)]
    struct Blur {
        input: Accessor<f32>,
        window: Domain,
    }

    #[kernel_body]
    impl Blur {
        fn kernel(&self) -> f32 {
            reduce(&self.window, Sum, |dx, dy| {
                let v = self.input.at(dx, dy);
                v * 0.5 + 0.25
            }) * (1.0 / 9.0)
        }
    }

    /// Reads at fixed offsets, one of them two rows away.
    #[derive(Kernel)]
    #[kernel(output = f32)]
    struct Gradient {
        input: Accessor<f32>,
        centre: Accessor<f32>,
    }

    #[kernel_body]
    impl Gradient {
        fn kernel(&self) -> f32 {
            (self.input.at(1, 0) - self.input.at(-1, 0)) * 0.5 + self.input.at(0, 2) - self.centre()
        }
    }

    /// A 1x7 mask: reads three columns away, wider than small images.
    #[derive(Kernel)]
    #[kernel(output = f32)]
    struct Wide {
        input: Accessor<f32>,
        mask: Mask<f32>,
    }

    #[kernel_body]
    impl Wide {
        fn kernel(&self) -> f32 {
            convolve(&self.mask, Sum, |dx, dy| {
                self.mask.at(dx, dy) * self.input.at(dx, dy)
            })
        }
    }

    /// A colour stage: each lane of the input scaled differently.
    #[derive(Kernel)]
    #[kernel(output = Rgba<f32>)]
    struct Tint {
        input: Accessor<Rgba<f32>>,
    }

    #[kernel_body]
    impl Tint {
        fn kernel(&self) -> Rgba<f32> {
            let p = self.input();
            Rgba::new(p.r * 0.5, p.g + 1.0, p.b - p.r, p.a * 2.0)
        }
    }

    /// A horizontal difference of colours.
    #[derive(Kernel)]
    #[kernel(output = Rgba<f32>)]
    struct ColourEdge {
        input: Accessor<Rgba<f32>>,
    }

    #[kernel_body]
    impl ColourEdge {
        fn kernel(&self) -> Rgba<f32> {
            self.input.at(2, 0) - self.input.at(-1, 1)
        }
    }

    /// A producer with a loop and a mutable local.
    #[derive(Kernel)]
    #[kernel(output = f32)]
    struct Steps {
        input: Accessor<f32>,
    }

    #[kernel_body]
    impl Steps {
        fn kernel(&self) -> f32 {
            let mut s = 0.0;
            for i in 0..3 {
                s = s * 0.5 + self.input.at(i - 1, 0);
            }
            s
        }
    }

    /// A consumer that walks a domain with `iterate`, keeping the largest
    /// value behind an `if`.
    #[derive(Kernel)]
    #[kernel(output = f32)]
    struct Largest {
        input: Accessor<f32>,
        window: Domain,
    }

    #[kernel_body]
    impl Largest {
        fn kernel(&self) -> f32 {
            let mut best = -1.0e30;
            iterate(&self.window, |dx, dy| {
                let v = self.input.at(dx, dy);
                if v > best {
                    best = v;
                }
            });
            best
        }
    }

    const SIZES: [(usize, usize); 5] = [(1, 1), (3, 2), (2, 5), (17, 9), (6, 13)];

    fn modes() -> [Boundary<f32>; 5] {
        [
            Boundary::Clamp,
            Boundary::Repeat,
            Boundary::Mirror,
            Boundary::MirrorInterior,
            Boundary::Constant(0.75),
        ]
    }

    fn image(w: usize, h: usize, salt: usize) -> Image<f32> {
        Image::from_fn(w, h, |x, y| {
            ((x * 7 + y * 13 + salt) % 19) as f32 * 0.25 - 1.0
        })
        .unwrap()
    }

    /// An IR kernel with its bindings, as a launch sees it.
    type Launch = (crate::ir::Kernel, Bindings);

    fn launch(k: &impl Kernel) -> Launch {
        (k.ir().unwrap(), k.bindings())
    }

    fn run((k, b): &Launch, w: usize, h: usize) -> Vec<u32> {
        let out = Image::<f32>::new(w, h).unwrap();
        evaluate(k, b, &*out.to_dyn(), Rect::full(w, h)).unwrap();
        out.to_vec().unwrap().iter().map(|v| v.to_bits()).collect()
    }

    /// Evaluates `producer` into `mid` (its output image).
    fn fill((k, b): &Launch, mid: &Image<f32>) {
        let (w, h) = (mid.width(), mid.height());
        evaluate(k, b, &*mid.to_dyn(), Rect::full(w, h)).unwrap();
    }

    fn fold_into(p: &Launch, c: &Launch, acc: usize, size: (usize, usize)) -> Launch {
        fold_window(&p.0, &p.1, &c.0, &c.1, acc, size).expect("foldable")
    }

    #[test]
    fn a_window_over_a_recomputed_producer_equals_the_two_launches() {
        for (w, h) in SIZES {
            let input = image(w, h, 3);
            for (i, mode) in modes().into_iter().enumerate() {
                let inner = modes()[(i + 2) % 5];
                let mid = Image::<f32>::new(w, h).unwrap();
                let poly = Poly {
                    input: Accessor::new(&input),
                    a: 0.375,
                };
                let blur = Blur {
                    input: Accessor::new(&mid).with_boundary(mode),
                    window: Domain::new(3, 3).unwrap(),
                };
                let (p, c) = (launch(&poly), launch(&blur));
                fill(&p, &mid);
                let want = run(&c, w, h);
                let folded = fold_into(&p, &c, 0, (w, h));
                assert_eq!(run(&folded, w, h), want, "poly->blur {w}x{h} {mode:?}");

                // A window over a window, the producer's reads through
                // their own mode.
                let blur = Blur {
                    input: Accessor::new(&input).with_boundary(inner),
                    window: Domain::new(3, 3).unwrap(),
                };
                let gradient = Gradient {
                    input: Accessor::new(&mid).with_boundary(mode),
                    centre: Accessor::new(&input),
                };
                let (p, c) = (launch(&blur), launch(&gradient));
                fill(&p, &mid);
                let want = run(&c, w, h);
                let folded = fold_into(&p, &c, 0, (w, h));
                assert_eq!(folded.0.accessors.len(), 2, "centre and the blur's input");
                assert_eq!(run(&folded, w, h), want, "blur->gradient {w}x{h} {mode:?}");
            }
        }
    }

    #[test]
    fn chains_of_three_and_four_fold_transitively() {
        for (w, h) in SIZES {
            let input = image(w, h, 5);
            for (i, mode) in modes().into_iter().enumerate() {
                let other = modes()[(i + 1) % 5];
                let (m1, m2, m3) = (
                    Image::<f32>::new(w, h).unwrap(),
                    Image::<f32>::new(w, h).unwrap(),
                    Image::<f32>::new(w, h).unwrap(),
                );
                let poly = Poly {
                    input: Accessor::new(&input),
                    a: -0.5,
                };
                let wide = Wide {
                    input: Accessor::new(&m1).with_boundary(mode),
                    mask: Mask::new([[0.5, -1.0, 0.25, 1.0, 0.125, 2.0, -0.75]]).unwrap(),
                };
                let gradient = Gradient {
                    input: Accessor::new(&m2).with_boundary(other),
                    centre: Accessor::new(&input),
                };
                let blur = Blur {
                    input: Accessor::new(&m3).with_boundary(mode),
                    window: Domain::new(3, 3).unwrap(),
                };
                let [l1, l2, l3, l4] = [
                    launch(&poly),
                    launch(&wide),
                    launch(&gradient),
                    launch(&blur),
                ];
                fill(&l1, &m1);
                fill(&l2, &m2);
                fill(&l3, &m3);
                let want = run(&l4, w, h);
                let what = format!("{w}x{h} {mode:?} {other:?}");
                let two = fold_into(&l1, &l2, 0, (w, h));
                assert_eq!(run(&two, w, h), run(&l2, w, h), "poly->wide {what}");
                let three = fold_into(&two, &l3, 0, (w, h));
                assert_eq!(run(&three, w, h), run(&l3, w, h), "three {what}");
                let four = fold_into(&three, &l4, 0, (w, h));
                assert_eq!(run(&four, w, h), want, "four {what}");
            }
        }
    }

    #[test]
    fn undefined_and_interpolating_reads_are_not_folded() {
        let input = image(8, 8, 1);
        let mid = Image::<f32>::new(8, 8).unwrap();
        let poly = launch(&Poly {
            input: Accessor::new(&input),
            a: 1.0,
        });
        let blur = launch(&Blur {
            input: Accessor::new(&mid),
            window: Domain::new(3, 3).unwrap(),
        });
        assert!(fold_window(&poly.0, &poly.1, &blur.0, &blur.1, 0, (8, 8)).is_none());
        let blur = launch(&Blur {
            input: Accessor::new(&mid)
                .with_boundary(Boundary::Clamp)
                .with_interpolation(crate::Interpolation::Linear),
            window: Domain::new(3, 3).unwrap(),
        });
        assert!(fold_window(&poly.0, &poly.1, &blur.0, &blur.1, 0, (8, 8)).is_none());
    }

    #[test]
    fn recomputation_is_counted_per_window_position() {
        let input = image(8, 8, 1);
        let mid = Image::<f32>::new(8, 8).unwrap();
        let poly = launch(&Poly {
            input: Accessor::new(&input),
            a: 1.0,
        });
        let blur = launch(&Blur {
            input: Accessor::new(&mid).with_boundary(Boundary::Clamp),
            window: Domain::new(3, 3).unwrap(),
        });
        let gradient = launch(&Gradient {
            input: Accessor::new(&mid).with_boundary(Boundary::Clamp),
            centre: Accessor::new(&input),
        });
        assert_eq!(reads_per_pixel(&poly.0, None), 1);
        assert_eq!(reads_per_pixel(&blur.0, None), 9);
        assert_eq!(reads_per_pixel(&gradient.0, Some(0)), 3);
        assert_eq!(reads_per_pixel(&gradient.0, None), 4);
        // Nine values of the poly, one of them paid anyway.
        assert_eq!(recompute_reads(&poly.0, &blur.0, 0), (8, 2));
        // Three values of a nine-read blur.
        assert_eq!(recompute_reads(&blur.0, &gradient.0, 0), (18, 2));
    }

    #[test]
    fn colour_intermediates_fold_with_a_constant_of_four_lanes() {
        for (w, h) in SIZES {
            let input = Image::from_fn(w, h, |x, y| {
                let v = ((x * 5 + y * 3) % 11) as f32 * 0.5;
                Rgba::new(v, v - 1.0, 2.0 - v, v * 0.25)
            })
            .unwrap();
            let modes = [
                Boundary::Constant(Rgba::new(0.25, -1.5, 3.0, 7.0)),
                Boundary::Mirror,
                Boundary::Repeat,
            ];
            for mode in modes {
                let mid = Image::<Rgba<f32>>::new(w, h).unwrap();
                let tint = Tint {
                    input: Accessor::new(&input),
                };
                let edge = ColourEdge {
                    input: Accessor::new(&mid).with_boundary(mode),
                };
                let (p, c) = (launch(&tint), launch(&edge));
                evaluate(&p.0, &p.1, &*mid.to_dyn(), Rect::full(w, h)).unwrap();
                let run = |(k, b): &Launch| {
                    let out = Image::<Rgba<f32>>::new(w, h).unwrap();
                    evaluate(k, b, &*out.to_dyn(), Rect::full(w, h)).unwrap();
                    let px = out.to_vec().unwrap();
                    px.iter()
                        .flat_map(|p| [p.r, p.g, p.b, p.a].map(f32::to_bits))
                        .collect::<Vec<u32>>()
                };
                let folded = fold_into(&p, &c, 0, (w, h));
                assert_eq!(run(&folded), run(&c), "{w}x{h} {mode:?}");
            }
        }
    }

    #[test]
    fn loops_and_iterate_bodies_fold() {
        for (w, h) in SIZES {
            let input = image(w, h, 11);
            for mode in modes() {
                let mid = Image::<f32>::new(w, h).unwrap();
                let steps = Steps {
                    input: Accessor::new(&input).with_boundary(Boundary::Mirror),
                };
                let largest = Largest {
                    input: Accessor::new(&mid).with_boundary(mode),
                    window: Domain::new(5, 3).unwrap(),
                };
                let (p, c) = (launch(&steps), launch(&largest));
                fill(&p, &mid);
                let folded = fold_into(&p, &c, 0, (w, h));
                assert_eq!(run(&folded, w, h), run(&c, w, h), "{w}x{h} {mode:?}");
            }
        }
    }
}
