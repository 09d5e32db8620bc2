//! Global operators as generated kernels: reductions of a region to one
//! value per lane (sum, min, max), to a value and its index (argmin,
//! argmax), and histograms. This module prints them in the C dialects
//! (OpenCL, CUDA); `wgsl_reduce` prints the same kernels in WGSL from the
//! parameters and descriptions made here.
//!
//! One program per pixel type holds every operator of that type, so a
//! driver builds it once. Each kernel runs a 1D grid of blocks of
//! [`GLOBAL_BLOCK`] threads; thread `t` of `threads` visits the region's
//! pixels `t, t + threads, …` in row-major order.
//!
//! - **Reductions** (stage one of two): each thread folds its pixels into a
//!   private accumulator, the block combines its threads' accumulators in a
//!   tree in local (shared) memory (halving strides 128, 64, …, 1), and
//!   thread 0 writes the block's partial, one per lane, to
//!   `partials[block * lanes + lane]`. Stage two, combining the few
//!   partials, is the caller's (on the host). Sums accumulate in `double`;
//!   min and max in the lane type (floats with `fmin`/`fmax`, so NaN is
//!   ignored unless every pixel is NaN; the identity is NaN), integers with
//!   comparisons.
//! - **Argmin, argmax** (stage one of two): as reductions, over pairs of
//!   a value and its row-major index in the region; a pair replaces another
//!   with a smaller (larger) value or an equal one at a lower index, NaN
//!   losing to any number. Thread 0 writes the block's pair to
//!   `out[block]` and `out_index[block]`.
//! - **Histograms**: each block counts into private bins in local memory
//!   with local atomics, then adds its non-zero bins to the global counts
//!   with global atomics; a window of more than [`LOCAL_BINS`] bins is
//!   counted with global atomics directly. Pixel `v` (as `double`) goes to
//!   bin `min((int)((v - lo) * scale), bins - 1)` when `lo <= v < hi`, the
//!   host's formula with the same operations; a launch counts the window
//!   `first .. first + count` of those bins.
//!
//! Parameters of every kernel, in order: the input buffer
//! ([`ArgKind::AccessorBuffer`]`(0)`), its stride, the region's origin and
//! size (accessor 0's), the total thread count ([`ArgKind::Param`]`(0)`);
//! histograms then take `lo`, `hi`, `scale` (`double`, parameters 1 to 3) and
//! the bin count, the window's first bin and its length (`int`, parameters
//! 4 to 6); last the output
//! ([`ArgKind::OutputBuffer`]): the partials (`double` for sums, the lane
//! type for min, max, argmin and argmax) or the window's `uint` counts,
//! zeroed by the caller; argmin and argmax then take the partials'
//! indices (`int`).

use super::c_types::scalar_c;
use super::dialect::Dialect;
use super::generate::for_language;
use super::prelude::header;
use super::program::{ArgKind, KernelArg, KernelInfo, Program};
use crate::arch::Target;
use crate::config::Config;
use crate::vocab::{BlockShape, Language};
use crate::{Error, Result};
use hipacc_core::ir::{ScalarType, Type};
use std::fmt::Write as _;

/// Threads per block of every global operator kernel (a power of two).
pub const GLOBAL_BLOCK: u32 = 256;

/// The most bins a histogram kernel counts in local memory (wider windows
/// count in global memory).
pub const LOCAL_BINS: u32 = 1024;

/// A global reduction.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum GlobalOp {
    /// The sum, accumulated in `double` (scalar pixels only).
    Sum,
    /// The smallest value per lane.
    Min,
    /// The largest value per lane.
    Max,
    /// Counts in bins (scalar pixels only).
    Histogram,
    /// The smallest value and the first index holding it (scalar pixels
    /// only).
    ArgMin,
    /// The largest value and the first index holding it (scalar pixels
    /// only).
    ArgMax,
}

