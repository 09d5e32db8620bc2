//! Read offsets as affine functions of the output coordinates.
//!
//! A body that reads an image of another size computes its offsets from the
//! coordinates: `self.u.at(2 * x() + i - x(), 0)` reads column `2x + i`.
//! The CPU emitter gives such reads their position as `a·x + b` in `isize`
//! (see `CpuRead::read_affine`), which LLVM sees as a strided address and
//! loads as whole vectors; computed in `i32` from the body's value it cannot
//! prove the arithmetic does not wrap, and loads one lane at a time.
//!
//! The analysis is exact and deliberately small: integer literals, `x()`,
//! `y()`, immutable locals (and unrolled loop variables) bound to such
//! values, parentheses, `+`, `-`, unary `-`, `*` by a constant, and `x()`
//! or `y()` divided by a positive constant. A term free of the coordinates
//! that is not a literal (a window offset, a parameter) is *opaque*: the
//! emitter then takes it from the body's own value, as the offset minus its
//! coordinate terms, which LLVM folds to the term itself (a constant, once
//! a window's loop is unrolled). Anything else is not affine, and the read
//! keeps its ordinary form.

use crate::body::Expr;

/// `x·x() + xq·(x() / qx) + y·y() + yq·(y() / qy) + c (+ opaque)`, exactly
/// (no wrapping: see [`Affine::LIMIT`]). The quotient terms cover reads of
/// a coarser grid (`x() / 2`); `qx` is 1 where `xq` is 0. With `opaque` the
/// value also has a term free of the coordinates that is not known here.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Affine {
    x: i64,
    xq: i64,
    qx: i64,
    y: i64,
    yq: i64,
    qy: i64,
    c: i64,
    opaque: bool,
}

/// A read position along one axis with coordinate `p`:
/// `a·p + b + k·(p / q)`, where `b` is the offset minus its coordinate terms
/// if `opaque`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Position {
    pub(crate) a: i64,
    pub(crate) b: i64,
    pub(crate) k: i64,
    pub(crate) q: i64,
    pub(crate) opaque: bool,
}

impl Affine {
    /// Largest magnitude of a coefficient, divisor or constant. Past it the
    /// form is dropped, so the emitted position stays far inside `isize`
    /// for any coordinate the interior admits (below 2^30).
    const LIMIT: i64 = 1 << 20;

    const ZERO: Affine = Affine {
        x: 0,
        xq: 0,
        qx: 1,
        y: 0,
        yq: 0,
        qy: 1,
        c: 0,
        opaque: false,
    };

    /// A value free of the coordinates, not known here.
    pub(crate) const OPAQUE: Affine = Affine {
        opaque: true,
        ..Self::ZERO
    };

    /// Whether the value does not depend on the coordinates.
    fn coordinate_free(self) -> bool {
        self.x == 0 && self.xq == 0 && self.y == 0 && self.yq == 0
    }

    /// The constant `c`.
    pub(crate) fn constant(c: i64) -> Option<Affine> {
        Affine { c, ..Self::ZERO }.checked()
    }

    fn as_constant(self) -> Option<i64> {
        (Affine {
            c: self.c,
            ..Self::ZERO
        } == self)
            .then_some(self.c)
    }

    fn checked(self) -> Option<Affine> {
        let terms = [self.x, self.xq, self.qx, self.y, self.yq, self.qy, self.c];
        terms.iter().all(|v| v.abs() <= Self::LIMIT).then_some(self)
    }

    fn add(self, o: Affine) -> Option<Affine> {
        // One divisor per axis: `x() / 2 + x() / 3` has no form.
        let divisor = |k1: i64, q1: i64, k2: i64, q2: i64| match (k1, k2) {
            (0, 0) => Some(1),
            (0, _) => Some(q2),
            (_, 0) => Some(q1),
            _ => (q1 == q2).then_some(q1),
        };
        let sum = Affine {
            x: self.x + o.x,
            xq: self.xq + o.xq,
            qx: divisor(self.xq, self.qx, o.xq, o.qx)?,
            y: self.y + o.y,
            yq: self.yq + o.yq,
            qy: divisor(self.yq, self.qy, o.yq, o.qy)?,
            c: self.c + o.c,
            opaque: self.opaque || o.opaque,
        };
        Affine {
            qx: if sum.xq == 0 { 1 } else { sum.qx },
            qy: if sum.yq == 0 { 1 } else { sum.qy },
            ..sum
        }
        .checked()
    }

