//! The top of every program: a comment naming the target, the dialect's
//! prelude and the boundary index helpers, which print the formulas of
//! `hipacc_core::boundary` (exact at any distance outside the image).

use super::dialect::Dialect;
use crate::arch::Target;
use crate::vocab::Language;

// /* hipacc: OpenCL C for target `pocl` … */
// int hipacc_repeat(int i, int n) { int m = i % n; return m < 0 ? m + n : m; }
pub(super) fn header(d: &dyn Dialect, target: &Target, fp64: bool) -> String {
    let f = d.func_decl();
    format!(
        "/* hipacc: {} for target `{}` ({}). Generated; one kernel per variant below. */\n{}\n\
/* Boundary index maths (hipacc_core::boundary), exact at any distance; n >= 1. */\n\
/* Repeat: i mod n, non-negative. */\n\
{f} int hipacc_repeat(int i, int n) {{\n    int m = i % n;\n    return m < 0 ? m + n : m;\n}}\n\
/* Mirror, edge duplicated: period 2n; m = i mod 2n; m < n ? m : 2n-1-m. */\n\
{f} int hipacc_mirror(int i, int n) {{\n    int m = hipacc_repeat(i, 2 * n);\n    return m < n ? m : 2 * n - 1 - m;\n}}\n\
/* MirrorInterior, edge not duplicated: period 2(n-1); m < n ? m : 2(n-1)-m; n = 1 gives 0. */\n\
{f} int hipacc_mirror_interior(int i, int n) {{\n    if (n == 1) return 0;\n    int m = hipacc_repeat(i, 2 * (n - 1));\n    return m < n ? m : 2 * (n - 1) - m;\n}}\n\n",
        match d.language() {
            Language::OpenCl => "OpenCL C 1.2",
            Language::Cuda => "CUDA C++ (NVRTC)",
            Language::Wgsl => "WGSL",
        },
        target.name,
        target.description,
        d.prelude(fp64),
    )
}
