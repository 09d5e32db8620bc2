//! Footprint inference: interval analysis of accessor offsets.

mod common;
use common::*;
use hipacc_core::ir::surface::{SBlock, SExpr, SStmt};
use hipacc_core::ir::{footprints, BinaryOp, Footprint};
use hipacc_core::{Accessor, Bindings, Domain, Image, Mask, ReduceOp};

fn fp(x0: i32, x1: i32, y0: i32, y1: i32) -> Option<Footprint> {
    Some(Footprint {
        min_dx: x0,
        max_dx: x1,
        min_dy: y0,
        max_dy: y1,
    })
}

/// Bindings with f32 accessors `a` and `b`, a 5x3 mask `m`, a 3x5 domain
/// `d` with only its middle column and top row enabled, and a parameter `k`.
fn setup() -> Bindings {
    let img = Image::<f32>::new(8, 8).unwrap();
    let mut b = Bindings::default();
    bind(&mut b, "a", &Accessor::new(&img));
    bind(&mut b, "b", &Accessor::new(&img));
    bind(
        &mut b,
        "m",
        &Mask::from_vec(5, 3, vec![1.0f32; 15]).unwrap(),
    );
    let mut d = Domain::new(3, 5).unwrap();
    for (dx, dy) in d.positions() {
        d.set(dx, dy, dx == 0 || dy == -2).unwrap();
    }
    bind(&mut b, "d", &d);
    bind(&mut b, "k", &1i32);
    b
}

fn run_fp(body: SBlock) -> Vec<Option<Footprint>> {
    footprints(&lower::<f32>(&setup(), &body).unwrap())
}

#[test]
fn constant_offsets_and_unread_accessor() {
    let body = value(add(
        add(at_c("a", -1, 0), at_c("a", 1, 0)),
        add(at_c("a", 0, -1), at_c("a", 0, 2)),
    ));
    assert_eq!(run_fp(body), [fp(-1, 1, -1, 2), Some(Footprint::ZERO)]);
}

#[test]
fn loops_lets_and_arithmetic() {
    // for i in -2..=2 { let j = i * 2 + 1; s += a(j, -i) + b(i / 2, 0) }
    let body = block(
        vec![
            let_mut("s", float(0.0)),
            for_(
                "i",
                -2,
                3,
                stmts(vec![
                    let_("j", add(mul(local("i"), int(2)), int(1))),
                    assign(
                        "s",
                        Some(BinaryOp::Add),
                        add(
                            at("a", local("j"), neg(local("i"))),
                            at("b", bin(BinaryOp::Div, local("i"), int(2)), int(0)),
                        ),
                    ),
                ]),
            ),
        ],
        local("s"),
    );
    assert_eq!(run_fp(body), [fp(-3, 5, -2, 2), fp(-1, 1, 0, 0)]);
}

#[test]
fn empty_loop_reads_nothing() {
    let body = block(
        vec![
            let_mut("s", float(0.0)),
            for_(
                "i",
                3,
                3,
                stmts(vec![assign("s", None, at("a", local("i"), int(0)))]),
            ),
        ],
        local("s"),
    );
    assert_eq!(run_fp(body)[0], Some(Footprint::ZERO));
}

#[test]
fn mask_and_domain_windows() {
    let conv = value(convolve(
        "m",
        ReduceOp::Sum,
        mul(
            at("a", local("dx"), local("dy")),
            at("m", local("dx"), local("dy")),
        ),
    ));
    assert_eq!(run_fp(conv)[0], fp(-2, 2, -1, 1));
    // Domain: middle column (dx = 0, dy in -2..=2) plus the top row.
    let red = value(reduce(
        "d",
        ReduceOp::Max,
        at("b", local("dx"), local("dy")),
    ));
    assert_eq!(run_fp(red)[1], fp(-1, 1, -2, 2));
    let mut only_centre = setup();
    only_centre.domains[0].enabled = vec![false; 15];
    only_centre.domains[0].enabled[1 + 3] = true; // (0, -1)
    only_centre.domains[0].enabled[7] = true; // (0, 0)
    let body = value(reduce(
        "d",
        ReduceOp::Sum,
        at("a", local("dx"), add(local("dy"), int(1))),
    ));
    let k = lower::<f32>(&only_centre, &body).unwrap();
    assert_eq!(footprints(&k)[0], fp(0, 0, 0, 1));
    // `iterate` binds its offsets the same way.
    let it = block(
        vec![
            let_mut("s", float(0.0)),
            SStmt::Iterate {
                window: "m",
                dx: "u",
                dy: "v",
                body: stmts(vec![assign(
                    "s",
                    Some(BinaryOp::Add),
                    at("a", local("v"), local("u")),
                )]),
            },
        ],
        local("s"),
    );
    assert_eq!(run_fp(it)[0], fp(-1, 1, -2, 2));
}

#[test]
fn unknown_offsets_are_none() {
    let cases = [
        value(at("a", field("k"), int(0))),
        value(at("a", SExpr::X, int(0))),
        value(at("a", int(0), cast(at_c("b", 0, 0), "i32"))),
        block(
            vec![
                let_mut("o", int(0)),
                assign("o", Some(BinaryOp::Add), int(1)),
            ],
            at("a", local("o"), int(0)),
        ),
        value(at(
            "a",
            bin(BinaryOp::Mul, int(1 << 20), int(1 << 20)),
            int(0),
        )),
    ];
    for body in cases {
        let f = run_fp(body);
        assert_eq!(f[0], None);
    }
    // The inner read of `b` at (0, 0) is still bounded.
    let f = run_fp(value(at("a", int(0), cast(at_c("b", 0, 0), "i32"))));
    assert_eq!(f[1], Some(Footprint::ZERO));
}

#[test]
fn if_offsets_take_both_branches() {
    let c = bin(BinaryOp::Lt, SExpr::X, int(3));
    let body = value(at("a", if_(c, value(offset(-2)), value(int(1))), int(0)));
    assert_eq!(run_fp(body)[0], fp(-2, 1, 0, 0));
}

#[test]
fn union_width_height() {
    let a = Footprint {
        min_dx: -1,
        max_dx: 0,
        min_dy: 2,
        max_dy: 2,
    };
    let b = Footprint {
        min_dx: 3,
        max_dx: 4,
        min_dy: -1,
        max_dy: 0,
    };
    let u = a.union(b);
    assert_eq!(
        u,
        Footprint {
            min_dx: -1,
            max_dx: 4,
            min_dy: -1,
            max_dy: 2
        }
    );
    assert_eq!((u.width(), u.height()), (6, 4));
    assert_eq!((Footprint::ZERO.width(), Footprint::ZERO.height()), (1, 1));
}
