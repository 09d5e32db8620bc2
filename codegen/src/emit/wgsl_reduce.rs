//! The global operators of [`super::reduce`] printed in WGSL: the same
//! kernels (entry points, parameters, blocks of [`GLOBAL_BLOCK`]
//! invocations, two-stage tree reductions, histogram bins in workgroup
//! memory or, past [`LOCAL_BINS`], in the output with atomics), laid out as
//! every WGSL kernel is (see [`wgsl_layout`]): the `int` and `double`
//! parameters in a uniform struct at binding 0, the buffers from binding 1.
//!
//! Buffers are seen lane by lane, as the C kernels see them: the input is an
//! array of the lane type, or of `u32` words packing four `u8` or two `u16`
//! lanes (the bytes of the image either way, `Rgba<u8>` included); an
//! output of `u8` or `u16` partials is written with atomic and/or on its
//! words, since neighbouring blocks write neighbouring lanes. Lanes of
//! `u8` and `u16` are held in `u32` (also in workgroup memory). Sums and
//! bin positions are `f64`: the module needs the `SHADER_F64` feature.

use super::program::{ArgKind, Program};
use super::reduce::{
    better, global_args, global_entry, global_info, GlobalOp, Param, GLOBAL_BLOCK, LOCAL_BINS,
};
use super::wgsl::{
    is_nan, nan_ignoring_extreme, narrow_mask, packed_lane, packed_store, scalar_literal, scalar_w,
    wgsl_layout, WgslSlot, PRELUDE,
};
use crate::arch::Target;
use crate::vocab::Language;
use hipacc_core::ir::{Literal, ScalarType, Type};
use std::fmt::Write as _;

/// The WGSL module with every global operator on `pixel`s (a scalar or
/// 4-lane type other than `bool`).
pub(super) fn global_program(pixel: Type, target: &Target) -> Program {
    let s = pixel.scalar;
    let mut source = format!(
        "// hipacc: WGSL global operators on {pixel:?} pixels for target `{}`. Generated.\n// f64: needs the SHADER_F64 feature.\n",
        target.name
    );
    source.push_str(PRELUDE);
    if s.is_float() {
        for max in [false, true] {
            source.push_str(&nan_ignoring_extreme(&extreme_fn(s, max), s, max));
        }
    }
    source.push('\n');
    let mut kernels = Vec::new();
    for &op in GlobalOp::for_pixel(pixel) {
        let (text, shared_bytes) = kernel(op, pixel);
        source.push_str(&text);
        let args = global_args(op, |p| param_type(op, s, p));
        kernels.push(global_info(op, pixel, args, shared_bytes));
    }
    Program {
        language: Language::Wgsl,
        target: target.name,
        source,
        kernels,
    }
}

/// The WGSL type of parameter `p` of `op`'s kernel on lanes of type `s`
/// (the uniform struct's member type, or the storage buffer's).
fn param_type(op: GlobalOp, s: ScalarType, p: Param) -> String {
    let words = narrow_mask(s).is_some();
    match p {
        Param::Int => "i32".into(),
        Param::Double => "f64".into(),
        Param::Indices => "array<i32>".into(),
        Param::Input => format!("array<{}>", scalar_w(s)),
        Param::Output => match op {
            GlobalOp::Sum => "array<f64>".into(),
            GlobalOp::Histogram => "array<atomic<u32>>".into(),
            _ if words => "array<atomic<u32>>".into(),
            _ => format!("array<{}>", scalar_w(s)),
        },
    }
}

/// The helper computing C's `fmin` (`max == false`) or `fmax` on `s`.
fn extreme_fn(s: ScalarType, max: bool) -> String {
    format!(
        "hipacc_f{}_{}",
        if max { "max" } else { "min" },
        scalar_w(s)
    )
}

/// `a op b` for min/max on lanes of type `s`.
fn extreme(s: ScalarType, max: bool, a: &str, b: &str) -> String {
    if s.is_float() {
        format!("{}({a}, {b})", extreme_fn(s, max))
    } else {
        format!("{}({a}, {b})", if max { "max" } else { "min" })
    }
}

/// The identity of min (`max == false`) or max on lanes of type `s`: NaN
/// for floats, the type's largest (smallest) value for integers.
fn extreme_identity(s: ScalarType, max: bool) -> String {
    let lit = match (s, max) {
        (ScalarType::F32 | ScalarType::F64, _) => Literal::float(f64::NAN),
        (ScalarType::U8, false) => Literal::Int(i64::from(u8::MAX)),
        (ScalarType::U16, false) => Literal::Int(i64::from(u16::MAX)),
        (ScalarType::U32, false) => Literal::Int(i64::from(u32::MAX)),
        (ScalarType::I32, false) => Literal::Int(i64::from(i32::MAX)),
        (ScalarType::I32, true) => Literal::Int(i64::from(i32::MIN)),
        _ => Literal::Int(0),
    };
    scalar_literal(lit, s)
}

