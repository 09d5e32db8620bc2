//! Small IR kernels built by hand for unit tests.

use hipacc_core::ir::{
    AccessorSlot, BinaryOp, Block, DomainSlot, Expr, ExprKind, Kernel, Literal, MaskSlot,
    ParamSlot, ReduceOp, Stmt, Type, VarId, VarInfo, Window,
};
use hipacc_core::{BoundaryMode, Interpolation};

pub(crate) fn int(v: i64) -> Expr {
    Expr::new(Type::I32, ExprKind::Const(Literal::Int(v)))
}

pub(crate) fn f32c(v: f64) -> Expr {
    Expr::new(Type::F32, ExprKind::Const(Literal::float(v)))
}

pub(crate) fn read(acc: usize, ty: Type, dx: Expr, dy: Expr) -> Expr {
    Expr::new(
        ty,
        ExprKind::Read {
            acc,
            dx: Box::new(dx),
            dy: Box::new(dy),
        },
    )
}

pub(crate) fn bin(op: BinaryOp, a: Expr, b: Expr) -> Expr {
    let ty = if op.is_comparison() { Type::BOOL } else { a.ty };
    Expr::new(
        ty,
        ExprKind::Binary {
            op,
            lhs: Box::new(a),
            rhs: Box::new(b),
        },
    )
}

pub(crate) fn var(id: u32, ty: Type) -> Expr {
    Expr::new(ty, ExprKind::Var(VarId(id)))
}

pub(crate) fn accessor(name: &str, pixel: Type, boundary: BoundaryMode) -> AccessorSlot {
    AccessorSlot {
        name: name.into(),
        pixel,
        boundary,
        constant: if boundary == BoundaryMode::Constant {
            vec![Literal::float(0.0); pixel.lanes as usize]
        } else {
            vec![]
        },
        interpolation: Interpolation::None,
    }
}

fn kernel(name: &str, accessors: Vec<AccessorSlot>, vars: Vec<VarInfo>, body: Block) -> Kernel {
    Kernel {
        name: name.into(),
        output: Type::F32,
        accessors,
        masks: vec![],
        domains: vec![],
        params: vec![],
        vars,
        body,
    }
}

pub(crate) fn vinfo(name: &str, ty: Type) -> VarInfo {
    VarInfo {
        name: name.into(),
        ty,
        mutable: false,
    }
}

/// `(1 - omega) * sol() + omega * 0.25 * (rhs() + sol 4-neighbours)`.
pub(crate) fn jacobi() -> Kernel {
    let f = Type::F32;
    let s = |dx, dy| read(0, f, int(dx), int(dy));
    let nb = bin(
        BinaryOp::Add,
        bin(BinaryOp::Add, s(-1, 0), s(1, 0)),
        bin(BinaryOp::Add, s(0, -1), s(0, 1)),
    );
    let omega = Expr::new(f, ExprKind::Param(0));
    let body = Block {
        stmts: vec![Stmt::Let {
            var: VarId(0),
            value: nb,
        }],
        result: Some(bin(
            BinaryOp::Add,
            bin(
                BinaryOp::Mul,
                bin(BinaryOp::Sub, f32c(1.0), omega.clone()),
                s(0, 0),
            ),
            bin(
                BinaryOp::Mul,
                bin(BinaryOp::Mul, omega, f32c(0.25)),
                bin(BinaryOp::Add, read(1, f, int(0), int(0)), var(0, f)),
            ),
        )),
    };
    let mut k = kernel(
        "Jacobi",
        vec![
            accessor("sol", f, BoundaryMode::Constant),
            accessor("rhs", f, BoundaryMode::Undefined),
        ],
        vec![vinfo("nb", f)],
        body,
    );
    k.params.push(ParamSlot {
        name: "omega".into(),
        ty: f,
    });
    k
}

