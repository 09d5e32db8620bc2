//! Window reductions inside any body, a row at a time: weighted sums
//! in two passes, other windows tap by tap.
//!
//! A body such as Harris' response
//! `let sxx = convolve(m, Sum, |dx, dy| m.at(dx, dy) * (ix.at(dx, dy) * ix.at(dx, dy)))`
//! (three such sums, then `sxx · syy - sxy² - k (sxx + syy)²`) evaluates
//! every product `w · h` times per pixel when run directly: 75 products and
//! 75 multiply-adds for three 5x5 sums. Where each sum's summand is a
//! point-wise expression of reads at the window offset (`E(dx, dy)`) and
//! the mask has rank 1, the sum is `Σ_j ky[j] Σ_i kx[i] E(x + i, y + j)`:
//! `E` once per source pixel, a horizontal pass of `w` taps and a vertical
//! pass of `h` taps (Halide's schedule of such a pipeline). This module
//! recognises such bodies in the IR, whatever the kernel, and runs them
//! that way: the summands, the passes and the expression around the sums
//! are evaluated a row at a time by a small vector interpreter whose every
//! step is a slice loop.
//!
//! Taken: f32 kernels whose body is `let` statements and a result built
//! from constants, f32 parameters, reads at offset `(0, 0)`, `+ - * /`,
//! negation, `abs`, `sqrt`, `min`, `max`, `mul_add`, and sums
//! `convolve(m, Sum, |dx, dy| m.at(dx, dy) * E)` (either factor order) of
//! odd-sized masks whose summand `E` is built from the same operations over
//! reads `a.at(dx, dy)` of non-interpolating f32 accessors. The masks must
//! have rank 1 at launch ([`super::separable::factors`]). Unweighted sums
//! `reduce(d, Sum, |dx, dy| E)` (or `convolve` without the coefficient)
//! over every position of an odd-sized domain or mask are boxes: two
//! passes whose weights are all 1. A structure tensor over a 5x5 domain
//! (Shi-Tomasi corners) then evaluates its three products once per source
//! pixel instead of 25 times per output pixel (measured in the benches'
//! corner pipeline at 2048², 2 threads: 16 to 7.5 ms; 3x3 windows about
//! even).
//!
//! Reads follow the accessor's boundary condition as in the direct path:
//! each accessor row a sum needs is gathered through the condition (row
//! and columns remapped, `Constant` reads its constant), so `E` outside the
//! image is `E` of the values the direct body would read there. A
//! two-pass sum's summand reads the image's row (remapped) in place for
//! the columns whose windows lie inside the region, and gathers only the
//! few at each end ([`Strip::horizontal_in_place`]).
//!
//! Where a launch's windows are not written out in the direct path (see
//! [`super::window_shape`]: a run-time `Domain` or `Mask<T>` other than
//! 3x3, 5x5 or 7x7), the module also runs reductions `reduce(d, op, |dx,
//! dy| E)` over any domain or mask with `op` one of `Sum`, `Min` and
//! `Max`, and mask sums whose mask has no rank-1 factors: per output row,
//! for each window row, `E` over the source row and then every tap of that
//! window row across the output row ([`super::taps`]). Each pixel then
//! combines the same terms in the same order as the direct path, so those
//! results are the same bits.
//!
//! `iterate(w, |dx, dy| { .. })` statements whose bodies are `let`s and
//! assignments of f32 values built from the same operations, `exp`, mask
//! coefficients at the tap, values of the tap computed from the window
//! offsets ([`tap`]: a spatial weight `-(dx² + dy²) · s`) and variables of
//! the body around them run the
//! same way where the direct path loops over taps per pixel (run-time
//! windows it does not write out) or calls the C library's `exp` per tap:
//! the window rows are gathered once per output row, then, for blocks of
//! [`WALK_LANES`] columns, the body runs tap by tap (row-major, as the
//! direct path) over the block, each tap's assignments written back to the
//! variables' rows. Chains of the body whose intermediate values nothing
//! else reads (a squared difference, `exp` of a scaled or negated value
//! or square times a scalar, an update by a product) run as one pass each
//! ([`fuse`]): a Gaussian range weight `k · exp(-(v - c)² · s)` is one. A body that is
//! then one such weight and sums of it (a bilateral filter's) runs as a
//! window loop with the sums in registers ([`accumulate`]), where the
//! weight of tap `-t` is loaded, not computed: tap `t`'s at the pixel
//! `-t` away, the same value ([`mirror`]). Without `exp` each pixel runs the same f32 operations in
//! the same order: the same bits as the direct path. `exp` runs as a
//! vectorised polynomial within 2 ulp of `f32::exp` ([`super::exp`]): a
//! bilateral weight then moves by about 3 ε relative, its weighted mean by
//! about `6 ε max |v|` (checked at `64 ε (1 + |e|)` against the evaluator).
//!
//! The expression around the sums runs as the kernel's compiled body
//! where it can ([`Program::given`], `super::given`): one vectorised loop
//! per row instead of a pass per operation, with the same bits. Where
//! every sum runs in two passes of one height of 3, 5 or 7 rows, the body
//! also runs their vertical passes ([`Sums::Rows`]), so no row of sums is
//! written and read back. The rows are read in order, top to bottom and
//! left to right, which the hardware prefetchers follow: a software
//! prefetch of the next row cost time here (see
//! `docs/measured-by-hand.md`, unsharp1).
//!
//! The result of a two-pass sum equals the direct one up to rounding: the expression around
//! the sums and `E` are the same f32 operations, and a sum of `n` terms
//! regrouped into two passes (each tap a fused multiply-add) differs from
//! the direct `n`-term sum by at most `(n + 4) ε Σ |w E|` (the conformance
//! bound of a reduction). Rows are computed independently of the strip
//! they belong to, so fused and unfused runs agree bit for bit.

use super::exp::{exp_row, exp_scaled_row};
use super::separable::factors;
use super::simd::dispatch;
use super::taps::{fold_row, Fold};
use crate::Result;
use hipacc_core::image::read_as;
use hipacc_core::ir::{self, BinaryOp, Expr, ExprKind, Intrinsic, ReduceOp, Type, UnaryOp, Window};
use hipacc_core::{Bindings, BoundaryMode, Interpolation, Rect};
use std::cell::RefCell;
use std::collections::HashMap;
use std::ops::Range;

mod accumulate;
mod fuse;
mod mirror;
mod tap;

/// Output columns an `iterate` body runs over per step: its rows (about
/// 1 KiB each) then stay in the first-level cache across the taps, where
/// rows of a whole 2048-wide image did not.
const WALK_LANES: usize = 256;

/// One step of a [`Tape`]; step `i` writes row register `i`.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Op {
    /// A constant.
    Const(f32),
    /// Parameter slot.
    Param(usize),
    /// The accessor's row (at the window offset inside a sum, at offset 0
    /// around sums).
    Read(usize),
    /// The result of window sum `k`.
    Sum(usize),
    /// `-a`.
    Neg(usize),
    /// `a op b`.
    Bin(Bin, usize, usize),
    /// `a · b + c`, rounded once.
    MulAdd(usize, usize, usize),
    /// `|a|`.
    Abs(usize),
    /// `√a`.
    Sqrt(usize),
    /// `exp(a)`, within 2 ulp ([`super::exp`]).
    Exp(usize),
    /// `exp(a · s + t) · k` for scalar steps `s`, `t` and `k` (1, 0
    /// and 1 where `None`), `s` negated where `neg` and `t` where its
    /// flag is set: a chain of an `iterate` body fused into one pass
    /// ([`fuse`]).
    ExpScaled {
        a: fuse::Arg,
        neg: bool,
        s: Option<usize>,
        t: Option<(usize, bool)>,
        k: Option<usize>,
    },
    /// `(a op b)²`, the difference (or other binary step) squared in the
    /// same pass ([`fuse`]).
    Square(Bin, usize, usize),
    /// A copy of `a`: the own row of a variable that an `iterate` assigns.
    Copy(usize),
    /// Runs `iterate` `k` here, updating the rows of the variables it
    /// assigns (in the tape around the sums).
    Walk(usize),
    /// Row `a` of the tape around the sums (in an `iterate` body).
    Outer(usize),
    /// The mask coefficient at the tap (in an `iterate` body).
    Coef,
    /// Value `k` of the tap ([`tap`]): an expression of the window
    /// offsets, parameters and coefficient (in an `iterate` body).
    Tap(usize),
}

/// The binary operations of a [`Tape`].
#[derive(Clone, Copy, Debug, PartialEq)]
enum Bin {
    Add,
    Sub,
    Mul,
    Div,
    Min,
    Max,
}

/// A point-wise f32 expression as straight-line steps over rows.
#[derive(Clone, Debug, Default, PartialEq)]
struct Tape {
    ops: Vec<Op>,
}

impl Tape {
    fn push(&mut self, op: Op) -> usize {
        self.ops.push(op);
        self.ops.len() - 1
    }

    /// The accessor slots the tape reads, each once, in the order of
    /// their first read (without allocating: it runs per row).
    fn reads(&self) -> impl Iterator<Item = usize> + '_ {
        self.ops.iter().enumerate().filter_map(|(i, op)| match op {
            Op::Read(a) if !self.ops[..i].contains(op) => Some(*a),
            _ => None,
        })
    }
}

/// A window reduction of the body.
#[derive(Clone, Debug, PartialEq)]
struct Sum {
    window: Window,
    fold: Fold,
    /// Each term is the mask's coefficient times the summand (a mask
    /// `Sum` of `m.at(dx, dy) * E`).
    weighted: bool,
    summand: Tape,
}

