//! Folding a producer kernel into a point-wise consumer.
//!
//! When a kernel (the consumer) reads another kernel's output (the
//! producer's) only at its own pixel, `self.blurred()`, the producer's value
//! at that pixel can be computed in the consumer's body instead of being
//! written to an image and read back: the intermediate image costs a write
//! and a read per pixel and nothing else. [`fold`] builds that kernel: the
//! producer's statements, then its result bound to a new local, then the
//! consumer's body with each read of the intermediate replaced by the
//! local. Slots of both kernels are kept (the producer's renamed where a
//! consumer slot has the name), so a launch binds the union of their
//! fields.
//!
//! The result equals running the two kernels one after the other, value for
//! value, under the conditions [`fold`] checks on the IR (reads only at
//! offset 0, no interpolation, the intermediate's pixel type is the
//! producer's output type) and one its caller checks on the bindings: the
//! producer's iteration space is the consumer's, in images of one size, and
//! the consumer reads the whole intermediate image, so that the consumer's
//! pixel and the producer's pixel are the same pixel. Every value crosses
//! the fold as a local of the intermediate's type, so no arithmetic is
//! merged across it (a code generator sees two statements).

use super::{Block, DomainSlot, Expr, ExprKind, Kernel, Literal, Stmt, VarId, VarInfo, Window};
use crate::{Bindings, Interpolation};

/// The consumer with the producer folded into its reads of accessor slot
/// `acc`, with the bindings to launch it; `None` when the consumer reads
/// that slot at any offset other than `(0, 0)`, through interpolation, or
/// as a pixel type other than the producer's output.
pub fn fold(
    producer: &Kernel,
    producer_bindings: &Bindings,
    consumer: &Kernel,
    consumer_bindings: &Bindings,
    acc: usize,
) -> Option<(Kernel, Bindings)> {
    let slot = consumer.accessors.get(acc)?;
    if slot.interpolation != Interpolation::None
        || slot.pixel != producer.output
        || !reads_only_centre(&consumer.body, acc)
    {
        return None;
    }
    let value = producer.body.result.clone()?;
    let (mut kernel, mut bindings) = (consumer.clone(), consumer_bindings.clone());
    kernel.name = format!("{}_{}", producer.name, consumer.name);
    kernel.accessors.remove(acc);
    bindings.accessors.remove(acc);
    let shift = merge_slots(producer, producer_bindings, &mut kernel, &mut bindings);
    kernel.vars.extend(producer.vars.iter().cloned());
    let local = VarId(kernel.vars.len() as u32);
    kernel.vars.push(VarInfo {
        name: format!("{}_value", producer.name),
        ty: producer.output,
        mutable: false,
    });
    let mut body = Block {
        stmts: producer.body.stmts.clone(),
        result: None,
    };
    let mut value = value;
    for s in &mut body.stmts {
        shift.stmt(s);
    }
    shift.expr(&mut value);
    body.stmts.push(Stmt::Let { var: local, value });
    let mut rest = consumer.body.clone();
    Replace { acc, local }.block(&mut rest);
    body.stmts.extend(rest.stmts);
    body.result = rest.result;
    kernel.body = body;
    Some((kernel, bindings))
}

/// Appends the producer's slots (renamed where a slot of `kernel` has the
/// name) and their bindings after those of `kernel`; the returned shift
/// moves the producer's slot indices and variables there (its variables
/// still have to be appended, at `shift.vars`).
pub(super) fn merge_slots(
    producer: &Kernel,
    producer_bindings: &Bindings,
    kernel: &mut Kernel,
    bindings: &mut Bindings,
) -> Shift {
    let names = Names::of(kernel);
    let shift = Shift {
        accessors: kernel.accessors.len(),
        masks: kernel.masks.len(),
        domains: kernel.domains.len(),
        params: kernel.params.len(),
        vars: kernel.vars.len() as u32,
    };
    let rename = |name: &str, taken: &[String]| names.unused(&producer.name, name, taken);
    // Each producer slot, renamed where needed, after the kernel's; its
    // binding follows it.
    macro_rules! append {
        ($slots:ident, $namespace:ident) => {
            for b in &producer_bindings.$slots {
                let mut b = b.clone();
                b.slot.name = rename(&b.slot.name, &names.$namespace);
                kernel.$slots.push(b.slot.clone());
                bindings.$slots.push(b);
            }
        };
    }
    append!(accessors, accessors);
    append!(masks, windows);
    append!(params, params);
    for s in &producer.domains {
        let s = DomainSlot {
            name: rename(&s.name, &names.windows),
            ..s.clone()
        };
        kernel.domains.push(s.clone());
        bindings.domains.push(s);
    }
    shift
}

