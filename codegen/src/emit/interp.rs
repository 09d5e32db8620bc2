//! Interpolating reads in generated code: the formulas of
//! `hipacc_core::interpolate` printed as C, in `double` like the evaluator.
//!
//! An interpolating accessor's read at offset `(dx, dy)` calls a sample
//! helper with the output pixel's space-relative position `(u, v)`: it maps
//! the position cell-centred onto the accessor's region, computes the taps
//! of each axis with a per-mode taps helper, reads every tap of non-zero
//! weight through the accessor's read helper with all four edges checked
//! (so the boundary condition applies to each tap), accumulates rows then
//! columns lane by lane, and rounds to the pixel type (integers to nearest,
//! saturating, as Rust's `as` does).

use super::c_types::c_type;
use super::dialect::Dialect;
use hipacc_core::ir::{ScalarType, Type};
use hipacc_core::Interpolation;

/// `std::f64::consts::PI` with enough digits to round-trip.
const PI: &str = "3.1415926535897931";

/// Taps per axis of `mode`.
pub(crate) fn tap_count(mode: Interpolation) -> usize {
    match mode {
        Interpolation::None | Interpolation::Nearest => 1,
        Interpolation::Linear => 2,
        Interpolation::Cubic => 4,
        Interpolation::Lanczos3 => 6,
    }
}

/// The name of `mode` in helper names and comments.
pub(crate) fn mode_name(mode: Interpolation) -> &'static str {
    match mode {
        Interpolation::None | Interpolation::Nearest => "nearest",
        Interpolation::Linear => "linear",
        Interpolation::Cubic => "cubic",
        Interpolation::Lanczos3 => "lanczos3",
    }
}

/// The taps helper of `mode`: fills `w[0..n]`, returns the first index.
/// Returns `(name, definition)`; cubic and Lanczos need a kernel helper,
/// returned as the third element when there is one.
pub(crate) fn taps_helper(
    d: &dyn Dialect,
    mode: Interpolation,
) -> (String, String, Option<(String, String)>) {
    let decl = d.func_decl();
    let name = format!("hipacc_taps_{}", mode_name(mode));
    let (body, kernel) = match mode {
        Interpolation::None | Interpolation::Nearest => {
            ("    w[0] = 1.0;\n    return (int)floor(p + 0.5);\n".to_string(), None)
        }
        Interpolation::Linear => (
            "    double i0 = floor(p);\n    double f = p - i0;\n    w[0] = 1.0 - f;\n    w[1] = f;\n    return (int)i0;\n"
                .to_string(),
            None,
        ),
        Interpolation::Cubic => {
            let k = "hipacc_keys".to_string();
            let def = format!(
                "/* Keys' cubic convolution kernel, a = -0.5. */\n{decl} double {k}(double t) {{\n    t = fabs(t);\n    if (t <= 1.0) return ((-0.5 + 2.0) * t - (-0.5 + 3.0)) * t * t + 1.0;\n    if (t < 2.0) return ((-0.5 * t - 5.0 * -0.5) * t + 8.0 * -0.5) * t - 4.0 * -0.5;\n    return 0.0;\n}}\n"
            );
            (
                format!("    double i0 = floor(p);\n    double f = p - i0;\n    for (int k = 0; k < 4; ++k) w[k] = {k}(f - ((double)k - 1.0));\n    return (int)i0 - 1;\n"),
                Some((k, def)),
            )
        }
        Interpolation::Lanczos3 => {
            let k = "hipacc_lanczos3".to_string();
            let def = format!(
                "/* The Lanczos kernel with 3 lobes. */\n{decl} double {k}(double t) {{\n    if (t == 0.0) return 1.0;\n    if (fabs(t) >= 3.0) return 0.0;\n    double pt = {PI} * t;\n    return 3.0 * sin(pt) * sin(pt / 3.0) / (pt * pt);\n}}\n"
            );
            (
                format!("    double i0 = floor(p);\n    double f = p - i0;\n    double sum = 0.0;\n    for (int k = 0; k < 6; ++k) {{\n        w[k] = {k}(f - ((double)k - 2.0));\n    }}\n    for (int k = 0; k < 6; ++k) sum += w[k];\n    for (int k = 0; k < 6; ++k) w[k] /= sum;\n    return (int)i0 - 2;\n"),
                Some((k, def)),
            )
        }
    };
    let def = format!(
        "/* Taps of {} interpolation at position p: weights w[], first index returned. */\n{decl} int {name}(double p, double *w) {{\n{body}}}\n",
        mode_name(mode)
    );
    (name, def, kernel)
}