/// The text of `op`'s kernel on `pixel`s and its workgroup memory in bytes.
fn kernel(op: GlobalOp, pixel: Type) -> (String, u32) {
    let s = pixel.scalar;
    let lanes = u32::from(pixel.lanes);
    let entry = global_entry(op, pixel);
    // Module-scope names: the entry point (which starts `hipacc_`) and a
    // suffix.
    let g = |n: &str| format!("{entry}_{n}");
    let (a, input, out) = (g("args"), g("in"), g("out"));
    let args = global_args(op, |p| param_type(op, s, p));
    let (slots, _) = wgsl_layout(&args);
    let mut t = String::new();
    let _ = writeln!(t, "struct HipaccArgs_{entry} {{");
    for arg in args.iter().filter(|arg| arg.scalar.is_some()) {
        let _ = writeln!(t, "    {}: {},", arg.name, arg.c_type);
    }
    let _ = writeln!(
        t,
        "}}\n@group(0) @binding(0) var<uniform> {a}: HipaccArgs_{entry};"
    );
    for (arg, slot) in args.iter().zip(&slots) {
        let WgslSlot::Binding(b) = slot else { continue };
        let access = if arg.kind == ArgKind::OutputBuffer {
            "read_write"
        } else {
            "read"
        };
        let _ = writeln!(
            t,
            "@group(0) @binding({b}) var<storage, {access}> {}: {};",
            g(&arg.name),
            arg.c_type
        );
    }
    let lane_t = scalar_w(s);
    let words = narrow_mask(s).is_some();
    let load = |e: &str| {
        if words {
            packed_lane(&input, s, e)
        } else {
            format!("{input}[{e}]")
        }
    };
    // Statements (at `indent`) storing `v` as partial `i` of the output.
    let store = |indent: &str, i: &str, v: &str| {
        if words && op != GlobalOp::Sum {
            let mut text = format!("{indent}{{\n{indent}    let oi = {i};\n");
            for line in packed_store(&out, s, "oi", v) {
                let _ = writeln!(text, "{indent}    {line}");
            }
            text + &format!("{indent}}}\n")
        } else {
            format!("{indent}{out}[{i}] = {v};\n")
        }
    };
    let b = GLOBAL_BLOCK;
    let workgroup =
        |name: &str, ty: &str, n: u32| format!("var<workgroup> {}: array<{ty}, {n}>;\n", g(name));
    let mut body = String::new();
    let mut line = |text: &str| {
        let _ = writeln!(body, "    {text}");
    };
    line("let lid = i32(lid3.x);");
    line("let group = i32(wid.x);");
    line(&format!("let first = group * {b} + lid;"));
    line(&format!("let n = {a}.w * {a}.h;"));
    // Visits this invocation's pixels (`i`: the row-major index in the
    // region, `e`: the first lane's index in the input); one division per
    // invocation: the column and row advance by `threads`.
    let visit = |indent: &str, each: &str| {
        let mut v = String::new();
        for l in [
            format!("let dx = {a}.threads % {a}.w;"),
            format!("let dy = {a}.threads / {a}.w;"),
            format!("var x = first % {a}.w;"),
            format!("var y = first / {a}.w;"),
            format!("for (var i = first; i < n; i = i + {a}.threads) {{"),
            format!("    let e = (({a}.y0 + y) * {a}.stride + {a}.x0 + x) * {lanes};"),
        ] {
            let _ = writeln!(v, "{indent}{l}");
        }
        for l in each.lines() {
            let _ = writeln!(v, "{indent}    {l}");
        }
        for l in [
            "    x = x + dx;",
            "    y = y + dy;",
            &format!("    if (x >= {a}.w) {{ x = x - {a}.w; y = y + 1; }}"),
            "}",
        ] {
            let _ = writeln!(v, "{indent}{l}");
        }
        v
    };
    let halving = format!("for (var span = {}; span > 0; span = span / 2) {{", b / 2);
    let (shared, shared_bytes) = match op {
        GlobalOp::Sum | GlobalOp::Min | GlobalOp::Max => {
            let max = op == GlobalOp::Max;
            let (acc_t, identity, acc_bytes) = match op {
                GlobalOp::Sum => ("f64", "f64(0.0)".to_string(), 8),
                _ => (lane_t, extreme_identity(s, max), s.size().max(4) as u32),
            };
            let combine = |x: &str, v: &str| match op {
                GlobalOp::Sum => format!("{x} + {v}"),
                _ => extreme(s, max, x, v),
            };
            let scratch = g("scratch");
            for l in 0..lanes {
                line(&format!("var acc{l}: {acc_t} = {identity};"));
            }
            let mut each = String::new();
            for l in 0..lanes {
                let v = load(&format!("e + {l}"));
                let v = if op == GlobalOp::Sum {
                    format!("f64({v})")
                } else {
                    v
                };
                let _ = writeln!(each, "acc{l} = {};", combine(&format!("acc{l}"), &v));
            }
            body.push_str(&visit("    ", &each));
            let mut line = |text: &str| {
                let _ = writeln!(body, "    {text}");
            };
            for l in 0..lanes {
                line(&format!("{scratch}[lid * {lanes} + {l}] = acc{l};"));
            }
            line("workgroupBarrier();");
            line(&halving);
            line("    if (lid < span) {");
            for l in 0..lanes {
                let x = format!("{scratch}[lid * {lanes} + {l}]");
                let o = format!("{scratch}[(lid + span) * {lanes} + {l}]");
                line(&format!("        {x} = {};", combine(&x, &o)));
            }
            line("    }");
            line("    workgroupBarrier();");
            line("}");
            line("if (lid == 0) {");
            for l in 0..lanes {
                body.push_str(&store(
                    "        ",
                    &format!("group * {lanes} + {l}"),
                    &format!("{scratch}[{l}]"),
                ));
            }
            body.push_str("    }\n");
            (
                workgroup("scratch", acc_t, b * lanes),
                b * lanes * acc_bytes,
            )
        }
        GlobalOp::Histogram => {
            let counts = g("counts");
            // Pixel `v` (as `f64`) goes to bin `min(i32((v - lo) * scale),
            // bins - 1)` when `lo <= v < hi`, as on the host; `add` counts
            // bin `k` of the window.
            let bin = |add: &str| {
                format!(
                    "let v = f64({});\nif (v >= {a}.lo && v < {a}.hi) {{\n    var k = i32((v - {a}.lo) * {a}.scale);\n    if (k > {a}.bins - 1) {{ k = {a}.bins - 1; }}\n    k = k - {a}.first_bin;\n    if (k >= 0 && k < {a}.count) {{ {add} }}\n}}\n",
                    load("e")
                )
            };
            // `count` is uniform, so the barriers stay in uniform control
            // flow.
            line(&format!("if ({a}.count > {LOCAL_BINS}) {{"));
            body.push_str(&visit(
                "        ",
                &bin(&format!("atomicAdd(&{out}[k], 1u);")),
            ));
            let mut line = |text: &str| {
                let _ = writeln!(body, "    {text}");
            };
            line("} else {");
            line(&format!(
                "    for (var k = lid; k < {a}.count; k = k + {b}) {{ atomicStore(&{counts}[k], 0u); }}"
            ));
            line("    workgroupBarrier();");
            body.push_str(&visit(
                "        ",
                &bin(&format!("atomicAdd(&{counts}[k], 1u);")),
            ));
            let mut line = |text: &str| {
                let _ = writeln!(body, "    {text}");
            };
            line("    workgroupBarrier();");
            line(&format!(
                "    for (var k = lid; k < {a}.count; k = k + {b}) {{"
            ));
            line(&format!("        let c = atomicLoad(&{counts}[k]);"));
            line(&format!(
                "        if (c != 0u) {{ atomicAdd(&{out}[k], c); }}"
            ));
            line("    }");
            line("}");
            (
                workgroup("counts", "atomic<u32>", LOCAL_BINS),
                LOCAL_BINS * 4,
            )
        }
        GlobalOp::ArgMin | GlobalOp::ArgMax => {
            let max = op == GlobalOp::ArgMax;
            let (values, indices) = (g("values"), g("indices"));
            let nan = |x: &str| is_nan(s, x);
            // The sentinel index `n` loses every tie to a pixel.
            line(&format!(
                "var best: {lane_t} = {};",
                extreme_identity(s, max)
            ));
            line("var at = n;");
            let each = format!(
                "let v = {};\nif ({}) {{ best = v; at = i; }}\n",
                load("e"),
                better(s, max, nan, ("v", "i"), ("best", "at"))
            );
            body.push_str(&visit("    ", &each));
            let cond = better(
                s,
                max,
                nan,
                ("v", "j"),
                (&format!("{values}[lid]"), &format!("{indices}[lid]")),
            );
            let mut line = |text: &str| {
                let _ = writeln!(body, "    {text}");
            };
            line(&format!("{values}[lid] = best;"));
            line(&format!("{indices}[lid] = at;"));
            line("workgroupBarrier();");
            line(&halving);
            line("    if (lid < span) {");
            line(&format!("        let v = {values}[lid + span];"));
            line(&format!("        let j = {indices}[lid + span];"));
            line(&format!(
                "        if ({cond}) {{ {values}[lid] = v; {indices}[lid] = j; }}"
            ));
            line("    }");
            line("    workgroupBarrier();");
            line("}");
            line("if (lid == 0) {");
            body.push_str(&store("        ", "group", &format!("{values}[0]")));
            let _ = writeln!(body, "        {}[group] = {indices}[0];", g("out_index"));
            body.push_str("    }\n");
            (
                workgroup("values", lane_t, b) + &workgroup("indices", "i32", b),
                b * (s.size().max(4) as u32 + 4),
            )
        }
    };
    t.push_str(&shared);
    let _ = writeln!(
        t,
        "@compute @workgroup_size({b}, 1, 1)\nfn {entry}(@builtin(local_invocation_id) lid3: vec3<u32>, @builtin(workgroup_id) wid: vec3<u32>) {{\n{body}}}\n"
    );
    (t, shared_bytes)
}
