//! The evaluator's arithmetic: every operator and intrinsic in its type's
//! precision, Rust's integer and cast semantics, reductions, vectors, ROI,
//! aliasing and the typed `evaluate_kernel`.

mod common;
use common::*;
use hipacc_core::ir::surface::{SBlock, SExpr, SStmt};
use hipacc_core::ir::{self, BinaryOp, Value};
use hipacc_core::{
    Accessor, Bindings, Boundary, Domain, Error, Image, IterationSpace, Mask, Pixel, Rect,
    ReduceOp, Reducible, Rgba,
};

/// Parameters `i`, `j` (i32), `u`, `v` (u8), `big` (i32::MAX), `zero`
/// (i32), `f`, `g`, `nan` (f32), `d` (f64), `w` (u32).
fn params() -> Bindings {
    let mut b = Bindings::default();
    bind(&mut b, "i", &-7i32);
    bind(&mut b, "j", &3i32);
    bind(&mut b, "u", &200u8);
    bind(&mut b, "v", &100u8);
    bind(&mut b, "big", &i32::MAX);
    bind(&mut b, "zero", &0i32);
    bind(&mut b, "f", &0.7f32);
    bind(&mut b, "g", &1.3f32);
    bind(&mut b, "nan", &f32::NAN);
    bind(&mut b, "d", &0.7f64);
    bind(&mut b, "w", &5u32);
    b
}

fn eval<T: Pixel>(body: SExpr) -> T {
    let v = run_value::<T>(&params(), &value(body)).unwrap();
    T::from_value(v).unwrap()
}

fn op(o: BinaryOp, a: &'static str, b: &'static str) -> SExpr {
    bin(o, field(a), field(b))
}

#[test]
fn integer_operators_follow_rust() {
    use BinaryOp::*;
    let (i, j) = (-7i32, 3i32);
    let cases: [(SExpr, i32); 10] = [
        (op(Add, "i", "j"), i + j),
        (op(Sub, "i", "j"), i - j),
        (op(Mul, "i", "j"), i * j),
        (op(Div, "i", "j"), i / j),
        (op(Rem, "i", "j"), i % j),
        (op(And, "i", "j"), i & j),
        (op(Or, "i", "j"), i | j),
        (op(BitXor, "i", "j"), i ^ j),
        (op(Shr, "i", "j"), i >> j),
        (bin(Shl, field("i"), field("w")), i << 5),
    ];
    for (body, want) in cases {
        assert_eq!(eval::<i32>(body.clone()), want, "{body:?}");
    }
    assert_eq!(eval::<i32>(neg(field("i"))), 7);
    assert_eq!(
        eval::<i32>(SExpr::Unary(ir::UnaryOp::Not, Box::new(field("i")))),
        !i
    );
    assert_eq!(eval::<i32>(add(field("big"), int(1))), i32::MIN);
    assert_eq!(eval::<u8>(op(Add, "u", "v")), 200u8.wrapping_add(100));
    assert_eq!(eval::<u8>(op(Sub, "v", "u")), 100u8.wrapping_sub(200));
    assert_eq!(eval::<u8>(op(Mul, "u", "v")), 200u8.wrapping_mul(100));
    // Shift amounts wrap modulo the width, as Rust without overflow checks.
    assert_eq!(eval::<i32>(bin(Shl, int(1), int(33))), 2);
}

#[test]
fn integer_division_by_zero_is_an_error() {
    for o in [BinaryOp::Div, BinaryOp::Rem] {
        let e = run_value::<i32>(&params(), &value(op(o, "i", "zero"))).unwrap_err();
        assert!(
            matches!(&e, Error::Evaluation { x: 0, y: 0, message, .. } if message.contains("division by zero")),
            "{e}"
        );
    }
    let min = bin(BinaryOp::Sub, neg(field("big")), int(1));
    let e = run_value::<i32>(&params(), &value(bin(BinaryOp::Div, min, neg(int(1))))).unwrap_err();
    assert!(e.to_string().contains("overflow"), "{e}");
}

