//! Name resolution, type inference and binding checks of `ir::lower`.

mod common;
use common::*;
use hipacc_core::ir::surface::{SBlock, SExpr, SStmt};
use hipacc_core::ir::{BinaryOp, ExprKind, Literal, Stmt, Type};
use hipacc_core::{Accessor, Bindings, Domain, Error, Image, Mask, Rect, ReduceOp, Rgba};

fn f32_acc(b: &mut Bindings, name: &'static str) {
    let img = Image::<f32>::new(4, 4).unwrap();
    bind(b, name, &Accessor::new(&img));
}

fn message(r: hipacc_core::Result<hipacc_core::ir::Kernel>) -> String {
    match r {
        Err(Error::InvalidKernel { kernel, message }) => {
            assert_eq!(kernel, "test");
            message
        }
        Err(e) => panic!("expected InvalidKernel, got {e}"),
        Ok(k) => panic!("expected an error, got {k:?}"),
    }
}

#[test]
fn jacobi_literals_become_f32() {
    let mut b = Bindings::default();
    f32_acc(&mut b, "sol");
    f32_acc(&mut b, "rhs");
    bind(&mut b, "omega", &0.8f32);
    let nb = add(
        add(at_c("sol", -1, 0), at_c("sol", 1, 0)),
        add(at_c("sol", 0, -1), at_c("sol", 0, 1)),
    );
    let result = add(
        mul(
            bin(BinaryOp::Sub, float(1.0), field("omega")),
            at_c("sol", 0, 0),
        ),
        mul(
            mul(field("omega"), float(0.25)),
            add(at_c("rhs", 0, 0), local("nb")),
        ),
    );
    let k = lower::<f32>(&b, &block(vec![let_("nb", nb)], result)).unwrap();
    assert_eq!(var_type(&k, "nb"), Type::F32);
    let r = k.body.result.unwrap();
    assert_eq!(r.ty, Type::F32);
    // `1.0` in `(1.0 - omega)` is an f32 literal.
    let ExprKind::Binary { lhs, .. } = r.kind else {
        panic!()
    };
    let ExprKind::Binary { lhs, .. } = lhs.kind else {
        panic!()
    };
    let ExprKind::Binary { lhs: one, .. } = lhs.kind else {
        panic!()
    };
    assert_eq!(one.ty, Type::F32);
    assert_eq!(one.kind, ExprKind::Const(Literal::float(1.0)));
    assert_eq!(k.accessors.len(), 2);
    assert_eq!(k.params[0].name, "omega");
}

#[test]
fn accumulator_takes_type_of_later_compound_assignment() {
    let mut b = Bindings::default();
    f32_acc(&mut b, "input");
    let body = block(
        vec![
            let_mut("acc", float(0.0)),
            assign("acc", Some(BinaryOp::Add), at_c("input", 0, 0)),
        ],
        local("acc"),
    );
    let k = lower::<f32>(&b, &body).unwrap();
    assert_eq!(var_type(&k, "acc"), Type::F32);
    let Stmt::Let { value, .. } = &k.body.stmts[0] else {
        panic!()
    };
    assert_eq!(value.ty, Type::F32);
    let Stmt::Assign { value, .. } = &k.body.stmts[1] else {
        panic!()
    };
    assert!(matches!(
        value.kind,
        ExprKind::Binary {
            op: BinaryOp::Add,
            ..
        }
    ));
}

#[test]
fn unconstrained_literals_default_to_i32_and_f64() {
    let b = Bindings::default();
    let body = block(
        vec![let_("k", int(2)), let_("a", float(1.5))],
        add(cast(local("k"), "f32"), cast(local("a"), "f32")),
    );
    let k = lower::<f32>(&b, &body).unwrap();
    assert_eq!(var_type(&k, "k"), Type::I32);
    assert_eq!(var_type(&k, "a"), Type::F64);
}

#[test]
fn literal_typed_by_later_let_annotation_and_comparison() {
    let mut b = Bindings::default();
    f32_acc(&mut b, "input");
    let body = block(
        vec![
            let_("a", float(2.0)),
            let_ty("b", "f32", local("a")),
            let_("t", float(0.5)),
        ],
        if_(
            bin(BinaryOp::Gt, at_c("input", 0, 0), local("t")),
            value(local("b")),
            value(float(0.0)),
        ),
    );
    let k = lower::<f32>(&b, &body).unwrap();
    assert_eq!(var_type(&k, "a"), Type::F32);
    assert_eq!(var_type(&k, "t"), Type::F32);
}

