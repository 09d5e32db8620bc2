//! `#[kernel_body]` captures the body as the surface AST the IR lowering
//! reads: each test writes a kernel and the `SBlock` it must produce.

use hipacc_core::ir::surface::{SBlock, SExpr, SStmt};
use hipacc_core::ir::{BinaryOp, ReduceOp, UnaryOp};
use hipacc_core::{kernel_body, Accessor, Domain, Kernel, KernelBody, KernelFields, Mask, Rgba};

fn int(value: i64) -> SExpr {
    SExpr::Int {
        value,
        suffix: None,
    }
}

fn float(value: f64) -> SExpr {
    SExpr::Float {
        value,
        suffix: None,
    }
}

fn local(name: &'static str) -> SExpr {
    SExpr::Local(name)
}

fn at(field: &'static str, dx: SExpr, dy: SExpr) -> SExpr {
    SExpr::At {
        field,
        dx: Box::new(dx),
        dy: Box::new(dy),
    }
}

fn bin(op: BinaryOp, a: SExpr, b: SExpr) -> SExpr {
    SExpr::Binary(op, Box::new(a), Box::new(b))
}

fn neg(e: SExpr) -> SExpr {
    SExpr::Unary(UnaryOp::Neg, Box::new(e))
}

fn block(stmts: Vec<SStmt>, result: Option<SExpr>) -> SBlock {
    SBlock {
        stmts,
        result: result.map(Box::new),
    }
}

fn let_(name: &'static str, init: SExpr) -> SStmt {
    SStmt::Let {
        name,
        mutable: false,
        ty: None,
        init,
    }
}

#[derive(Kernel)]
#[kernel(output = f32)]
struct Jacobi {
    sol: Accessor<f32>,
    rhs: Accessor<f32>,
    omega: f32,
}

#[kernel_body]
impl Jacobi {
    fn kernel(&self) -> f32 {
        let nb = self.sol.at(-1, 0) + self.sol.at(1, 0);
        (1.0 - self.omega) * self.sol() + self.omega * 0.25 * (self.rhs() + nb)
    }
}

#[test]
fn jacobi_reads_neighbours_fields_and_centre() {
    use BinaryOp::{Add, Mul, Sub};
    let nb = bin(
        Add,
        at("sol", neg(int(1)), int(0)),
        at("sol", int(1), int(0)),
    );
    let value = bin(
        Add,
        bin(
            Mul,
            bin(Sub, float(1.0), SExpr::Field("omega")),
            at("sol", int(0), int(0)),
        ),
        bin(
            Mul,
            bin(Mul, SExpr::Field("omega"), float(0.25)),
            bin(Add, at("rhs", int(0), int(0)), local("nb")),
        ),
    );
    assert_eq!(*Jacobi::surface(), block(vec![let_("nb", nb)], Some(value)));
    assert_eq!(Jacobi::NAME, "Jacobi");
}

#[test]
fn surface_is_built_once() {
    assert!(std::ptr::eq(Jacobi::surface(), Jacobi::surface()));
}

#[derive(Kernel)]
#[kernel(output = i32)]
struct Loops {
    input: Accessor<u8>,
}

#[kernel_body]
impl Loops {
    fn kernel(&self) -> i32 {
        let mut s: i32 = 0;
        for i in -2..=2 {
            s += self.input.at(i, 0) as i32;
        }
        if x() > 3 {
            s = s * 2 - 1;
        }
        if y() == 0 {
            s
        } else if s < 10u8 as i32 {
            -s
        } else {
            !s
        }
    }
}

#[test]
fn loops_assignments_and_if_chains() {
    use BinaryOp::{Eq, Gt, Lt, Mul};
    let no_else = block(vec![], None);
    let for_body = block(
        vec![SStmt::Assign {
            name: "s",
            op: Some(BinaryOp::Add),
            value: SExpr::Cast(Box::new(at("input", local("i"), int(0))), "i32"),
        }],
        None,
    );
    let double = block(
        vec![SStmt::Assign {
            name: "s",
            op: None,
            value: bin(BinaryOp::Sub, bin(Mul, local("s"), int(2)), int(1)),
        }],
        None,
    );
    let ten_u8 = SExpr::Int {
        value: 10,
        suffix: Some("u8"),
    };
    let inner_if = SExpr::If(
        Box::new(bin(Lt, local("s"), SExpr::Cast(Box::new(ten_u8), "i32"))),
        Box::new(block(vec![], Some(neg(local("s"))))),
        Box::new(block(
            vec![],
            Some(SExpr::Unary(UnaryOp::Not, Box::new(local("s")))),
        )),
    );
    let result = SExpr::If(
        Box::new(bin(Eq, SExpr::Y, int(0))),
        Box::new(block(vec![], Some(local("s")))),
        Box::new(block(vec![], Some(inner_if))),
    );
    let expected = block(
        vec![
            SStmt::Let {
                name: "s",
                mutable: true,
                ty: Some("i32"),
                init: int(0),
            },
            SStmt::For {
                var: "i",
                start: -2,
                end: 3,
                body: for_body,
            },
            SStmt::Expr(SExpr::If(
                Box::new(bin(Gt, SExpr::X, int(3))),
                Box::new(double),
                Box::new(no_else),
            )),
        ],
        Some(result),
    );
    assert_eq!(*Loops::surface(), expected);
}