#[test]
fn float_operators_round_in_their_own_type() {
    use BinaryOp::*;
    let (f, g) = (0.7f32, 1.3f32);
    let cases: [(SExpr, f32); 5] = [
        (op(Add, "f", "g"), f + g),
        (op(Sub, "f", "g"), f - g),
        (op(Mul, "f", "g"), f * g),
        (op(Div, "f", "g"), f / g),
        (op(Rem, "g", "f"), g % f),
    ];
    for (body, want) in cases {
        assert_eq!(
            eval::<f32>(body.clone()).to_bits(),
            want.to_bits(),
            "{body:?}"
        );
    }
    // `f / 3.0` in f32 differs from computing in f64 and rounding.
    let third = eval::<f32>(bin(Div, field("f"), float(3.0)));
    assert_eq!(third, 0.7f32 / 3.0);
    assert_eq!(eval::<f64>(bin(Div, field("d"), float(3.0))), 0.7f64 / 3.0);
    let cmp = |o, a: &'static str, b: &'static str| {
        eval::<i32>(if_(op(o, a, b), value(int(1)), value(int(0))))
    };
    assert_eq!(
        [cmp(Lt, "f", "g"), cmp(Le, "g", "f"), cmp(Gt, "g", "f")],
        [1, 0, 1]
    );
    assert_eq!(
        [
            cmp(Eq, "nan", "nan"),
            cmp(Ne, "nan", "nan"),
            cmp(Ge, "f", "f")
        ],
        [0, 1, 1]
    );
}

#[test]
fn casts_follow_rust_as() {
    assert_eq!(eval::<u8>(cast(neg(float_s(1.5, "f32")), "u8")), 0);
    assert_eq!(eval::<u8>(cast(float(300.7), "u8")), 255);
    assert_eq!(eval::<i32>(cast(field("nan"), "i32")), 0);
    assert_eq!(eval::<u32>(cast(field("i"), "u32")), (-7i32) as u32);
    assert_eq!(eval::<u8>(cast(int(258), "u8")), 2);
    assert_eq!(eval::<i32>(cast(float(-3.99), "i32")), -3);
    assert_eq!(eval::<i32>(cast(SExpr::Bool(true), "i32")), 1);
    assert_eq!(eval::<f32>(cast(field("d"), "f32")), 0.7f64 as f32);
    assert_eq!(eval::<f64>(cast(field("f"), "f64")), 0.7f32 as f64);
}

type Unary = fn(f32) -> f32;
type Binary = fn(f32, f32) -> f32;

#[test]
fn float_intrinsics_call_rust_functions() {
    let (x, y) = (0.7f32, 1.3f32);
    let unary: [(&str, Unary); 15] = [
        ("abs", f32::abs),
        ("sqrt", f32::sqrt),
        ("exp", f32::exp),
        ("exp2", f32::exp2),
        ("ln", f32::ln),
        ("log2", f32::log2),
        ("log10", f32::log10),
        ("sin", f32::sin),
        ("cos", f32::cos),
        ("tan", f32::tan),
        ("atan", f32::atan),
        ("floor", f32::floor),
        ("ceil", f32::ceil),
        ("round", f32::round),
        ("signum", f32::signum),
    ];
    for (name, f) in unary {
        for (arg, val) in [(field("f"), x), (neg(field("g")), -y)] {
            let got = eval::<f32>(method(arg, name, vec![]));
            assert_eq!(got.to_bits(), f(val).to_bits(), "{name}({val})");
        }
    }
    let binary: [(&str, Binary); 5] = [
        ("powf", f32::powf),
        ("atan2", f32::atan2),
        ("hypot", f32::hypot),
        ("min", f32::min),
        ("max", f32::max),
    ];
    for (name, f) in binary {
        let got = eval::<f32>(method(field("f"), name, vec![field("g")]));
        assert_eq!(got.to_bits(), f(x, y).to_bits(), "{name}");
    }
    assert_eq!(
        eval::<f32>(method(field("nan"), "min", vec![field("f")])),
        x
    );
    assert_eq!(
        eval::<f32>(method(field("f"), "max", vec![field("nan")])),
        x
    );
    assert_eq!(
        eval::<f32>(method(field("g"), "powi", vec![int(3)])),
        y.powi(3)
    );
    assert_eq!(
        eval::<f32>(method(field("f"), "mul_add", vec![field("g"), field("f")])),
        x.mul_add(y, x)
    );
    assert_eq!(
        eval::<f32>(method(field("g"), "clamp", vec![float(0.0), field("f")])),
        x
    );
    assert_eq!(
        eval::<f32>(method(float_s(2.5, "f32"), "round", vec![])),
        3.0
    );
    assert_eq!(
        eval::<f32>(method(neg(float_s(2.5, "f32")), "round", vec![])),
        -3.0
    );
    assert_eq!(eval::<f64>(method(field("d"), "exp", vec![])), 0.7f64.exp());
    let e = run_value::<f32>(
        &params(),
        &value(method(field("f"), "clamp", vec![field("g"), field("f")])),
    );
    assert!(e.unwrap_err().to_string().contains("clamp"));
}