/// An `iterate` of the body: its window, the body's steps run at every
/// tap across a row, and the variables it assigns as `(row in the tape
/// around the sums, body step of the value after the tap)`.
#[derive(Clone, Debug, PartialEq)]
struct Walk {
    window: Window,
    body: Tape,
    carried: Vec<(usize, usize)>,
    /// The offset variables `(dx, dy)`, and the expressions of the
    /// body's [`Op::Tap`] steps, computed once per tap ([`tap`]).
    offsets: (ir::VarId, ir::VarId),
    tap_values: Vec<Expr>,
    /// Assignments `v = v op x` (or `x op v`) applied in place to `v`'s
    /// row after each tap, instead of computed and copied back.
    updates: Vec<Update>,
    /// Per body step: not computed by `eval`: a constant, parameter or
    /// coefficient that only binary steps use, which take it as a scalar
    /// (see [`splat_only`]), or the step of an [`Update`].
    skip: Vec<bool>,
    /// The body as one weight and sums of it, run with the sums in
    /// registers ([`accumulate`]).
    accumulate: Option<accumulate::Accumulate>,
}

/// An assignment of an `iterate` body applied in place: the row of the
/// tape around it at `home` becomes `home op x` (`side` left) or
/// `x op home`, `x` being a computed step of the body.
#[derive(Clone, Debug, PartialEq)]
struct Update {
    home: usize,
    op: Bin,
    x: usize,
    side: Side,
    /// `x` not computed: its lanes are the product of these two steps,
    /// formed in the update's pass ([`fuse`]).
    product: Option<(usize, usize)>,
}

impl Walk {
    /// Whether the body calls `exp`, which the direct path runs as one
    /// library call per tap and pixel.
    fn calls_exp(&self) -> bool {
        self.body
            .ops
            .iter()
            .any(|op| matches!(op, Op::Exp(_) | Op::ExpScaled { .. }))
    }
}

/// A body that runs as window reductions and `iterate`s a row at a time
/// and an expression of their results.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Program {
    sums: Vec<Sum>,
    walks: Vec<Walk>,
    outer: Tape,
}

/// The expression around a program's sums as the kernel's compiled body
/// computes it (`hipacc_core::cpu::Given`): called per output row with
/// the row, the rows of the sums (from the space's first column) and the
/// output row.
pub(crate) type Outer<'o> = &'o (dyn Fn(usize, Sums<'_>, &mut [f32]) + Sync);

/// What the sums of one output row are given as to [`Outer`].
pub(crate) enum Sums<'r> {
    /// Per sum, its row of values.
    Values(&'r [&'r [f32]]),
    /// Per sum, the rows of its horizontal pass in window order and its
    /// vertical weights (all sums of one height, 3, 5 or 7): the body
    /// runs the vertical pass (`hipacc_core::cpu::GivenRows`).
    Rows(&'r [(&'r [&'r [f32]], &'r [f32])]),
}

impl Program {
    /// Whether the compiled body can compute the expression around the
    /// sums over `space` with `bindings`, from the sums' rows: no
    /// `iterate`s (their variables live in rows of the tape), no `exp`
    /// (the tape's is a vectorised polynomial, the body's the C library's,
    /// and each must give the bits of the other), at most
    /// [`hipacc_core::cpu::MAX_GIVEN`] sums, and every read of the
    /// expression (all at offset 0) inside its accessor's region, so the
    /// body reads unchecked.
    pub(crate) fn given(&self, bindings: &Bindings, space: Rect) -> bool {
        self.walks.is_empty()
            && self.sums.len() <= hipacc_core::cpu::MAX_GIVEN
            && !self
                .outer
                .ops
                .iter()
                .any(|op| matches!(op, Op::Exp(_) | Op::ExpScaled { .. }))
            && self.outer.reads().all(|a| {
                bindings.accessors.get(a).is_some_and(|b| {
                    b.region.width >= space.width && b.region.height >= space.height
                })
            })
    }
}

/// The program of `k`'s body, if it has the shape this module runs.
pub(crate) fn program(k: &ir::Kernel) -> Option<Program> {
    if k.output != Type::F32 {
        return None;
    }
    let mut c = Compiler {
        k,
        vars: HashMap::new(),
        sums: Vec::new(),
        walks: Vec::new(),
        scope: None,
        tap_values: Vec::new(),
        f32_params: k.params.iter().map(|p| p.ty == Type::F32).collect(),
    };
    let assigned = assigned_in_walks(&k.body.stmts);
    let mut outer = Tape::default();
    for stmt in &k.body.stmts {
        match stmt {
            ir::Stmt::Let { var, value } => {
                let mut slot = c.expr(value, &mut outer, None)?;
                if assigned.contains(var) {
                    slot = outer.push(Op::Copy(slot));
                }
                c.vars.insert(*var, slot);
            }
            ir::Stmt::Iterate {
                window,
                dx,
                dy,
                body,
            } => {
                // The body reads variables from their rows: those that
                // name a read or a sum get rows of their own.
                for slot in c.vars.values_mut() {
                    if matches!(outer.ops[*slot], Op::Read(_) | Op::Sum(_)) {
                        *slot = outer.push(Op::Copy(*slot));
                    }
                }
                let walk = c.walk(*window, (*dx, *dy), body)?;
                c.walks.push(walk);
                outer.push(Op::Walk(c.walks.len() - 1));
            }
            _ => return None,
        }
    }
    let result = k.body.result.as_ref()?;
    let last = c.expr(result, &mut outer, None)?;
    // `eval` returns the last step's row: a result naming an earlier step
    // (a variable) gets a copy at the end.
    if last + 1 != outer.ops.len() {
        outer.push(Op::Copy(last));
    }
    (!c.sums.is_empty() || !c.walks.is_empty()).then_some(Program {
        sums: c.sums,
        walks: c.walks,
        outer,
    })
}

/// The variables that `iterate` bodies among `stmts` assign.
fn assigned_in_walks(stmts: &[ir::Stmt]) -> Vec<ir::VarId> {
    stmts
        .iter()
        .filter_map(|s| match s {
            ir::Stmt::Iterate { body, .. } => Some(&body.stmts),
            _ => None,
        })
        .flatten()
        .filter_map(|s| match s {
            ir::Stmt::Assign { var, .. } => Some(*var),
            _ => None,
        })
        .collect()
}

/// Per step of `tape`: whether it is a scalar (constant, parameter or
/// coefficient) that only binary steps use, so that its row need not be
/// filled. The last step and the steps `carried` copies out are rows.
fn splat_only(tape: &Tape, carried: &[(usize, usize)]) -> Vec<bool> {
    let mut splat: Vec<bool> = tape.ops.iter().map(scalar_op).collect();
    if let Some(last) = splat.last_mut() {
        *last = false;
    }
    for &(_, step) in carried {
        splat[step] = false;
    }
    for op in tape.ops.iter().filter(|op| !matches!(op, Op::Bin(..))) {
        for j in operands(op) {
            splat[j] = false;
        }
    }
    splat
}

/// The steps `op` reads.
fn operands(op: &Op) -> Vec<usize> {
    match *op {
        Op::Neg(a) | Op::Abs(a) | Op::Sqrt(a) | Op::Exp(a) | Op::Copy(a) => vec![a],
        Op::Bin(_, a, b) => vec![a, b],
        Op::MulAdd(a, b, c) => vec![a, b, c],
        Op::ExpScaled { a, s, t, k, .. } => {
            let t = t.map(|(t, _)| t);
            a.rows().into_iter().chain(s).chain(t).chain(k).collect()
        }
        Op::Square(_, a, b) => vec![a, b],
        _ => Vec::new(),
    }
}

/// `step`, which a body assigns to the variable at `home`, as an
/// [`Update`] in place: a binary step of the variable's value before the
/// tap and a step computed in the body, whose value no other step reads.
/// Applied after the tap, as the copy it replaces, so every step of the
/// tap still reads the value from before it.
fn in_place(tape: &Tape, skip: &[bool], home: usize, step: usize) -> Option<Update> {
    let Op::Bin(op, a, b) = tape.ops[step] else {
        return None;
    };
    let is_home = |j: usize| tape.ops[j] == Op::Outer(home);
    let computed = |j: usize| {
        !skip[j]
            && !matches!(
                tape.ops[j],
                Op::Read(_) | Op::Sum(_) | Op::Outer(_) | Op::Walk(_)
            )
            && !scalar_op(&tape.ops[j])
    };
    let (x, side) = if is_home(a) && computed(b) {
        (b, Side::Left)
    } else if is_home(b) && computed(a) {
        (a, Side::Right)
    } else {
        return None;
    };
    let read = tape
        .ops
        .iter()
        .enumerate()
        .any(|(i, op)| i != step && operands(op).contains(&step));
    (!read).then_some(Update {
        home,
        op,
        x,
        side,
        product: None,
    })
}

/// Whether `op` is the same value in every lane.
fn scalar_op(op: &Op) -> bool {
    matches!(op, Op::Const(_) | Op::Param(_) | Op::Coef | Op::Tap(_))
}

struct Compiler<'k> {
    k: &'k ir::Kernel,
    /// `let` variables around the sums, by register.
    vars: HashMap<ir::VarId, usize>,
    sums: Vec<Sum>,
    walks: Vec<Walk>,
    /// Inside an `iterate` body: its window and its variables by step.
    scope: Option<(Window, HashMap<ir::VarId, usize>)>,
    /// Inside an `iterate` body: the expressions of its [`Op::Tap`]s.
    tap_values: Vec<Expr>,
    /// Per parameter slot: whether it is an f32 (a tap value may read it).
    f32_params: Vec<bool>,
}