/// The slot names of the consumer, by namespace.
pub(super) struct Names {
    accessors: Vec<String>,
    windows: Vec<String>,
    params: Vec<String>,
}

impl Names {
    fn of(k: &Kernel) -> Names {
        Names {
            accessors: k.accessors.iter().map(|s| s.name.clone()).collect(),
            windows: k
                .masks
                .iter()
                .map(|s| s.name.clone())
                .chain(k.domains.iter().map(|s| s.name.clone()))
                .collect(),
            params: k.params.iter().map(|s| s.name.clone()).collect(),
        }
    }

    /// `name`, or the producer's name and `name` when the consumer has a
    /// slot of that name, numbered on if that is taken too.
    fn unused(&self, producer: &str, name: &str, taken: &[String]) -> String {
        let all = || {
            self.accessors
                .iter()
                .chain(&self.windows)
                .chain(&self.params)
        };
        if !taken.iter().any(|t| t == name) && !all().any(|t| t == name) {
            return name.to_string();
        }
        let base = format!("{}_{name}", producer.to_lowercase());
        (0..)
            .map(|i| {
                if i == 0 {
                    base.clone()
                } else {
                    format!("{base}_{i}")
                }
            })
            .find(|n| !all().any(|t| t == n))
            .unwrap_or(base)
    }
}

/// True when every read of accessor `acc` in `b` is at offset `(0, 0)`.
fn reads_only_centre(b: &Block, acc: usize) -> bool {
    let mut ok = true;
    visit_block(b, &mut |e| {
        if let ExprKind::Read { acc: a, dx, dy } = &e.kind {
            if *a == acc && !(is_zero(dx) && is_zero(dy)) {
                ok = false;
            }
        }
    });
    ok
}

fn is_zero(e: &Expr) -> bool {
    matches!(e.kind, ExprKind::Const(Literal::Int(0)))
}

/// Calls `f` on every expression of `b`, outermost first.
pub(super) fn visit_block(b: &Block, f: &mut impl FnMut(&Expr)) {
    for s in &b.stmts {
        match s {
            Stmt::Let { value, .. } | Stmt::Assign { value, .. } | Stmt::Expr(value) => {
                visit_expr(value, f)
            }
            Stmt::If { cond, then, els } => {
                visit_expr(cond, f);
                visit_block(then, f);
                visit_block(els, f);
            }
            Stmt::For { body, .. } | Stmt::Iterate { body, .. } => visit_block(body, f),
        }
    }
    if let Some(r) = &b.result {
        visit_expr(r, f);
    }
}

fn visit_expr(e: &Expr, f: &mut impl FnMut(&Expr)) {
    f(e);
    match &e.kind {
        ExprKind::Const(_) | ExprKind::Param(_) | ExprKind::Var(_) | ExprKind::X | ExprKind::Y => {}
        ExprKind::Read { dx, dy, .. } | ExprKind::MaskCoef { dx, dy, .. } => {
            visit_expr(dx, f);
            visit_expr(dy, f);
        }
        ExprKind::Unary { arg, .. } | ExprKind::Cast(arg) | ExprKind::Lane { arg, .. } => {
            visit_expr(arg, f)
        }
        ExprKind::Binary { lhs, rhs, .. } => {
            visit_expr(lhs, f);
            visit_expr(rhs, f);
        }
        ExprKind::Call { args, .. } | ExprKind::MakeVec(args) => {
            args.iter().for_each(|a| visit_expr(a, f))
        }
        ExprKind::If { cond, then, els } => {
            visit_expr(cond, f);
            visit_block(then, f);
            visit_block(els, f);
        }
        ExprKind::Reduce { body, .. } => visit_block(body, f),
    }
}