    fn scale(self, k: i64) -> Option<Affine> {
        if k == 0 {
            return Some(Self::ZERO);
        }
        let sum = Affine {
            x: self.x.checked_mul(k)?,
            xq: self.xq.checked_mul(k)?,
            y: self.y.checked_mul(k)?,
            yq: self.yq.checked_mul(k)?,
            c: self.c.checked_mul(k)?,
            ..self
        };
        // Scaling by 0 leaves no quotient term.
        Affine::ZERO.add(sum)
    }

    /// `self / q`: a constant divided (truncating, as `i32` does), or the
    /// coordinate `x()` or `y()` alone over a positive constant.
    fn divide(self, q: i64) -> Option<Affine> {
        if let Some(c) = self.as_constant() {
            return (q != 0).then(|| Affine::constant(c / q)).flatten();
        }
        if self.coordinate_free() {
            return Some(Self::OPAQUE);
        }
        let x = Affine { x: 1, ..Self::ZERO };
        let y = Affine { y: 1, ..Self::ZERO };
        if q <= 0 {
            None
        } else if self == x {
            Affine {
                xq: 1,
                qx: q,
                ..Self::ZERO
            }
            .checked()
        } else if self == y {
            Affine {
                yq: 1,
                qy: q,
                ..Self::ZERO
            }
            .checked()
        } else {
            None
        }
    }

    /// The position an offset of this form reads along x (`x + offset`),
    /// if the offset does not depend on `y()`.
    pub(crate) fn column(self) -> Option<Position> {
        self.along((self.x, self.xq, self.qx), (self.y, self.yq))
    }

    /// As [`Affine::column`], along y.
    pub(crate) fn row(self) -> Option<Position> {
        self.along((self.y, self.yq, self.qy), (self.x, self.xq))
    }

    /// The position along an axis whose coordinate has coefficient `a`, and
    /// its quotient by `q` coefficient `k`, if the offset has no term of
    /// the `other` axis (its two coefficients zero).
    fn along(self, (a, k, q): (i64, i64, i64), other: (i64, i64)) -> Option<Position> {
        (other == (0, 0)).then_some(Position {
            a: 1 + a,
            b: self.c,
            k,
            q,
            opaque: self.opaque,
        })
    }
}