/// `convolve(mask, Sum, |dx, dy| mask(dx, dy) * input(dx, dy))` with a
/// `w x h` mask of literal coefficients, clamp boundary.
pub(crate) fn convolve(w: u32, h: u32) -> Kernel {
    let f = Type::F32;
    let (dx, dy) = (var(0, Type::I32), var(1, Type::I32));
    let coef = Expr::new(
        f,
        ExprKind::MaskCoef {
            mask: 0,
            dx: Box::new(dx.clone()),
            dy: Box::new(dy.clone()),
        },
    );
    let prod = bin(BinaryOp::Mul, coef, read(0, f, dx, dy));
    let red = Expr::new(
        f,
        ExprKind::Reduce {
            window: Window::Mask(0),
            op: ReduceOp::Sum,
            dx: VarId(0),
            dy: VarId(1),
            body: Box::new(Block {
                stmts: vec![],
                result: Some(prod),
            }),
        },
    );
    let mut k = kernel(
        "Gauss",
        vec![accessor("input", f, BoundaryMode::Clamp)],
        vec![vinfo("dx", Type::I32), vinfo("dy", Type::I32)],
        Block {
            stmts: vec![],
            result: Some(red),
        },
    );
    let n = (w * h) as usize;
    k.masks.push(MaskSlot {
        name: "mask".into(),
        ty: f,
        width: w,
        height: h,
        coefficients: Some(
            (0..n)
                .map(|i| Literal::float(1.0 / (i + 1) as f64))
                .collect(),
        ),
    });
    k
}

/// `input.at(x() % 3, 0)`: an offset not known at compile time.
pub(crate) fn read_at_x() -> Kernel {
    let f = Type::F32;
    let x = Expr::new(Type::I32, ExprKind::X);
    kernel(
        "ReadAtX",
        vec![accessor("input", f, BoundaryMode::Mirror)],
        vec![],
        Block {
            stmts: vec![],
            result: Some(read(0, f, bin(BinaryOp::Rem, x, int(3)), int(0))),
        },
    )
}

/// `let mut s = 0; for i in lo..hi { s += input.at(i, 0) }; s`.
pub(crate) fn row_loop(lo: i32, hi: i32) -> Kernel {
    let f = Type::F32;
    let mut vars = vec![vinfo("s", f), vinfo("i", Type::I32)];
    vars[0].mutable = true;
    let body = Block {
        stmts: vec![
            Stmt::Let {
                var: VarId(0),
                value: f32c(0.0),
            },
            Stmt::For {
                var: VarId(1),
                start: lo,
                end: hi,
                body: Block {
                    stmts: vec![Stmt::Assign {
                        var: VarId(0),
                        value: bin(
                            BinaryOp::Add,
                            var(0, f),
                            read(0, f, var(1, Type::I32), int(0)),
                        ),
                    }],
                    result: None,
                },
            },
        ],
        result: Some(var(0, f)),
    };
    kernel(
        "RowLoop",
        vec![accessor("input", f, BoundaryMode::Repeat)],
        vars,
        body,
    )
}

/// `reduce(dom, Max, |dx, dy| input(dx, dy))` over a 3x3 cross domain.
pub(crate) fn domain_max() -> Kernel {
    let f = Type::F32;
    let red = Expr::new(
        f,
        ExprKind::Reduce {
            window: Window::Domain(0),
            op: ReduceOp::Max,
            dx: VarId(0),
            dy: VarId(1),
            body: Box::new(Block {
                stmts: vec![],
                result: Some(read(0, f, var(0, Type::I32), var(1, Type::I32))),
            }),
        },
    );
    let mut k = kernel(
        "DomainMax",
        vec![accessor("input", f, BoundaryMode::MirrorInterior)],
        vec![vinfo("dx", Type::I32), vinfo("dy", Type::I32)],
        Block {
            stmts: vec![],
            result: Some(red),
        },
    );
    k.domains.push(DomainSlot {
        name: "dom".into(),
        width: 3,
        height: 3,
        enabled: vec![false, true, false, true, true, true, false, true, false],
    });
    k
}

fn call(func: hipacc_core::ir::Intrinsic, ty: Type, args: Vec<Expr>) -> Expr {
    Expr::new(ty, ExprKind::Call { func, args })
}

fn cast(e: Expr, ty: Type) -> Expr {
    Expr::new(ty, ExprKind::Cast(Box::new(e)))
}

