//! Chains of an `iterate` body's steps fused into single passes.
//!
//! Each step of a [`Tape`] is one loop over a row slice: a bilateral
//! weight `coef · exp(-(d · d) · s)` with `d = v - c`, then `num += w · v`
//! and `den += w`, took nine passes per tap, each loading and storing its
//! lanes. Where a step's value is read by one other step only (and is
//! neither carried out of the tap nor the tape's result), the two can run
//! in one pass without the intermediate row:
//!
//! - `(a op b) · (a op b)` of one binary step: [`Op::Square`];
//! - `exp` of a product with a scalar (a constant, parameter, mask
//!   coefficient or other value of the tap), of a negation, or both, of a
//!   square `(a op b)²` (alone or so scaled or negated: a Gaussian range
//!   weight), each plus or minus a scalar (a spatial term
//!   `-(dx² + dy²) · s` beside the range term), and a product of the
//!   `exp` with a scalar: [`Op::ExpScaled`], whose [`Arg`] says which row
//!   it takes `exp` of;
//! - an in-place update `v op= a · b` of two rows: the product formed in
//!   the update's pass ([`Update::product`]).
//!
//! Every fused pass computes the same f32 operations as the steps it
//! replaces, on the same operands: the same bits (negating a product's
//! factor negates the product exactly, `t - x` is `t + (-x)` exactly, and
//! sums and products commute exactly).

use super::{operands, scalar_op, Bin, Op, Side, Tape, Update};
use crate::cpu::exp::exp_each;
use crate::cpu::simd::dispatch;

/// The row an [`Op::ExpScaled`] scales and takes `exp` of.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) enum Arg {
    /// Step `a`'s row.
    Row(usize),
    /// `(a op b)²` of two rows, formed in the `exp`'s pass: a squared
    /// difference and its Gaussian weight in one pass, no row between.
    Square(Bin, usize, usize),
}

impl Arg {
    /// The steps whose rows the argument reads.
    pub(super) fn rows(self) -> Vec<usize> {
        match self {
            Arg::Row(a) => vec![a],
            Arg::Square(_, a, b) => vec![a, b],
        }
    }
}

/// Fuses the chains of `tape` (an `iterate` body with its `skip` steps,
/// in-place `updates` and `carried` copies) described in the module
/// documentation: rewrites the step that reads a chain into the fused op
/// and marks the steps it absorbs as skipped.
pub(super) fn chains(
    tape: &mut Tape,
    skip: &mut [bool],
    updates: &mut [Update],
    carried: &[(usize, usize)],
) {
    let last = tape.ops.len() - 1;
    let pinned = |j: usize| j == last || carried.iter().any(|&(_, s)| s == j);
    for u in 0..updates.len() {
        let x = updates[u].x;
        let Op::Bin(Bin::Mul, a, b) = tape.ops[x] else {
            continue;
        };
        // The updated rows are written while the product's operands are
        // read: only reads and computed steps qualify.
        let row = |j: usize| !scalar_op(&tape.ops[j]) && !matches!(tape.ops[j], Op::Outer(_));
        if row(a) && row(b) && !pinned(x) && readers(tape, skip, updates, x) == [BY_UPDATE] {
            updates[u].product = Some((a, b));
            skip[x] = true;
        }
    }
    // Whether step `j` is computed and read by step `by` alone.
    let single = |tape: &Tape, skip: &[bool], j: usize, by: usize| {
        !pinned(j) && !skip[j] && readers(tape, skip, updates, j) == [by]
    };
    for i in 0..tape.ops.len() {
        if skip[i] {
            continue;
        }
        match tape.ops[i] {
            Op::Bin(Bin::Mul, d, e) if d == e => {
                if let Op::Bin(op, a, b) = tape.ops[d] {
                    let rows = !scalar_op(&tape.ops[a]) && !scalar_op(&tape.ops[b]);
                    if rows && single(tape, skip, d, i) {
                        tape.ops[i] = Op::Square(op, a, b);
                        skip[d] = true;
                    }
                }
            }
            Op::Exp(x) => {
                // `a`: the row reached so far, read by step `by` alone.
                let (mut a, mut by, mut neg, mut s, mut t) = (x, i, false, None, None);
                let mut absorbed = Vec::new();
                if let Some((f, sc, sub)) = scalar_sum(tape, x) {
                    if single(tape, skip, x, i) {
                        absorbed.push(x);
                        // `sc - f` is `(-f) + sc`; `f - sc` is `f + (-sc)`.
                        (a, by, t, neg) = (
                            f,
                            x,
                            Some((sc, sub == Some(Side::Left))),
                            sub == Some(Side::Right),
                        );
                    }
                }
                if let Some((f, sc)) = scalar_product(tape, a) {
                    if single(tape, skip, a, by) {
                        absorbed.push(a);
                        (a, by, s) = (f, a, Some(sc));
                    }
                }
                if let Op::Neg(y) = tape.ops[a] {
                    if single(tape, skip, a, by) {
                        absorbed.push(a);
                        (a, by, neg) = (y, a, !neg);
                    }
                }
                let arg = match tape.ops[a] {
                    Op::Square(op, p, q) if single(tape, skip, a, by) => {
                        absorbed.push(a);
                        Arg::Square(op, p, q)
                    }
                    _ => Arg::Row(a),
                };
                for j in absorbed {
                    skip[j] = true;
                }
                let fused = |k| Op::ExpScaled {
                    a: arg,
                    neg,
                    s,
                    t,
                    k,
                };
                // A product of the `exp` with a scalar takes the `exp`'s
                // place.
                let post = match readers(tape, skip, updates, i).as_slice() {
                    &[m] if m != BY_UPDATE && single(tape, skip, i, m) => scalar_product(tape, m)
                        .filter(|&(f, _)| f == i)
                        .map(|(_, k)| (m, k)),
                    _ => None,
                };
                match post {
                    Some((m, k)) => {
                        tape.ops[m] = fused(Some(k));
                        skip[i] = true;
                    }
                    None => tape.ops[i] = fused(None),
                }
            }
            _ => {}
        }
    }
}