/// Rewrites every expression of a block in place, innermost first.
pub(super) trait Rewrite {
    /// Rewrites one expression whose operands are already rewritten.
    fn rewrite(&self, e: &mut Expr);
    /// Rewrites a variable (in `let`, assignments, loops and windows).
    fn var(&self, v: &mut VarId) {
        let _ = v;
    }
    /// Rewrites a window's slot index.
    fn window(&self, w: &mut Window) {
        let _ = w;
    }

    fn block(&self, b: &mut Block) {
        for s in &mut b.stmts {
            self.stmt(s);
        }
        if let Some(r) = &mut b.result {
            self.expr(r);
        }
    }

    fn stmt(&self, s: &mut Stmt) {
        match s {
            Stmt::Let { var, value } | Stmt::Assign { var, value } => {
                self.var(var);
                self.expr(value);
            }
            Stmt::Expr(value) => self.expr(value),
            Stmt::If { cond, then, els } => {
                self.expr(cond);
                self.block(then);
                self.block(els);
            }
            Stmt::For { var, body, .. } => {
                self.var(var);
                self.block(body);
            }
            Stmt::Iterate {
                window,
                dx,
                dy,
                body,
            } => {
                self.window(window);
                self.var(dx);
                self.var(dy);
                self.block(body);
            }
        }
    }

    fn expr(&self, e: &mut Expr) {
        match &mut e.kind {
            ExprKind::Const(_)
            | ExprKind::Param(_)
            | ExprKind::Var(_)
            | ExprKind::X
            | ExprKind::Y => {}
            ExprKind::Read { dx, dy, .. } | ExprKind::MaskCoef { dx, dy, .. } => {
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
                args.iter_mut().for_each(|a| self.expr(a))
            }
            ExprKind::If { cond, then, els } => {
                self.expr(cond);
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
                self.window(window);
                self.var(dx);
                self.var(dy);
                self.block(body);
            }
        }
        self.rewrite(e);
    }
}

/// Moves the producer's slots and variables after the consumer's.
pub(super) struct Shift {
    pub(super) accessors: usize,
    pub(super) masks: usize,
    pub(super) domains: usize,
    pub(super) params: usize,
    pub(super) vars: u32,
}

impl Rewrite for Shift {
    fn rewrite(&self, e: &mut Expr) {
        match &mut e.kind {
            ExprKind::Read { acc, .. } => *acc += self.accessors,
            ExprKind::MaskCoef { mask, .. } => *mask += self.masks,
            ExprKind::Param(p) => *p += self.params,
            ExprKind::Var(v) => self.var(v),
            _ => {}
        }
    }
    fn var(&self, v: &mut VarId) {
        v.0 += self.vars;
    }
    fn window(&self, w: &mut Window) {
        match w {
            Window::Mask(m) => *m += self.masks,
            Window::Domain(d) => *d += self.domains,
        }
    }
}

/// Replaces the consumer's reads of the intermediate by the local holding
/// the producer's value, and renumbers the accessors after it.
struct Replace {
    acc: usize,
    local: VarId,
}