#[derive(Kernel)]
#[kernel(output = f32)]
struct Windows {
    input: Accessor<f32>,
    mask: Mask<f32>,
    dom: Domain,
}

#[kernel_body]
impl Windows {
    fn kernel(&self) -> f32 {
        let c = convolve(&self.mask, Sum, |dx, dy| {
            self.mask.at(dx, dy) * self.input.at(dx, dy)
        });
        let m = reduce(&self.dom, Max, |dx, dy| self.input.at(dx, dy));
        let mut s = 0.0f32;
        iterate(&self.dom, |dx, dy| {
            s += self.input.at(dx, dy);
        });
        c + m.max(s.sqrt()) + 1f32
    }
}

#[test]
fn reduce_convolve_iterate_and_methods() {
    use BinaryOp::{Add, Mul};
    let conv = SExpr::Reduce {
        window: "mask",
        convolve: true,
        op: ReduceOp::Sum,
        dx: "dx",
        dy: "dy",
        // rustfmt wraps the long closure body in a block.
        body: Box::new(SExpr::Block(Box::new(block(
            vec![],
            Some(bin(
                Mul,
                at("mask", local("dx"), local("dy")),
                at("input", local("dx"), local("dy")),
            )),
        )))),
    };
    let max = SExpr::Reduce {
        window: "dom",
        convolve: false,
        op: ReduceOp::Max,
        dx: "dx",
        dy: "dy",
        body: Box::new(at("input", local("dx"), local("dy"))),
    };
    let iterate = SStmt::Iterate {
        window: "dom",
        dx: "dx",
        dy: "dy",
        body: block(
            vec![SStmt::Assign {
                name: "s",
                op: Some(Add),
                value: at("input", local("dx"), local("dy")),
            }],
            None,
        ),
    };
    let sqrt = SExpr::Method {
        recv: Box::new(local("s")),
        name: "sqrt",
        args: vec![],
    };
    let result = bin(
        Add,
        bin(
            Add,
            local("c"),
            SExpr::Method {
                recv: Box::new(local("m")),
                name: "max",
                args: vec![sqrt],
            },
        ),
        SExpr::Float {
            value: 1.0,
            suffix: Some("f32"),
        },
    );
    let expected = block(
        vec![
            let_("c", conv),
            let_("m", max),
            SStmt::Let {
                name: "s",
                mutable: true,
                ty: None,
                init: SExpr::Float {
                    value: 0.0,
                    suffix: Some("f32"),
                },
            },
            iterate,
        ],
        Some(result),
    );
    assert_eq!(*Windows::surface(), expected);
}

#[derive(Kernel)]
#[kernel(output = Rgba<f32>)]
struct Vectors {
    img: Accessor<Rgba<f32>>,
    gain: f32,
}

#[kernel_body]
impl Vectors {
    fn kernel(&self) -> Rgba<f32> {
        let p: Rgba<f32> = self.img();
        let l = 0.25 * (p.r + p.g + p.b);
        Rgba::new(l, l, { l * self.gain }, p.a) + p * 0.1f32
    }
}

#[test]
fn vectors_lanes_and_blocks() {
    use BinaryOp::{Add, Mul};
    let lane = |n| SExpr::Lane(Box::new(local("p")), n);
    let l = bin(
        Mul,
        float(0.25),
        bin(Add, bin(Add, lane(0), lane(1)), lane(2)),
    );
    let scaled = SExpr::Block(Box::new(block(
        vec![],
        Some(bin(Mul, local("l"), SExpr::Field("gain"))),
    )));
    let result = bin(
        Add,
        SExpr::MakeVec(vec![local("l"), local("l"), scaled, lane(3)]),
        bin(
            Mul,
            local("p"),
            SExpr::Float {
                value: f64::from(0.1f32),
                suffix: Some("f32"),
            },
        ),
    );
    let expected = block(
        vec![
            SStmt::Let {
                name: "p",
                mutable: false,
                ty: Some("Rgba<f32>"),
                init: at("img", int(0), int(0)),
            },
            let_("l", l),
        ],
        Some(result),
    );
    assert_eq!(*Vectors::surface(), expected);
}

mod explicit_crate_path {
    use hipacc_core::{kernel_body, Accessor, Kernel, KernelBody};

    #[derive(Kernel)]
    #[kernel(output = u8, crate = ::hipacc_core)]
    struct Identity {
        input: Accessor<u8>,
    }

    #[kernel_body(crate = ::hipacc_core)]
    impl Identity {
        fn kernel(&self) -> u8 {
            self.input()
        }
    }

    #[test]
    fn crate_override_is_used() {
        let expected = super::block(
            vec![],
            Some(super::at("input", super::int(0), super::int(0))),
        );
        assert_eq!(*Identity::surface(), expected);
    }
}
