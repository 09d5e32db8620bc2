//! Whether a body's `min` and `max` can be the plain compare-and-select.
//!
//! Rust's `a.min(b)` returns the other operand when one is NaN, which on
//! x86 costs a compare and a blend beside each `minps` (a 3x3 median's
//! sorting network of 38 such operations spends most of its time there).
//! Where no operand can be NaN or a negative zero, one `minps` gives the
//! same bits ([`hipacc_core::cpu::Extremes`]). This module finds the bodies
//! where that can be proved at launch: every float operand of every `min`
//! and `max` is built from accessor reads by `min`, `max`, `abs`, `floor`,
//! `signum`, `clamp`, selection and widening only (never by arithmetic,
//! which makes NaN from infinities and negative zeros from products, nor
//! by negation, `ceil` or `round`, which make negative zeros, nor from
//! mask coefficients, which are not checked), from constants and scalar
//! parameters that are neither NaN nor negative zero (parameters checked
//! at each launch), and from variables that only ever hold such values.
//! Then an interior row whose source rows hold neither
//! ([`super::row_scan`]) runs the plain form.

use hipacc_core::ir::{
    Block, Expr, ExprKind, Intrinsic, Kernel, Literal, ReduceOp, Scalar4, ScalarType, Stmt, Value,
    VarId,
};
use hipacc_core::Interpolation;

#[cfg(test)]
thread_local! {
    /// Interior rows run with plain `min` and `max` on this thread.
    pub(super) static PLAIN_ROWS: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

/// What a launch checks before running an interior row with plain `min`
/// and `max`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Checked {
    /// The accessors (slot indices) whose source rows must hold neither
    /// NaN nor negative zero.
    pub(crate) accessors: Vec<usize>,
    /// The scalar parameters (slot indices) that must be neither.
    pub(crate) params: Vec<usize>,
}

impl Checked {
    /// Whether the launch's parameter values allow the plain form.
    pub(crate) fn params_allow(&self, params: &[hipacc_core::kernel::ParamBinding]) -> bool {
        self.params.iter().all(|&p| plain_value(&params[p].value))
    }
}

/// Neither NaN nor negative zero, in any lane.
fn plain_value(v: &Value) -> bool {
    let plain = |f: f64| !f.is_nan() && f.to_bits() != (-0.0_f64).to_bits();
    match *v {
        Value::F32(f) => plain(f64::from(f)),
        Value::F64(f) => plain(f),
        Value::Vec4(lanes) => lanes.iter().all(|l| match *l {
            Scalar4::F32(f) => plain(f64::from(f)),
            Scalar4::F64(f) => plain(f),
            _ => true,
        }),
        _ => true,
    }
}

/// What a launch must check before running `ir`'s interior with plain
/// `min` and `max`; `None` when the body has no float `min`/`max` or one
/// whose operands could be NaN or negative zero with pixels and parameters
/// that are neither.
pub(crate) fn checked(ir: &Kernel) -> Option<Checked> {
    let mut defs = Vec::new();
    block_defs(&ir.body, &mut defs);
    let mut clean = Clean {
        vars: vec![true; ir.vars.len()],
        reads: Vec::new(),
        params: Vec::new(),
    };
    // Variables start clean and only ever turn dirty: a fixpoint in at
    // most one round per variable.
    loop {
        let mut changed = false;
        for &(var, value) in &defs {
            let slot = var.0 as usize;
            if clean.vars[slot] && !clean.expr(value) {
                clean.vars[slot] = false;
                changed = true;
            }
        }
        if !changed {
            break;
        }
    }
    let mut extremes = 0;
    if !block_extremes(&ir.body, &mut clean, &mut extremes) || extremes == 0 {
        return None;
    }
    let mut scanned: Vec<usize> = clean.reads;
    scanned.sort_unstable();
    scanned.dedup();
    scanned.retain(|&a| ir.accessors[a].pixel.scalar.is_float());
    // Interpolated reads blend pixels: NaN from infinities.
    let blended = scanned
        .iter()
        .any(|&a| ir.accessors[a].interpolation != Interpolation::None);
    let mut params = clean.params;
    params.sort_unstable();
    params.dedup();
    (!blended).then_some(Checked {
        accessors: scanned,
        params,
    })
}

