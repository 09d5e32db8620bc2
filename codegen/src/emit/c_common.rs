//! The shared C printer: types, literals, and every IR expression and
//! statement, with Rust's semantics spelled out in C.
//!
//! - Integer `+ - *` wrap: `i32` goes through `uint`, `u8`/`u16` are cast
//!   back after C's promotion. `/` and `%` by zero give 0 and `i32::MIN / -1`
//!   wraps (helpers `hipacc_div_*`, `hipacc_rem_*`); shifts mask the amount.
//! - Float-to-integer casts saturate and map NaN to 0 (`hipacc_cvt_*`).
//! - `min`/`max` of floats are `fmin`/`fmax` (NaN-ignoring, as Rust);
//!   `round` is C's `round` (half away from zero, as Rust).
//! - Vectors are `float4`, `uchar4`, …; their operators are lane-wise helper
//!   functions, a scalar operand broadcast.
//! - Local reductions and `iterate` are unrolled over the window's positions
//!   in row-major order, the offsets bound as constants so reads and mask
//!   coefficients fold; a reduction starts from the first position's value.
//!   Windows larger than 8x8 positions are printed as one loop instead.
//!
//! Expressions that need statements (`if` expressions, reductions, `&&`
//! whose right side needs statements) are hoisted into temporaries; operands
//! evaluated before a hoisting operand are saved in temporaries first, so the
//! order of evaluation is Rust's.

pub(crate) use super::c_types::{c_type, scalar_c};
use super::dialect::Dialect;
use super::reads::ReadCtx;
use hipacc_core::ir::{
    BinaryOp, Block, Expr, ExprKind, Intrinsic, Kernel, Literal, ReduceOp, ScalarType, Stmt, Type,
    UnaryOp, VarId, Window,
};
use std::collections::HashMap;

/// Helper functions a program needs, each printed once, in first-use order.
#[derive(Default)]
pub(crate) struct Helpers {
    order: Vec<String>,
    defs: HashMap<String, String>,
}

impl Helpers {
    /// Registers helper `name` (defined by `def` if new) and returns the name.
    pub(crate) fn add(&mut self, name: String, def: impl FnOnce() -> String) -> String {
        if !self.defs.contains_key(&name) {
            let text = def();
            self.defs.insert(name.clone(), text);
            self.order.push(name.clone());
        }
        name
    }
    /// Every definition, in registration order.
    pub(crate) fn text(&self) -> String {
        self.order
            .iter()
            .filter_map(|n| self.defs.get(n))
            .cloned()
            .collect::<Vec<_>>()
            .join("")
    }
}

/// A literal of type `ty` as C: `1.5f`, `(-3)`, `7u`, `((uchar)200)`.
pub(crate) fn literal(d: &dyn Dialect, lit: Literal, ty: Type) -> String {
    let scalar = scalar_literal(d, lit, ty.scalar);
    if ty.lanes == 4 {
        let l = [scalar.clone(), scalar.clone(), scalar.clone(), scalar];
        d.make_vec(&c_type(ty), &l)
    } else {
        scalar
    }
}

fn scalar_literal(d: &dyn Dialect, lit: Literal, s: ScalarType) -> String {
    match s {
        ScalarType::Bool => if lit.as_i64() != 0 { "true" } else { "false" }.to_string(),
        ScalarType::I32 => {
            let v = lit.as_i64() as i32;
            if v == i32::MIN {
                "(-2147483647 - 1)".to_string()
            } else if v < 0 {
                format!("({v})")
            } else {
                v.to_string()
            }
        }
        ScalarType::U32 => format!("{}u", lit.as_i64() as u32),
        ScalarType::U8 => format!("((uchar){})", lit.as_i64() as u8),
        ScalarType::U16 => format!("((ushort){})", lit.as_i64() as u16),
        ScalarType::F32 => {
            let v = lit.as_f64() as f32;
            if !v.is_finite() {
                d.f32_from_bits(v.to_bits())
            } else if v.is_sign_negative() {
                format!("({v:?}f)")
            } else {
                format!("{v:?}f")
            }
        }
        ScalarType::F64 => {
            let v = lit.as_f64();
            if !v.is_finite() {
                d.f64_from_bits(v.to_bits())
            } else if v.is_sign_negative() {
                format!("({v:?})")
            } else {
                format!("{v:?}")
            }
        }
    }
}

