//! Operators, math functions and casts with Rust's semantics in C. Scalar
//! operations print inline where C agrees with Rust and call a helper where
//! it does not; vector operations call lane-wise helpers built from the
//! scalar printers.

use super::c_common::{c_type, paren, scalar_c, Printer};
use hipacc_core::ir::{BinaryOp, Intrinsic, ScalarType, Type, UnaryOp};

/// The name used in helper names for an operator.
fn op_name(op: BinaryOp) -> &'static str {
    match op {
        BinaryOp::Add => "add",
        BinaryOp::Sub => "sub",
        BinaryOp::Mul => "mul",
        BinaryOp::Div => "div",
        BinaryOp::Rem => "rem",
        BinaryOp::And => "and",
        BinaryOp::Or => "or",
        BinaryOp::BitXor => "xor",
        BinaryOp::Shl => "shl",
        BinaryOp::Shr => "shr",
        BinaryOp::Eq => "eq",
        BinaryOp::Ne => "ne",
        BinaryOp::Lt => "lt",
        BinaryOp::Le => "le",
        BinaryOp::Gt => "gt",
        BinaryOp::Ge => "ge",
    }
}

/// A lane-wise vector helper: `T4 name(T4 a, T4 b) { return make(f(a.x, b.x), …); }`.
fn vec_helper(
    p: &mut Printer,
    name: String,
    params: &[(String, &str)],
    result: Type,
    lane: impl Fn(&mut Printer, &[String]) -> String,
) -> String {
    let mut lane_exprs: Vec<String> = Vec::with_capacity(4);
    for l in ["x", "y", "z", "w"] {
        let args: Vec<String> = params
            .iter()
            .map(|(ty, n)| {
                if ty.ends_with('4') {
                    format!("{n}.{l}")
                } else {
                    n.to_string()
                }
            })
            .collect();
        lane_exprs.push(lane(p, &args));
    }
    let d = p.d;
    let ps: Vec<String> = params.iter().map(|(t, n)| format!("{t} {n}")).collect();
    let body = d.make_vec(
        &c_type(result),
        &[
            lane_exprs[0].clone(),
            lane_exprs[1].clone(),
            lane_exprs[2].clone(),
            lane_exprs[3].clone(),
        ],
    );
    let decl = d.func_decl();
    let rt = c_type(result);
    let text = format!(
        "{decl} {rt} {name}({}) {{\n    return {body};\n}}\n",
        ps.join(", ")
    );
    p.helpers.add(name, || text)
}

/// `-a`, `!a` (`~a` on integers).
pub(crate) fn unary(p: &mut Printer, op: UnaryOp, ty: Type, a: String) -> String {
    if ty.lanes == 4 {
        let s = Type::scalar(ty.scalar);
        let name = format!(
            "hipacc_{}_{}",
            if op == UnaryOp::Neg { "neg" } else { "not" },
            c_type(ty)
        );
        let cty = c_type(ty);
        let h = vec_helper(p, name, &[(cty, "a")], ty, |p, args| {
            unary(p, op, s, args[0].clone())
        });
        return format!("{h}({a})");
    }
    let t = scalar_c(ty.scalar);
    match (op, ty.scalar) {
        (UnaryOp::Neg, ScalarType::I32) => format!("(int)(0u - (uint){})", paren(&a)),
        (UnaryOp::Neg, s) if s.is_int() => format!("({t})(0u - {})", paren(&a)),
        (UnaryOp::Neg, _) => format!("(-{})", paren(&a)),
        (UnaryOp::Not, ScalarType::Bool) => format!("(!{})", paren(&a)),
        (UnaryOp::Not, _) => format!("({t})(~{})", paren(&a)),
    }
}