impl Compiler<'_> {
    /// The walk of `iterate(window, |dx, dy| body)`: `let`s and
    /// assignments of f32 values.
    fn walk(
        &mut self,
        window: Window,
        offsets: (ir::VarId, ir::VarId),
        body: &ir::Block,
    ) -> Option<Walk> {
        match window {
            Window::Mask(m) => (self.k.masks.get(m)?.ty == Type::F32).then_some(())?,
            Window::Domain(d) => self.k.domains.get(d).map(|_| ())?,
        }
        body.result.is_none().then_some(())?;
        self.scope = Some((window, HashMap::new()));
        self.tap_values.clear();
        let mut tape = Tape::default();
        let mut carried = Vec::new();
        for stmt in &body.stmts {
            let (var, value, outer) = match stmt {
                ir::Stmt::Let { var, value } => (var, value, false),
                ir::Stmt::Assign { var, value } => (var, value, self.vars.contains_key(var)),
                _ => return None,
            };
            let mut step = self.expr(value, &mut tape, Some(offsets))?;
            // What is written back after each tap must be a row of its own.
            if outer && matches!(tape.ops[step], Op::Read(_) | Op::Outer(_)) {
                step = tape.push(Op::Copy(step));
            }
            self.scope.as_mut()?.1.insert(*var, step);
            if outer && !carried.contains(var) {
                carried.push(*var);
            }
        }
        let (_, locals) = self.scope.take()?;
        let carried = carried
            .iter()
            .map(|v| Some((*self.vars.get(v)?, *locals.get(v)?)))
            .collect::<Option<Vec<_>>>()?;
        let mut skip = splat_only(&tape, &carried);
        let mut updates = Vec::new();
        let mut copied = Vec::new();
        for (home, step) in carried {
            match in_place(&tape, &skip, home, step) {
                Some(u) => {
                    skip[step] = true;
                    updates.push(u);
                }
                None => copied.push((home, step)),
            }
        }
        fuse::chains(&mut tape, &mut skip, &mut updates, &copied);
        let accumulate = accumulate::recognise(&tape, &skip, &updates, &copied);
        Some(Walk {
            window,
            body: tape,
            carried: copied,
            offsets,
            tap_values: std::mem::take(&mut self.tap_values),
            updates,
            skip,
            accumulate,
        })
    }

    /// Appends `e` to `tape`, returning its register. `offsets` is the
    /// window offset variables inside a sum's summand.
    fn expr(
        &mut self,
        e: &Expr,
        tape: &mut Tape,
        offsets: Option<(ir::VarId, ir::VarId)>,
    ) -> Option<usize> {
        if let (Some(offsets), Some((window, _))) = (offsets, &self.scope) {
            let scope = tap::Scope {
                offsets,
                mask: match *window {
                    Window::Mask(m) => Some(m),
                    Window::Domain(_) => None,
                },
                f32_params: &self.f32_params,
            };
            if tap::is_tap_value(e, &scope) {
                self.tap_values.push(e.clone());
                return Some(tape.push(Op::Tap(self.tap_values.len() - 1)));
            }
        }
        if e.ty != Type::F32 {
            return None;
        }
        let is_var = |e: &Expr, v: ir::VarId| matches!(e.kind, ExprKind::Var(x) if x == v);
        let is_zero = |e: &Expr| matches!(&e.kind, ExprKind::Const(l) if l.as_f64() == 0.0);
        Some(match &e.kind {
            ExprKind::Const(l) => tape.push(Op::Const(l.as_f64() as f32)),
            ExprKind::Param(p) => {
                (self.k.params.get(*p)?.ty == Type::F32).then_some(())?;
                tape.push(Op::Param(*p))
            }
            ExprKind::Var(v) if offsets.is_none() => *self.vars.get(v)?,
            ExprKind::Var(v) if self.scope.is_some() => match self.scope.as_ref()?.1.get(v) {
                Some(&step) => step,
                None => tape.push(Op::Outer(*self.vars.get(v)?)),
            },
            ExprKind::MaskCoef { mask, dx, dy }
                if offsets.is_some_and(|(vx, vy)| is_var(dx, vx) && is_var(dy, vy))
                    && self
                        .scope
                        .as_ref()
                        .is_some_and(|(w, _)| *w == Window::Mask(*mask)) =>
            {
                tape.push(Op::Coef)
            }
            ExprKind::Read { acc, dx, dy } => {
                let slot = self.k.accessors.get(*acc)?;
                let ok = slot.pixel == Type::F32
                    && slot.interpolation == Interpolation::None
                    && match offsets {
                        Some((vx, vy)) => is_var(dx, vx) && is_var(dy, vy),
                        None => is_zero(dx) && is_zero(dy),
                    };
                ok.then_some(())?;
                tape.push(Op::Read(*acc))
            }
            ExprKind::Unary {
                op: UnaryOp::Neg,
                arg,
            } => {
                let a = self.expr(arg, tape, offsets)?;
                tape.push(Op::Neg(a))
            }
            ExprKind::Binary { op, lhs, rhs } => {
                let op = match op {
                    BinaryOp::Add => Bin::Add,
                    BinaryOp::Sub => Bin::Sub,
                    BinaryOp::Mul => Bin::Mul,
                    BinaryOp::Div => Bin::Div,
                    _ => return None,
                };
                let a = self.expr(lhs, tape, offsets)?;
                let b = self.expr(rhs, tape, offsets)?;
                tape.push(Op::Bin(op, a, b))
            }
            ExprKind::Call { func, args } => {
                let mut regs = Vec::with_capacity(args.len());
                for a in args {
                    regs.push(self.expr(a, tape, offsets)?);
                }
                let op = match (func, regs.as_slice()) {
                    (Intrinsic::Abs, &[a]) => Op::Abs(a),
                    (Intrinsic::Sqrt, &[a]) => Op::Sqrt(a),
                    (Intrinsic::Exp, &[a]) => Op::Exp(a),
                    (Intrinsic::Min, &[a, b]) => Op::Bin(Bin::Min, a, b),
                    (Intrinsic::Max, &[a, b]) => Op::Bin(Bin::Max, a, b),
                    (Intrinsic::MulAdd, &[a, b, c]) => Op::MulAdd(a, b, c),
                    _ => return None,
                };
                tape.push(op)
            }
            ExprKind::Reduce {
                window,
                op,
                dx,
                dy,
                body,
            } if offsets.is_none() => {
                let fold = match op {
                    ReduceOp::Sum => Fold::Sum,
                    ReduceOp::Min => Fold::Min,
                    ReduceOp::Max => Fold::Max,
                    _ => return None,
                };
                let result = body.result.as_ref()?;
                body.stmts.is_empty().then_some(())?;
                match window {
                    Window::Mask(m) => (self.k.masks.get(*m)?.ty == Type::F32).then_some(())?,
                    Window::Domain(d) => self.k.domains.get(*d).map(|_| ())?,
                }
                let is_coef = |e: &Expr| {
                    matches!(&e.kind, ExprKind::MaskCoef { mask: m, dx: a, dy: b }
                        if Window::Mask(*m) == *window && is_var(a, *dx) && is_var(b, *dy))
                };
                let weighted = match &result.kind {
                    ExprKind::Binary {
                        op: BinaryOp::Mul,
                        lhs,
                        rhs,
                    } if fold == Fold::Sum => {
                        if is_coef(lhs) {
                            Some(&**rhs)
                        } else if is_coef(rhs) {
                            Some(&**lhs)
                        } else {
                            None
                        }
                    }
                    _ => None,
                };
                let mut t = Tape::default();
                self.expr(weighted.unwrap_or(result), &mut t, Some((*dx, *dy)))?;
                self.sums.push(Sum {
                    window: *window,
                    fold,
                    weighted: weighted.is_some(),
                    summand: t,
                });
                tape.push(Op::Sum(self.sums.len() - 1))
            }
            _ => return None,
        })
    }
}

/// How a launch runs one window reduction.
enum Taps {
    /// A rank-1 mask sum: horizontal and vertical taps of two passes.
    Passes(Vec<f32>, Vec<f32>),
    /// Tap by tap: the window's width and, per window row from the top,
    /// its positions as `(column, coefficient)` (none for a row without
    /// enabled positions).
    Each {
        width: usize,
        rows: Vec<Vec<(usize, f32)>>,
    },
}

impl Taps {
    /// Columns of the window.
    fn width(&self) -> usize {
        match self {
            Taps::Passes(kx, _) => kx.len(),
            Taps::Each { width, .. } => *width,
        }
    }
}

/// The values of a launch: masks factored or laid out as taps,
/// parameters read.
pub(crate) struct Setup {
    /// Per sum.
    taps: Vec<Taps>,
    /// Per walk: [`Taps::Each`].
    walks: Vec<Taps>,
    /// Per walk: the values of its [`Op::Tap`]s at each tap, in the order
    /// of [`Taps::Each`]'s positions, all of a tap's together.
    walk_values: Vec<Vec<f32>>,
    /// Per walk: which taps share their weights ([`mirror`]).
    mirrors: Vec<Option<mirror::Plan>>,
    params: Vec<f32>,
}

/// The launch values of `program`, `None` where a reduction can run
/// neither in two passes nor, where `each` allows it, tap by tap (the
/// direct path runs).
pub(crate) fn setup(program: &Program, bindings: &Bindings, each: bool) -> Option<Setup> {
    let mut taps = Vec::with_capacity(program.sums.len());
    for s in &program.sums {
        taps.push(sum_taps(s, bindings, each)?);
    }
    let mut walks = Vec::with_capacity(program.walks.len());
    for w in &program.walks {
        // A walk without `exp` runs as fast directly where its window is
        // written out.
        (each || w.calls_exp()).then_some(())?;
        walks.push(each_taps(w.window, bindings)?);
    }
    let params: Vec<f32> = bindings
        .params
        .iter()
        .map(|p| p.value.as_f64() as f32)
        .collect();
    let walk_values = program
        .walks
        .iter()
        .zip(&walks)
        .map(|(walk, taps)| tap_values(walk, taps, &params))
        .collect::<Vec<_>>();
    let mirrors = program
        .walks
        .iter()
        .zip(&walks)
        .zip(&walk_values)
        .map(|((walk, taps), values)| mirror_plan(program, walk, taps, values, &params))
        .collect();
    Some(Setup {
        taps,
        walks,
        walk_values,
        mirrors,
        params,
    })
}

