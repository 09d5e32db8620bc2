//! Lowering: surface AST + bindings -> typed IR.
//!
//! [`lower`] checks the kernel's fields, resolves every name of the body
//! (`self.<field>` against the slots, locals against their innermost `let`,
//! loop or closure binding) and infers types exactly as rustc does for the
//! same Rust code, because the CPU backend compiles that code with rustc and
//! the evaluator and GPU backends must compute in the same types:
//!
//! - literals without a suffix are `{integer}` / `{float}` variables that
//!   take their type from any later use (operators, assignments, `let`
//!   annotations, method arguments, the kernel's output type) and default to
//!   `i32` / `f64` when nothing constrains them;
//! - arithmetic, comparison and bit operators unify both operands (shifts
//!   keep the left operand's type); a vector operand combined with a scalar
//!   broadcasts the scalar, which unifies with the lane type;
//! - a method needs its receiver's type known where it is called (rustc's
//!   E0689), offsets, loop and window variables and `x()`/`y()` are `i32`.
//!
//! Errors are [`Error::InvalidKernel`] naming the kernel and the construct.

mod bindings;
mod expr;
mod stmt;
mod typed;
mod unify;

use self::bindings::SlotRef;
use self::typed::TBlock;
use self::unify::{Term, Tv, Types};
use super::surface::SBlock;
use super::{Kernel, Type, VarId, VarInfo};
use crate::{Bindings, Error, Result};
use std::collections::HashMap;

/// Resolves names of `body` against `bindings` and infers types as rustc does.
///
/// `name` is the kernel's name (for messages and the IR), `output` the output
/// pixel type, which the body's value must have.
pub fn lower(name: &str, output: Type, bindings: &Bindings, body: &SBlock) -> Result<Kernel> {
    let fail = |message: String| Error::InvalidKernel {
        kernel: name.into(),
        message,
    };
    bindings::check_pixel("the output", output).map_err(fail)?;
    let slots = bindings::check(name, bindings)?;
    let mut cx = Lower {
        kernel: name,
        bindings,
        slots,
        types: Types::default(),
        vars: Vec::new(),
        scopes: Vec::new(),
    };
    let block = cx.block(body)?;
    let Some(result) = &block.result else {
        return Err(fail(
            "the body has no value; it must end in an expression of the output type".into(),
        ));
    };
    let out = cx.types.known(output);
    cx.types
        .unify(out, result.ty)
        .map_err(|e| fail(format!("the body's value has the wrong type: {e}")))?;
    cx.finish(block, output)
}

/// The state of lowering one kernel body.
struct Lower<'a> {
    kernel: &'a str,
    bindings: &'a Bindings,
    slots: HashMap<&'a str, SlotRef>,
    types: Types,
    /// Every variable: name, type variable, `mut`.
    vars: Vec<(&'static str, Tv, bool)>,
    /// Visible bindings, innermost scope last.
    scopes: Vec<Vec<(&'static str, VarId)>>,
}

impl Lower<'_> {
    /// An `InvalidKernel` error for this kernel.
    fn error(&self, message: impl Into<String>) -> Error {
        Error::InvalidKernel {
            kernel: self.kernel.into(),
            message: message.into(),
        }
    }

    /// Unifies, wrapping a mismatch in a message about `what`.
    fn unify(&mut self, expected: Tv, found: Tv, what: &str) -> Result<()> {
        self.types
            .unify(expected, found)
            .map_err(|e| self.error(format!("{what}: mismatched types: {e}")))
    }

    /// A new variable visible in the innermost scope.
    fn bind(&mut self, name: &'static str, ty: Tv, mutable: bool) -> VarId {
        let id = VarId(self.vars.len() as u32);
        self.vars.push((name, ty, mutable));
        match self.scopes.last_mut() {
            Some(scope) => scope.push((name, id)),
            None => unreachable!("bug: binding outside any scope"),
        }
        id
    }

    /// The innermost binding of `name`.
    fn lookup(&self, name: &str) -> Result<VarId> {
        self.scopes
            .iter()
            .rev()
            .flat_map(|s| s.iter().rev())
            .find(|(n, _)| *n == name)
            .map(|&(_, id)| id)
            .ok_or_else(|| {
                let hint = match self.slots.get(name) {
                    Some(_) => format!("; the field is `self.{name}`"),
                    None => String::new(),
                };
                self.error(format!("unknown variable `{name}`{hint}"))
            })
    }

    /// The slot a field name refers to.
    fn slot(&self, field: &str) -> Result<SlotRef> {
        self.slots.get(field).copied().ok_or_else(|| {
            let mut known: Vec<&str> = self.slots.keys().copied().collect();
            known.sort_unstable();
            self.error(format!(
                "`self.{field}` is not a field of the kernel (fields: {})",
                known.join(", ")
            ))
        })
    }

    /// An `i32` type variable.
    fn i32(&mut self) -> Tv {
        self.types.known(Type::I32)
    }

    /// Resolves the types and assembles the kernel.
    fn finish(self, body: TBlock, output: Type) -> Result<Kernel> {
        let types = &self.types;
        let body = typed::finish(types, body).map_err(|e| self.error(e))?;
        let vars = self
            .vars
            .iter()
            .map(|&(name, tv, mutable)| {
                let ty = types
                    .resolve(tv)
                    .map_err(|e| self.error(format!("variable `{name}`: {e}")))?;
                Ok(VarInfo {
                    name: name.into(),
                    ty,
                    mutable,
                })
            })
            .collect::<Result<_>>()?;
        let b = self.bindings;
        Ok(Kernel {
            name: self.kernel.into(),
            output,
            accessors: b.accessors.iter().map(|a| a.slot.clone()).collect(),
            masks: b.masks.iter().map(|m| m.slot.clone()).collect(),
            domains: b.domains.clone(),
            params: b.params.iter().map(|p| p.slot.clone()).collect(),
            vars,
            body,
        })
    }
}

impl Term {
    /// True for a literal variable whose type is not known yet.
    fn is_literal(self) -> bool {
        matches!(self, Term::Int | Term::Float)
    }
}
