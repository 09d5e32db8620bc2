//! Weighted window sums inside any body, in two passes.
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
//! have rank 1 at launch ([`super::separable::factors`]).
//!
//! Reads follow the accessor's boundary condition as in the direct path:
//! each accessor row a sum needs is gathered through the condition (row
//! and columns remapped, `Constant` reads its constant), so `E` outside the
//! image is `E` of the values the direct body would read there.
//!
//! The result equals the direct one up to rounding: the expression around
//! the sums and `E` are the same f32 operations, and a sum of `n` terms
//! regrouped into two passes (each tap a fused multiply-add) differs from
//! the direct `n`-term sum by at most `(n + 4) ε Σ |w E|` (the conformance
//! bound of a reduction). Rows are computed independently of the strip
//! they belong to, so fused and unfused runs agree bit for bit.

use super::separable::factors;
use super::simd::dispatch;
use crate::Result;
use hipacc_core::image::read_as;
use hipacc_core::ir::{self, BinaryOp, Expr, ExprKind, Intrinsic, ReduceOp, Type, UnaryOp, Window};
use hipacc_core::{Bindings, BoundaryMode, Interpolation, Rect};
use std::cell::RefCell;
use std::collections::HashMap;
use std::ops::Range;

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

    /// The accessor slots the tape reads.
    fn reads(&self) -> Vec<usize> {
        let mut r: Vec<usize> = self
            .ops
            .iter()
            .filter_map(|op| match op {
                Op::Read(a) => Some(*a),
                _ => None,
            })
            .collect();
        r.sort_unstable();
        r.dedup();
        r
    }
}

/// A window sum of the body: mask slot and summand.
#[derive(Clone, Debug, PartialEq)]
struct Sum {
    mask: usize,
    summand: Tape,
}

/// A body that runs as window sums in two passes and an expression of
/// their results.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Program {
    sums: Vec<Sum>,
    outer: Tape,
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
    };
    let mut outer = Tape::default();
    for stmt in &k.body.stmts {
        let ir::Stmt::Let { var, value } = stmt else {
            return None;
        };
        let slot = c.expr(value, &mut outer, None)?;
        c.vars.insert(*var, slot);
    }
    let result = k.body.result.as_ref()?;
    c.expr(result, &mut outer, None)?;
    (!c.sums.is_empty()).then_some(Program {
        sums: c.sums,
        outer,
    })
}

struct Compiler<'k> {
    k: &'k ir::Kernel,
    /// `let` variables around the sums, by register.
    vars: HashMap<ir::VarId, usize>,
    sums: Vec<Sum>,
}

impl Compiler<'_> {
    /// Appends `e` to `tape`, returning its register. `offsets` is the
    /// window offset variables inside a sum's summand.
    fn expr(
        &mut self,
        e: &Expr,
        tape: &mut Tape,
        offsets: Option<(ir::VarId, ir::VarId)>,
    ) -> Option<usize> {
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
                    (Intrinsic::Min, &[a, b]) => Op::Bin(Bin::Min, a, b),
                    (Intrinsic::Max, &[a, b]) => Op::Bin(Bin::Max, a, b),
                    (Intrinsic::MulAdd, &[a, b, c]) => Op::MulAdd(a, b, c),
                    _ => return None,
                };
                tape.push(op)
            }
            ExprKind::Reduce {
                window: Window::Mask(mask),
                op: ReduceOp::Sum,
                dx,
                dy,
                body,
            } if offsets.is_none() => {
                let slot = self.k.masks.get(*mask)?;
                let odd = slot.width % 2 == 1 && slot.height % 2 == 1;
                (slot.ty == Type::F32 && odd && body.stmts.is_empty()).then_some(())?;
                let ExprKind::Binary {
                    op: BinaryOp::Mul,
                    lhs,
                    rhs,
                } = &body.result.as_ref()?.kind
                else {
                    return None;
                };
                let is_coef = |e: &Expr| {
                    matches!(&e.kind, ExprKind::MaskCoef { mask: m, dx: a, dy: b }
                        if m == mask && is_var(a, *dx) && is_var(b, *dy))
                };
                let summand = if is_coef(lhs) {
                    rhs
                } else if is_coef(rhs) {
                    lhs
                } else {
                    return None;
                };
                let mut t = Tape::default();
                self.expr(summand, &mut t, Some((*dx, *dy)))?;
                self.sums.push(Sum {
                    mask: *mask,
                    summand: t,
                });
                tape.push(Op::Sum(self.sums.len() - 1))
            }
            _ => return None,
        })
    }
}

