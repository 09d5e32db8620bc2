//! Statements and blocks of the kernel IR.

use super::{Expr, Type, Window};
use serde::{Deserialize, Serialize};

/// A local variable; index into [`Kernel::vars`](super::Kernel::vars).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, PartialOrd, Ord)]
pub struct VarId(pub u32);

/// What the IR knows of a local variable.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct VarInfo {
    /// The name in the kernel body (not unique: shadowing gives new ids).
    pub name: String,
    /// Its type.
    pub ty: Type,
    /// Declared `mut`.
    pub mutable: bool,
}

/// A sequence of statements with an optional result value.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, Default)]
pub struct Block {
    /// Executed in order.
    pub stmts: Vec<Stmt>,
    /// The value of the block, if it has one.
    pub result: Option<Expr>,
}

/// A statement.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Stmt {
    /// `let var = value;`
    Let {
        /// The new variable.
        var: VarId,
        /// Its initial value.
        value: Expr,
    },
    /// `var = value;` (compound assignments are lowered to this).
    Assign {
        /// A mutable variable.
        var: VarId,
        /// The new value.
        value: Expr,
    },
    /// `if cond { then } else { els }` as a statement (blocks have no result).
    If {
        /// `bool` condition.
        cond: Expr,
        /// Taken when true.
        then: Block,
        /// Taken when false.
        els: Block,
    },
    /// `for var in start..end { body }` with constant bounds (`end` exclusive).
    For {
        /// The `i32` loop variable.
        var: VarId,
        /// First value.
        start: i32,
        /// One past the last value.
        end: i32,
        /// The loop body.
        body: Block,
    },
    /// `iterate(window, |dx, dy| { body })`: runs `body` at each position.
    Iterate {
        /// Positions visited.
        window: Window,
        /// Variable holding the x offset.
        dx: VarId,
        /// Variable holding the y offset.
        dy: VarId,
        /// The body.
        body: Block,
    },
    /// An expression evaluated for its effects (e.g. an `if` with assignments).
    Expr(Expr),
}