#[test]
fn casts_do_not_constrain_their_operand() {
    // `let a = 2.0; let i = a as i32; let c: f32 = a;` makes `a` f32.
    let b = Bindings::default();
    let body = block(
        vec![
            let_("a", float(2.0)),
            let_("i", cast(local("a"), "i32")),
            let_ty("c", "f32", local("a")),
        ],
        add(local("c"), cast(local("i"), "f32")),
    );
    let k = lower::<f32>(&b, &body).unwrap();
    assert_eq!(var_type(&k, "a"), Type::F32);
}

#[test]
fn reduce_result_is_body_type_and_offsets_are_i32() {
    let mut b = Bindings::default();
    f32_acc(&mut b, "input");
    bind(&mut b, "dom", &Domain::new(3, 3).unwrap());
    let body = value(reduce(
        "dom",
        ReduceOp::Sum,
        mul(at("input", local("dx"), local("dy")), float(2.0)),
    ));
    let k = lower::<f32>(&b, &body).unwrap();
    assert_eq!(var_type(&k, "dx"), Type::I32);
    let r = k.body.result.unwrap();
    assert!(matches!(r.kind, ExprKind::Reduce { .. }));
    assert_eq!(r.ty, Type::F32);
}

#[test]
fn vectors_broadcast_scalars_and_expose_lanes() {
    let mut b = Bindings::default();
    let img = Image::<Rgba<f32>>::new(2, 2).unwrap();
    bind(&mut b, "input", &Accessor::new(&img));
    bind(&mut b, "gain", &2.0f32);
    let body = block(
        vec![
            let_("p", at_c("input", 0, 0)),
            let_(
                "v",
                SExpr::MakeVec(vec![
                    float(1.0),
                    float(2.0),
                    float(3.0),
                    SExpr::Lane(Box::new(local("p")), 0),
                ]),
            ),
            let_("s", mul(float(2.0), local("v"))),
        ],
        add(mul(local("s"), field("gain")), local("p")),
    );
    let k = lower::<Rgba<f32>>(&b, &body).unwrap();
    assert_eq!(
        var_type(&k, "v"),
        Type::vec4(hipacc_core::ir::ScalarType::F32)
    );
    assert_eq!(
        var_type(&k, "s"),
        Type::vec4(hipacc_core::ir::ScalarType::F32)
    );
    // An integer literal cannot broadcast into an f32 vector.
    let bad = value(mul(at_c("input", 0, 0), int(2)));
    assert!(message(lower::<Rgba<f32>>(&b, &bad)).contains("mismatched types"));
}

#[test]
fn shifts_keep_the_left_type() {
    let b = Bindings::default();
    let body = value(bin(BinaryOp::Shl, int(1), int_s(3, "u32")));
    let k = lower::<i32>(&b, &body).unwrap();
    let ExprKind::Binary { rhs, .. } = k.body.result.unwrap().kind else {
        panic!()
    };
    assert_eq!(rhs.ty, Type::scalar(hipacc_core::ir::ScalarType::U32));
}

#[test]
fn shadowing_makes_new_variables() {
    let b = Bindings::default();
    let body = block(
        vec![
            let_("a", int(1)),
            let_("a", add(cast(local("a"), "f32"), float(0.5))),
        ],
        local("a"),
    );
    let k = lower::<f32>(&b, &body).unwrap();
    let types: Vec<_> = k.vars.iter().map(|v| (v.name.as_str(), v.ty)).collect();
    assert_eq!(types, [("a", Type::I32), ("a", Type::F32)]);
}

#[test]
fn integer_suffix_f32_is_a_float() {
    let k = lower::<f32>(&Bindings::default(), &value(int_s(3, "f32"))).unwrap();
    let r = k.body.result.unwrap();
    assert_eq!(
        (r.ty, r.kind),
        (Type::F32, ExprKind::Const(Literal::float(3.0)))
    );
}

