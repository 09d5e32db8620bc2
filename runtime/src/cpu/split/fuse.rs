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
//! - `exp` of a product with a scalar (a constant, parameter or mask
//!   coefficient), of a negation, or both, and a product of the `exp` with
//!   a scalar: [`Op::ExpScaled`];
//! - an in-place update `v op= a · b` of two rows: the product formed in
//!   the update's pass ([`Update::product`]).
//!
//! Every fused pass computes the same f32 operations as the steps it
//! replaces, on the same operands: the same bits (negating a product's
//! factor negates the product exactly, and products commute exactly).

use super::{operands, scalar_op, Bin, Op, Side, Tape, Update};
use crate::cpu::simd::dispatch;

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
                let (mut a, mut neg, mut s) = (x, false, None);
                let mut absorbed = Vec::new();
                if let Some((f, sc)) = scalar_product(tape, x) {
                    if single(tape, skip, x, i) {
                        absorbed.push(x);
                        (a, s) = (f, Some(sc));
                    }
                }
                if let Op::Neg(y) = tape.ops[a] {
                    let by = if s.is_some() { x } else { i };
                    if single(tape, skip, a, by) {
                        absorbed.push(a);
                        (a, neg) = (y, true);
                    }
                }
                for j in absorbed {
                    skip[j] = true;
                }
                let fused = |k| Op::ExpScaled { a, neg, s, k };
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