impl GlobalOp {
    fn name(self) -> &'static str {
        match self {
            GlobalOp::Sum => "sum",
            GlobalOp::Min => "min",
            GlobalOp::Max => "max",
            GlobalOp::Histogram => "histogram",
            GlobalOp::ArgMin => "argmin",
            GlobalOp::ArgMax => "argmax",
        }
    }

    /// The operators a program for `pixel` holds: all of them for scalar
    /// pixels, min and max for vectors.
    pub fn for_pixel(pixel: Type) -> &'static [GlobalOp] {
        if pixel.lanes == 1 {
            &[
                GlobalOp::Sum,
                GlobalOp::Min,
                GlobalOp::Max,
                GlobalOp::Histogram,
                GlobalOp::ArgMin,
                GlobalOp::ArgMax,
            ]
        } else {
            &[GlobalOp::Min, GlobalOp::Max]
        }
    }
}

/// The entry point of `op` on `pixel`s.
pub fn global_entry(op: GlobalOp, pixel: Type) -> String {
    format!(
        "hipacc_global_{}_{}x{}",
        op.name(),
        scalar_c(pixel.scalar),
        pixel.lanes
    )
}

/// A stable hash naming the kernel of `op` on `pixel`s in caches.
fn entry_hash(entry: &str) -> u64 {
    // FNV-1a over the entry name and a version of this printer.
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in entry.bytes().chain(*b"global-ops-v2") {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    h
}

/// The program with every global operator on `pixel`s (see
/// [`GlobalOp::for_pixel`]) in `language` for `target`. A WGSL module
/// computes in `f64`, so it needs a device with `SHADER_F64`.
///
/// ```
/// use hipacc_codegen::emit::{global_entry, global_program, GlobalOp, Language};
/// use hipacc_codegen::Target;
/// use hipacc_core::ir::Type;
///
/// let target = Target::by_name("pocl").unwrap();
/// let p = global_program(Type::F32, target, Language::Wgsl).unwrap();
/// let sum = global_entry(GlobalOp::Sum, Type::F32);
/// assert!(p.kernels.iter().any(|k| k.entry == sum));
/// ```
pub fn global_program(pixel: Type, target: &Target, language: Language) -> Result<Program> {
    if pixel.scalar == ScalarType::Bool || !(pixel.lanes == 1 || pixel.lanes == 4) {
        return Err(Error::Unsupported {
            kernel: "global operators".into(),
            reason: format!("no global operators on pixels of type {pixel:?}"),
        });
    }
    if language == Language::Wgsl {
        return Ok(super::wgsl_reduce::global_program(pixel, target));
    }
    let d = for_language(language);
    let mut source = header(d, target, true);
    let mut kernels = Vec::new();
    for &op in GlobalOp::for_pixel(pixel) {
        let (text, info) = kernel(d, op, pixel)?;
        source.push_str(&text);
        kernels.push(info);
    }
    Ok(Program {
        language,
        target: target.name,
        source,
        kernels,
    })
}

/// What a parameter of a global kernel holds, for a printer to name its
/// type.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Param {
    /// The input buffer of pixel lanes.
    Input,
    /// An `int` (region geometry, thread count, bin numbers).
    Int,
    /// A `double` (a histogram's bounds and scale).
    Double,
    /// The output: partials (`double` for sums, the lane type otherwise)
    /// or `uint` counts.
    Output,
    /// The `int` indices of argmin and argmax partials.
    Indices,
}

/// The parameters of `op`'s kernel in order (see the module's doc), each
/// typed by `ty`.
pub(super) fn global_args(op: GlobalOp, ty: impl Fn(Param) -> String) -> Vec<KernelArg> {
    let mut params = vec![
        ("in", ArgKind::AccessorBuffer(0), Param::Input),
        ("stride", ArgKind::AccessorStride(0), Param::Int),
        ("x0", ArgKind::AccessorX(0), Param::Int),
        ("y0", ArgKind::AccessorY(0), Param::Int),
        ("w", ArgKind::AccessorWidth(0), Param::Int),
        ("h", ArgKind::AccessorHeight(0), Param::Int),
        ("threads", ArgKind::Param(0), Param::Int),
    ];
    if op == GlobalOp::Histogram {
        for (i, n) in ["lo", "hi", "scale"].into_iter().enumerate() {
            params.push((n, ArgKind::Param(i + 1), Param::Double));
        }
        for (i, n) in ["bins", "first_bin", "count"].into_iter().enumerate() {
            params.push((n, ArgKind::Param(i + 4), Param::Int));
        }
    }
    params.push(("out", ArgKind::OutputBuffer, Param::Output));
    if matches!(op, GlobalOp::ArgMin | GlobalOp::ArgMax) {
        params.push(("out_index", ArgKind::OutputBuffer, Param::Indices));
    }
    params
        .into_iter()
        .map(|(name, kind, p)| KernelArg {
            name: name.to_string(),
            kind,
            c_type: ty(p),
            scalar: match p {
                Param::Int => Some(ScalarType::I32),
                Param::Double => Some(ScalarType::F64),
                _ => None,
            },
        })
        .collect()
}