/// `v` (a `double`) as a lane of scalar type `s`.
fn round_lane(s: ScalarType, v: &str) -> String {
    let sat = |lo: &str, hi: &str| format!("fmin(fmax(round({v}), {lo}), {hi})");
    match s {
        ScalarType::U8 => format!("(uchar){}", sat("0.0", "255.0")),
        ScalarType::U16 => format!("(ushort){}", sat("0.0", "65535.0")),
        ScalarType::I32 => format!("(int){}", sat("-2147483648.0", "2147483647.0")),
        ScalarType::U32 => format!("(uint){}", sat("0.0", "4294967295.0")),
        ScalarType::F32 => format!("(float)({v})"),
        ScalarType::F64 | ScalarType::Bool => v.to_string(),
    }
}

/// The sample helper of an interpolating accessor.
pub(crate) struct SampleSite<'a> {
    /// Helper name.
    pub(crate) name: String,
    /// The accessor's read helper (boundary maths and the load).
    pub(crate) read: &'a str,
    /// The buffer parameter type.
    pub(crate) buf_ty: String,
    /// The accessor's name, for the comment.
    pub(crate) acc: &'a str,
    /// Pixel type.
    pub(crate) pixel: Type,
    /// The mode.
    pub(crate) mode: Interpolation,
    /// The taps helper's name.
    pub(crate) taps: String,
}

/// The definition of a sample helper.
pub(crate) fn sample_helper(d: &dyn Dialect, s: &SampleSite<'_>) -> String {
    let n = tap_count(s.mode);
    let cty = c_type(s.pixel);
    let lanes = s.pixel.lanes.max(1) as usize;
    let lane = |p: &str, l: usize| {
        if s.pixel.lanes == 4 {
            format!("(double){p}.{}", ["x", "y", "z", "w"][l])
        } else {
            format!("(double){p}")
        }
    };
    let mut body = String::new();
    body.push_str(
        "    double px = ((double)u + 0.5) * (double)w / (double)sw - 0.5 + (double)dx;\n",
    );
    body.push_str(
        "    double py = ((double)v + 0.5) * (double)h / (double)sh - 0.5 + (double)dy;\n",
    );
    body.push_str(&format!("    double wx[{n}], wy[{n}];\n"));
    body.push_str(&format!(
        "    int ix = {t}(px, wx);\n    int iy = {t}(py, wy);\n",
        t = s.taps
    ));
    let acc: Vec<String> = (0..lanes).map(|l| format!("a{l}")).collect();
    let row: Vec<String> = (0..lanes).map(|l| format!("r{l}")).collect();
    body.push_str(&format!(
        "    double {} ;\n",
        acc.iter()
            .map(|a| format!("{a} = 0.0"))
            .collect::<Vec<_>>()
            .join(", ")
    ));
    body.push_str(&format!(
        "    for (int j = 0; j < {n}; ++j) {{\n        if (wy[j] == 0.0) continue;\n"
    ));
    body.push_str(&format!(
        "        double {};\n",
        row.iter()
            .map(|r| format!("{r} = 0.0"))
            .collect::<Vec<_>>()
            .join(", ")
    ));
    body.push_str(&format!(
        "        for (int i = 0; i < {n}; ++i) {{\n            if (wx[i] == 0.0) continue;\n            {cty} p = {}(buf, stride, x, y, w, h, ix + i, iy + j, 1, 1, 1, 1);\n",
        s.read
    ));
    for (l, r) in row.iter().enumerate() {
        body.push_str(&format!(
            "            {r} = {r} + wx[i] * {};\n",
            lane("p", l)
        ));
    }
    body.push_str("        }\n");
    for (a, r) in acc.iter().zip(&row) {
        body.push_str(&format!("        {a} = {a} + wy[j] * {r};\n"));
    }
    body.push_str("    }\n");
    let result = if s.pixel.lanes == 4 {
        let l: Vec<String> = acc.iter().map(|a| round_lane(s.pixel.scalar, a)).collect();
        d.make_vec(
            &cty,
            &[l[0].clone(), l[1].clone(), l[2].clone(), l[3].clone()],
        )
    } else {
        round_lane(s.pixel.scalar, &acc[0])
    };
    body.push_str(&format!("    return {result};\n"));
    format!(
        "/* Interpolating read of accessor `{}` ({}): output (u, v) of an sw x sh space mapped cell-centred onto the w x h region, plus (dx, dy). */\n{} {cty} {}({} buf, int stride, int x, int y, int w, int h, int u, int v, int dx, int dy, int sw, int sh) {{\n{body}}}\n",
        s.acc,
        mode_name(s.mode),
        d.func_decl(),
        s.name,
        s.buf_ty
    )
}