/// `a op b` with Rust's semantics; vectors lane-wise with a scalar broadcast.
pub(crate) fn binary(
    p: &mut Printer,
    op: BinaryOp,
    lt: Type,
    rt: Type,
    ty: Type,
    a: String,
    b: String,
) -> String {
    if lt.lanes == 4 || rt.lanes == 4 {
        let (ls, rs) = (Type::scalar(lt.scalar), Type::scalar(rt.scalar));
        let rs_ty = Type::scalar(ty.scalar);
        let (lc, rc) = (c_type(lt), c_type(rt));
        let name = format!("hipacc_{}_{lc}_{rc}", op_name(op));
        let h = vec_helper(p, name, &[(lc, "a"), (rc, "b")], ty, |p, args| {
            binary(p, op, ls, rs, rs_ty, args[0].clone(), args[1].clone())
        });
        return format!("{h}({a}, {b})");
    }
    let s = lt.scalar;
    let t = scalar_c(s);
    let (pa, pb) = (paren(&a), paren(&b));
    let sym = match op {
        BinaryOp::Add => "+",
        BinaryOp::Sub => "-",
        BinaryOp::Mul => "*",
        BinaryOp::Div => "/",
        BinaryOp::Rem => "%",
        BinaryOp::And => "&",
        BinaryOp::Or => "|",
        BinaryOp::BitXor => "^",
        BinaryOp::Shl => "<<",
        BinaryOp::Shr => ">>",
        BinaryOp::Eq => "==",
        BinaryOp::Ne => "!=",
        BinaryOp::Lt => "<",
        BinaryOp::Le => "<=",
        BinaryOp::Gt => ">",
        BinaryOp::Ge => ">=",
    };
    if op.is_comparison() {
        return format!("({pa} {sym} {pb})");
    }
    match op {
        BinaryOp::And | BinaryOp::Or if s == ScalarType::Bool => {
            let sym = if op == BinaryOp::And { "&&" } else { "||" };
            format!("({pa} {sym} {pb})")
        }
        BinaryOp::BitXor if s == ScalarType::Bool => format!("({pa} != {pb})"),
        BinaryOp::Rem if s.is_float() => format!("fmod({a}, {b})"),
        _ if s.is_float() => format!("({pa} {sym} {pb})"),
        BinaryOp::Add | BinaryOp::Sub | BinaryOp::Mul => match s {
            ScalarType::I32 => format!("(int)((uint){pa} {sym} (uint){pb})"),
            ScalarType::U32 => format!("({pa} {sym} {pb})"),
            _ => format!("({t})({pa} {sym} {pb})"),
        },
        BinaryOp::Div | BinaryOp::Rem => {
            let h = div_helper(p, op, s);
            format!("{h}({a}, {b})")
        }
        BinaryOp::Shl if s == ScalarType::I32 => {
            format!("(int)((uint){pa} << ((int){pb} & 31))")
        }
        BinaryOp::Shl | BinaryOp::Shr => {
            let bits = s.size() * 8 - 1;
            format!("({t})({pa} {sym} ((int){pb} & {bits}))")
        }
        _ => format!("({t})({pa} {sym} {pb})"),
    }
}

// int hipacc_div_int(int a, int b) { return b == 0 ? 0 : (a == INT_MIN && b == -1) ? a : a / b; }
fn div_helper(p: &mut Printer, op: BinaryOp, s: ScalarType) -> String {
    let t = scalar_c(s);
    let name = format!("hipacc_{}_{t}", op_name(op));
    let decl = p.d.func_decl();
    let sym = if op == BinaryOp::Div { "/" } else { "%" };
    let overflow = if op == BinaryOp::Div { "a" } else { "0" };
    let body = if s == ScalarType::I32 {
        format!("b == 0 ? 0 : (a == (-2147483647 - 1) && b == -1) ? {overflow} : a {sym} b")
    } else {
        format!("b == 0 ? ({t})0 : ({t})(a {sym} b)")
    };
    let text = format!(
        "/* Rust `{sym}` on {t}; division by zero gives 0 instead of a panic. */\n{decl} {t} {name}({t} a, {t} b) {{\n    return {body};\n}}\n"
    );
    p.helpers.add(name, || text)
}

