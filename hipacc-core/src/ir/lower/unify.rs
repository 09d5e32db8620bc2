//! The type table of inference: union-find over type variables whose roots
//! are known types, integer/float literal variables (`{integer}`,
//! `{float}`) or RGBA vectors of a lane variable.
//!
//! Unification follows rustc for the kernel subset: a literal variable takes
//! the type of whatever it meets, two known types must be equal, and an
//! unconstrained literal defaults to `i32` / `f64` when resolved.

use crate::ir::{ScalarType, Type};

/// A type variable.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Tv(u32);

/// What a root variable is known to be.
#[derive(Clone, Copy, Debug)]
pub(super) enum Term {
    /// Nothing yet.
    Any,
    /// An integer literal of a type not yet known (`{integer}`).
    Int,
    /// A float literal of a type not yet known (`{float}`).
    Float,
    /// A known scalar type.
    Scalar(ScalarType),
    /// A four-lane vector whose lane type is the variable.
    Vec(Tv),
}

#[derive(Clone, Copy, Debug)]
enum Slot {
    Link(Tv),
    Root(Term),
}

/// All type variables of one kernel.
#[derive(Default)]
pub(super) struct Types {
    slots: Vec<Slot>,
}

impl Types {
    /// A new variable.
    pub(super) fn fresh(&mut self, t: Term) -> Tv {
        self.slots.push(Slot::Root(t));
        Tv(self.slots.len() as u32 - 1)
    }

    /// A new variable of a known type.
    pub(super) fn known(&mut self, ty: Type) -> Tv {
        let s = self.fresh(Term::Scalar(ty.scalar));
        if ty.lanes == 1 {
            s
        } else {
            self.fresh(Term::Vec(s))
        }
    }

    fn find(&self, mut v: Tv) -> Tv {
        while let Slot::Link(next) = self.slots[v.0 as usize] {
            v = next;
        }
        v
    }

    /// What `v` is known to be now.
    pub(super) fn term(&self, v: Tv) -> Term {
        match self.slots[self.find(v).0 as usize] {
            Slot::Root(t) => t,
            Slot::Link(_) => unreachable!("bug: find returned a link"),
        }
    }

    /// The lane variable when `v` is a vector now.
    pub(super) fn lane(&self, v: Tv) -> Option<Tv> {
        match self.term(v) {
            Term::Vec(l) => Some(l),
            _ => None,
        }
    }

    /// The scalar type when `v` is a known scalar now.
    pub(super) fn scalar(&self, v: Tv) -> Option<ScalarType> {
        match self.term(v) {
            Term::Scalar(s) => Some(s),
            _ => None,
        }
    }

    /// Makes `a` and `b` the same type, or says why they cannot be
    /// ("expected `f32`, found `{integer}`" style, `a` being the expected).
    pub(super) fn unify(&mut self, a: Tv, b: Tv) -> Result<(), String> {
        let (ra, rb) = (self.find(a), self.find(b));
        if ra == rb {
            return Ok(());
        }
        let mismatch = |t: &Types| {
            Err(format!(
                "expected `{}`, found `{}`",
                t.describe(a),
                t.describe(b)
            ))
        };
        match (self.term(ra), self.term(rb)) {
            (Term::Any, _) => self.link(ra, rb),
            (_, Term::Any) => self.link(rb, ra),
            (Term::Int, Term::Int) | (Term::Float, Term::Float) => self.link(ra, rb),
            (Term::Int, Term::Scalar(s)) if s.is_int() => self.link(ra, rb),
            (Term::Scalar(s), Term::Int) if s.is_int() => self.link(rb, ra),
            (Term::Float, Term::Scalar(s)) if s.is_float() => self.link(ra, rb),
            (Term::Scalar(s), Term::Float) if s.is_float() => self.link(rb, ra),
            (Term::Scalar(x), Term::Scalar(y)) if x == y => self.link(ra, rb),
            (Term::Vec(la), Term::Vec(lb)) => {
                if self.unify(la, lb).is_err() {
                    return mismatch(self);
                }
                self.link(ra, rb);
            }
            _ => return mismatch(self),
        }
        Ok(())
    }

    fn link(&mut self, from: Tv, to: Tv) {
        self.slots[from.0 as usize] = Slot::Link(to);
    }

    /// The type as rustc would print it now (`f32`, `{float}`, `Rgba<_>`).
    pub(super) fn describe(&self, v: Tv) -> String {
        match self.term(v) {
            Term::Any => "_".into(),
            Term::Int => "{integer}".into(),
            Term::Float => "{float}".into(),
            Term::Scalar(s) => s.rust_name().into(),
            Term::Vec(l) => format!("Rgba<{}>", self.describe(l)),
        }
    }

    /// The final type: literal variables default to `i32` / `f64`.
    pub(super) fn resolve(&self, v: Tv) -> Result<Type, String> {
        Ok(match self.term(v) {
            Term::Any => return Err("cannot infer a type; add a type annotation".into()),
            Term::Int => Type::I32,
            Term::Float => Type::F64,
            Term::Scalar(s) => Type::scalar(s),
            Term::Vec(l) => match self.resolve(l)? {
                t if t.is_scalar() && t.scalar != ScalarType::Bool => Type::vec4(t.scalar),
                t => return Err(format!("`Rgba<{t}>` is not a pixel type")),
            },
        })
    }
}

/// Parses a type annotation: a scalar name or `Rgba<scalar>`.
pub(super) fn parse_type(text: &str) -> Option<Type> {
    let t: String = text.chars().filter(|c| !c.is_whitespace()).collect();
    if let Some(inner) = t.strip_prefix("Rgba<").and_then(|r| r.strip_suffix('>')) {
        return ScalarType::from_rust_name(inner)
            .filter(|s| *s != ScalarType::Bool)
            .map(Type::vec4);
    }
    ScalarType::from_rust_name(&t).map(Type::scalar)
}
