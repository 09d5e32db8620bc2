//! Values of an `iterate` body that are the same in every lane of a tap.
//!
//! A bilateral filter written with its spatial weight inside the `exp`,
//! `exp(-((dx * dx + dy * dy) as f32) * s - d * d * r)`, computes
//! `-((dx² + dy²) as f32) · s` from the window offsets and a parameter
//! alone: one value per tap, whatever the pixel. Such a subexpression
//! (built from the offsets, constants, f32 parameters and the mask
//! coefficient at the tap with arithmetic, negation, casts between `i32`
//! and `f32` and `abs`, `sqrt`, `exp` of f32) becomes one scalar step of
//! the body's tape ([`super::Op::Tap`]), computed once per tap and
//! launch here, where the body had no row form for the offsets at all.
//!
//! The value is the evaluator's: `i32` arithmetic wraps, each f32
//! operation rounds as f32, casts follow Rust's `as`, and the math
//! methods are Rust's own (`f32::exp`, not the vectorised row `exp`), so
//! every pixel sees the value the direct body computes at that tap.

use hipacc_core::ir::{BinaryOp, Expr, ExprKind, Intrinsic, ScalarType, UnaryOp, Value, VarId};

/// An expression of the tap: its offset variables, the mask whose
/// coefficient it may read, and the f32 parameters it may read.
pub(super) struct Scope<'a> {
    /// The `iterate`'s offset variables `(dx, dy)`.
    pub offsets: (VarId, VarId),
    /// The `iterate`'s mask slot (`None` over a domain).
    pub mask: Option<usize>,
    /// Per parameter slot: whether it is an f32.
    pub f32_params: &'a [bool],
}

/// Where a tap expression is evaluated.
pub(super) struct At<'a> {
    /// The `iterate`'s offset variables `(dx, dy)`.
    pub offsets: (VarId, VarId),
    /// The tap's offsets from the window's centre.
    pub dx: i32,
    pub dy: i32,
    /// The mask coefficient at the tap (1 over a domain).
    pub coef: f32,
    pub params: &'a [f32],
}

/// Whether `e` is a value of the tap in `scope`: every leaf an offset, a
/// constant, an f32 parameter or the coefficient at the tap, every node
/// one [`value`] computes. A lone constant, parameter or coefficient is
/// one already (the tape has steps for them): `false`.
pub(super) fn is_tap_value(e: &Expr, scope: &Scope) -> bool {
    let leaf = matches!(
        e.kind,
        ExprKind::Const(_) | ExprKind::Param(_) | ExprKind::MaskCoef { .. }
    );
    e.ty.lanes == 1 && e.ty.scalar == ScalarType::F32 && !leaf && valid(e, scope)
}

fn valid(e: &Expr, scope: &Scope) -> bool {
    let is_offset = |e: &Expr, v: VarId| matches!(e.kind, ExprKind::Var(x) if x == v);
    let (vx, vy) = scope.offsets;
    let f32 = e.ty.scalar == ScalarType::F32;
    let typed = e.ty.lanes == 1 && (f32 || e.ty.scalar == ScalarType::I32);
    typed
        && match &e.kind {
            ExprKind::Const(_) => true,
            ExprKind::Param(p) => f32 && scope.f32_params.get(*p) == Some(&true),
            ExprKind::Var(v) => *v == vx || *v == vy,
            ExprKind::MaskCoef { mask, dx, dy } => {
                f32 && scope.mask == Some(*mask) && is_offset(dx, vx) && is_offset(dy, vy)
            }
            ExprKind::Unary {
                op: UnaryOp::Neg,
                arg,
            } => arg.ty == e.ty && valid(arg, scope),
            ExprKind::Binary { op, lhs, rhs } => {
                let arithmetic = match op {
                    BinaryOp::Add | BinaryOp::Sub | BinaryOp::Mul => true,
                    // Integer division can fail (by zero): left to the
                    // direct path.
                    BinaryOp::Div => f32,
                    _ => false,
                };
                arithmetic
                    && lhs.ty == e.ty
                    && rhs.ty == e.ty
                    && valid(lhs, scope)
                    && valid(rhs, scope)
            }
            ExprKind::Cast(arg) => valid(arg, scope),
            ExprKind::Call { func, args } => {
                let unary = matches!(func, Intrinsic::Abs | Intrinsic::Sqrt | Intrinsic::Exp);
                f32 && unary && args.len() == 1 && args[0].ty == e.ty && valid(&args[0], scope)
            }
            _ => false,
        }
}

/// A value while evaluating: the two types [`valid`] admits.
#[derive(Clone, Copy)]
enum V {
    I(i32),
    F(f32),
}

/// The value of `e`, which [`is_tap_value`] accepted in the scope of the
/// walk, at the tap `at`.
pub(super) fn value(e: &Expr, at: &At) -> f32 {
    match eval(e, at) {
        V::F(v) => v,
        V::I(v) => unreachable!("bug: an i32 tap value {v} where an f32 was checked"),
    }
}