/// Every `let` and assignment of `block`, nested ones included.
fn block_defs<'a>(block: &'a Block, out: &mut Vec<(VarId, &'a Expr)>) {
    for stmt in &block.stmts {
        match stmt {
            Stmt::Let { var, value } | Stmt::Assign { var, value } => {
                out.push((*var, value));
                expr_defs(value, out);
            }
            Stmt::If { cond, then, els } => {
                expr_defs(cond, out);
                block_defs(then, out);
                block_defs(els, out);
            }
            Stmt::For { body, .. } | Stmt::Iterate { body, .. } => block_defs(body, out),
            Stmt::Expr(e) => expr_defs(e, out),
        }
    }
    if let Some(e) = &block.result {
        expr_defs(e, out);
    }
}

fn expr_defs<'a>(e: &'a Expr, out: &mut Vec<(VarId, &'a Expr)>) {
    match &e.kind {
        ExprKind::If { cond, then, els } => {
            expr_defs(cond, out);
            block_defs(then, out);
            block_defs(els, out);
        }
        ExprKind::Reduce { body, .. } => block_defs(body, out),
        _ => children(e).for_each(|c| expr_defs(c, out)),
    }
}

/// The direct sub-expressions of `e` (not those inside its blocks).
fn children(e: &Expr) -> impl Iterator<Item = &Expr> {
    let v: Vec<&Expr> = match &e.kind {
        ExprKind::Read { dx, dy, .. } | ExprKind::MaskCoef { dx, dy, .. } => vec![dx, dy],
        ExprKind::Unary { arg, .. } | ExprKind::Cast(arg) | ExprKind::Lane { arg, .. } => {
            vec![arg]
        }
        ExprKind::Binary { lhs, rhs, .. } => vec![lhs, rhs],
        ExprKind::Call { args, .. } | ExprKind::MakeVec(args) => args.iter().collect(),
        ExprKind::If { cond, .. } => vec![cond],
        _ => Vec::new(),
    };
    v.into_iter()
}

/// Checks every float `min`/`max` of `block` (counting them in `n`):
/// false at the first whose operands may be NaN.
fn block_extremes(block: &Block, clean: &mut Clean, n: &mut usize) -> bool {
    block.stmts.iter().all(|stmt| match stmt {
        Stmt::Let { value, .. } | Stmt::Assign { value, .. } | Stmt::Expr(value) => {
            expr_extremes(value, clean, n)
        }
        Stmt::If { cond, then, els } => {
            expr_extremes(cond, clean, n)
                && block_extremes(then, clean, n)
                && block_extremes(els, clean, n)
        }
        Stmt::For { body, .. } | Stmt::Iterate { body, .. } => block_extremes(body, clean, n),
    }) && block
        .result
        .as_ref()
        .is_none_or(|e| expr_extremes(e, clean, n))
}

fn expr_extremes(e: &Expr, clean: &mut Clean, n: &mut usize) -> bool {
    if let ExprKind::Call {
        func: Intrinsic::Min | Intrinsic::Max,
        args,
    } = &e.kind
    {
        if e.ty.scalar.is_float() {
            *n += 1;
            if !args.iter().all(|a| clean.expr(a)) {
                return false;
            }
        }
    }
    match &e.kind {
        ExprKind::If { cond, then, els } => {
            expr_extremes(cond, clean, n)
                && block_extremes(then, clean, n)
                && block_extremes(els, clean, n)
        }
        ExprKind::Reduce { body, .. } => block_extremes(body, clean, n),
        _ => children(e).all(|c| expr_extremes(c, clean, n)),
    }
}

/// Which values can be neither NaN nor negative zero when the pixels read
/// are neither.
struct Clean {
    /// Per variable: every value it is given is clean.
    vars: Vec<bool>,
    /// The accessors read by clean expressions.
    reads: Vec<usize>,
    /// The float parameters clean expressions use.
    params: Vec<usize>,
}