/// Which taps of `walk` (at `taps`, with the values of its [`Op::Tap`]s
/// `values`) share their weights in its block loop, if any.
fn mirror_plan(
    program: &Program,
    walk: &Walk,
    taps: &Taps,
    values: &[f32],
    params: &[f32],
) -> Option<mirror::Plan> {
    let acc = walk.accumulate.as_ref()?;
    let Taps::Each { width, rows } = taps else {
        return None;
    };
    let per_tap = walk.tap_values.len();
    let taps: Vec<(usize, usize, f32)> = rows
        .iter()
        .enumerate()
        .flat_map(|(j, row)| row.iter().map(move |&(i, coef)| (i, j, coef)))
        .collect();
    let offsets: Vec<(usize, usize)> = taps.iter().map(|&(i, j, _)| (i, j)).collect();
    let scalars: Vec<(f32, f32, f32)> = taps
        .iter()
        .enumerate()
        .map(|(q, &(_, _, coef))| {
            acc.scalars(params, coef, &values[q * per_tap..(q + 1) * per_tap])
        })
        .collect();
    mirror::Plan::new(
        acc,
        &program.outer,
        (*width, rows.len()),
        &offsets,
        &scalars,
    )
}

/// The values of `walk`'s [`Op::Tap`]s at each of its `taps`, as
/// [`Setup::walk_values`] holds them.
fn tap_values(walk: &Walk, taps: &Taps, params: &[f32]) -> Vec<f32> {
    let Taps::Each { width, rows } = taps else {
        return Vec::new();
    };
    let (cx, cy) = ((width / 2) as i32, (rows.len() / 2) as i32);
    let mut values = Vec::new();
    for (j, row) in rows.iter().enumerate() {
        for &(i, coef) in row {
            let at = tap::At {
                offsets: walk.offsets,
                dx: i as i32 - cx,
                dy: j as i32 - cy,
                coef,
                params,
            };
            values.extend(walk.tap_values.iter().map(|e| tap::value(e, &at)));
        }
    }
    values
}

/// How `sum` runs in this launch; see [`setup`].
fn sum_taps(sum: &Sum, bindings: &Bindings, each: bool) -> Option<Taps> {
    if let (Window::Mask(m), true) = (sum.window, sum.weighted) {
        let m = bindings.masks.get(m)?;
        let (w, h) = (m.slot.width as usize, m.slot.height as usize);
        let values: Vec<f64> = m.values.iter().map(|v| v.as_f64()).collect();
        if w % 2 == 1 && h % 2 == 1 {
            if let Some((kx, ky)) = factors(&values, w, h, 4.0 * f64::from(f32::EPSILON)) {
                let f32s = |k: Vec<f64>| k.into_iter().map(|v| v as f32).collect();
                return Some(Taps::Passes(f32s(kx), f32s(ky)));
            }
        }
    }
    if let Some((w, h)) = box_window(sum, bindings) {
        return Some(Taps::Passes(vec![1.0; w], vec![1.0; h]));
    }
    each.then_some(())?;
    each_taps(sum.window, bindings)
}

/// The size of `sum`'s window when the sum is a box: an unweighted `Sum`
/// over every position of an odd-sized domain or mask, such as a structure
/// tensor's `reduce(d, Sum, |dx, dy| ix.at(dx, dy) * iy.at(dx, dy))`. Its
/// passes are sums of `w` and `h` terms (each weight 1, an exact product),
/// so the summand is evaluated once per source pixel instead of `w · h`
/// times per output pixel.
fn box_window(sum: &Sum, bindings: &Bindings) -> Option<(usize, usize)> {
    (sum.fold == Fold::Sum && !sum.weighted).then_some(())?;
    let (w, h) = match sum.window {
        Window::Mask(m) => {
            let m = bindings.masks.get(m)?;
            (m.slot.width as usize, m.slot.height as usize)
        }
        Window::Domain(d) => {
            let d = bindings.domains.get(d)?;
            d.enabled.iter().all(|&e| e).then_some(())?;
            (d.width as usize, d.height as usize)
        }
    };
    (w % 2 == 1 && h % 2 == 1).then_some((w, h))
}

/// `window` as [`Taps::Each`] in this launch; `None` for an empty window
/// (the direct path's error to report).
fn each_taps(window: Window, bindings: &Bindings) -> Option<Taps> {
    let (w, h, coefs, enabled): (usize, usize, Vec<f32>, Vec<bool>) = match window {
        Window::Mask(m) => {
            let m = bindings.masks.get(m)?;
            let (w, h) = (m.slot.width as usize, m.slot.height as usize);
            let coefs = m.values.iter().map(|v| v.as_f64() as f32).collect();
            (w, h, coefs, vec![true; w * h])
        }
        Window::Domain(d) => {
            let d = bindings.domains.get(d)?;
            let (w, h) = (d.width as usize, d.height as usize);
            (w, h, vec![1.0; w * h], d.enabled.clone())
        }
    };
    let rows: Vec<Vec<(usize, f32)>> = (0..h)
        .map(|j| {
            (0..w)
                .filter(|&i| enabled[j * w + i])
                .map(|i| (i, coefs[j * w + i]))
                .collect()
        })
        .collect();
    rows.iter()
        .any(|r| !r.is_empty())
        .then_some(Taps::Each { width: w, rows })
}

/// An accessor's pixels as the rows are read: the image, or the row
/// window registered for it.
struct Source<'a> {
    _guard: Option<hipacc_core::image::ReadGuard<'a, f32>>,
    data: *const f32,
    len: usize,
    row0: usize,
    stride: usize,
    region: Rect,
    mode: BoundaryMode,
    constant: f32,
}

impl Source<'_> {
    fn pixels(&self) -> &[f32] {
        // SAFETY: `data`/`len` are the locked image's pixels or a row
        // window's buffer, which outlives the computation (the contract of
        // `with_row_windows`, under which the caller runs).
        unsafe { std::slice::from_raw_parts(self.data, self.len) }
    }

    /// Region row `py` through the boundary condition (its pixels inside
    /// the region), or `None` where the condition gives the constant.
    fn row(&self, py: i64) -> Option<&[f32]> {
        let mode = match self.mode {
            BoundaryMode::Undefined => BoundaryMode::Clamp,
            m => m,
        };
        let ry = mode.remap(py, self.region.height as i64)?;
        let start = (ry as usize + self.region.y - self.row0) * self.stride + self.region.x;
        Some(&self.pixels()[start..start + self.region.width])
    }

    /// Region positions `(q0 + i, py)` for `i` in `0..out.len()`, through
    /// the boundary condition.
    fn gather(&self, py: i64, q0: i64, out: &mut [f32]) {
        let (w, h) = (self.region.width as i64, self.region.height as i64);
        let mode = match self.mode {
            BoundaryMode::Undefined => BoundaryMode::Clamp,
            m => m,
        };
        let Some(ry) = mode.remap(py, h) else {
            out.fill(self.constant);
            return;
        };
        let start = (ry as usize + self.region.y - self.row0) * self.stride + self.region.x;
        let row = &self.pixels()[start..start + w as usize];
        // Columns inside the region are one copy; the others remap.
        let lo = (-q0).clamp(0, out.len() as i64) as usize;
        let hi = (w - q0).clamp(lo as i64, out.len() as i64) as usize;
        if lo < hi {
            let q = (q0 + lo as i64) as usize;
            out[lo..hi].copy_from_slice(&row[q..q + hi - lo]);
        }
        for i in (0..lo).chain(hi..out.len()) {
            out[i] = match mode.remap(q0 + i as i64, w) {
                Some(c) => row[c as usize],
                None => self.constant,
            };
        }
    }
}

/// The most accessors a kernel may have for its sums' summands to read
/// the images in place ([`Strip::horizontal_in_place`]).
const IN_PLACE_READS: usize = 8;

thread_local! {
    /// Row registers and rings of this thread, reused across strips.
    static SCRATCH: RefCell<Vec<Vec<f32>>> = const { RefCell::new(Vec::new()) };
}

/// Computes the output rows `ys` of `space` into `rows` (whole rows of
/// `out_width` from row `ys.start`), the expression around the sums by
/// `outer` where given ([`Program::given`]), else by the tape. Reads
/// through the row windows registered on this thread, if any.
#[allow(clippy::too_many_arguments)] // the launch's parts, as its callers hold them
pub(crate) fn run_rows(
    program: &Program,
    setup: &Setup,
    bindings: &Bindings,
    space: Rect,
    out_width: usize,
    ys: Range<usize>,
    rows: &mut [f32],
    outer: Option<Outer<'_>>,
) -> Result<()> {
    if ys.is_empty() || space.width == 0 {
        return Ok(());
    }
    let mut sources = Vec::with_capacity(bindings.accessors.len());
    for a in &bindings.accessors {
        a.region.check_in(a.image.width(), a.image.height())?;
        // A row window's image may be locked for writing other rows (a
        // pipeline output that later stages read): no read lock then.
        let (guard, (data, len, row0)) =
            match hipacc_core::row_window::window_of_id::<f32>(a.image.id()) {
                Some(window) => (None, window),
                None => {
                    let guard = read_as::<f32>(&*a.image).unwrap_or_else(|| {
                        unreachable!("bug: an f32 slot bound to another image")
                    })?;
                    let at = (guard.as_ptr(), guard.len(), 0);
                    (Some(guard), at)
                }
            };
        sources.push(Source {
            data,
            len,
            row0,
            stride: a.image.width(),
            region: a.region,
            mode: a.slot.boundary,
            constant: a.slot.constant.first().map_or(0.0, |l| l.as_f64() as f32),
            _guard: guard,
        });
    }
    SCRATCH.with_borrow_mut(|scratch| {
        Strip::new(program, setup, &sources, space, scratch).rows(ys, rows, out_width, outer)
    });
    Ok(())
}