impl Rewrite for Replace {
    fn rewrite(&self, e: &mut Expr) {
        if let ExprKind::Read { acc, .. } = &mut e.kind {
            if *acc == self.acc {
                e.kind = ExprKind::Var(self.local);
            } else if *acc > self.acc {
                *acc -= 1;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::evaluate;
    use crate::{
        kernel_body, Accessor, Boundary, Domain, Image, IterationSpace, Kernel, KernelFields, Mask,
        Rect,
    };

    #[derive(Kernel)]
    #[kernel(output = f32)]
    struct Blur {
        input: Accessor<f32>,
        window: Domain,
        scale: f32,
    }

    #[kernel_body]
    impl Blur {
        fn kernel(&self) -> f32 {
            let s = reduce(&self.window, Sum, |dx, dy| self.input.at(dx, dy));
            s * self.scale
        }
    }

    #[derive(Kernel)]
    #[kernel(output = f32)]
    struct Sharpen {
        input: Accessor<f32>,
        blurred: Accessor<f32>,
        scale: f32,
    }

    #[kernel_body]
    impl Sharpen {
        fn kernel(&self) -> f32 {
            let d = self.input() - self.blurred();
            if d > 0.0 {
                self.input() + self.scale * d
            } else {
                self.blurred() * 0.5
            }
        }
    }

    #[derive(Kernel)]
    #[kernel(output = f32)]
    struct Shifted {
        input: Accessor<f32>,
        mask: Mask<f32>,
    }

    #[kernel_body]
    impl Shifted {
        fn kernel(&self) -> f32 {
            convolve(&self.mask, Sum, |dx, dy| {
                self.mask.at(dx, dy) * self.input.at(dx, dy)
            }) + self.input.at(1, 0)
        }
    }

    fn image(w: usize, h: usize, salt: usize) -> Image<f32> {
        Image::from_fn(w, h, |x, y| ((x * 7 + y * 13 + salt) % 19) as f32 * 0.25).unwrap()
    }

    #[test]
    fn a_folded_pair_equals_the_two_kernels_in_turn() {
        for (w, h) in [(1, 1), (3, 2), (17, 9)] {
            let input = image(w, h, 3);
            let blurred = Image::<f32>::new(w, h).unwrap();
            let blur = Blur {
                input: Accessor::new(&input).with_boundary(Boundary::Mirror),
                window: Domain::new(3, 3).unwrap(),
                scale: 1.0 / 9.0,
            };
            let sharpen = Sharpen {
                input: Accessor::new(&input),
                blurred: Accessor::new(&blurred),
                scale: 0.75,
            };
            let (p, c) = (blur.ir().unwrap(), sharpen.ir().unwrap());
            let (pb, cb) = (blur.bindings(), sharpen.bindings());
            // Two launches.
            evaluate(&p, &pb, &*blurred.to_dyn(), Rect::full(w, h)).unwrap();
            let two = Image::<f32>::new(w, h).unwrap();
            evaluate(&c, &cb, &*two.to_dyn(), Rect::full(w, h)).unwrap();
            // One.
            let (k, b) = fold(&p, &pb, &c, &cb, 1).expect("foldable");
            assert_eq!(k.accessors.len(), 2);
            assert_eq!(
                k.params[1].name, "blur_scale",
                "renamed after the consumer's"
            );
            let one = Image::<f32>::new(w, h).unwrap();
            evaluate(&k, &b, &*one.to_dyn(), Rect::full(w, h)).unwrap();
            assert_eq!(one.to_vec().unwrap(), two.to_vec().unwrap(), "{w}x{h}");
        }
    }

    #[test]
    fn reads_off_the_centre_are_not_folded() {
        let input = image(8, 8, 1);
        let mid = Image::<f32>::new(8, 8).unwrap();
        let blur = Blur {
            input: Accessor::new(&input),
            window: Domain::new(3, 3).unwrap(),
            scale: 0.5,
        };
        let shifted = Shifted {
            input: Accessor::new(&mid),
            mask: Mask::new([[1.0, 2.0, 1.0]]).unwrap(),
        };
        let (p, c) = (blur.ir().unwrap(), shifted.ir().unwrap());
        assert!(fold(&p, &blur.bindings(), &c, &shifted.bindings(), 0).is_none());
        let _ = IterationSpace::full(&mid);
    }
}
