//! Interpolating reads in WGSL: the formulas of `hipacc_core::interpolate`
//! printed as WGSL in `f64`, like the evaluator and the C printer
//! (`emit::interp`).
//!
//! A read at offset `(dx, dy)` calls a sample helper with the output
//! pixel's space-relative position `(u, v)`: it maps the position
//! cell-centred onto the accessor's region, gets the taps of each axis from
//! a per-mode taps helper (a struct of the first index and the weights),
//! reads every tap of non-zero weight through the accessor's read helper
//! with all four edges checked (so the boundary condition applies to each
//! tap), accumulates rows then columns (lanes as one `vec4<f64>`), and
//! rounds to the pixel type with the printer's Rust `round` and saturating
//! `as`.
//!
//! WGSL has no `sin` of `f64` (SPIR-V's GLSL.std.450 `Sin` is 32-bit
//! only), so the Lanczos kernel computes `sin(pi t)` itself: `t` is reduced
//! exactly to `r = t - n` with `|r| <= 1/2`, then the Taylor series of
//! `sin(pi r)` to the 25th power (truncation error below `1e-22`) in
//! Horner form, negated for odd `n`. It differs from the evaluator's
//! `f64::sin` by a few `f64` ulp, far below what an `f32` or integer pixel
//! can show; computing the weights in `f32` instead would leave errors of
//! about `1e-7` relative, several `f32` ulp of the result.

use super::{off_expr, scalar_w, wty, Printer};
use crate::emit::c_common::Offset;
use crate::emit::interp::{mode_name, tap_count};
use hipacc_core::ir::{Intrinsic, ScalarType, Type};
use hipacc_core::Interpolation;

/// `x` as a WGSL `f64` expression.
fn lf(x: f64) -> String {
    format!("f64({x:?})")
}

/// The struct a taps helper of `n` taps returns, registered once.
fn taps_struct(p: &mut Printer, n: usize) -> String {
    let name = format!("HipaccTaps{n}");
    let def = format!(
        "// The taps of one axis of an interpolating read: first index, weights.\nstruct {name} {{\n    start: i32,\n    w: array<f64, {n}>,\n}}\n"
    );
    p.helpers.add(name, || def)
}

/// `sin(pi t)` in `f64` without a `sin` built-in (see the module docs).
fn sin_pi(p: &mut Printer) -> String {
    let name = "hipacc_sin_pi".to_string();
    let def = format!(
        "// sin(pi t) in f64: t reduced exactly to r = t - n, |r| <= 1/2, then the Taylor series of sin(pi r) to x^25, negated for odd n.\nfn {name}(t: f64) -> f64 {{\n    let n = round(t);\n    let x = {pi} * (t - n);\n    let x2 = x * x;\n    var s = {one};\n    for (var k: i32 = 12; k >= 1; k = k - 1) {{\n        s = {one} - x2 / f64(2 * k * (2 * k + 1)) * s;\n    }}\n    s = x * s;\n    if (abs(n - {two} * floor(n / {two})) == {one}) {{ return -s; }}\n    return s;\n}}\n",
        pi = lf(std::f64::consts::PI),
        one = lf(1.0),
        two = lf(2.0),
    );
    p.helpers.add(name, || def)
}

/// The kernel helper of cubic or Lanczos interpolation, if `mode` has one.
fn kernel_helper(p: &mut Printer, mode: Interpolation) -> Option<String> {
    let (z, one, two, three) = (lf(0.0), lf(1.0), lf(2.0), lf(3.0));
    let (name, def) = match mode {
        Interpolation::Cubic => {
            let (a, five, four, eight) = (lf(-0.5), lf(5.0), lf(4.0), lf(8.0));
            let name = "hipacc_keys_f64".to_string();
            let def = format!(
                "// Keys' cubic convolution kernel, a = -0.5.\nfn {name}(t0: f64) -> f64 {{\n    let t = abs(t0);\n    if (t <= {one}) {{ return (({a} + {two}) * t - ({a} + {three})) * t * t + {one}; }}\n    if (t < {two}) {{ return (({a} * t - {five} * {a}) * t + {eight} * {a}) * t - {four} * {a}; }}\n    return {z};\n}}\n"
            );
            (name, def)
        }
        Interpolation::Lanczos3 => {
            let sin = sin_pi(p);
            let name = "hipacc_lanczos3_f64".to_string();
            let def = format!(
                "// The Lanczos kernel with 3 lobes: sinc(t) sinc(t / 3).\nfn {name}(t: f64) -> f64 {{\n    if (t == {z}) {{ return {one}; }}\n    if (abs(t) >= {three}) {{ return {z}; }}\n    let pt = {pi} * t;\n    return {three} * {sin}(t) * {sin}(t / {three}) / (pt * pt);\n}}\n",
                pi = lf(std::f64::consts::PI),
            );
            (name, def)
        }
        Interpolation::None | Interpolation::Nearest | Interpolation::Linear => return None,
    };
    Some(p.helpers.add(name, || def))
}