/// What [`readers`] gives for each reference of an in-place update.
const BY_UPDATE: usize = usize::MAX;

/// `(row, scalar, subtracted)` where step `j` is a sum or difference of
/// a row and a scalar step: `subtracted` says which operand a difference
/// subtracts (`Left`: the scalar, `row - scalar`; `Right`: the row,
/// `scalar - row`), `None` for a sum.
fn scalar_sum(tape: &Tape, j: usize) -> Option<(usize, usize, Option<Side>)> {
    let Op::Bin(op @ (Bin::Add | Bin::Sub), a, b) = tape.ops[j] else {
        return None;
    };
    let sub = |side| (op == Bin::Sub).then_some(side);
    match (scalar_op(&tape.ops[a]), scalar_op(&tape.ops[b])) {
        (false, true) => Some((a, b, sub(Side::Left))),
        (true, false) => Some((b, a, sub(Side::Right))),
        _ => None,
    }
}

/// `(factor, scalar)` where step `j` is a product of a row and a scalar
/// step.
fn scalar_product(tape: &Tape, j: usize) -> Option<(usize, usize)> {
    let Op::Bin(Bin::Mul, a, b) = tape.ops[j] else {
        return None;
    };
    match (scalar_op(&tape.ops[a]), scalar_op(&tape.ops[b])) {
        (false, true) => Some((a, b)),
        (true, false) => Some((b, a)),
        _ => None,
    }
}

/// The computed steps of `tape` that read step `j`, and [`BY_UPDATE`]
/// for each update that reads it.
fn readers(tape: &Tape, skip: &[bool], updates: &[Update], j: usize) -> Vec<usize> {
    let steps = (0..tape.ops.len()).filter(|&i| !skip[i] && operands(&tape.ops[i]).contains(&j));
    let by_updates = updates.iter().map(|u| match u.product {
        Some((a, b)) => [a, b].into_iter().filter(|&r| r == j).count(),
        None => usize::from(u.x == j),
    });
    steps
        .chain(by_updates.flat_map(|c| std::iter::repeat_n(BY_UPDATE, c)))
        .collect()
}

dispatch! {
    /// `out = (a op b)²`, compiled for AVX2 where the CPU has it.
    pub(super) fn square<>(a: &[f32], b: &[f32], out: &mut [f32], op: Bin) {
        let it = out.iter_mut().zip(a.iter().zip(b));
        let sq = |d: f32| d * d;
        match op {
            Bin::Add => it.for_each(|(o, (&a, &b))| *o = sq(a + b)),
            Bin::Sub => it.for_each(|(o, (&a, &b))| *o = sq(a - b)),
            Bin::Mul => it.for_each(|(o, (&a, &b))| *o = sq(a * b)),
            Bin::Div => it.for_each(|(o, (&a, &b))| *o = sq(a / b)),
            Bin::Min => it.for_each(|(o, (&a, &b))| *o = sq(a.min(b))),
            Bin::Max => it.for_each(|(o, (&a, &b))| *o = sq(a.max(b))),
        }
    }
}

