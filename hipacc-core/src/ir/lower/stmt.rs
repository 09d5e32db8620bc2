//! Lowering of blocks and statements, with their scopes.

use super::typed::{TBlock, TExpr, TKind, TStmt};
use super::unify::parse_type;
use super::Lower;
use crate::ir::surface::{SBlock, SExpr, SStmt};
use crate::Result;

/// True when `e` has no value (`()`): an `if` or block whose branches end
/// without a value.
fn is_unit(e: &SExpr) -> bool {
    match e {
        SExpr::If(_, then, els) => block_is_unit(then) && block_is_unit(els),
        SExpr::Block(b) => block_is_unit(b),
        _ => false,
    }
}

fn block_is_unit(b: &SBlock) -> bool {
    match b.result.as_deref() {
        None => true,
        Some(e) => is_unit(e),
    }
}

impl Lower<'_> {
    /// Lowers a block in a new scope. A tail without a value (an `if`
    /// without values) becomes a statement, leaving the block without result.
    pub(super) fn block(&mut self, b: &SBlock) -> Result<TBlock> {
        self.scopes.push(Vec::new());
        let mut out = TBlock::default();
        let r = self.block_into(b, &mut out);
        self.scopes.pop();
        r.map(|()| out)
    }

    /// Lowers `b`'s statements into `out` in the current scope.
    fn block_into(&mut self, b: &SBlock, out: &mut TBlock) -> Result<()> {
        for s in &b.stmts {
            self.stmt(s, &mut out.stmts)?;
        }
        match b.result.as_deref() {
            Some(e) if is_unit(e) => self.expr_stmt(e, &mut out.stmts),
            Some(e) => {
                out.result = Some(Box::new(self.expr(e)?));
                Ok(())
            }
            None => Ok(()),
        }
    }

    /// A block whose value is discarded (loop bodies, `iterate`, statement
    /// `if`): a tail with a value is an error, as in Rust.
    fn unit_block(&mut self, b: &SBlock, what: &str) -> Result<TBlock> {
        let block = self.block(b)?;
        if block.result.is_some() {
            return Err(self.error(format!(
                "{what} must not end in a value; end the last expression with `;`"
            )));
        }
        Ok(block)
    }

    fn stmt(&mut self, s: &SStmt, out: &mut Vec<TStmt>) -> Result<()> {
        match s {
            SStmt::Let {
                name,
                mutable,
                ty,
                init,
            } => {
                if is_unit(init) {
                    return Err(self.error(format!("`let {name}` is given no value")));
                }
                let init = self.expr(init)?;
                if let Some(text) = ty {
                    let Some(t) = parse_type(text) else {
                        return Err(self.error(format!(
                            "`let {name}: {text}`: unknown type; use u8, u16, i32, u32, f32, f64, bool or Rgba<T>"
                        )));
                    };
                    let want = self.types.known(t);
                    self.unify(want, init.ty, &format!("`let {name}: {text}`"))?;
                }
                let var = self.bind(name, init.ty, *mutable);
                out.push(TStmt::Let(var, init));
            }
            SStmt::Assign { name, op, value } => {
                let var = self.lookup(name)?;
                let (_, vty, mutable) = self.vars[var.0 as usize];
                if !mutable {
                    return Err(self.error(format!(
                        "cannot assign to immutable variable `{name}`; declare it with `let mut {name}`"
                    )));
                }
                let value = self.expr(value)?;
                let value = match op {
                    None => value,
                    Some(op) => {
                        let current = TExpr::new(vty, TKind::Var(var));
                        self.binary(*op, current, value)?
                    }
                };
                self.unify(vty, value.ty, &format!("assignment to `{name}`"))?;
                out.push(TStmt::Assign(var, value));
            }
            SStmt::For {
                var,
                start,
                end,
                body,
            } => {
                let (Ok(start), Ok(end)) = (i32::try_from(*start), i32::try_from(*end)) else {
                    return Err(self.error(format!(
                        "`for {var} in {start}..{end}`: loop bounds must fit in i32"
                    )));
                };
                self.scopes.push(Vec::new());
                let ty = self.i32();
                let id = self.bind(var, ty, false);
                let body = self.unit_block(body, "the body of `for`");
                self.scopes.pop();
                out.push(TStmt::For(id, start, end, body?));
            }
            SStmt::Iterate {
                window,
                dx,
                dy,
                body,
            } => {
                let window = self.window(window, false)?;
                self.scopes.push(Vec::new());
                let (tx, ty) = (self.i32(), self.i32());
                let (dx, dy) = (self.bind(dx, tx, false), self.bind(dy, ty, false));
                let body = self.unit_block(body, "the closure of `iterate`");
                self.scopes.pop();
                out.push(TStmt::Iterate(window, dx, dy, body?));
            }
            SStmt::Expr(e) => self.expr_stmt(e, out)?,
        }
        Ok(())
    }

    /// An expression in statement position: an `if` without values becomes
    /// [`TStmt::If`], a block's statements run in place (in their own
    /// scope), anything else is evaluated and its value dropped.
    fn expr_stmt(&mut self, e: &SExpr, out: &mut Vec<TStmt>) -> Result<()> {
        match e {
            SExpr::If(cond, then, els) if is_unit(e) => {
                let cond = self.condition(cond)?;
                let then = self.unit_block(then, "a branch of `if`")?;
                let els = self.unit_block(els, "a branch of `if`")?;
                out.push(TStmt::If(cond, then, els));
            }
            SExpr::Block(b) => {
                self.scopes.push(Vec::new());
                let mut inner = TBlock::default();
                let r = self.block_into(b, &mut inner);
                self.scopes.pop();
                r?;
                out.extend(inner.stmts);
                if let Some(v) = inner.result {
                    out.push(TStmt::Expr(*v));
                }
            }
            e => {
                let v = self.expr(e)?;
                out.push(TStmt::Expr(v));
            }
        }
        Ok(())
    }
}
