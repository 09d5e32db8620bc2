//! Wider vectors where the CPU has them.
//!
//! Rust compiles for the x86-64 baseline (SSE2, four f32 lanes) unless told
//! otherwise, and the binaries must run on any x86-64. The hot pixel loops
//! are therefore compiled twice, once more inside a function with AVX2
//! enabled (eight lanes, fewer load and store instructions per pixel), and
//! [`avx2`] picks one at run time. FMA stays off: rustc never contracts
//! `a * b + c`, so both versions compute bit-identical results.

/// True when the CPU supports AVX2 (detected once; the standard library
/// caches the answer).
#[inline]
pub(crate) fn avx2() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        std::arch::is_x86_feature_detected!("avx2")
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}