/// A math function call; `tys` are the argument types.
pub(crate) fn call(
    p: &mut Printer,
    func: Intrinsic,
    tys: &[Type],
    ty: Type,
    args: Vec<String>,
) -> String {
    if tys.iter().any(|t| t.lanes == 4) {
        let names = ["a", "b", "c"];
        let params: Vec<(String, &str)> = tys
            .iter()
            .zip(names)
            .map(|(t, n)| (c_type(*t), n))
            .collect();
        let scalars: Vec<Type> = tys.iter().map(|t| Type::scalar(t.scalar)).collect();
        let st = Type::scalar(ty.scalar);
        let name = format!(
            "hipacc_{}_{}",
            func.signature().0,
            params
                .iter()
                .map(|p| p.0.as_str())
                .collect::<Vec<_>>()
                .join("_")
        );
        let h = vec_helper(p, name, &params, ty, |p, a| {
            call(p, func, &scalars, st, a.to_vec())
        });
        return format!("{h}({})", args.join(", "));
    }
    let s = tys.first().map_or(ty.scalar, |t| t.scalar);
    let a = |i: usize| args.get(i).cloned().unwrap_or_default();
    if s.is_float() {
        return float_call(p, func, s, &args);
    }
    let t = scalar_c(s);
    match func {
        Intrinsic::Min | Intrinsic::Max | Intrinsic::Clamp | Intrinsic::Abs | Intrinsic::Signum => {
            let h = int_helper(p, func, s);
            format!("{h}({})", args.join(", "))
        }
        Intrinsic::Powi => {
            let h = int_helper(p, Intrinsic::Powi, s);
            format!("{h}({}, {})", a(0), a(1))
        }
        _ => format!("({t})0 /* {} is not defined on {t} */", func.signature().0),
    }
}

// sqrt(a), fmin(a, b), hipacc_clamp_float(a, lo, hi), …
fn float_call(p: &mut Printer, func: Intrinsic, s: ScalarType, args: &[String]) -> String {
    let t = scalar_c(s);
    let j = args.join(", ");
    let f = match func {
        Intrinsic::Abs => "fabs",
        Intrinsic::Sqrt => "sqrt",
        Intrinsic::Exp => "exp",
        Intrinsic::Exp2 => "exp2",
        Intrinsic::Ln => "log",
        Intrinsic::Log2 => "log2",
        Intrinsic::Log10 => "log10",
        Intrinsic::Powf => "pow",
        Intrinsic::Sin => "sin",
        Intrinsic::Cos => "cos",
        Intrinsic::Tan => "tan",
        Intrinsic::Atan => "atan",
        Intrinsic::Atan2 => "atan2",
        Intrinsic::Hypot => "hypot",
        Intrinsic::Floor => "floor",
        Intrinsic::Ceil => "ceil",
        Intrinsic::Round => "round",
        Intrinsic::Min => "fmin",
        Intrinsic::Max => "fmax",
        Intrinsic::MulAdd => "fma",
        Intrinsic::Clamp | Intrinsic::Signum | Intrinsic::Powi => {
            let name = format!("hipacc_{}_{t}", func.signature().0);
            let decl = p.d.func_decl();
            let text = match func {
                Intrinsic::Clamp => format!(
                    "/* Rust `clamp`: NaN stays NaN. */\n{decl} {t} {name}({t} x, {t} lo, {t} hi) {{\n    return x < lo ? lo : (x > hi ? hi : x);\n}}\n"
                ),
                Intrinsic::Signum => format!(
                    "/* Rust `signum`: NaN stays NaN, -0.0 gives -1. */\n{decl} {t} {name}({t} x) {{\n    return isnan(x) ? x : copysign(({t})1, x);\n}}\n"
                ),
                _ => format!(
                    "/* Rust `powi`: repeated squaring. */\n{decl} {t} {name}({t} x, int n) {{\n    {t} r = ({t})1;\n    uint e = n < 0 ? 0u - (uint)n : (uint)n;\n    while (e != 0u) {{\n        if (e & 1u) r *= x;\n        x *= x;\n        e >>= 1;\n    }}\n    return n < 0 ? ({t})1 / r : r;\n}}\n"
                ),
            };
            let h = p.helpers.add(name, || text);
            return format!("{h}({j})");
        }
    };
    format!("{f}({j})")
}