/// Prints IR statements and expressions into C statements.
pub(crate) struct Printer<'a> {
    pub(crate) d: &'a dyn Dialect,
    pub(crate) k: &'a Kernel,
    pub(crate) helpers: &'a mut Helpers,
    pub(crate) reads: &'a ReadCtx,
    /// The statements printed so far.
    pub(crate) out: String,
    pub(crate) indent: usize,
    tmp: u32,
    /// Window offsets bound to constants while unrolling.
    pub(crate) consts: HashMap<VarId, i64>,
}

impl<'a> Printer<'a> {
    pub(crate) fn new(
        d: &'a dyn Dialect,
        k: &'a Kernel,
        helpers: &'a mut Helpers,
        reads: &'a ReadCtx,
        indent: usize,
    ) -> Printer<'a> {
        Printer {
            d,
            k,
            helpers,
            reads,
            out: String::new(),
            indent,
            tmp: 0,
            consts: HashMap::new(),
        }
    }

    /// Appends one line at the current indentation.
    pub(crate) fn line(&mut self, s: &str) {
        for _ in 0..self.indent {
            self.out.push_str("    ");
        }
        self.out.push_str(s);
        self.out.push('\n');
    }

    fn fresh(&mut self) -> String {
        self.tmp += 1;
        format!("t{}", self.tmp)
    }

    /// The C name of a local variable: `name_id`.
    pub(crate) fn var_name(&self, v: VarId) -> String {
        let base = self
            .k
            .vars
            .get(v.0 as usize)
            .map(|i| sanitize(&i.name))
            .unwrap_or_else(|| "v".to_string());
        format!("{base}_{}", v.0)
    }

    fn var_type(&self, v: VarId) -> Type {
        self.k.vars.get(v.0 as usize).map_or(Type::I32, |i| i.ty)
    }

    /// Prints a block's statements; returns its result expression, if any.
    pub(crate) fn block(&mut self, b: &Block) -> Option<String> {
        for s in &b.stmts {
            self.stmt(s);
        }
        b.result.as_ref().map(|e| self.expr(e))
    }

    /// `{ … }` around a block whose result is assigned to `target`.
    fn scoped_block(&mut self, b: &Block, target: Option<&str>) {
        self.indent += 1;
        let r = self.block(b);
        if let (Some(t), Some(r)) = (target, r) {
            self.line(&format!("{t} = {r};"));
        }
        self.indent -= 1;
    }

    // T name = value;   name = value;   if (c) { … } else { … }
    // for (int i = s; i < e; ++i) { … }   { const int dx = …, dy = …; … }
    fn stmt(&mut self, s: &Stmt) {
        match s {
            Stmt::Let { var, value } => {
                let v = self.expr(value);
                let decl = format!(
                    "{} {} = {v};",
                    c_type(self.var_type(*var)),
                    self.var_name(*var)
                );
                self.consts.remove(var);
                self.line(&decl);
            }
            Stmt::Assign { var, value } => {
                let v = self.expr(value);
                let line = format!("{} = {v};", self.var_name(*var));
                self.line(&line);
            }
            Stmt::If { cond, then, els } => {
                let c = self.expr(cond);
                self.line(&format!("if ({}) {{", condition(&c)));
                self.scoped_block(then, None);
                if els.stmts.is_empty() && els.result.is_none() {
                    self.line("}");
                } else {
                    self.line("} else {");
                    self.scoped_block(els, None);
                    self.line("}");
                }
            }
            Stmt::For {
                var,
                start,
                end,
                body,
            } => {
                let n = self.var_name(*var);
                let (s, e) = (
                    literal(self.d, Literal::Int(*start as i64), Type::I32),
                    literal(self.d, Literal::Int(*end as i64), Type::I32),
                );
                self.line(&format!("for (int {n} = {s}; {n} < {e}; ++{n}) {{"));
                self.scoped_block(body, None);
                self.line("}");
            }
            Stmt::Iterate {
                window,
                dx,
                dy,
                body,
            } => {
                let positions = super::super::passes::window::positions(self.k, *window);
                if let Some(shape) = rolled(self.k, *window, positions.len()) {
                    self.open_rolled(*dx, *dy, shape, 0);
                    self.block(body);
                    self.indent -= 1;
                    self.line("}");
                    return;
                }
                for (px, py) in positions {
                    self.open_position(*dx, *dy, px, py);
                    self.block(body);
                    self.close_position(*dx, *dy);
                }
            }
            Stmt::Expr(e) => {
                self.expr(e);
            }
        }
    }

    // { // dx = -1, dy = 0
    fn open_position(&mut self, dx: VarId, dy: VarId, px: i32, py: i32) {
        self.line(&format!("{{ // dx = {px}, dy = {py}"));
        self.indent += 1;
        let (nx, ny) = (self.var_name(dx), self.var_name(dy));
        self.line(&format!(
            "const int {nx} = {}, {ny} = {};",
            i_lit(px),
            i_lit(py)
        ));
        self.consts.insert(dx, px as i64);
        self.consts.insert(dy, py as i64);
    }

    // for (int i = 1; i < 225; ++i) {
    //     const int dx = i % 15 - 7, dy = i / 15 - 7;
    fn open_rolled(&mut self, dx: VarId, dy: VarId, shape: RolledWindow, first: usize) {
        let i = self.fresh();
        let (nx, ny) = (self.var_name(dx), self.var_name(dy));
        self.line(&format!(
            "for (int {i} = {first}; {i} < {}; ++{i}) {{",
            shape.width * shape.height
        ));
        self.indent += 1;
        self.line(&format!(
            "const int {nx} = {i} % {w} - {hw}, {ny} = {i} / {w} - {hh};",
            w = shape.width,
            hw = shape.width / 2,
            hh = shape.height / 2
        ));
    }

    fn close_position(&mut self, dx: VarId, dy: VarId) {
        self.consts.remove(&dx);
        self.consts.remove(&dy);
        self.indent -= 1;
        self.line("}");
    }

    /// Saves `s` in a temporary of type `ty` unless it is a name or literal.
    pub(crate) fn materialize(&mut self, s: String, ty: Type) -> String {
        if is_simple(&s) {
            return s;
        }
        let t = self.fresh();
        self.line(&format!("const {} {t} = {s};", c_type(ty)));
        t
    }

    /// Prints operands left to right; an operand printed before one that
    /// emits statements is saved in a temporary ahead of those statements.
    fn operands(&mut self, es: &[&Expr]) -> Vec<String> {
        let mut out: Vec<(String, usize, Type)> = Vec::new();
        for e in es {
            let before = self.out.len();
            let s = self.expr(e);
            if self.out.len() != before {
                let indent = "    ".repeat(self.indent);
                let mut inserted = String::new();
                for (prev, _, ty) in out.iter_mut() {
                    if !is_simple(prev) {
                        self.tmp += 1;
                        let t = format!("t{}", self.tmp);
                        inserted
                            .push_str(&format!("{indent}const {} {t} = {prev};\n", c_type(*ty)));
                        *prev = t;
                    }
                }
                self.out.insert_str(before, &inserted);
            }
            out.push((s, before, e.ty));
        }
        out.into_iter().map(|(s, _, _)| s).collect()
    }

    /// Prints an expression; may print statements first.
    pub(crate) fn expr(&mut self, e: &Expr) -> String {
        match &e.kind {
            ExprKind::Const(l) => literal(self.d, *l, e.ty),
            ExprKind::Param(i) => format!("prm_{}", sanitize(&self.k.params[*i].name)),
            ExprKind::Var(v) => match self.consts.get(v) {
                Some(c) => i_lit(*c as i32),
                None => self.var_name(*v),
            },
            ExprKind::X => "gx".to_string(),
            ExprKind::Y => "gy".to_string(),
            ExprKind::Read { acc, dx, dy } => {
                let (ox, oy) = (self.offset(dx), self.offset(dy));
                let reads = self.reads;
                reads.read(self, *acc, ox, oy)
            }
            ExprKind::MaskCoef { mask, dx, dy } => {
                let (ox, oy) = (self.offset(dx), self.offset(dy));
                let reads = self.reads;
                reads.mask(self, *mask, ox, oy)
            }
            ExprKind::Unary { op, arg } => {
                let a = self.expr(arg);
                super::ops::unary(self, *op, arg.ty, a)
            }
            ExprKind::Binary { op, lhs, rhs } => self.binary(*op, lhs, rhs, e.ty),
            ExprKind::Call { func, args } => {
                let refs: Vec<&Expr> = args.iter().collect();
                let a = self.operands(&refs);
                let tys: Vec<Type> = args.iter().map(|x| x.ty).collect();
                super::ops::call(self, *func, &tys, e.ty, a)
            }
            ExprKind::If { cond, then, els } => {
                let c = self.expr(cond);
                let t = self.fresh();
                self.line(&format!("{} {t};", c_type(e.ty)));
                self.line(&format!("if ({}) {{", condition(&c)));
                self.scoped_block(then, Some(&t));
                self.line("} else {");
                self.scoped_block(els, Some(&t));
                self.line("}");
                t
            }
            ExprKind::Cast(arg) => {
                let a = self.expr(arg);
                super::ops::cast(self, arg.ty, e.ty, a)
            }
            ExprKind::Reduce {
                window,
                op,
                dx,
                dy,
                body,
            } => self.reduce(*window, *op, *dx, *dy, body, e.ty),
            ExprKind::Lane { arg, lane } => {
                let a = self.expr(arg);
                let l = ["x", "y", "z", "w"][(*lane as usize).min(3)];
                format!("{}.{l}", paren(&a))
            }
            ExprKind::MakeVec(args) => {
                let refs: Vec<&Expr> = args.iter().collect();
                let a = self.operands(&refs);
                let l = [a[0].clone(), a[1].clone(), a[2].clone(), a[3].clone()];
                self.d.make_vec(&c_type(e.ty), &l)
            }
        }
    }

    /// An `i32` offset: a constant when it folds, else the printed expression.
    fn offset(&mut self, e: &Expr) -> Offset {
        match self.fold(e) {
            Some(v) => Offset::Const(v),
            None => Offset::Expr(self.expr(e)),
        }
    }

    /// Constant-folds an integer expression of literals and bound offsets.
    fn fold(&self, e: &Expr) -> Option<i64> {
        match &e.kind {
            ExprKind::Const(Literal::Int(v)) => Some(*v),
            ExprKind::Var(v) => self.consts.get(v).copied(),
            ExprKind::Unary {
                op: UnaryOp::Neg,
                arg,
            } => self.fold(arg).map(|v| -v),
            ExprKind::Binary { op, lhs, rhs } if e.ty == Type::I32 => {
                let (a, b) = (self.fold(lhs)?, self.fold(rhs)?);
                let r = match op {
                    BinaryOp::Add => a + b,
                    BinaryOp::Sub => a - b,
                    BinaryOp::Mul => a * b,
                    _ => return None,
                };
                (r.abs() < (1 << 30)).then_some(r)
            }
            _ => None,
        }
    }

    // (a + b), or for `&&` whose right side needs statements:
    // bool t = a; if (t) { …; t = b; }
    fn binary(&mut self, op: BinaryOp, lhs: &Expr, rhs: &Expr, ty: Type) -> String {
        let logical = lhs.ty == Type::BOOL && matches!(op, BinaryOp::And | BinaryOp::Or);
        if logical {
            let a = self.expr(lhs);
            let saved = std::mem::take(&mut self.out);
            self.indent += 1;
            let b = self.expr(rhs);
            self.indent -= 1;
            let inner = std::mem::replace(&mut self.out, saved);
            let sym = if op == BinaryOp::And { "&&" } else { "||" };
            if inner.is_empty() {
                return format!("({a} {sym} {b})");
            }
            let t = self.fresh();
            self.line(&format!("bool {t} = {a};"));
            let test = if op == BinaryOp::And {
                t.clone()
            } else {
                format!("!{t}")
            };
            self.line(&format!("if ({test}) {{"));
            self.out.push_str(&inner);
            self.indent += 1;
            self.line(&format!("{t} = {b};"));
            self.indent -= 1;
            self.line("}");
            return t;
        }
        let v = self.operands(&[lhs, rhs]);
        super::ops::binary(self, op, lhs.ty, rhs.ty, ty, v[0].clone(), v[1].clone())
    }

    // T t = first; t = combine(t, next); … one scope per window position.
    fn reduce(
        &mut self,
        window: Window,
        op: ReduceOp,
        dx: VarId,
        dy: VarId,
        body: &Block,
        ty: Type,
    ) -> String {
        let t = self.fresh();
        let positions = super::super::passes::window::positions(self.k, window);
        let zero = literal(self.d, Literal::Int(0), ty);
        self.line(&format!(
            "{} {t} = {zero}; // {op:?} over {} positions",
            c_type(ty),
            positions.len()
        ));
        let shape = rolled(self.k, window, positions.len());
        for (i, (px, py)) in positions.into_iter().enumerate() {
            match shape {
                // Position 0 is unrolled, so the reduction still starts
                // from its value; the loop covers the rest.
                Some(shape) if i == 1 => self.open_rolled(dx, dy, shape, 1),
                Some(_) if i > 1 => break,
                _ => self.open_position(dx, dy, px, py),
            }
            let v = self.block(body).unwrap_or_else(|| zero.clone());
            let combined = if i == 0 {
                v
            } else {
                let v = self.materialize(v, ty);
                match op {
                    ReduceOp::Sum => {
                        super::ops::binary(self, BinaryOp::Add, ty, ty, ty, t.clone(), v)
                    }
                    ReduceOp::Prod => {
                        super::ops::binary(self, BinaryOp::Mul, ty, ty, ty, t.clone(), v)
                    }
                    ReduceOp::Min => {
                        super::ops::call(self, Intrinsic::Min, &[ty, ty], ty, vec![t.clone(), v])
                    }
                    ReduceOp::Max => {
                        super::ops::call(self, Intrinsic::Max, &[ty, ty], ty, vec![t.clone(), v])
                    }
                }
            };
            self.line(&format!("{t} = {combined};"));
            self.close_position(dx, dy);
        }
        t
    }
}