/// Every expression kind: integer and float operators, math functions,
/// casts, an `if` expression, `&&` with a reduction on its right side,
/// `iterate`, vectors (`Rgba<u8>` and `Rgba<f32>`), a dynamic mask and a
/// domain; output `Rgba<f32>`.
pub(crate) fn kitchen_sink() -> Kernel {
    use hipacc_core::ir::{Intrinsic as I, ScalarType, UnaryOp};
    let f = Type::F32;
    let i = Type::I32;
    let u8t = Type::scalar(ScalarType::U8);
    let v4 = Type::vec4(ScalarType::F32);
    let c4 = Type::vec4(ScalarType::U8);
    let x = Expr::new(i, ExprKind::X);
    let y = Expr::new(i, ExprKind::Y);
    // let a: i32 = (x * 7 - y) / (y % 3) << 2 >> 1;
    let a = bin(
        BinaryOp::Shr,
        bin(
            BinaryOp::Shl,
            bin(
                BinaryOp::Div,
                bin(
                    BinaryOp::Sub,
                    bin(BinaryOp::Mul, x.clone(), int(7)),
                    y.clone(),
                ),
                bin(BinaryOp::Rem, y.clone(), int(3)),
            ),
            int(2),
        ),
        int(1),
    );
    // let g: u8 = (img.at(0,0) as f32 * 1.5).round() as u8 ... on a gray u8 accessor
    let g = cast(
        call(
            I::Round,
            f,
            vec![bin(
                BinaryOp::Mul,
                cast(read(1, u8t, int(0), int(0)), f),
                f32c(1.5),
            )],
        ),
        u8t,
    );
    // let s: f32 = reduce(dom, Sum, |dx, dy| mask(dx, dy) * gray(dx, dy) as f32)
    let coef = Expr::new(
        f,
        ExprKind::MaskCoef {
            mask: 0,
            dx: Box::new(var(4, i)),
            dy: Box::new(var(5, i)),
        },
    );
    let s = Expr::new(
        f,
        ExprKind::Reduce {
            window: Window::Domain(0),
            op: ReduceOp::Sum,
            dx: VarId(4),
            dy: VarId(5),
            body: Box::new(Block {
                stmts: vec![],
                result: Some(bin(
                    BinaryOp::Mul,
                    coef,
                    cast(read(1, u8t, var(4, i), var(5, i)), f),
                )),
            }),
        },
    );
    // let ok: bool = a > 0 && s > 0.5;
    let ok = bin(
        BinaryOp::And,
        bin(BinaryOp::Gt, var(0, i), int(0)),
        bin(BinaryOp::Gt, var(2, f), f32c(0.5)),
    );
    // let m = if ok { s.max(f32::NAN).clamp(0, 1) } else { -(a as f32).powi(2).sqrt() };
    let then_v = call(
        I::Clamp,
        f,
        vec![
            call(I::Max, f, vec![var(2, f), f32c(f64::NAN)]),
            f32c(0.0),
            f32c(1.0),
        ],
    );
    let else_v = Expr::new(
        f,
        ExprKind::Unary {
            op: UnaryOp::Neg,
            arg: Box::new(call(
                I::Sqrt,
                f,
                vec![call(I::Powi, f, vec![cast(var(0, i), f), int(2)])],
            )),
        },
    );
    let m = Expr::new(
        f,
        ExprKind::If {
            cond: Box::new(var(3, Type::BOOL)),
            then: Box::new(Block {
                stmts: vec![],
                result: Some(then_v),
            }),
            els: Box::new(Block {
                stmts: vec![],
                result: Some(else_v),
            }),
        },
    );
    // let mut acc = rgba(0,0,0,0); iterate(dom, |dx, dy| acc = acc + color(dx, dy) as Rgba<f32> * m);
    let it = Stmt::Iterate {
        window: Window::Domain(0),
        dx: VarId(7),
        dy: VarId(8),
        body: Block {
            stmts: vec![Stmt::Assign {
                var: VarId(6),
                value: bin(
                    BinaryOp::Add,
                    var(6, v4),
                    bin(
                        BinaryOp::Mul,
                        cast(read(0, c4, var(7, i), var(8, i)), v4),
                        var(1, f),
                    ),
                ),
            }],
            result: None,
        },
    };
    let lane = Expr::new(
        f,
        ExprKind::Lane {
            arg: Box::new(var(6, v4)),
            lane: 2,
        },
    );
    let result = Expr::new(
        v4,
        ExprKind::MakeVec(vec![
            lane,
            cast(g, f),
            call(I::Atan2, f, vec![var(1, f), f32c(2.0)]),
            Expr::new(f, ExprKind::Param(0)),
        ]),
    );
    let zero4 = Expr::new(v4, ExprKind::Const(Literal::float(0.0)));
    let mut vars = vec![
        vinfo("a", i),
        vinfo("m", f),
        vinfo("s", f),
        vinfo("ok", Type::BOOL),
        vinfo("dx", i),
        vinfo("dy", i),
        vinfo("acc", v4),
        vinfo("dx", i),
        vinfo("dy", i),
    ];
    vars[6].mutable = true;
    let body = Block {
        stmts: vec![
            Stmt::Let {
                var: VarId(0),
                value: a,
            },
            Stmt::Let {
                var: VarId(2),
                value: s,
            },
            Stmt::Let {
                var: VarId(3),
                value: ok,
            },
            Stmt::Let {
                var: VarId(1),
                value: m,
            },
            Stmt::Let {
                var: VarId(6),
                value: zero4,
            },
            it,
        ],
        result: Some(result),
    };
    let mut color = accessor("color", c4, BoundaryMode::Constant);
    color.constant = vec![
        Literal::Int(1),
        Literal::Int(2),
        Literal::Int(3),
        Literal::Int(255),
    ];
    Kernel {
        name: "KitchenSink".into(),
        output: v4,
        accessors: vec![color, accessor("gray", u8t, BoundaryMode::Mirror)],
        masks: vec![MaskSlot {
            name: "weights".into(),
            ty: f,
            width: 3,
            height: 3,
            coefficients: None,
        }],
        domains: vec![DomainSlot {
            name: "dom".into(),
            width: 3,
            height: 3,
            enabled: vec![true, false, true, false, true, false, true, false, true],
        }],
        params: vec![ParamSlot {
            name: "alpha".into(),
            ty: f,
        }],
        vars,
        body,
    }
}