// int hipacc_min_int(int a, int b) { return a < b ? a : b; }
fn int_helper(p: &mut Printer, func: Intrinsic, s: ScalarType) -> String {
    let t = scalar_c(s);
    let name = format!("hipacc_{}_{t}", func.signature().0);
    let decl = p.d.func_decl();
    let text = match func {
        Intrinsic::Min => format!("{decl} {t} {name}({t} a, {t} b) {{\n    return a < b ? a : b;\n}}\n"),
        Intrinsic::Max => format!("{decl} {t} {name}({t} a, {t} b) {{\n    return a > b ? a : b;\n}}\n"),
        Intrinsic::Clamp => format!(
            "{decl} {t} {name}({t} x, {t} lo, {t} hi) {{\n    return x < lo ? lo : (x > hi ? hi : x);\n}}\n"
        ),
        Intrinsic::Abs if s == ScalarType::I32 => format!(
            "/* Rust `wrapping_abs`. */\n{decl} int {name}(int a) {{\n    return a < 0 ? (int)(0u - (uint)a) : a;\n}}\n"
        ),
        Intrinsic::Abs => format!("{decl} {t} {name}({t} a) {{\n    return a;\n}}\n"),
        Intrinsic::Signum if s == ScalarType::I32 => {
            format!("{decl} int {name}(int a) {{\n    return (a > 0) - (a < 0);\n}}\n")
        }
        Intrinsic::Signum => format!("{decl} {t} {name}({t} a) {{\n    return a > 0 ? 1 : 0;\n}}\n"),
        _ => format!(
            "/* Rust `wrapping_pow`. */\n{decl} {t} {name}({t} x, int n) {{\n    uint r = 1u, b = (uint)x;\n    for (uint e = (uint)n; e != 0u; e >>= 1) {{\n        if (e & 1u) r *= b;\n        b *= b;\n    }}\n    return ({t})r;\n}}\n"
        ),
    };
    p.helpers.add(name, || text)
}

/// `a as T` with Rust's semantics: float to integer saturates and maps NaN
/// to 0; everything else is C's conversion.
pub(crate) fn cast(p: &mut Printer, from: Type, to: Type, a: String) -> String {
    if from == to {
        return a;
    }
    if from.lanes == 4 || to.lanes == 4 {
        let (fs, ts) = (Type::scalar(from.scalar), Type::scalar(to.scalar));
        let fc = c_type(from);
        let name = format!("hipacc_cast_{fc}_{}", c_type(to));
        let h = vec_helper(p, name, &[(fc, "a")], to, |p, args| {
            cast(p, fs, ts, args[0].clone())
        });
        return format!("{h}({a})");
    }
    let (f, t) = (from.scalar, to.scalar);
    if f.is_float() && t.is_int() {
        let (fc, tc) = (scalar_c(f), scalar_c(t));
        let name = format!("hipacc_cvt_{fc}_{tc}");
        let (lo, hi) = match t {
            ScalarType::U8 => ("0", "255"),
            ScalarType::U16 => ("0", "65535"),
            ScalarType::U32 => ("0", "4294967295u"),
            _ => ("(-2147483647 - 1)", "2147483647"),
        };
        let (lo_f, hi_f) = match t {
            ScalarType::U8 => ("0.0", "255.0"),
            ScalarType::U16 => ("0.0", "65535.0"),
            ScalarType::U32 => ("0.0", "4294967295.0"),
            _ => ("-2147483648.0", "2147483647.0"),
        };
        let decl = p.d.func_decl();
        let text = format!(
            "/* Rust `as {}`: saturating, NaN gives 0. */\n{decl} {tc} {name}({fc} v) {{\n    if (isnan(v)) return 0;\n    if (v <= ({fc}){lo_f}) return {lo};\n    if (v >= ({fc}){hi_f}) return {hi};\n    return ({tc})v;\n}}\n",
            t.rust_name()
        );
        let h = p.helpers.add(name, || text);
        return format!("{h}({a})");
    }
    format!("(({}){})", scalar_c(t), paren(&a))
}