/// The buffers of one strip, carved from a thread's scratch.
struct Strip<'a> {
    program: &'a Program,
    setup: &'a Setup,
    sources: &'a [Source<'a>],
    space: Rect,
    /// Per sum: a ring of `h` horizontal-pass rows (`w` wide), the next
    /// row of sums to compute, and its result row.
    rings: Vec<Vec<f32>>,
    results: Vec<Vec<f32>>,
    /// Row registers of the tapes, and accessor rows.
    regs: Vec<Vec<f32>>,
    reads: Vec<Vec<f32>>,
    /// What each accessor row in `reads` holds: region row, first column
    /// and length of the last gather. Sums over the same accessor (Harris'
    /// `ix²` and `ix·iy`) then gather each source row once.
    held: Vec<Option<(i64, i64, usize)>>,
    /// The same for the bodies of `iterate`s, which run while the tape
    /// around them holds its rows.
    walk_regs: Vec<Vec<f32>>,
    walk_reads: Vec<Vec<f32>>,
    /// Per walk: its stored weights ([`mirror`]), where it shares them.
    mirrors: Vec<Option<mirror::Mirror>>,
    spare: &'a mut Vec<Vec<f32>>,
}

impl<'a> Strip<'a> {
    fn new(
        program: &'a Program,
        setup: &'a Setup,
        sources: &'a [Source<'a>],
        space: Rect,
        spare: &'a mut Vec<Vec<f32>>,
    ) -> Strip<'a> {
        Strip {
            program,
            setup,
            sources,
            space,
            rings: Vec::new(),
            results: Vec::new(),
            regs: Vec::new(),
            reads: Vec::new(),
            held: Vec::new(),
            walk_regs: Vec::new(),
            walk_reads: Vec::new(),
            mirrors: Vec::new(),
            spare,
        }
    }

    fn take(&mut self, n: usize) -> Vec<f32> {
        let mut v = self.spare.pop().unwrap_or_default();
        v.resize(n, 0.0);
        v
    }

    fn rows(
        mut self,
        ys: Range<usize>,
        out: &mut [f32],
        out_width: usize,
        native: Option<Outer<'_>>,
    ) {
        let w = self.space.width;
        let program = self.program;
        let sums = &program.sums;
        let max_len = self
            .setup
            .taps
            .iter()
            .chain(&self.setup.walks)
            .map(|t| w + t.width() - 1)
            .max()
            .unwrap_or(w);
        let regs = sums
            .iter()
            .map(|s| s.summand.ops.len())
            .chain([self.program.outer.ops.len()])
            .max()
            .unwrap_or(0);
        for _ in 0..regs {
            let v = self.take(max_len);
            self.regs.push(v);
        }
        for _ in 0..self.sources.len() {
            let v = self.take(max_len);
            self.reads.push(v);
            self.held.push(None);
        }
        if !program.walks.is_empty() {
            let body = program.walks.iter().map(|k| k.body.ops.len()).max();
            for _ in 0..body.unwrap_or(0) {
                let v = self.take(WALK_LANES.min(w));
                self.walk_regs.push(v);
            }
            // All window rows of an `iterate` at once.
            let window = self.setup.walks.iter().map(|t| match t {
                Taps::Each { width, rows } => rows.len() * (w + width - 1),
                Taps::Passes(..) => 0,
            });
            let len = window.max().unwrap_or(0);
            for _ in 0..self.sources.len() {
                let v = self.take(len);
                self.walk_reads.push(v);
            }
            for plan in &self.setup.mirrors {
                let m = plan.as_ref().and_then(|p| {
                    let rows = self.spare.pop().unwrap_or_default();
                    p.mirror(w, rows)
                });
                self.mirrors.push(m);
            }
        }
        for t in &self.setup.taps {
            let ring = match t {
                Taps::Passes(_, ky) => self.take(ky.len() * w),
                Taps::Each { .. } => Vec::new(),
            };
            self.rings.push(ring);
            let result = self.take(w);
            self.results.push(result);
        }
        let first = (ys.start - self.space.y) as i64;
        // Where the body is given the sums and they all run in two passes
        // of one height it can write out, it runs their vertical passes.
        let rows_height = native.and_then(|_| {
            let mut heights = self.setup.taps.iter().map(|t| match t {
                Taps::Passes(_, ky) => Some(ky.len()),
                Taps::Each { .. } => None,
            });
            let h = heights.next()??;
            (matches!(h, 3 | 5 | 7) && heights.all(|x| x == Some(h))).then_some(h)
        });
        for (r, orow) in out.chunks_exact_mut(out_width).take(ys.len()).enumerate() {
            let py = first + r as i64;
            let x0 = self.space.x;
            if let (Some(native), Some(h)) = (native, rows_height) {
                for k in 0..sums.len() {
                    let Taps::Passes(kx, ky) = &self.setup.taps[k] else {
                        unreachable!("bug: given rows of a sum tap by tap");
                    };
                    self.horizontal_rows(k, kx, ky, py, r == 0);
                }
                const MAX: usize = hipacc_core::cpu::MAX_GIVEN_ROWS;
                let mut order = [[&[][..]; MAX]; hipacc_core::cpu::MAX_GIVEN];
                for (k, rows) in order.iter_mut().enumerate().take(sums.len()) {
                    for (j, row) in rows.iter_mut().enumerate().take(h) {
                        let slot = (py - (h / 2) as i64 + j as i64).rem_euclid(h as i64) as usize;
                        *row = &self.rings[k][slot * w..(slot + 1) * w];
                    }
                }
                let mut given = [(&[][..], &[][..]); hipacc_core::cpu::MAX_GIVEN];
                for (k, g) in given.iter_mut().enumerate().take(sums.len()) {
                    let Taps::Passes(_, ky) = &self.setup.taps[k] else {
                        unreachable!("bug: given rows of a sum tap by tap");
                    };
                    *g = (&order[k][..h], &ky[..]);
                }
                let given = Sums::Rows(&given[..sums.len()]);
                native(ys.start + r, given, &mut orow[x0..x0 + w]);
                continue;
            }
            for k in 0..sums.len() {
                self.sum_row(k, py, r == 0);
            }
            if let Some(native) = native {
                let mut given: [&[f32]; hipacc_core::cpu::MAX_GIVEN] =
                    [&[]; hipacc_core::cpu::MAX_GIVEN];
                for (g, r) in given.iter_mut().zip(&self.results) {
                    *g = &r[..w];
                }
                native(
                    ys.start + r,
                    Sums::Values(&given[..sums.len()]),
                    &mut orow[x0..x0 + w],
                );
                continue;
            }
            // The expression around the sums, at offset 0.
            let outer = &program.outer;
            for a in outer.reads() {
                self.gather(a, py, 0, w);
            }
            let (setup, sources) = (self.setup, self.sources);
            let mut walker = Walker {
                sources,
                params: &setup.params,
                reads: &mut self.walk_reads,
                regs: &mut self.walk_regs,
            };
            let mirrors = &mut self.mirrors;
            let mut walk = |k: usize, rows: &mut [Vec<f32>]| {
                let values = &setup.walk_values[k];
                let mirror = setup.mirrors[k].as_ref().zip(mirrors[k].as_mut());
                walker.run(
                    &program.walks[k],
                    &setup.walks[k],
                    values,
                    mirror,
                    rows,
                    py,
                    w,
                );
            };
            let env = Env {
                params: &setup.params,
                reads: Rows::Gathered(&self.reads),
                shift: 0,
                sums: &self.results,
                outer: &[],
                outer_at: 0,
                coef: 0.0,
                tap: &[],
                skip: &[],
            };
            let dest = Some(&mut orow[x0..x0 + w]);
            eval_into(outer, w, &env, &mut self.regs, &mut walk, dest);
        }
        let Strip {
            rings,
            results,
            regs,
            reads,
            walk_regs,
            walk_reads,
            mirrors,
            spare,
            ..
        } = self;
        spare.extend(mirrors.into_iter().flatten().map(mirror::Mirror::into_rows));
        spare.extend(
            rings
                .into_iter()
                .chain(results)
                .chain(regs)
                .chain(reads)
                .chain(walk_regs)
                .chain(walk_reads),
        );
    }

    /// Accessor `a`'s region row `py` from column `q0` into the first `n`
    /// lanes of its row in `reads`, unless they hold it already.
    fn gather(&mut self, a: usize, py: i64, q0: i64, n: usize) {
        if self.held[a] != Some((py, q0, n)) {
            self.sources[a].gather(py, q0, &mut self.reads[a][..n]);
            self.held[a] = Some((py, q0, n));
        }
    }

    /// Reduction `k` at region row `py` into its result row.
    fn sum_row(&mut self, k: usize, py: i64, fresh: bool) {
        let setup = self.setup;
        match &setup.taps[k] {
            Taps::Passes(kx, ky) => self.passes_row(k, kx, ky, py, fresh),
            Taps::Each { width, rows } => self.each_row(k, *width, rows, py),
        }
    }

    /// Reduction `k` at region row `py` tap by tap: for each window row,
    /// the summand over its source row, then every tap of the row across
    /// the output row.
    fn each_row(&mut self, k: usize, width: usize, rows: &[Vec<(usize, f32)>], py: i64) {
        let w = self.space.width;
        let (cx, cy) = ((width / 2) as i64, (rows.len() / 2) as i64);
        let n = w + width - 1;
        let program = self.program;
        let sum = &program.sums[k];
        let mut first = true;
        for (j, taps) in rows.iter().enumerate().filter(|(_, t)| !t.is_empty()) {
            let sy = py - cy + j as i64;
            for a in sum.summand.reads() {
                self.gather(a, sy, -cx, n);
            }
            let e = summand_row(
                &sum.summand,
                n,
                &self.setup.params,
                Rows::Gathered(&self.reads),
                &mut self.regs,
            );
            let out = &mut self.results[k][..w];
            fold_row(sum.fold, sum.weighted, e, taps, first, out);
            first = false;
        }
    }

    /// Sum `k` (rank-1 mask `kx · ky`) at region row `py` into its result
    /// row: the horizontal pass of the summand's rows `py - h/2 ..= py +
    /// h/2` (those not in the ring yet, or all when `fresh`), then the
    /// vertical pass.
    fn passes_row(&mut self, k: usize, kx: &[f32], ky: &[f32], py: i64, fresh: bool) {
        self.horizontal_rows(k, kx, ky, py, fresh);
        let (w, h, cy) = (self.space.width, ky.len(), (ky.len() / 2) as i64);
        let ring = &self.rings[k];
        let row = |j: usize| {
            let slot = (py - cy + j as i64).rem_euclid(h as i64) as usize;
            &ring[slot * w..(slot + 1) * w]
        };
        // On the stack for the masks of up to 15 rows that filters use.
        const ROWS: usize = 15;
        let out = &mut self.results[k][..w];
        if h <= ROWS {
            let mut order: [&[f32]; ROWS] = [&[]; ROWS];
            for (j, o) in order.iter_mut().enumerate().take(h) {
                *o = row(j);
            }
            vertical(&order[..h], ky, out);
        } else {
            vertical(&(0..h).map(row).collect::<Vec<_>>(), ky, out);
        }
    }

    /// The horizontal pass of sum `k`'s rows for output row `py` into its
    /// ring (those not in it yet, or all when `fresh`).
    fn horizontal_rows(&mut self, k: usize, kx: &[f32], ky: &[f32], py: i64, fresh: bool) {
        let w = self.space.width;
        let (cx, cy) = ((kx.len() / 2) as i64, (ky.len() / 2) as i64);
        let h = ky.len();
        let n = w + kx.len() - 1;
        let program = self.program;
        let summand = &program.sums[k].summand;
        let rows: Range<i64> = if fresh {
            py - cy..py + cy + 1
        } else {
            py + cy..py + cy + 1
        };
        for sy in rows {
            let slot = sy.rem_euclid(h as i64) as usize;
            if self.horizontal_in_place(k, kx, sy, slot) {
                continue;
            }
            for a in summand.reads() {
                self.gather(a, sy, -cx, n);
            }
            let e = summand_row(
                summand,
                n,
                &self.setup.params,
                Rows::Gathered(&self.reads),
                &mut self.regs,
            );
            horizontal(e, kx, &mut self.rings[k][slot * w..(slot + 1) * w]);
        }
    }

    /// The horizontal pass of sum `k` over region row `sy` into ring slot
    /// `slot`, its summand reading the columns whose window lies inside
    /// the region from the images themselves: only the few columns at
    /// each end, whose windows cross the region's edge, are gathered
    /// through the boundary condition. Each lane's operations and their
    /// order do not depend on where its values are read from, so the bits
    /// are those of the gathered rows; no row is copied before it is read.
    /// `false` where a row is the constant's, the summand reads more
    /// accessors than [`IN_PLACE_READS`], or no column's window lies
    /// inside.
    fn horizontal_in_place(&mut self, k: usize, kx: &[f32], sy: i64, slot: usize) -> bool {
        let w = self.space.width;
        let (kw, cx) = (kx.len(), kx.len() / 2);
        let (sources, program, setup) = (self.sources, self.program, self.setup);
        let summand = &program.sums[k].summand;
        if sources.len() > IN_PLACE_READS {
            return false;
        }
        let mut rows: [&[f32]; IN_PLACE_READS] = [&[]; IN_PLACE_READS];
        let mut width = usize::MAX;
        for a in summand.reads() {
            let Some(row) = sources[a].row(sy) else {
                return false;
            };
            rows[a] = row;
            width = width.min(row.len());
        }
        // Outputs `lo..hi` read columns `lo - cx ..= hi - 1 + cx`.
        let (lo, hi) = (cx, w.min(width.saturating_sub(cx)));
        if lo >= hi {
            return false;
        }
        for a in summand.reads() {
            rows[a] = &rows[a][lo - cx..hi + cx];
        }
        let n = hi - lo + kw - 1;
        let params = &setup.params;
        let in_place = Rows::InPlace(&rows[..sources.len()]);
        let e = summand_row(summand, n, params, in_place, &mut self.regs);
        let out = &mut self.rings[k][slot * w..(slot + 1) * w];
        horizontal(e, kx, &mut out[lo..hi]);
        for (x0, x1) in [(0, lo), (hi, w)] {
            if x0 >= x1 {
                continue;
            }
            let n = x1 - x0 + kw - 1;
            for a in summand.reads() {
                sources[a].gather(sy, x0 as i64 - cx as i64, &mut self.reads[a][..n]);
                self.held[a] = None;
            }
            let gathered = Rows::Gathered(&self.reads);
            let e = summand_row(summand, n, params, gathered, &mut self.regs);
            horizontal(e, kx, &mut out[x0..x1]);
        }
        true
    }
}