/// The values of a launch: masks factored, parameters read.
pub(crate) struct Setup {
    /// Per sum: horizontal and vertical taps.
    taps: Vec<(Vec<f32>, Vec<f32>)>,
    params: Vec<f32>,
}

/// The launch values of `program`, `None` where a mask has no rank-1
/// factors (the direct path runs).
pub(crate) fn setup(program: &Program, bindings: &Bindings) -> Option<Setup> {
    let mut taps = Vec::with_capacity(program.sums.len());
    for s in &program.sums {
        let m = bindings.masks.get(s.mask)?;
        let values: Vec<f64> = m.values.iter().map(|v| v.as_f64()).collect();
        let (w, h) = (m.slot.width as usize, m.slot.height as usize);
        let (kx, ky) = factors(&values, w, h, 4.0 * f64::from(f32::EPSILON))?;
        taps.push((
            kx.iter().map(|&v| v as f32).collect(),
            ky.iter().map(|&v| v as f32).collect(),
        ));
    }
    let params = bindings
        .params
        .iter()
        .map(|p| p.value.as_f64() as f32)
        .collect();
    Some(Setup { taps, params })
}

/// An accessor's pixels as the rows are read: the image, or the row
/// window registered for it.
struct Source<'a> {
    _guard: hipacc_core::image::ReadGuard<'a, f32>,
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

thread_local! {
    /// Row registers and rings of this thread, reused across strips.
    static SCRATCH: RefCell<Vec<Vec<f32>>> = const { RefCell::new(Vec::new()) };
}

/// Computes the output rows `ys` of `space` into `rows` (whole rows of
/// `out_width` from row `ys.start`). Reads through the row windows
/// registered on this thread, if any.
pub(crate) fn run_rows(
    program: &Program,
    setup: &Setup,
    bindings: &Bindings,
    space: Rect,
    out_width: usize,
    ys: Range<usize>,
    rows: &mut [f32],
) -> Result<()> {
    if ys.is_empty() || space.width == 0 {
        return Ok(());
    }
    let mut sources = Vec::with_capacity(bindings.accessors.len());
    for a in &bindings.accessors {
        a.region.check_in(a.image.width(), a.image.height())?;
        let guard = read_as::<f32>(&*a.image)
            .unwrap_or_else(|| unreachable!("bug: an f32 slot bound to another image"))?;
        let window = hipacc_core::row_window::window_of_id::<f32>(a.image.id());
        let (data, len, row0) = window.unwrap_or((guard.as_ptr(), guard.len(), 0));
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
        Strip::new(program, setup, &sources, space, scratch).rows(ys, rows, out_width)
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
            spare,
        }
    }

    fn take(&mut self, n: usize) -> Vec<f32> {
        let mut v = self.spare.pop().unwrap_or_default();
        v.resize(n, 0.0);
        v
    }

    fn rows(mut self, ys: Range<usize>, out: &mut [f32], out_width: usize) {
        let w = self.space.width;
        let program = self.program;
        let sums = &program.sums;
        let max_len = sums
            .iter()
            .zip(&self.setup.taps)
            .map(|(_, (kx, _))| w + kx.len() - 1)
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
        }
        for (_, (_, ky)) in sums.iter().zip(&self.setup.taps) {
            let ring = self.take(ky.len() * w);
            self.rings.push(ring);
            let result = self.take(w);
            self.results.push(result);
        }
        let first = (ys.start - self.space.y) as i64;
        for (r, orow) in out.chunks_exact_mut(out_width).take(ys.len()).enumerate() {
            let py = first + r as i64;
            for k in 0..sums.len() {
                self.sum_row(k, py, r == 0);
            }
            // The expression around the sums, at offset 0.
            let outer = &program.outer;
            for a in outer.reads() {
                self.sources[a].gather(py, 0, &mut self.reads[a][..w]);
            }
            let last = eval(
                outer,
                w,
                &self.setup.params,
                &self.reads,
                &self.results,
                &mut self.regs,
            );
            let x0 = self.space.x;
            orow[x0..x0 + w].copy_from_slice(&self.regs[last][..w]);
        }
        let Strip {
            rings,
            results,
            regs,
            reads,
            spare,
            ..
        } = self;
        spare.extend(rings.into_iter().chain(results).chain(regs).chain(reads));
    }

    /// Sum `k` at region row `py` into its result row: the horizontal
    /// pass of the summand's rows `py - h/2 ..= py + h/2` (those not in
    /// the ring yet, or all when `fresh`), then the vertical pass.
    fn sum_row(&mut self, k: usize, py: i64, fresh: bool) {
        let w = self.space.width;
        let (kx, ky) = &self.setup.taps[k];
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
            for a in summand.reads() {
                self.sources[a].gather(sy, -cx, &mut self.reads[a][..n]);
            }
            let e = eval(
                summand,
                n,
                &self.setup.params,
                &self.reads,
                &self.results,
                &mut self.regs,
            );
            let slot = sy.rem_euclid(h as i64) as usize;
            horizontal(
                &self.regs[e][..n],
                kx,
                &mut self.rings[k][slot * w..(slot + 1) * w],
            );
        }
        let ring = &self.rings[k];
        let order: Vec<&[f32]> = (0..h)
            .map(|j| {
                let slot = (py - cy + j as i64).rem_euclid(h as i64) as usize;
                &ring[slot * w..(slot + 1) * w]
            })
            .collect();
        vertical(&order, ky, &mut self.results[k][..w]);
    }
}