dispatch! {
    /// `out = exp((a op b)² · s + t) · k`, compiled for AVX2 where the CPU
    /// has it: [`square`]'s value and [`crate::cpu::exp::exp_scaled_row`]'s
    /// of it in one pass (the same bits as the two).
    pub(super) fn exp_square<>(a: &[f32], b: &[f32], op: Bin, s: f32, t: f32, k: f32, out: &mut [f32]) {
        let it = a.iter().zip(b);
        let sq = |d: f32| d * d * s + t;
        match op {
            Bin::Add => exp_each(it.map(|(&a, &b)| sq(a + b)), k, out),
            Bin::Sub => exp_each(it.map(|(&a, &b)| sq(a - b)), k, out),
            Bin::Mul => exp_each(it.map(|(&a, &b)| sq(a * b)), k, out),
            Bin::Div => exp_each(it.map(|(&a, &b)| sq(a / b)), k, out),
            Bin::Min => exp_each(it.map(|(&a, &b)| sq(a.min(b))), k, out),
            Bin::Max => exp_each(it.map(|(&a, &b)| sq(a.max(b))), k, out),
        }
    }
}

dispatch! {
    /// `v = v op (a · b)` (`side` left) or `v = (a · b) op v`, compiled for
    /// AVX2 where the CPU has it: the values of the product step and
    /// [`super::update`] (sums and products commute exactly).
    pub(super) fn update_product<>(v: &mut [f32], a: &[f32], b: &[f32], op: Bin, side: Side) {
        let it = v.iter_mut().zip(a.iter().zip(b));
        match (op, side) {
            (Bin::Add, _) => it.for_each(|(v, (&a, &b))| *v += a * b),
            (Bin::Sub, Side::Left) => it.for_each(|(v, (&a, &b))| *v -= a * b),
            (Bin::Sub, Side::Right) => it.for_each(|(v, (&a, &b))| *v = a * b - *v),
            (Bin::Mul, _) => it.for_each(|(v, (&a, &b))| *v *= a * b),
            (Bin::Div, Side::Left) => it.for_each(|(v, (&a, &b))| *v /= a * b),
            (Bin::Div, Side::Right) => it.for_each(|(v, (&a, &b))| *v = a * b / *v),
            (Bin::Min, Side::Left) => it.for_each(|(v, (&a, &b))| *v = v.min(a * b)),
            (Bin::Min, Side::Right) => it.for_each(|(v, (&a, &b))| *v = (a * b).min(*v)),
            (Bin::Max, Side::Left) => it.for_each(|(v, (&a, &b))| *v = v.max(a * b)),
            (Bin::Max, Side::Right) => it.for_each(|(v, (&a, &b))| *v = (a * b).max(*v)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cpu::exp::exp_scaled_row;

    /// The fused square and `exp` against [`square`] then
    /// [`exp_scaled_row`], on operands whose scaled squares span normal,
    /// subnormal, overflowing and NaN results, for every binary op.
    #[test]
    fn exp_of_a_square_gives_the_bits_of_the_two_passes() {
        let a: Vec<f32> = (0..517).map(|i| (i as f32 * 0.37).sin() * 14.0).collect();
        let mut b: Vec<f32> = (0..517).map(|i| (i as f32 * 0.11).cos() * 3.0).collect();
        b[7] = f32::NAN;
        b[8] = f32::INFINITY;
        b[9] = 0.0;
        let ops = [Bin::Add, Bin::Sub, Bin::Mul, Bin::Div, Bin::Min, Bin::Max];
        for op in ops {
            let cases = [
                (-0.5, 0.0, 1.0),
                (-50.0, 0.0, 0.25),
                (0.4, 0.0, -3.0),
                (-1.0e-3, 0.0, 2.0),
                (-0.5, -2.25, 1.0),
                (-50.0, 40.0, 0.5),
            ];
            for (s, t, k) in cases {
                let mut got = vec![0.0; a.len()];
                exp_square(&a, &b, op, s, t, k, &mut got);
                let mut sq = vec![0.0; a.len()];
                square(&a, &b, &mut sq, op);
                let mut want = vec![0.0; a.len()];
                exp_scaled_row(&sq, s, t, k, &mut want);
                for (i, (g, w)) in got.iter().zip(&want).enumerate() {
                    assert_eq!(
                        g.to_bits(),
                        w.to_bits(),
                        "{op:?} lane {i}, s {s}, t {t}, k {k}"
                    );
                }
            }
        }
    }
}