/// The description of `op`'s kernel on `pixel`s with parameters `args`,
/// using `shared_bytes` of local memory.
pub(super) fn global_info(
    op: GlobalOp,
    pixel: Type,
    args: Vec<KernelArg>,
    shared_bytes: u32,
) -> KernelInfo {
    let entry = global_entry(op, pixel);
    KernelInfo {
        ir_hash: entry_hash(&entry),
        kernel_name: entry.clone(),
        entry,
        config: Config::uniform(
            1,
            BlockShape {
                x: GLOBAL_BLOCK,
                y: 1,
            },
        ),
        args,
        constant_symbols: Vec::new(),
        footprints: vec![None],
        shared_bytes,
        reaches: vec![None],
        checked: vec![false],
    }
}

/// The identity of min (`max == false`) or max in lane type `s`.
fn extreme_identity(d: &dyn Dialect, s: ScalarType, max: bool) -> String {
    match (s, max) {
        (ScalarType::F32, _) => d.f32_from_bits(0x7fc0_0000),
        (ScalarType::F64, _) => d.f64_from_bits(0x7ff8_0000_0000_0000),
        (ScalarType::U8, false) => "(uchar)255".into(),
        (ScalarType::U16, false) => "(ushort)65535".into(),
        (ScalarType::U32, false) => "0xffffffffu".into(),
        (ScalarType::I32, false) => "2147483647".into(),
        (ScalarType::I32, true) => "(-2147483647 - 1)".into(),
        _ => format!("({})0", scalar_c(s)),
    }
}

/// `a op b` for min/max on lane type `s`.
fn extreme(s: ScalarType, max: bool, a: &str, b: &str) -> String {
    let float = matches!(s, ScalarType::F32 | ScalarType::F64);
    match (float, max) {
        (true, false) => format!("fmin({a}, {b})"),
        (true, true) => format!("fmax({a}, {b})"),
        (false, false) => format!("({b} < {a} ? {b} : {a})"),
        (false, true) => format!("({b} > {a} ? {b} : {a})"),
    }
}

/// The condition (in C or WGSL, whose operators agree here) under which
/// value `v` at index `i` replaces the best `best` at `at` of an argmin
/// (`max == false`) or argmax on lane type `s`: a smaller (larger) value,
/// or an equal one at a lower index; for floats NaN loses to any number,
/// and among NaNs the lower index wins, so NaN is the result only when
/// every pixel is NaN (as min and max ignore it). `is_nan` prints the
/// language's NaN test.
pub(super) fn better(
    s: ScalarType,
    max: bool,
    is_nan: impl Fn(&str) -> String,
    (v, i): (&str, &str),
    (best, at): (&str, &str),
) -> String {
    let cmp = if max { ">" } else { "<" };
    if matches!(s, ScalarType::F32 | ScalarType::F64) {
        let (nv, nb) = (is_nan(v), is_nan(best));
        format!(
            "({v} {cmp} {best}) || (!{nv} && {nb}) || \
             (({v} == {best} || ({nv} && {nb})) && {i} < {at})"
        )
    } else {
        format!("({v} {cmp} {best}) || ({v} == {best} && {i} < {at})")
    }
}