/// Runs `tape` over `n` lanes; returns the register of its result.
fn eval(
    tape: &Tape,
    n: usize,
    params: &[f32],
    reads: &[Vec<f32>],
    sums: &[Vec<f32>],
    regs: &mut [Vec<f32>],
) -> usize {
    let last = tape.ops.len() - 1;
    for (i, op) in tape.ops.iter().enumerate() {
        let (before, rest) = regs.split_at_mut(i);
        let out = &mut rest[0][..n];
        // Operands that are reads or sums are taken from their rows, not
        // copied into registers first.
        let r = |j: usize| match tape.ops[j] {
            Op::Read(a) => &reads[a][..n],
            Op::Sum(k) => &sums[k][..n],
            _ => &before[j][..n],
        };
        match *op {
            Op::Const(c) => out.fill(c),
            Op::Param(p) => out.fill(params[p]),
            Op::Read(a) if i == last => out.copy_from_slice(&reads[a][..n]),
            Op::Sum(k) if i == last => out.copy_from_slice(&sums[k][..n]),
            Op::Read(_) | Op::Sum(_) => {}
            Op::Neg(a) => unary(r(a), out, Un::Neg),
            Op::Abs(a) => unary(r(a), out, Un::Abs),
            Op::Sqrt(a) => unary(r(a), out, Un::Sqrt),
            Op::Bin(op, a, b) => binary(r(a), r(b), out, op),
            Op::MulAdd(a, b, c) => mul_add(r(a), r(b), r(c), out),
        }
    }
    last
}

#[derive(Clone, Copy)]
enum Un {
    Neg,
    Abs,
    Sqrt,
}

fn unary(a: &[f32], out: &mut [f32], op: Un) {
    match op {
        Un::Neg => out.iter_mut().zip(a).for_each(|(o, &a)| *o = -a),
        Un::Abs => out.iter_mut().zip(a).for_each(|(o, &a)| *o = a.abs()),
        Un::Sqrt => out.iter_mut().zip(a).for_each(|(o, &a)| *o = a.sqrt()),
    }
}

fn binary(a: &[f32], b: &[f32], out: &mut [f32], op: Bin) {
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

dispatch! {
    /// `out = a · b + c`, each rounded once.
    fn mul_add<>(a: &[f32], b: &[f32], c: &[f32], out: &mut [f32]) {
        for (o, ((&a, &b), &c)) in out.iter_mut().zip(a.iter().zip(b).zip(c)) {
            *o = a.mul_add(b, c);
        }
    }
}

dispatch! {
    /// `out[x] = Σ_i kx[i] e[x + i]`, a fused multiply-add per tap.
    fn horizontal<>(e: &[f32], kx: &[f32], out: &mut [f32]) {
        let w = out.len();
        for (o, &v) in out.iter_mut().zip(&e[..w]) {
            *o = kx[0] * v;
        }
        for (i, &k) in kx.iter().enumerate().skip(1) {
            for (o, &v) in out.iter_mut().zip(&e[i..i + w]) {
                *o = k.mul_add(v, *o);
            }
        }
    }
}

dispatch! {
    /// `out[x] = Σ_j ky[j] rows[j][x]`, a fused multiply-add per tap.
    fn vertical<>(rows: &[&[f32]], ky: &[f32], out: &mut [f32]) {
        for (o, &v) in out.iter_mut().zip(rows[0]) {
            *o = ky[0] * v;
        }
        for (j, &k) in ky.iter().enumerate().skip(1) {
            for (o, &v) in out.iter_mut().zip(rows[j]) {
                *o = k.mul_add(v, *o);
            }
        }
    }
}