fn eval(e: &Expr, at: &At) -> V {
    let f32 = e.ty.scalar == ScalarType::F32;
    match &e.kind {
        ExprKind::Const(l) => match Value::from_literal(*l, e.ty.scalar) {
            Value::F32(v) => V::F(v),
            Value::I32(v) => V::I(v),
            v => unreachable!("bug: a tap constant {v:?}"),
        },
        ExprKind::Param(p) => V::F(at.params[*p]),
        // `valid` admitted no other variable.
        ExprKind::Var(v) if *v == at.offsets.0 => V::I(at.dx),
        ExprKind::Var(_) => V::I(at.dy),
        ExprKind::MaskCoef { .. } => V::F(at.coef),
        ExprKind::Unary { arg, .. } => match eval(arg, at) {
            V::I(a) => V::I(a.wrapping_neg()),
            V::F(a) => V::F(-a),
        },
        ExprKind::Binary { op, lhs, rhs } => match (eval(lhs, at), eval(rhs, at)) {
            (V::I(a), V::I(b)) => V::I(match op {
                BinaryOp::Add => a.wrapping_add(b),
                BinaryOp::Sub => a.wrapping_sub(b),
                _ => a.wrapping_mul(b),
            }),
            (V::F(a), V::F(b)) => V::F(match op {
                BinaryOp::Add => a + b,
                BinaryOp::Sub => a - b,
                BinaryOp::Mul => a * b,
                _ => a / b,
            }),
            _ => unreachable!("bug: mixed operand types in a tap value"),
        },
        ExprKind::Cast(arg) => match (eval(arg, at), f32) {
            (V::I(a), true) => V::F(a as f32),
            (V::F(a), false) => V::I(a as i32),
            (v, _) => v,
        },
        ExprKind::Call { func, args } => {
            let V::F(a) = eval(&args[0], at) else {
                unreachable!("bug: an i32 argument of an f32 method in a tap value")
            };
            V::F(match func {
                Intrinsic::Abs => a.abs(),
                Intrinsic::Sqrt => a.sqrt(),
                _ => a.exp(),
            })
        }
        _ => unreachable!("bug: {:?} in a tap value", e.kind),
    }
}

#[cfg(test)]
mod tests {
    use super::super::{each_taps, program, tap_values};
    use crate::prelude::*;
    use hipacc_core::KernelFields;

    /// The examples' bilateral filter: the spatial term inside the `exp`.
    #[derive(Kernel)]
    #[kernel(output = f32)]
    struct SpatialInExp {
        input: Accessor<f32>,
        window: Domain,
        spatial: f32,
        range: f32,
    }

    #[kernel_body]
    impl SpatialInExp {
        fn kernel(&self) -> f32 {
            let centre = self.input();
            let mut weighted: f32 = 0.0;
            let mut total: f32 = 0.0;
            iterate(&self.window, |dx, dy| {
                let q = self.input.at(dx, dy);
                let d = q - centre;
                let w = (-((dx * dx + dy * dy) as f32) * self.spatial - d * d * self.range).exp();
                weighted += w * q;
                total += w;
            });
            weighted / total
        }
    }

    /// An offset divided by a parameter of type `i32`: not a value of
    /// the tap (integer division can fail).
    #[derive(Kernel)]
    #[kernel(output = f32)]
    struct IntDivision {
        input: Accessor<f32>,
        window: Domain,
        n: i32,
    }

    #[kernel_body]
    impl IntDivision {
        fn kernel(&self) -> f32 {
            let mut s: f32 = 0.0;
            iterate(&self.window, |dx, dy| {
                s += self.input.at(dx, dy) * ((dx / self.n) as f32);
            });
            s
        }
    }

    /// The spatial term is one value of the tap, and the body one weight
    /// and sums of it: the register-held loop runs it, with the term the
    /// evaluator's at every tap.
    #[test]
    fn the_spatial_term_is_a_value_of_the_tap_and_the_body_runs_in_registers() {
        let img = Image::<f32>::new(8, 8).unwrap();
        let k = SpatialInExp {
            input: Accessor::new(&img),
            window: Domain::new(5, 3).unwrap(),
            spatial: 0.3,
            range: 7.0,
        };
        let p = program(&k.ir().unwrap()).expect("a row program");
        let walk = &p.walks[0];
        assert_eq!(walk.tap_values.len(), 1);
        assert!(walk.accumulate.is_some(), "not in registers: {walk:?}");
        let params = [0.3, 7.0];
        let taps = each_taps(walk.window, &k.bindings()).unwrap();
        let values = tap_values(walk, &taps, &params);
        let want: Vec<f32> = (-1..=1)
            .flat_map(|dy: i32| (-2..=2).map(move |dx: i32| (dx, dy)))
            .map(|(dx, dy)| -((dx * dx + dy * dy) as f32) * 0.3)
            .collect();
        assert_eq!(values, want);
    }

    #[test]
    fn integer_division_by_a_parameter_is_not_a_value_of_the_tap() {
        let img = Image::<f32>::new(8, 8).unwrap();
        let k = IntDivision {
            input: Accessor::new(&img),
            window: Domain::new(3, 3).unwrap(),
            n: 0,
        };
        assert!(program(&k.ir().unwrap()).is_none());
    }
}