#[test]
fn integer_intrinsics() {
    assert_eq!(eval::<i32>(method(field("i"), "abs", vec![])), 7);
    assert_eq!(eval::<i32>(method(field("i"), "signum", vec![])), -1);
    assert_eq!(eval::<i32>(method(field("i"), "min", vec![field("j")])), -7);
    assert_eq!(eval::<i32>(method(field("i"), "max", vec![field("j")])), 3);
    assert_eq!(
        eval::<i32>(method(field("i"), "clamp", vec![neg(int(2)), int(2)])),
        -2
    );
    assert_eq!(eval::<u8>(method(field("u"), "min", vec![field("v")])), 100);
    let e = run_value::<i32>(
        &params(),
        &value(method(field("i"), "clamp", vec![int(2), int(1)])),
    );
    assert!(e.unwrap_err().to_string().contains("clamp"));
}

#[test]
fn short_circuit_skips_the_right_operand() {
    // x() == 0 || src(-1, 0) > 0: at x = 0 the Undefined read is not made.
    let img = Image::from_vec(3, 1, vec![1.0f32, -1.0, 2.0]).unwrap();
    let mut b = Bindings::default();
    bind(&mut b, "src", &Accessor::new(&img));
    let c = bin(
        BinaryOp::Or,
        bin(BinaryOp::Eq, SExpr::X, int(0)),
        bin(BinaryOp::Gt, at_c("src", -1, 0), float(0.0)),
    );
    let out = run::<f32>(
        &b,
        &value(if_(c, value(float(1.0)), value(float(2.0)))),
        3,
        1,
    )
    .unwrap();
    assert_eq!(out, [1.0, 1.0, 2.0]);
}

/// A 4x3 image, a 3x3 mask and a domain without its corners.
fn window_bindings<T: Pixel>(px: impl Fn(usize, usize) -> T, coef: [[T; 3]; 3]) -> Bindings {
    let img = Image::from_fn(4, 3, px).unwrap();
    let mut b = Bindings::default();
    bind(
        &mut b,
        "a",
        &Accessor::new(&img).with_boundary(Boundary::Mirror),
    );
    bind(&mut b, "m", &Mask::new(coef).unwrap());
    let mut d = Domain::new(3, 3).unwrap();
    for (dx, dy) in [(-1, -1), (1, -1), (-1, 1), (1, 1)] {
        d.set(dx, dy, false).unwrap();
    }
    bind(&mut b, "d", &d);
    b
}

/// The reduction computed directly: row-major positions, first value as start.
fn direct<T: Pixel + Reducible>(op: ReduceOp, vals: &[T]) -> T {
    let f = |a: T, b: T| match op {
        ReduceOp::Sum => a.r_sum(b),
        ReduceOp::Prod => a.r_prod(b),
        ReduceOp::Min => a.r_min(b),
        ReduceOp::Max => a.r_max(b),
    };
    vals[1..].iter().fold(vals[0], |a, &b| f(a, b))
}

fn mirror(i: i64, n: i64) -> usize {
    hipacc_core::boundary::mirror(i, n) as usize
}

fn check_reductions<T: Pixel + Reducible>(px: fn(usize, usize) -> T, coef: [[T; 3]; 3]) {
    let b = window_bindings(px, coef);
    let ops = [ReduceOp::Sum, ReduceOp::Min, ReduceOp::Max, ReduceOp::Prod];
    for op in ops {
        for window in ["m", "d"] {
            let term = mul(
                at("a", local("dx"), local("dy")),
                at("m", local("dx"), local("dy")),
            );
            let body = if window == "m" {
                convolve("m", op, term)
            } else {
                reduce("d", op, term)
            };
            let got = run::<T>(&b, &value(body), 4, 3).unwrap();
            for y in 0..3i64 {
                for x in 0..4i64 {
                    let mut vals = Vec::new();
                    for dy in -1..=1i64 {
                        for dx in -1..=1i64 {
                            if window == "d" && dx != 0 && dy != 0 {
                                continue;
                            }
                            let p = px(mirror(x + dx, 4), mirror(y + dy, 3));
                            let c = coef[(dy + 1) as usize][(dx + 1) as usize];
                            vals.push(T::from_value(ir_mul(p.to_value(), c.to_value())).unwrap());
                        }
                    }
                    let want = direct(op, &vals);
                    assert_eq!(
                        got[(y * 4 + x) as usize],
                        want,
                        "{op:?} over {window} at ({x}, {y})"
                    );
                }
            }
        }
    }
}