fn kernel(d: &dyn Dialect, op: GlobalOp, pixel: Type) -> Result<(String, KernelInfo)> {
    let lanes = u32::from(pixel.lanes);
    let lane_c = scalar_c(pixel.scalar);
    let entry = global_entry(op, pixel);
    let out_c = match op {
        GlobalOp::Sum => "double",
        GlobalOp::Min | GlobalOp::Max | GlobalOp::ArgMin | GlobalOp::ArgMax => lane_c,
        GlobalOp::Histogram => "uint",
    };
    let args = global_args(op, |p| match p {
        Param::Input => d.global_ptr(lane_c, true),
        Param::Int => "int".into(),
        Param::Double => "double".into(),
        Param::Output => d.global_ptr(out_c, false),
        Param::Indices => d.global_ptr("int", false),
    });
    let b = GLOBAL_BLOCK;
    let lid = d.local_id(0);
    let gid = d.group_id(0);
    let bar = d.barrier();
    let params: Vec<String> = args
        .iter()
        .map(|a| format!("{} {}", a.c_type, a.name))
        .collect();
    let mut s = String::new();
    let _ = writeln!(s, "{} {entry}({}) {{", d.kernel_decl(), params.join(", "));
    let _ = writeln!(s, "    const int lid = {lid};");
    let _ = writeln!(s, "    const int first = {gid} * {b} + lid;");
    let _ = writeln!(s, "    const int n = w * h;");
    let visit = |s: &mut String, body: &str| {
        // One division per thread: the column and row advance by `threads`.
        let _ = writeln!(
            s,
            "    const int dx = threads % w, dy = threads / w;\n    int x = first % w, y = first / w;"
        );
        let _ = writeln!(s, "    for (int i = first; i < n; i += threads) {{");
        let _ = writeln!(
            s,
            "        const int e = ((y0 + y) * stride + x0 + x) * {lanes};"
        );
        s.push_str(body);
        let _ = writeln!(
            s,
            "        x += dx;\n        y += dy;\n        if (x >= w) {{\n            x -= w;\n            y += 1;\n        }}"
        );
        let _ = writeln!(s, "    }}");
    };
    let shared_bytes = match op {
        GlobalOp::Sum | GlobalOp::Min | GlobalOp::Max => {
            let (acc_c, identity) = match op {
                GlobalOp::Sum => ("double", "0.0".to_string()),
                _ => (
                    lane_c,
                    extreme_identity(d, pixel.scalar, op == GlobalOp::Max),
                ),
            };
            let combine = |a: &str, v: &str| match op {
                GlobalOp::Sum => format!("{a} + {v}"),
                _ => extreme(pixel.scalar, op == GlobalOp::Max, a, v),
            };
            let _ = writeln!(s, "    {}", d.local_array(acc_c, "scratch", b * lanes));
            for l in 0..lanes {
                let _ = writeln!(s, "    {acc_c} acc{l} = {identity};");
            }
            let mut body = String::new();
            for l in 0..lanes {
                let v = match op {
                    GlobalOp::Sum => format!("(double){}", d.load("in", &format!("e + {l}"), true)),
                    _ => d.load("in", &format!("e + {l}"), true),
                };
                let _ = writeln!(
                    body,
                    "        acc{l} = {};",
                    combine(&format!("acc{l}"), &v)
                );
            }
            visit(&mut s, &body);
            for l in 0..lanes {
                let _ = writeln!(s, "    scratch[lid * {lanes} + {l}] = acc{l};");
            }
            let _ = writeln!(s, "    {bar}");
            let _ = writeln!(s, "    for (int span = {}; span > 0; span >>= 1) {{", b / 2);
            let _ = writeln!(s, "        if (lid < span) {{");
            for l in 0..lanes {
                let a = format!("scratch[lid * {lanes} + {l}]");
                let o = format!("scratch[(lid + span) * {lanes} + {l}]");
                let _ = writeln!(s, "            {a} = {};", combine(&a, &o));
            }
            let _ = writeln!(s, "        }}");
            let _ = writeln!(s, "        {bar}");
            let _ = writeln!(s, "    }}");
            let _ = writeln!(s, "    if (lid == 0) {{");
            for l in 0..lanes {
                let _ = writeln!(s, "        out[{gid} * {lanes} + {l}] = scratch[{l}];");
            }
            let _ = writeln!(s, "    }}");
            let acc_bytes = if acc_c == "double" {
                8
            } else {
                pixel.scalar.size() as u32
            };
            b * lanes * acc_bytes
        }
        GlobalOp::Histogram => {
            let atomic = |p: &str, v: &str| {
                d.atomic_add_u32(p, v).ok_or_else(|| Error::Unsupported {
                    kernel: global_entry(op, pixel),
                    reason: format!("{} has no atomics for histograms", d.language().name()),
                })
            };
            let local_add = atomic("&counts[k]", "1u")?;
            let global_add = atomic("&out[k]", "c")?;
            let bin = |add: &str| {
                format!(
                    "        const double v = (double){};\n        if (v >= lo && v < hi) {{\n            int k = (int)((v - lo) * scale);\n            if (k > bins - 1) k = bins - 1;\n            k -= first_bin;\n            if (k >= 0 && k < count) {{ {add} }}\n        }}\n",
                    d.load("in", "e", true)
                )
            };
            // A window that fits local memory is counted there; a wider
            // one straight into the global counts (`count` is the same in
            // every thread, so the barriers stay uniform).
            let _ = writeln!(s, "    {}", d.local_array("uint", "counts", LOCAL_BINS));
            let _ = writeln!(s, "    if (count > {LOCAL_BINS}) {{");
            visit(&mut s, &bin(&atomic("&out[k]", "1u")?));
            let _ = writeln!(s, "        return;\n    }}");
            let _ = writeln!(
                s,
                "    for (int k = lid; k < count; k += {b}) counts[k] = 0u;\n    {bar}"
            );
            visit(&mut s, &bin(&local_add));
            let _ = writeln!(s, "    {bar}");
            let _ = writeln!(s, "    for (int k = lid; k < count; k += {b}) {{");
            let _ = writeln!(s, "        const uint c = counts[k];");
            let _ = writeln!(s, "        if (c != 0u) {{ {global_add} }}");
            let _ = writeln!(s, "    }}");
            LOCAL_BINS * 4
        }
        GlobalOp::ArgMin | GlobalOp::ArgMax => {
            let max = op == GlobalOp::ArgMax;
            let identity = extreme_identity(d, pixel.scalar, max);
            let _ = writeln!(s, "    {}", d.local_array(lane_c, "values", b));
            let _ = writeln!(s, "    {}", d.local_array("int", "indices", b));
            // The sentinel index `n` loses every tie to a pixel.
            let _ = writeln!(s, "    {lane_c} best = {identity};\n    int at = n;");
            let body = format!(
                "        const {lane_c} v = {};\n        if ({}) {{ best = v; at = i; }}\n",
                d.load("in", "e", true),
                better(pixel.scalar, max, c_isnan, ("v", "i"), ("best", "at"))
            );
            visit(&mut s, &body);
            let _ = writeln!(
                s,
                "    values[lid] = best;\n    indices[lid] = at;\n    {bar}"
            );
            let _ = writeln!(s, "    for (int span = {}; span > 0; span >>= 1) {{", b / 2);
            let _ = writeln!(s, "        if (lid < span) {{");
            let _ = writeln!(
                s,
                "            const {lane_c} v = values[lid + span];\n            const int j = indices[lid + span];"
            );
            let cond = better(
                pixel.scalar,
                max,
                c_isnan,
                ("v", "j"),
                ("values[lid]", "indices[lid]"),
            );
            let _ = writeln!(
                s,
                "            if ({cond}) {{ values[lid] = v; indices[lid] = j; }}"
            );
            let _ = writeln!(s, "        }}\n        {bar}\n    }}");
            let _ = writeln!(
                s,
                "    if (lid == 0) {{\n        out[{gid}] = values[0];\n        out_index[{gid}] = indices[0];\n    }}"
            );
            b * (pixel.scalar.size() as u32 + 4)
        }
    };
    s.push_str("}\n\n");
    Ok((s, global_info(op, pixel, args, shared_bytes)))
}

/// C's NaN test.
fn c_isnan(x: &str) -> String {
    format!("isnan({x})")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_pixel_type_has_a_program_in_each_language() {
        let target = Target::lookup("pocl").unwrap();
        for language in [Language::OpenCl, Language::Cuda, Language::Wgsl] {
            let p = global_program(Type::F32, target, language).unwrap();
            assert_eq!(p.language, language);
            assert_eq!(p.kernels.len(), GlobalOp::for_pixel(Type::F32).len());
            for info in &p.kernels {
                assert!(
                    p.source.contains(&info.entry),
                    "{language:?}: {}",
                    info.entry
                );
            }
        }
        assert!(global_program(Type::BOOL, target, Language::Wgsl).is_err());
    }
}