#[test]
fn statement_if_and_value_blocks() {
    let b = Bindings::default();
    let body = block(
        vec![
            let_mut("s", float(0.0)),
            SStmt::Expr(if_(
                bin(BinaryOp::Lt, SExpr::X, int(2)),
                stmts(vec![assign("s", Some(BinaryOp::Add), float(1.0))]),
                SBlock::default(),
            )),
            let_(
                "t",
                SExpr::Block(Box::new(block(vec![let_("u", float(2.0))], local("u")))),
            ),
        ],
        add(local("s"), local("t")),
    );
    let k = lower::<f32>(&b, &body).unwrap();
    assert!(matches!(k.body.stmts[1], Stmt::If { .. }));
    let Stmt::Let { value, .. } = &k.body.stmts[2] else {
        panic!()
    };
    assert!(matches!(value.kind, ExprKind::If { .. }));
    assert_eq!(var_type(&k, "u"), Type::F32);
}

#[test]
fn method_on_ambiguous_literal_is_rejected() {
    let body = value(method(float(2.0), "sqrt", vec![]));
    let m = message(lower::<f32>(&Bindings::default(), &body));
    assert!(m.contains("ambiguous numeric type `{float}`"), "{m}");
    let ok = value(method(float_s(2.0, "f32"), "powi", vec![int(2)]));
    assert!(lower::<f32>(&Bindings::default(), &ok).is_ok());
}

#[test]
fn name_errors_say_what_is_allowed() {
    let mut b = Bindings::default();
    f32_acc(&mut b, "input");
    bind(&mut b, "gain", &1.0f32);
    bind(&mut b, "dom", &Domain::new(3, 3).unwrap());
    let cases: Vec<(SBlock, &str)> = vec![
        (value(at_c("nope", 0, 0)), "`self.nope` is not a field"),
        (value(at_c("gain", 0, 0)), "only accessors and masks"),
        (value(field("input")), "self.input.at(dx, dy)"),
        (value(field("dom")), "domain `dom` has no value"),
        (value(local("zz")), "unknown variable `zz`"),
        (value(local("gain")), "the field is `self.gain`"),
        (
            value(convolve("dom", ReduceOp::Sum, float(1.0))),
            "`convolve` needs a mask",
        ),
        (
            value(reduce("gain", ReduceOp::Sum, float(1.0))),
            "mask or a domain",
        ),
        (
            block(
                vec![let_("a", float(1.0)), assign("a", None, float(2.0))],
                local("a"),
            ),
            "immutable variable `a`",
        ),
        (
            value(method(field("gain"), "frobnicate", vec![])),
            "unknown method",
        ),
        (
            value(add(field("gain"), float_s(1.0, "f64"))),
            "mismatched types",
        ),
        (value(int(1)), "wrong type"),
        (stmts(vec![let_("a", float(1.0))]), "no value"),
        (
            block(vec![let_ty("a", "u8", int(300))], cast(local("a"), "f32")),
            "out of range",
        ),
        (
            value(cast(neg(cast(field("gain"), "u32")), "f32")),
            "unary operator `-`",
        ),
        (value(cast(SExpr::Bool(true), "f32")), "cannot cast"),
    ];
    for (body, want) in cases {
        let m = message(lower::<f32>(&b, &body));
        assert!(m.contains(want), "expected `{want}` in: {m}");
    }
}

#[test]
fn bindings_are_checked() {
    let img = Image::<f32>::new(4, 4).unwrap();
    let body = value(float(0.0));
    let mut b = Bindings::default();
    bind(
        &mut b,
        "a",
        &Accessor::new(&img).with_region(Rect::new(2, 2, 4, 1)),
    );
    assert!(message(lower::<f32>(&b, &body)).contains("accessor `a`"));

    let mut b = Bindings::default();
    let mut dom = Domain::new(1, 3).unwrap();
    for dy in -1..=1 {
        dom.set(0, dy, false).unwrap();
    }
    bind(&mut b, "d", &dom);
    assert!(message(lower::<f32>(&b, &body)).contains("enables no position"));

    let mut b = Bindings::default();
    bind(&mut b, "m", &Mask::new([[1.0f32, 2.0, 1.0]]).unwrap());
    b.masks[0].slot.width = 2;
    assert!(message(lower::<f32>(&b, &body)).contains("must be odd"));

    let mut b = Bindings::default();
    bind(&mut b, "x", &1.0f32);
    bind(&mut b, "x", &Accessor::new(&img));
    assert!(message(lower::<f32>(&b, &body)).contains("two fields are named `x`"));
}