impl Clean {
    fn expr(&mut self, e: &Expr) -> bool {
        if !e.ty.scalar.is_float() {
            // Integers and booleans are never NaN.
            return true;
        }
        match &e.kind {
            ExprKind::Const(Literal::Float(bits)) => {
                let v = f64::from_bits(*bits);
                !v.is_nan() && v.to_bits() != (-0.0_f64).to_bits()
            }
            ExprKind::Const(_) => true,
            ExprKind::Var(v) => self.vars[v.0 as usize],
            ExprKind::Param(p) => {
                self.params.push(*p);
                true
            }
            ExprKind::Read { acc, .. } => {
                self.reads.push(*acc);
                true
            }
            // From an integer: never NaN, zero positive; `f32` to `f64`:
            // exact.
            ExprKind::Cast(arg) => {
                !arg.ty.scalar.is_float() || (arg.ty.scalar == ScalarType::F32 && self.expr(arg))
            }
            ExprKind::Lane { arg, .. } => self.expr(arg),
            ExprKind::Call { func, args } => {
                matches!(
                    func,
                    Intrinsic::Min
                        | Intrinsic::Max
                        | Intrinsic::Abs
                        | Intrinsic::Floor
                        | Intrinsic::Clamp
                        | Intrinsic::Signum
                ) && args.iter().all(|a| self.expr(a))
            }
            ExprKind::MakeVec(args) => args.iter().all(|a| self.expr(a)),
            ExprKind::If { then, els, .. } => self.block_value(then) && self.block_value(els),
            ExprKind::Reduce {
                op: ReduceOp::Min | ReduceOp::Max,
                body,
                ..
            } => self.block_value(body),
            _ => false,
        }
    }

    /// Whether `block`'s value is clean.
    fn block_value(&mut self, block: &Block) -> bool {
        block.result.as_ref().is_some_and(|e| self.expr(e))
    }
}

#[cfg(test)]
mod tests {
    use super::{checked, Checked, PLAIN_ROWS};
    use crate::prelude::*;
    use hipacc_core::ir::evaluate_kernel;
    use hipacc_core::{Boundary, Kernel};

    /// A median of three, clamped from below by another row's pixel and
    /// from above by a constant, through `abs` and `floor`: every operand
    /// comes from reads, so the plain form applies.
    #[derive(Kernel)]
    #[kernel(output = f32)]
    struct Ranked {
        input: Accessor<f32>,
    }

    #[kernel_body]
    impl Ranked {
        fn kernel(&self) -> f32 {
            let a = self.input.at(-1, 0);
            let b = self.input.at(0, 0);
            let c = self.input.at(1, -1);
            let lo = a.min(b);
            let hi = a.max(b);
            let mut m = lo.max(hi.min(c));
            if m > 1.0 {
                m = m.abs().floor();
            }
            m.max(self.input.at(0, 1)).min(3.5)
        }
    }

    /// A clamp of the pixel between two parameters, and a third pixel's
    /// floor below the parameter `hi`.
    #[derive(Kernel)]
    #[kernel(output = f32)]
    struct Clamped {
        input: Accessor<f32>,
        lo: f32,
        hi: f32,
    }

    #[kernel_body]
    impl Clamped {
        fn kernel(&self) -> f32 {
            let v = self.input.at(0, 0).max(self.lo).min(self.hi);
            v.max(self.input.at(1, 1).floor().min(self.hi))
        }
    }

    /// A difference inside `min`: NaN from infinities, so never plain.
    #[derive(Kernel)]
    #[kernel(output = f32)]
    struct Spread {
        input: Accessor<f32>,
    }

    #[kernel_body]
    impl Spread {
        fn kernel(&self) -> f32 {
            (self.input.at(1, 0) - self.input.at(-1, 0)).min(self.input.at(0, 1))
        }
    }

    /// A negation inside `max`: a negative zero from a positive one.
    #[derive(Kernel)]
    #[kernel(output = f32)]
    struct Negated {
        input: Accessor<f32>,
    }

    #[kernel_body]
    impl Negated {
        fn kernel(&self) -> f32 {
            (-self.input.at(0, 0)).max(self.input.at(0, 1))
        }
    }

    /// `w x h` pixels in `[-4, 4)` with positive zeros among them, and a
    /// NaN, a negative zero and infinities in the rows `odd`.
    fn image(w: usize, h: usize, odd: &[usize]) -> Image<f32> {
        let mut px: Vec<f32> = (0..w * h)
            .map(|i| {
                let v = (i as u32).wrapping_mul(2_654_435_761) >> 8;
                match v % 13 {
                    0 => 0.0,
                    _ => (v % 800) as f32 / 100.0 - 4.0,
                }
            })
            .collect();
        for &y in odd {
            px[y * w] = f32::INFINITY;
            px[y * w + w / 2] = if y % 2 == 0 { f32::NAN } else { -0.0 };
            px[y * w + w - 1] = f32::NEG_INFINITY;
        }
        Image::from_vec(w, h, px).unwrap()
    }