/// Runs the bodies of `iterate`s over a row.
struct Walker<'s> {
    sources: &'s [Source<'s>],
    params: &'s [f32],
    reads: &'s mut [Vec<f32>],
    regs: &'s mut [Vec<f32>],
}

impl Walker<'_> {
    /// Runs `walk` (its taps `taps`, the values of its [`Op::Tap`]s at
    /// them `values`) for region row `py` over `w` output lanes: for each
    /// window row, the accessor rows the body reads, then the body at
    /// every tap of the row, each tap's assignments written back to the
    /// rows `outer` of the tape around it. Each lane thus runs the body at
    /// the taps in the order of the direct path.
    #[allow(clippy::too_many_arguments)] // the walk's parts, as the strip holds them
    fn run(
        &mut self,
        walk: &Walk,
        taps: &Taps,
        values: &[f32],
        mirror: Option<(&mirror::Plan, &mut mirror::Mirror)>,
        outer: &mut [Vec<f32>],
        py: i64,
        w: usize,
    ) {
        let Taps::Each { width, rows } = taps else {
            unreachable!("bug: an iterate in two passes");
        };
        let per_tap = walk.tap_values.len();
        let at = |q: usize| &values[q * per_tap..(q + 1) * per_tap];
        let (cx, cy) = ((width / 2) as i64, (rows.len() / 2) as i64);
        let n = w + width - 1;
        let rows: Vec<(usize, &[(usize, f32)])> = rows
            .iter()
            .enumerate()
            .filter(|(_, t)| !t.is_empty())
            .map(|(j, t)| (j, t.as_slice()))
            .collect();
        // Every window row the body reads, row `k` at `k * n`.
        for (k, &(j, _)) in rows.iter().enumerate() {
            let sy = py - cy + j as i64;
            for a in walk.body.reads() {
                self.sources[a].gather(sy, -cx, &mut self.reads[a][k * n..(k + 1) * n]);
            }
        }
        // Whole blocks of a body in [`accumulate`]'s form run there, the
        // columns after them here.
        let mut start = 0;
        if let Some(acc) = &walk.accumulate {
            start = w - w % accumulate::LANES;
            let taps: Vec<(usize, f32, &[f32])> = rows
                .iter()
                .enumerate()
                .flat_map(|(k, &(_, taps))| taps.iter().map(move |&(i, coef)| (k * n + i, coef)))
                .enumerate()
                .map(|(q, (shift, coef))| (shift, coef, at(q)))
                .collect();
            match mirror {
                Some((plan, m)) => {
                    let slot = acc.read_slot().expect("bug: a mirror plan without a read");
                    let (ahead, shares) = m.shares(plan, acc, &self.reads[slot], w, py);
                    let taps: Vec<_> = ahead
                        .iter()
                        .map(|&q| taps[q])
                        .chain(taps.iter().copied())
                        .collect();
                    acc.run(self.params, self.reads, &taps, &shares, outer, 0..start);
                    drop(shares);
                    m.finish(plan, acc, &self.reads[slot], start, w, py);
                }
                None => {
                    let shares: Vec<_> = taps.iter().map(|_| accumulate::Share::Compute).collect();
                    acc.run(self.params, self.reads, &taps, &shares, outer, 0..start);
                }
            }
        }
        for c0 in (start..w).step_by(WALK_LANES) {
            let lanes = WALK_LANES.min(w - c0);
            let mut q = 0;
            for (k, &(_, taps)) in rows.iter().enumerate() {
                for &(i, coef) in taps {
                    let env = Env {
                        params: self.params,
                        reads: Rows::Gathered(self.reads),
                        shift: k * n + c0 + i,
                        sums: &[],
                        outer: &*outer,
                        outer_at: c0,
                        coef,
                        tap: at(q),
                        skip: &walk.skip,
                    };
                    q += 1;
                    eval(&walk.body, lanes, &env, self.regs, &mut no_walks);
                    for &(home, step) in &walk.carried {
                        outer[home][c0..c0 + lanes].copy_from_slice(&self.regs[step][..lanes]);
                    }
                    let shift = k * n + c0 + i;
                    for u in &walk.updates {
                        let row = &mut outer[u.home][c0..c0 + lanes];
                        match u.product {
                            // Product operands are reads or computed
                            // steps, never the rows updated here.
                            Some((a, b)) => {
                                let r = |j: usize| match walk.body.ops[j] {
                                    Op::Read(acc) => &self.reads[acc][shift..shift + lanes],
                                    _ => &self.regs[j][..lanes],
                                };
                                fuse::update_product(row, r(a), r(b), u.op, u.side);
                            }
                            None => update(row, &self.regs[u.x][..lanes], u.op, u.side),
                        }
                    }
                }
            }
        }
    }
}