/// Branches on comparisons: `if a == 0.0 { m = 2.0 }` and
/// `if a < 0.5 { m } else { a }`, whose conditions print parenthesised.
pub(crate) fn branches() -> Kernel {
    let f = Type::F32;
    let block = |stmts, result| Block { stmts, result };
    let body = block(
        vec![
            Stmt::Let {
                var: VarId(0),
                value: read(0, f, int(0), int(0)),
            },
            Stmt::Let {
                var: VarId(1),
                value: f32c(1.0),
            },
            Stmt::If {
                cond: bin(BinaryOp::Eq, var(0, f), f32c(0.0)),
                then: block(
                    vec![Stmt::Assign {
                        var: VarId(1),
                        value: f32c(2.0),
                    }],
                    None,
                ),
                els: block(vec![], None),
            },
        ],
        Some(Expr::new(
            f,
            ExprKind::If {
                cond: Box::new(bin(BinaryOp::Lt, var(0, f), f32c(0.5))),
                then: Box::new(block(vec![], Some(var(1, f)))),
                els: Box::new(block(vec![], Some(var(0, f)))),
            },
        )),
    );
    let mut m = vinfo("m", f);
    m.mutable = true;
    kernel(
        "Branches",
        vec![accessor("img", f, BoundaryMode::Clamp)],
        vec![vinfo("a", f), m],
        body,
    )
}

/// The output coordinate `x()` or `y()`.
fn coord(y: bool) -> Expr {
    Expr::new(Type::I32, if y { ExprKind::Y } else { ExprKind::X })
}

/// A 2:1 restriction: the mean of `fine.at(x() + i, y() + j)` for `i, j`
/// in `0..2`, which reads the fine grid at `2x + i, 2y + j`.
pub(crate) fn restriction() -> Kernel {
    let f = Type::F32;
    let tap = |i: i64, j: i64| {
        let dx = bin(BinaryOp::Add, coord(false), int(i));
        let dy = bin(BinaryOp::Add, coord(true), int(j));
        read(0, f, dx, dy)
    };
    let sum = bin(
        BinaryOp::Add,
        bin(BinaryOp::Add, tap(0, 0), tap(1, 0)),
        bin(BinaryOp::Add, tap(0, 1), tap(1, 1)),
    );
    kernel(
        "Restriction",
        vec![accessor("fine", f, BoundaryMode::Clamp)],
        vec![],
        Block {
            stmts: vec![],
            result: Some(bin(BinaryOp::Mul, sum, f32c(0.25))),
        },
    )
}

/// A 1:2 prolongation: `coarse.at(x() / 2 - x(), y() / 2 - y())`, which
/// reads the coarse grid at `x / 2, y / 2`.
pub(crate) fn prolongation() -> Kernel {
    let f = Type::F32;
    let half = |y: bool| {
        let q = bin(BinaryOp::Div, coord(y), int(2));
        bin(BinaryOp::Sub, q, coord(y))
    };
    kernel(
        "Prolongation",
        vec![accessor("coarse", f, BoundaryMode::Mirror)],
        vec![],
        Block {
            stmts: vec![],
            result: Some(read(0, f, half(false), half(true))),
        },
    )
}

/// Every test kernel.
pub(crate) fn all() -> Vec<Kernel> {
    vec![
        jacobi(),
        convolve(5, 5),
        convolve(1, 9),
        convolve(9, 9),
        read_at_x(),
        row_loop(-3, 4),
        domain_max(),
        kitchen_sink(),
        restriction(),
        prolongation(),
    ]
}