/// Windows with more positions than this are printed as a loop: a fully
/// unrolled 15x15 window, repeated in every border-region variant, made
/// PoCL's LLVM spend minutes on one program, while the coefficients and
/// offsets of windows this large gain little from folding.
const UNROLL_MAX_POSITIONS: usize = 64;

/// The extent of a window printed as a loop.
#[derive(Clone, Copy, Debug)]
struct RolledWindow {
    width: u32,
    height: u32,
}

/// How `window` is printed: `Some` for a loop over its row-major positions
/// (a full rectangle of more than [`UNROLL_MAX_POSITIONS`]), `None` to
/// unroll it. Domains with holes stay unrolled: their positions are not a
/// range.
fn rolled(k: &Kernel, window: Window, positions: usize) -> Option<RolledWindow> {
    let (width, height) = match window {
        Window::Mask(i) => k.masks.get(i).map(|m| (m.width, m.height))?,
        Window::Domain(i) => k.domains.get(i).map(|d| (d.width, d.height))?,
    };
    let full = positions == (width * height) as usize;
    (full && positions > UNROLL_MAX_POSITIONS).then_some(RolledWindow { width, height })
}

/// An offset of a read or mask coefficient.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Offset {
    /// Known at generation time.
    Const(i64),
    /// Computed at run time (a printed `int` expression).
    Expr(String),
}