/// What a tape's steps read besides its own rows.
struct Env<'e> {
    params: &'e [f32],
    /// Accessor rows; a step reads `n` lanes from column `shift`.
    reads: Rows<'e>,
    shift: usize,
    sums: &'e [Vec<f32>],
    /// The rows of the tape around the sums (for an `iterate` body), read
    /// from column `outer_at`.
    outer: &'e [Vec<f32>],
    outer_at: usize,
    /// The tap's mask coefficient (for an `iterate` body).
    coef: f32,
    /// The values of the tap's [`Op::Tap`]s (for an `iterate` body).
    tap: &'e [f32],
    /// Steps not computed ([`Walk::skip`]); empty for other tapes.
    skip: &'e [bool],
}

impl<'e> Env<'e> {
    /// The environment of a window sum's summand: parameters and the
    /// gathered accessor rows, read from column 0.
    fn summand(params: &'e [f32], reads: Rows<'e>) -> Env<'e> {
        Env {
            params,
            reads,
            shift: 0,
            sums: &[],
            outer: &[],
            outer_at: 0,
            coef: 0.0,
            tap: &[],
            skip: &[],
        }
    }

    /// The `n` lanes of step `j` of `tape`: its own row, or the row it
    /// names without copying.
    fn row<'r>(&'r self, tape: &Tape, j: usize, regs: &'r [Vec<f32>], n: usize) -> &'r [f32] {
        match tape.ops[j] {
            Op::Read(a) => &self.reads.get(a)[self.shift..self.shift + n],
            Op::Sum(k) => &self.sums[k][..n],
            Op::Outer(r) => &self.outer[r][self.outer_at..self.outer_at + n],
            _ => &regs[j][..n],
        }
    }
}

/// Runs `tape` over `n` lanes; returns the register of its result.
/// `walk(k, rows)` runs `iterate` `k` over the rows of the steps before it.
fn eval(
    tape: &Tape,
    n: usize,
    env: &Env,
    regs: &mut [Vec<f32>],
    walk: &mut dyn FnMut(usize, &mut [Vec<f32>]),
) -> usize {
    eval_into(tape, n, env, regs, walk, None)
}

/// [`eval`], the result written to `dest` where given (an output row: no
/// copy from its register after).
fn eval_into(
    tape: &Tape,
    n: usize,
    env: &Env,
    regs: &mut [Vec<f32>],
    walk: &mut dyn FnMut(usize, &mut [Vec<f32>]),
    mut dest: Option<&mut [f32]>,
) -> usize {
    let last = tape.ops.len() - 1;
    for (i, op) in tape.ops.iter().enumerate() {
        let (before, rest) = regs.split_at_mut(i);
        let out = match dest.as_deref_mut() {
            Some(d) if i == last => &mut d[..n],
            _ => &mut rest[0][..n],
        };
        // Operands that are reads, sums or outer rows are taken from their
        // rows, not copied into registers first.
        let r = |j: usize| env.row(tape, j, before, n);
        // A scalar operand of a binary step is broadcast, not read.
        let scalar = |j: usize| match tape.ops[j] {
            Op::Const(c) => Some(c),
            Op::Param(p) => Some(env.params[p]),
            Op::Coef => Some(env.coef),
            Op::Tap(k) => Some(env.tap[k]),
            _ => None,
        };
        match *op {
            _ if env.skip.get(i) == Some(&true) => {}
            Op::Const(c) => out.fill(c),
            Op::Param(p) => out.fill(env.params[p]),
            Op::Coef => out.fill(env.coef),
            Op::Tap(k) => out.fill(env.tap[k]),
            Op::Read(_) | Op::Sum(_) | Op::Outer(_) if i == last => {
                out.copy_from_slice(env.row(tape, i, before, n))
            }
            Op::Read(_) | Op::Sum(_) | Op::Outer(_) => {}
            Op::Copy(a) => out.copy_from_slice(r(a)),
            Op::Walk(k) => walk(k, before),
            Op::Neg(a) => unary(r(a), out, Un::Neg),
            Op::Abs(a) => unary(r(a), out, Un::Abs),
            Op::Sqrt(a) => unary(r(a), out, Un::Sqrt),
            Op::Exp(a) => exp_row(r(a), out),
            Op::ExpScaled { a, neg, s, t, k } => {
                // `(-a) · s` is `a · (-s)` exactly: rounding is symmetric.
                let s = s.and_then(scalar).unwrap_or(1.0);
                let k = k.and_then(scalar).unwrap_or(1.0);
                let s = if neg { -s } else { s };
                // `x - t` is `x + (-t)` exactly.
                let t = t.map_or(0.0, |(t, neg)| {
                    let t = scalar(t).expect("bug: a row as the added scalar");
                    if neg {
                        -t
                    } else {
                        t
                    }
                });
                match a {
                    fuse::Arg::Row(a) => exp_scaled_row(r(a), s, t, k, out),
                    fuse::Arg::Square(op, a, b) => fuse::exp_square(r(a), r(b), op, s, t, k, out),
                }
            }
            Op::Square(op, a, b) => fuse::square(r(a), r(b), out, op),
            Op::Bin(op, a, b) => match (scalar(a), scalar(b)) {
                (Some(a), _) => binary_splat(a, r(b), out, op, Side::Left),
                (None, Some(b)) => binary_splat(b, r(a), out, op, Side::Right),
                (None, None) => binary(r(a), r(b), out, op),
            },
            Op::MulAdd(a, b, c) => mul_add(r(a), r(b), r(c), out),
        }
    }
    last
}

/// The accessor rows a tape reads: the rows gathered through the
/// boundary condition, or rows of the images themselves.
#[derive(Clone, Copy)]
enum Rows<'e> {
    Gathered(&'e [Vec<f32>]),
    InPlace(&'e [&'e [f32]]),
}

impl<'e> Rows<'e> {
    fn get(self, a: usize) -> &'e [f32] {
        match self {
            Rows::Gathered(rows) => &rows[a],
            Rows::InPlace(rows) => rows[a],
        }
    }
}

/// The `n` lanes of a window sum's `summand` over the accessor rows
/// `reads`: computed into `regs`, or, for a summand that is a read, its
/// row itself (not copied).
fn summand_row<'r>(
    summand: &Tape,
    n: usize,
    params: &[f32],
    reads: Rows<'r>,
    regs: &'r mut [Vec<f32>],
) -> &'r [f32] {
    if let &[Op::Read(a)] = summand.ops.as_slice() {
        return &reads.get(a)[..n];
    }
    let e = eval(
        summand,
        n,
        &Env::summand(params, reads),
        regs,
        &mut no_walks,
    );
    &regs[e][..n]
}

/// A tape without `iterate`s has nothing to walk.
fn no_walks(k: usize, _: &mut [Vec<f32>]) {
    unreachable!("bug: iterate {k} in a tape without any");
}

#[derive(Clone, Copy)]
enum Un {
    Neg,
    Abs,
    Sqrt,
}

dispatch! {
    /// `out = op a`, compiled for AVX2 where the CPU has it.
    fn unary<>(a: &[f32], out: &mut [f32], op: Un) {
        match op {
            Un::Neg => out.iter_mut().zip(a).for_each(|(o, &a)| *o = -a),
            Un::Abs => out.iter_mut().zip(a).for_each(|(o, &a)| *o = a.abs()),
            Un::Sqrt => out.iter_mut().zip(a).for_each(|(o, &a)| *o = a.sqrt()),
        }
    }
}

dispatch! {
    /// `out = a op b`, compiled for AVX2 where the CPU has it.
    fn binary<>(a: &[f32], b: &[f32], out: &mut [f32], op: Bin) {
        let it = out.iter_mut().zip(a.iter().zip(b));
        match op {
            Bin::Add => it.for_each(|(o, (&a, &b))| *o = a + b),
            Bin::Sub => it.for_each(|(o, (&a, &b))| *o = a - b),
            Bin::Mul => it.for_each(|(o, (&a, &b))| *o = a * b),
            Bin::Div => it.for_each(|(o, (&a, &b))| *o = a / b),
            Bin::Min => it.for_each(|(o, (&a, &b))| *o = a.min(b)),
            Bin::Max => it.for_each(|(o, (&a, &b))| *o = a.max(b)),
        }
    }
}

/// Which operand of a binary step a scalar (or, in an [`Update`], the
/// variable) is.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Side {
    Left,
    Right,
}

dispatch! {
    /// `out = s op b` (`side` left) or `out = b op s` (right), compiled for
    /// AVX2 where the CPU has it: the same values as [`binary`] with `s`
    /// in every lane.
    fn binary_splat<>(s: f32, b: &[f32], out: &mut [f32], op: Bin, side: Side) {
        let it = out.iter_mut().zip(b);
        match (op, side) {
            (Bin::Add, Side::Left) => it.for_each(|(o, &b)| *o = s + b),
            (Bin::Add, Side::Right) => it.for_each(|(o, &b)| *o = b + s),
            (Bin::Sub, Side::Left) => it.for_each(|(o, &b)| *o = s - b),
            (Bin::Sub, Side::Right) => it.for_each(|(o, &b)| *o = b - s),
            (Bin::Mul, Side::Left) => it.for_each(|(o, &b)| *o = s * b),
            (Bin::Mul, Side::Right) => it.for_each(|(o, &b)| *o = b * s),
            (Bin::Div, Side::Left) => it.for_each(|(o, &b)| *o = s / b),
            (Bin::Div, Side::Right) => it.for_each(|(o, &b)| *o = b / s),
            (Bin::Min, Side::Left) => it.for_each(|(o, &b)| *o = s.min(b)),
            (Bin::Min, Side::Right) => it.for_each(|(o, &b)| *o = b.min(s)),
            (Bin::Max, Side::Left) => it.for_each(|(o, &b)| *o = s.max(b)),
            (Bin::Max, Side::Right) => it.for_each(|(o, &b)| *o = b.max(s)),
        }
    }
}

