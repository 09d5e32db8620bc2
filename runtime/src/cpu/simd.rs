//! Wider vectors where the CPU has them.
//!
//! Rust compiles for the x86-64 baseline (SSE2, four f32 lanes) unless told
//! otherwise, and the binaries must run on any x86-64. The hot pixel loops
//! are therefore compiled twice, once more inside a function with AVX2 and
//! FMA enabled (eight lanes, fewer load and store instructions per pixel),
//! and [`avx2`] picks one at run time.
//!
//! Both versions compute bit-identical results: rustc never contracts
//! `a * b + c` on its own, so a fused multiply-add happens only where the
//! code asks for one with `mul_add`, and that rounds once in both versions
//! (an instruction in the wide one, a correctly rounded library call in the
//! baseline one).

/// True when the CPU supports AVX2 and FMA (detected once; the standard
/// library caches the answer).
#[inline]
pub(crate) fn avx2() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        std::arch::is_x86_feature_detected!("avx2") && std::arch::is_x86_feature_detected!("fma")
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

/// `dispatch! { fn name<T: Bound>(args) { body } }` defines `name`, whose
/// body is compiled twice: with AVX2 and FMA enabled, run where [`avx2`] says so,
/// and for the compilation target otherwise. Neither copy is inlined into
/// `name`, so that a slice argument stays a `noalias` parameter of the loop
/// that writes it: LLVM then vectorises without run-time overlap checks.
macro_rules! dispatch {
    (
        $(#[$meta:meta])*
        fn $name:ident<$($g:ident: $bound:path),*>($($arg:ident: $ty:ty),* $(,)?) $body:block
    ) => {
        $(#[$meta])*
        fn $name<$($g: $bound),*>($($arg: $ty),*) {
            #[inline(always)]
            fn body<$($g: $bound),*>($($arg: $ty),*) $body
            #[cfg(target_arch = "x86_64")]
            {
                #[target_feature(enable = "avx2,fma")]
                unsafe fn wide<$($g: $bound),*>($($arg: $ty),*) {
                    body::<$($g),*>($($arg),*)
                }
                if $crate::cpu::simd::avx2() {
                    // SAFETY: the CPU supports AVX2 and FMA.
                    return unsafe { wide::<$($g),*>($($arg),*) };
                }
            }
            #[inline(never)]
            fn narrow<$($g: $bound),*>($($arg: $ty),*) {
                body::<$($g),*>($($arg),*)
            }
            narrow::<$($g),*>($($arg),*)
        }
    };
}
pub(crate) use dispatch;