impl Offset {
    /// `base + offset`, folded: `u`, `u + 2`, `u - 1`, `u + (e)`.
    pub(crate) fn add_to(&self, base: &str) -> String {
        match self {
            Offset::Const(0) => base.to_string(),
            Offset::Const(v) if *v > 0 => format!("{base} + {v}"),
            Offset::Const(v) => format!("{base} - {}", -v),
            Offset::Expr(e) => format!("{base} + {}", paren(e)),
        }
    }
}

/// An `int` literal.
pub(crate) fn i_lit(v: i32) -> String {
    if v < 0 {
        format!("({v})")
    } else {
        v.to_string()
    }
}

/// `s` in parentheses unless it is already atomic.
pub(crate) fn paren(s: &str) -> String {
    if is_simple(s) || (s.starts_with('(') && s.ends_with(')') && balanced_outer(s)) {
        s.to_string()
    } else {
        format!("({s})")
    }
}

/// The condition of an `if`: `c` without the parentheses that wrap all of
/// it. Expressions print parenthesised (`(a == 0)`), and `if ((a == 0))`
/// makes clang, the front end of most OpenCL compilers, warn
/// (`-Wparentheses-equality`) on every build.
pub(crate) fn condition(c: &str) -> &str {
    if c.len() >= 2 && c.starts_with('(') && c.ends_with(')') && balanced_outer(c) {
        &c[1..c.len() - 1]
    } else {
        c
    }
}

fn balanced_outer(s: &str) -> bool {
    let mut depth = 0i32;
    for (i, c) in s.char_indices() {
        match c {
            '(' => depth += 1,
            ')' => {
                depth -= 1;
                if depth == 0 && i != s.len() - 1 {
                    return false;
                }
            }
            _ => {}
        }
    }
    depth == 0
}

/// A name or a literal: safe to repeat without re-evaluation.
pub(crate) fn is_simple(s: &str) -> bool {
    !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '.')
}

/// A C identifier from a Rust one (only ASCII alphanumerics and `_` kept).
pub(crate) fn sanitize(name: &str) -> String {
    let s: String = name
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .collect();
    if s.is_empty() {
        "v".to_string()
    } else {
        s
    }
}