/// The affine form of `e`, with `local` giving the form of a local by name
/// (`None` for one that is not affine).
pub(crate) fn affine(e: &Expr, local: &dyn Fn(&str) -> Option<Affine>) -> Option<Affine> {
    // `Some(OPAQUE)` where every operand is free of the coordinates.
    let free = |operands: &[&Expr]| {
        operands
            .iter()
            .all(|o| affine(o, local).is_some_and(Affine::coordinate_free))
            .then_some(Affine::OPAQUE)
    };
    match e {
        Expr::Int {
            value,
            suffix: None | Some("i32"),
            ..
        } => Affine::constant(*value),
        Expr::Int { .. } | Expr::Float { .. } | Expr::Bool(_) | Expr::Field(_) => {
            Some(Affine::OPAQUE)
        }
        Expr::X(_) => Some(Affine {
            x: 1,
            ..Affine::ZERO
        }),
        Expr::Y(_) => Some(Affine {
            y: 1,
            ..Affine::ZERO
        }),
        Expr::Local(name) => local(&name.to_string()),
        Expr::Paren(e) => affine(e, local),
        Expr::Unary {
            ir: "Neg", expr, ..
        } => affine(expr, local)?.scale(-1),
        Expr::Unary { expr, .. } | Expr::Cast { expr, .. } => free(&[expr]),
        Expr::Binary { op, lhs, rhs } => {
            let (l, r) = (affine(lhs, local)?, affine(rhs, local)?);
            match op.ir {
                "Add" => l.add(r),
                "Sub" => l.add(r.scale(-1)?),
                "Mul" => match (l.as_constant(), r.as_constant()) {
                    (Some(k), _) => r.scale(k),
                    (_, Some(k)) => l.scale(k),
                    _ => free(&[lhs, rhs]),
                },
                "Div" => match r.as_constant() {
                    Some(q) => l.divide(q),
                    None => free(&[lhs, rhs]),
                },
                _ => free(&[lhs, rhs]),
            }
        }
        Expr::Method { recv, args, .. } => {
            let operands: Vec<&Expr> = std::iter::once(&**recv).chain(args).collect();
            free(&operands)
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::body::convert;
    use crate::diag::Diag;

    /// The affine form of the tail expression of `body`'s block, with the
    /// immutable integer `let`s before it in scope.
    fn form(body: &str) -> Option<Affine> {
        let block: syn::Block = syn::parse_str(body).expect("test body parses");
        let mut diag = Diag::new();
        let b = convert(&block, &mut diag);
        let mut scope: Vec<(String, Option<Affine>)> = Vec::new();
        for s in &b.stmts {
            if let crate::body::Stmt::Let {
                name,
                mutable,
                init,
                ..
            } = s
            {
                let lookup = |n: &str| scope.iter().rev().find(|(m, _)| m == n).and_then(|v| v.1);
                let a = (!mutable).then(|| affine(init, &lookup)).flatten();
                scope.push((name.to_string(), a));
            }
        }
        let lookup = |n: &str| scope.iter().rev().find(|(m, _)| m == n).and_then(|v| v.1);
        affine(b.result.as_ref().expect("a tail expression"), &lookup)
    }

    fn a(x: i64, y: i64, c: i64) -> Option<Affine> {
        Some(Affine {
            x,
            y,
            c,
            ..Affine::ZERO
        })
    }

    fn opaque(x: i64, y: i64, c: i64) -> Option<Affine> {
        Some(Affine {
            opaque: true,
            ..a(x, y, c)?
        })
    }

    #[test]
    fn terms_free_of_the_coordinates_are_opaque() {
        assert_eq!(form("{ x() + self.shift - 1 }"), opaque(1, 0, -1));
        assert_eq!(
            form("{ let d = self.k * 2 + 1; 2 * x() + d }"),
            opaque(2, 0, 1)
        );
        assert_eq!(form("{ 2u8 }"), Some(Affine::OPAQUE));
        assert_eq!(form("{ (self.k as i32) / 2 + y() }"), opaque(0, 1, 0));
        assert_eq!(
            form("{ self.k % 3 + x() / 2 }")
                .and_then(|f| f.column())
                .map(|p| p.opaque),
            Some(true)
        );
        // A product with an opaque factor is known only if it is free too.
        assert_eq!(form("{ self.k * x() }"), None);
        assert_eq!(form("{ (x() as f32) as i32 }"), None);
        assert_eq!(form("{ self.img.at(0, 0) as i32 + x() }"), None);
        assert_eq!(form("{ 0 * self.k + x() }"), a(1, 0, 0));
    }

    #[test]
    fn coordinates_literals_and_arithmetic() {
        assert_eq!(form("{ 2 * x() + 1 - x() }"), a(1, 0, 1));
        assert_eq!(form("{ -(y() - 3) * 2 }"), a(0, -2, 6));
        assert_eq!(form("{ x() * 4 + y() }"), a(4, 1, 0));
        assert_eq!(form("{ 7i32 / 2 - 9 / -4 }"), a(0, 0, 5));
        assert_eq!(form("{ (x() - x()) * 0 }"), a(0, 0, 0));
    }

    #[test]
    fn through_immutable_locals_only() {
        assert_eq!(
            form("{ let f = 2 * x() + 1; let o = f - x(); o - 1 }"),
            a(1, 0, 0)
        );
        assert_eq!(form("{ let mut f = 2 * x(); f }"), None);
        assert_eq!(form("{ let f = 2 * x(); let f = f + 1; f }"), a(2, 0, 1));
    }

    #[test]
    fn quotients_of_a_coordinate() {
        let half = form("{ let c = x() / 2; c - 1 - x() }").unwrap();
        let p = half.column().unwrap();
        assert_eq!((p.a, p.b, p.k, p.q), (0, -1, 1, 2));
        assert_eq!(half.row(), None);
        let third = form("{ 3 * (y() / 3) }").unwrap().row().unwrap();
        assert_eq!((third.a, third.b, third.k, third.q), (1, 0, 3, 3));
        // The quotient cancels: no divisor is left.
        assert_eq!(form("{ x() / 2 - x() / 2 + 1 }"), a(0, 0, 1));
    }

    #[test]
    fn not_affine() {
        assert_eq!(form("{ x() * y() }"), None);
        assert_eq!(form("{ x() % 2 }"), None);
        assert_eq!(form("{ (x() + 1) / 2 }"), None);
        assert_eq!(form("{ x() / 2 + x() / 3 }"), None);
        assert_eq!(form("{ x() / -2 }"), None);
        assert_eq!(form("{ 1 / 0 }"), None);
        assert_eq!(form("{ x() * 2000000 }"), None);
        assert_eq!(form("{ if x() > 0 { 1 } else { 0 } }"), None);
    }

    #[test]
    fn column_and_row_positions() {
        let f = form("{ x() - 1 }").unwrap();
        assert_eq!(f.column().map(|p| (p.a, p.b, p.k)), Some((2, -1, 0)));
        assert_eq!(f.row(), None);
        let g = form("{ 3 - y() }").unwrap();
        assert_eq!(g.row().map(|p| (p.a, p.b)), Some((0, 3)));
        assert_eq!(g.column(), None);
    }
}