/// `a * b` on values, as Rust computes it.
fn ir_mul(a: Value, b: Value) -> Value {
    match (a, b) {
        (Value::F32(a), Value::F32(b)) => Value::F32(a * b),
        (Value::I32(a), Value::I32(b)) => Value::I32(a.wrapping_mul(b)),
        (Value::Vec4(_), Value::Vec4(_)) => {
            let (a, b) = (
                Rgba::<f32>::from_value(a).unwrap(),
                Rgba::<f32>::from_value(b).unwrap(),
            );
            (a * b).to_value()
        }
        _ => unreachable!(),
    }
}

#[test]
fn reductions_all_ops_over_masks_and_domains() {
    check_reductions(
        |x, y| 0.1 + x as f32 * 0.37 - y as f32 * 0.91,
        [[0.5, -1.0, 0.25], [2.0, 0.125, -0.5], [1.5, 0.75, -2.0]],
    );
    check_reductions(
        |x, y| (x as i32 * 7 - y as i32 * 5) * 1000,
        [[3, -1, 2], [0, 7, -4], [5, 1, -3]],
    );
    check_reductions(
        |x, y| Rgba::new(x as f32, y as f32 - 1.5, 0.3 * x as f32, 1.0),
        [
            [Rgba::splat(0.5), Rgba::splat(-1.0), Rgba::splat(2.0)],
            [
                Rgba::new(1.0, 2.0, 3.0, 4.0),
                Rgba::splat(1.0),
                Rgba::splat(0.25),
            ],
            [Rgba::splat(3.0), Rgba::splat(-0.5), Rgba::splat(1.5)],
        ],
    );
}

#[test]
fn loops_iterate_and_mask_outside_is_zero() {
    let b = window_bindings(
        |x, y| (x + 10 * y) as i32,
        [[1, 2, 3], [4, 5, 6], [7, 8, 9]],
    );
    // s = sum over i in -2..=2 of m(i, 0)  (= 4 + 5 + 6, outside is 0)
    // t = sum over the domain of a(dx, dy) via iterate
    let body = block(
        vec![
            let_mut("s", int(0)),
            for_(
                "i",
                -2,
                3,
                stmts(vec![assign(
                    "s",
                    Some(BinaryOp::Add),
                    at("m", local("i"), int(0)),
                )]),
            ),
            let_mut("t", int(0)),
            SStmt::Iterate {
                window: "d",
                dx: "p",
                dy: "q",
                body: stmts(vec![assign(
                    "t",
                    Some(BinaryOp::Add),
                    at("a", local("p"), local("q")),
                )]),
            },
        ],
        add(mul(local("s"), int(1000)), local("t")),
    );
    let got = run::<i32>(&b, &body, 4, 3).unwrap();
    // pixel (1, 1): neighbours 11, 1, 21, 10, 12.
    assert_eq!(got[4 + 1], 15 * 1000 + 11 + 1 + 21 + 10 + 12);
}

#[test]
fn rgba_arithmetic_lanes_and_methods() {
    let img = Image::from_vec(1, 1, vec![Rgba::new(4.0f32, 9.0, 16.0, 25.0)]).unwrap();
    let mut b = Bindings::default();
    bind(&mut b, "a", &Accessor::new(&img));
    bind(&mut b, "k", &0.5f32);
    let p = || at_c("a", 0, 0);
    let body = block(
        vec![
            let_("s", method(p(), "sqrt", vec![])),
            let_("q", mul(float(2.0), local("s"))),
            let_(
                "r",
                add(
                    mul(local("q"), field("k")),
                    SExpr::MakeVec(vec![
                        SExpr::Lane(Box::new(p()), 3),
                        float(0.0),
                        float(0.0),
                        float(0.0),
                    ]),
                ),
            ),
        ],
        method(
            method(local("r"), "powf", vec![float(2.0)]),
            "clamp",
            vec![float(0.0), float(20.0)],
        ),
    );
    let got = run::<Rgba<f32>>(&b, &body, 1, 1).unwrap();
    assert_eq!(got[0], Rgba::new(20.0, 9.0, 16.0, 20.0));
    let lane = run::<f32>(
        &b,
        &value(SExpr::Lane(
            Box::new(bin(BinaryOp::Sub, p(), field("k"))),
            2,
        )),
        1,
        1,
    );
    assert_eq!(lane.unwrap(), [15.5]);
}