    /// Runs `k` over a `w x h` output on this thread, checks every output
    /// bit against the evaluator's, and returns the rows run plain.
    fn exact_run<K: Kernel<Output = f32>>(k: &K, w: usize, h: usize, at: &str) -> usize {
        let out = Image::<f32>::new(w, h).unwrap();
        let want = Image::<f32>::new(w, h).unwrap();
        let before = PLAIN_ROWS.with(|n| n.get());
        crate::cpu::execute(k, &IterationSpace::full(&out), usize::MAX).unwrap();
        let plain = PLAIN_ROWS.with(|n| n.get()) - before;
        evaluate_kernel(k, &IterationSpace::full(&want)).unwrap();
        let (got, want) = (out.to_vec().unwrap(), want.to_vec().unwrap());
        for (i, (g, e)) in got.iter().zip(&want).enumerate() {
            let (x, y) = (i % w, i / w);
            assert_eq!(g.to_bits(), e.to_bits(), "{at} ({x}, {y}): {g} against {e}");
        }
        plain
    }

    /// The plain form runs exactly on the interior rows whose source rows
    /// hold neither NaN nor negative zero, and every output has the
    /// evaluator's bits: on every boundary mode, odd sizes, and source rows
    /// with NaN, negative zeros and infinities.
    #[test]
    fn plain_min_max_give_the_exact_bits_where_the_scan_allows() {
        let modes = [
            Boundary::Clamp,
            Boundary::Repeat,
            Boundary::Mirror,
            Boundary::MirrorInterior,
            Boundary::Constant(-0.0),
        ];
        for (w, h) in [(1, 1), (5, 3), (19, 11), (37, 29)] {
            let odd: Vec<usize> = [4, 9, 20].into_iter().filter(|&y| y < h).collect();
            let input = image(w, h, &odd);
            for (m, &mode) in modes.iter().enumerate() {
                let k = Ranked {
                    input: Accessor::new(&input).with_boundary(mode),
                };
                let plain = exact_run(&k, w, h, &format!("{w}x{h} mode {m}"));
                // Interior rows read rows y - 1 ..= y + 1 and need a column
                // on each side.
                let expected = match w >= 3 {
                    true => (1..h.saturating_sub(1))
                        .filter(|y| !odd.iter().any(|o| o + 1 >= *y && *o <= y + 1))
                        .count(),
                    false => 0,
                };
                assert_eq!(plain, expected, "{w}x{h} mode {m}: plain rows");
            }
        }
    }

    /// Parameters inside `min`/`max` are checked at launch: a NaN or a
    /// negative zero keeps every row exact; either way every output has
    /// the evaluator's bits.
    #[test]
    fn parameters_are_checked_at_launch() {
        let (w, h) = (23, 13);
        let input = image(w, h, &[6]);
        for (lo, hi, plain) in [
            (0.5, 2.0, true),
            (-0.0, 2.0, false),
            (f32::NAN, 2.0, false),
            (-1.0, f32::NAN, false),
            (0.0, f32::INFINITY, true),
        ] {
            let k = Clamped {
                input: Accessor::new(&input).with_boundary(Boundary::Mirror),
                lo,
                hi,
            };
            let rows = exact_run(&k, w, h, &format!("lo {lo} hi {hi}"));
            // Interior rows 0..=11 read rows y..=y + 1; row 6 holds a NaN.
            let expected = if plain {
                (0..h - 1).filter(|&y| y != 5 && y != 6).count()
            } else {
                0
            };
            assert_eq!(rows, expected, "lo {lo} hi {hi}: plain rows");
        }
    }

    /// Only bodies whose `min`/`max` operands come from reads and
    /// parameters by order-keeping operations are planned plain.
    #[test]
    fn operands_from_arithmetic_or_negation_are_not_plain() {
        let input = image(8, 8, &[]);
        let acc = || Accessor::new(&input);
        let plan = |ir: hipacc_core::ir::Kernel| checked(&ir);
        let reads = |params: Vec<usize>| Checked {
            accessors: vec![0],
            params,
        };
        assert_eq!(
            plan(Ranked { input: acc() }.ir().unwrap()),
            Some(reads(vec![]))
        );
        let k = Clamped {
            input: acc(),
            lo: 0.0,
            hi: 1.0,
        };
        assert_eq!(plan(k.ir().unwrap()), Some(reads(vec![0, 1])));
        assert_eq!(plan(Spread { input: acc() }.ir().unwrap()), None);
        assert_eq!(plan(Negated { input: acc() }.ir().unwrap()), None);
    }
}