dispatch! {
    /// `v = v op x` (`side` left) or `v = x op v`, compiled for AVX2 where
    /// the CPU has it: the same values as [`binary`] (sums and products
    /// commute exactly).
    fn update<>(v: &mut [f32], x: &[f32], op: Bin, side: Side) {
        let it = v.iter_mut().zip(x);
        match (op, side) {
            (Bin::Add, _) => it.for_each(|(v, &x)| *v += x),
            (Bin::Sub, Side::Left) => it.for_each(|(v, &x)| *v -= x),
            (Bin::Sub, Side::Right) => it.for_each(|(v, &x)| *v = x - *v),
            (Bin::Mul, _) => it.for_each(|(v, &x)| *v *= x),
            (Bin::Div, Side::Left) => it.for_each(|(v, &x)| *v /= x),
            (Bin::Div, Side::Right) => it.for_each(|(v, &x)| *v = x / *v),
            (Bin::Min, Side::Left) => it.for_each(|(v, &x)| *v = v.min(x)),
            (Bin::Min, Side::Right) => it.for_each(|(v, &x)| *v = x.min(*v)),
            (Bin::Max, Side::Left) => it.for_each(|(v, &x)| *v = v.max(x)),
            (Bin::Max, Side::Right) => it.for_each(|(v, &x)| *v = x.max(*v)),
        }
    }
}

dispatch! {
    /// `out = a · b + c`, each rounded once.
    fn mul_add<>(a: &[f32], b: &[f32], c: &[f32], out: &mut [f32]) {
        for (o, ((&a, &b), &c)) in out.iter_mut().zip(a.iter().zip(b).zip(c)) {
            *o = a.mul_add(b, c);
        }
    }
}

/// Output lanes a pass holds in registers across its taps: four AVX
/// vectors, loaded from the source rows once per tap and stored once,
/// where a pass per tap over the whole row loaded and stored the output
/// at every tap.
const PASS_LANES: usize = 32;

dispatch! {
    /// `out[x] = Σ_i kx[i] e[x + i]`, a fused multiply-add per tap in tap
    /// order (each lane's operations do not depend on how the row is
    /// blocked).
    fn horizontal<>(e: &[f32], kx: &[f32], out: &mut [f32]) {
        // The usual widths get their own copy of the loop with the taps
        // written out (the slice's length is a constant there): no loop
        // over the taps inside each block.
        match kx.len() {
            3 => horizontal_taps(e, &kx[..3], out),
            5 => horizontal_taps(e, &kx[..5], out),
            7 => horizontal_taps(e, &kx[..7], out),
            _ => horizontal_taps(e, kx, out),
        }
    }
}

/// [`horizontal`]'s loop, inlined into each of its copies.
#[inline(always)]
fn horizontal_taps(e: &[f32], kx: &[f32], out: &mut [f32]) {
    let w = out.len();
    let e = &e[..w + kx.len() - 1];
    let mut blocks = out.chunks_exact_mut(PASS_LANES);
    for (b, o) in blocks.by_ref().enumerate() {
        let x = b * PASS_LANES;
        let src = &e[x..x + PASS_LANES + kx.len() - 1];
        let mut acc = [0.0f32; PASS_LANES];
        for (a, &v) in acc.iter_mut().zip(&src[..PASS_LANES]) {
            *a = kx[0] * v;
        }
        for (i, &k) in kx.iter().enumerate().skip(1) {
            for (a, &v) in acc.iter_mut().zip(&src[i..i + PASS_LANES]) {
                *a = k.mul_add(v, *a);
            }
        }
        o.copy_from_slice(&acc);
    }
    let tail = blocks.into_remainder();
    let x0 = w - tail.len();
    for (l, o) in tail.iter_mut().enumerate() {
        *o = kx[1..]
            .iter()
            .enumerate()
            .fold(kx[0] * e[x0 + l], |acc, (i, &k)| {
                k.mul_add(e[x0 + l + i + 1], acc)
            });
    }
}

dispatch! {
    /// `out[x] = Σ_j ky[j] rows[j][x]`, a fused multiply-add per tap in
    /// tap order (blocked as [`horizontal`]; the usual heights have their
    /// own copies alike).
    fn vertical<>(rows: &[&[f32]], ky: &[f32], out: &mut [f32]) {
        match ky.len() {
            3 => vertical_taps(rows, &ky[..3], out),
            5 => vertical_taps(rows, &ky[..5], out),
            7 => vertical_taps(rows, &ky[..7], out),
            _ => vertical_taps(rows, ky, out),
        }
    }
}

/// [`vertical`]'s loop, inlined into each of its copies.
#[inline(always)]
fn vertical_taps(rows: &[&[f32]], ky: &[f32], out: &mut [f32]) {
    let w = out.len();
    let mut blocks = out.chunks_exact_mut(PASS_LANES);
    for (b, o) in blocks.by_ref().enumerate() {
        let x = b * PASS_LANES;
        let mut acc = [0.0f32; PASS_LANES];
        for (a, &v) in acc.iter_mut().zip(&rows[0][x..x + PASS_LANES]) {
            *a = ky[0] * v;
        }
        for (j, &k) in ky.iter().enumerate().skip(1) {
            for (a, &v) in acc.iter_mut().zip(&rows[j][x..x + PASS_LANES]) {
                *a = k.mul_add(v, *a);
            }
        }
        o.copy_from_slice(&acc);
    }
    let tail = blocks.into_remainder();
    let x0 = w - tail.len();
    for (l, o) in tail.iter_mut().enumerate() {
        *o = ky[1..]
            .iter()
            .enumerate()
            .fold(ky[0] * rows[0][x0 + l], |acc, (j, &k)| {
                k.mul_add(rows[j + 1][x0 + l], acc)
            });
    }
}

#[cfg(test)]
mod tests {
    use super::{box_window, horizontal, vertical, Fold, Sum, Tape, PASS_LANES};
    use hipacc_core::ir::{DomainSlot, Window};
    use hipacc_core::Bindings;

    /// Unweighted sums over every position of an odd window are boxes
    /// (two passes of ones); a domain with a position off, a `Min`, a
    /// weighted sum or an even window are not.
    #[test]
    fn box_windows_are_unweighted_sums_over_whole_odd_windows() {
        let domain = |width: u32, height: u32, off: Option<usize>| DomainSlot {
            name: "d".into(),
            width,
            height,
            enabled: (0..(width * height) as usize)
                .map(|i| Some(i) != off)
                .collect(),
        };
        let bindings = Bindings {
            domains: vec![
                domain(5, 3, None),
                domain(3, 3, Some(4)),
                domain(4, 3, None),
            ],
            ..Bindings::default()
        };
        let sum = |d: usize, fold: Fold, weighted: bool| Sum {
            window: Window::Domain(d),
            fold,
            weighted,
            summand: Tape::default(),
        };
        assert_eq!(
            box_window(&sum(0, Fold::Sum, false), &bindings),
            Some((5, 3))
        );
        assert_eq!(box_window(&sum(1, Fold::Sum, false), &bindings), None);
        assert_eq!(box_window(&sum(2, Fold::Sum, false), &bindings), None);
        assert_eq!(box_window(&sum(0, Fold::Min, false), &bindings), None);
        assert_eq!(box_window(&sum(0, Fold::Sum, true), &bindings), None);
        assert_eq!(box_window(&sum(3, Fold::Sum, false), &bindings), None);
    }

    /// Each lane of a pass as one chain of operations in tap order.
    fn lane(k: &[f32], v: impl Fn(usize) -> f32) -> f32 {
        (1..k.len()).fold(k[0] * v(0), |acc, i| k[i].mul_add(v(i), acc))
    }

    /// The blocked passes give every lane the bits of its own chain, for
    /// rows of whole blocks, a tail and shorter than a block, with NaN,
    /// infinite and subnormal values among the taps' inputs.
    #[test]
    fn blocked_passes_give_each_lane_its_chain_in_tap_order() {
        for w in [1, 7, PASS_LANES - 1, PASS_LANES, 3 * PASS_LANES + 5, 257] {
            // One tap, the widths with their own copies of the loop, and
            // a wider one.
            for k in [
                vec![0.5],
                vec![0.25, 0.5, 0.25],
                vec![0.0625, 0.25, 0.375, 0.25, 0.0625],
                (0..7).map(|i| 0.3 - i as f32 * 0.07).collect(),
                (0..13).map(|i| 0.1 + i as f32 * 0.03).collect(),
            ] {
                let n = w + k.len() - 1;
                let mut e: Vec<f32> = (0..n).map(|i| (i as f32 * 0.71).sin() * 3.0).collect();
                e[n / 2] = f32::NAN;
                e[n / 3] = f32::INFINITY;
                e[n - 1] = 1.0e-40;
                let mut out = vec![0.0; w];
                horizontal(&e, &k, &mut out);
                for (x, o) in out.iter().enumerate() {
                    let want = lane(&k, |i| e[x + i]);
                    assert_eq!(
                        o.to_bits(),
                        want.to_bits(),
                        "horizontal: width {w}, lane {x}"
                    );
                }
                let rows: Vec<Vec<f32>> = (0..k.len()).map(|j| e[j..j + w].to_vec()).collect();
                let refs: Vec<&[f32]> = rows.iter().map(|r| r.as_slice()).collect();
                vertical(&refs, &k, &mut out);
                for (x, o) in out.iter().enumerate() {
                    let want = lane(&k, |j| rows[j][x]);
                    assert_eq!(o.to_bits(), want.to_bits(), "vertical: width {w}, lane {x}");
                }
            }
        }
    }
}