#[test]
fn roi_writes_only_the_space_and_maps_the_accessor_region() {
    let img = Image::from_fn(6, 4, |x, y| (x + 10 * y) as i32).unwrap();
    let mut b = Bindings::default();
    bind(
        &mut b,
        "a",
        &Accessor::new(&img)
            .with_region(Rect::new(2, 1, 3, 2))
            .with_boundary(Boundary::Clamp),
    );
    bind(&mut b, "c", &0i32);
    let k = lower::<i32>(&b, &value(add(at_c("a", 0, 0), mul(SExpr::X, int(100))))).unwrap();
    let out = Image::from_vec(5, 3, vec![-1i32; 15]).unwrap();
    ir::evaluate(&k, &b, &*out.to_dyn(), Rect::new(1, 1, 4, 2)).unwrap();
    let got = out.to_vec().unwrap();
    #[rustfmt::skip]
    let want = [
        -1,  -1,  -1,  -1,  -1,
        -1, 112, 213, 314, 414,
        -1, 122, 223, 324, 424,
    ];
    assert_eq!(got, want);
}

#[test]
fn aliasing_and_mismatched_outputs_are_errors() {
    let img = Image::<f32>::new(2, 2).unwrap();
    let mut b = Bindings::default();
    bind(&mut b, "a", &Accessor::new(&img));
    let k = lower::<f32>(&b, &value(at_c("a", 0, 0))).unwrap();
    let e = ir::evaluate(&k, &b, &*img.to_dyn(), Rect::full(2, 2)).unwrap_err();
    assert!(
        matches!(e, Error::Aliasing { ref accessor, .. } if accessor == "a"),
        "{e}"
    );
    let wrong = Image::<i32>::new(2, 2).unwrap();
    assert!(ir::evaluate(&k, &b, &*wrong.to_dyn(), Rect::full(2, 2)).is_err());
    let out = Image::<f32>::new(2, 2).unwrap();
    assert!(ir::evaluate(&k, &b, &*out.to_dyn(), Rect::new(1, 1, 2, 2)).is_err());
}

/// A kernel implemented by hand (what the derive and body macros generate).
struct Double {
    input: Accessor<f32>,
}

impl hipacc_core::KernelFields for Double {
    type Output = f32;
    type CpuViews<'a> = ();
    const NAME: &'static str = "Double";
    fn bindings(&self) -> Bindings {
        let mut b = Bindings::default();
        bind(&mut b, "input", &self.input);
        b
    }
    fn cpu_views(&self, _origin: (usize, usize)) -> hipacc_core::Result<()> {
        Ok(())
    }
}

impl hipacc_core::KernelBody for Double {
    fn surface() -> &'static SBlock {
        static BODY: std::sync::OnceLock<SBlock> = std::sync::OnceLock::new();
        BODY.get_or_init(|| value(mul(at_c("input", 0, 0), float(2.0))))
    }
    unsafe fn cpu_pixel<M: hipacc_core::cpu::ReadMode>(_: &(), _: isize, _: isize) -> f32 {
        0.0
    }
}

#[test]
fn evaluate_kernel_runs_a_typed_kernel() {
    let input = Image::from_fn(3, 2, |x, y| (x + 3 * y) as f32).unwrap();
    let out = Image::<f32>::new(3, 2).unwrap();
    let k = Double {
        input: Accessor::new(&input),
    };
    ir::evaluate_kernel(&k, &IterationSpace::full(&out)).unwrap();
    assert_eq!(out.to_vec().unwrap(), [0.0, 2.0, 4.0, 6.0, 8.0, 10.0]);
    let alias = Double {
        input: Accessor::new(&out),
    };
    assert!(matches!(
        ir::evaluate_kernel(&alias, &IterationSpace::full(&out)),
        Err(Error::Aliasing { .. })
    ));
}