/// The taps helper of `mode`, registered with what it calls.
fn taps_helper(p: &mut Printer, mode: Interpolation) -> String {
    let n = tap_count(mode);
    let st = taps_struct(p, n);
    let kernel = kernel_helper(p, mode);
    let (half, one, two) = (lf(0.5), lf(1.0), lf(2.0));
    let split = "    let i0 = floor(p);\n    let f = p - i0;\n";
    let body = match (mode, kernel) {
        (Interpolation::Linear, _) => format!(
            "{split}    t.w[0] = {one} - f;\n    t.w[1] = f;\n    t.start = i32(i0);\n"
        ),
        (Interpolation::Cubic, Some(k)) => format!(
            "{split}    for (var k: i32 = 0; k < 4; k = k + 1) {{ t.w[k] = {k}(f - (f64(k) - {one})); }}\n    t.start = i32(i0) - 1;\n"
        ),
        (Interpolation::Lanczos3, Some(k)) => format!(
            "{split}    var sum = {z};\n    for (var k: i32 = 0; k < 6; k = k + 1) {{ t.w[k] = {k}(f - (f64(k) - {two})); }}\n    for (var k: i32 = 0; k < 6; k = k + 1) {{ sum = sum + t.w[k]; }}\n    for (var k: i32 = 0; k < 6; k = k + 1) {{ t.w[k] = t.w[k] / sum; }}\n    t.start = i32(i0) - 2;\n",
            z = lf(0.0)
        ),
        _ => format!("    t.w[0] = {one};\n    t.start = i32(floor(p + {half}));\n"),
    };
    let name = format!("hipacc_taps_{}", mode_name(mode));
    let def = format!(
        "// Taps of {} interpolation at position p.\nfn {name}(p: f64) -> {st} {{\n    var t: {st};\n{body}    return t;\n}}\n",
        mode_name(mode)
    );
    p.helpers.add(name, || def)
}

/// `a` (an `f64` lane) rounded to a lane of `s` as the evaluator does:
/// floats converted, integers rounded half away from zero and saturated.
fn round_lane(p: &mut Printer, s: ScalarType, a: String) -> String {
    match s {
        ScalarType::F64 => a,
        ScalarType::F32 | ScalarType::Bool => format!("{}({a})", scalar_w(s)),
        _ => {
            let round = p.float_helper(Intrinsic::Round, ScalarType::F64);
            p.cast(
                Type::scalar(ScalarType::F64),
                Type::scalar(s),
                format!("{round}({a})"),
            )
        }
    }
}

/// The call of accessor `i`'s sample helper for a read at `(dx, dy)`,
/// registering the helper and everything it calls.
pub(super) fn sample(p: &mut Printer, i: usize, dx: Offset, dy: Offset) -> String {
    let ctx = p.reads;
    let a = &ctx.sites[i];
    let mode = a.interpolation;
    let n = tap_count(mode);
    let taps = taps_helper(p, mode);
    let ty = wty(a.pixel);
    let lanes = a.pixel.lanes == 4;
    let (acc_ty, zero) = if lanes {
        ("vec4<f64>", format!("vec4<f64>({})", lf(0.0)))
    } else {
        ("f64", lf(0.0))
    };
    let result = if lanes {
        let l: Vec<String> = ["x", "y", "z", "w"]
            .iter()
            .map(|c| round_lane(p, a.pixel.scalar, format!("a.{c}")))
            .collect();
        format!("{ty}({})", l.join(", "))
    } else {
        round_lane(p, a.pixel.scalar, "a".to_string())
    };
    let (args, acc) = (&ctx.args, &a.name);
    let name = format!("hipacc_sample_{}_{acc}", ctx.entry);
    let def = format!(
        "// Interpolating read of accessor `{acc}` ({mode}): output (u, v) of the space mapped cell-centred onto the region, plus (dx, dy).\nfn {name}(u: i32, v: i32, dx: i32, dy: i32) -> {ty} {{\n    let px = (f64(u) + {half}) * f64({args}.{acc}_w) / f64({args}.space_w) - {half} + f64(dx);\n    let py = (f64(v) + {half}) * f64({args}.{acc}_h) / f64({args}.space_h) - {half} + f64(dy);\n    var tx = {taps}(px);\n    var ty = {taps}(py);\n    var a: {acc_ty} = {zero};\n    for (var j: i32 = 0; j < {n}; j = j + 1) {{\n        if (ty.w[j] == {z}) {{ continue; }}\n        var r: {acc_ty} = {zero};\n        for (var i: i32 = 0; i < {n}; i = i + 1) {{\n            if (tx.w[i] == {z}) {{ continue; }}\n            r = r + tx.w[i] * {acc_ty}({read}(tx.start + i, ty.start + j, true, true, true, true));\n        }}\n        a = a + ty.w[j] * r;\n    }}\n    return {result};\n}}\n",
        mode = mode_name(mode),
        half = lf(0.5),
        z = lf(0.0),
        read = ctx.read_name(i),
    );
    let h = p.helpers.add(name, || def);
    format!("{h}(u, v, {}, {})", off_expr(dx), off_expr(dy))
}
