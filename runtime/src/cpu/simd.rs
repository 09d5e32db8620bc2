//! Wider vectors where the CPU has them.
//!
//! Rust compiles for the x86-64 baseline (SSE2, four f32 lanes) unless told
//! otherwise, and the binaries must run on any x86-64. The hot pixel loops
//! are therefore compiled twice, once more inside a function with AVX2 and
//! FMA enabled (eight lanes, fewer load and store instructions per pixel),
//! and [`avx2_fma`] picks one at run time.
//!
//! Both versions compute bit-identical results: rustc never contracts
//! `a * b + c` on its own, so a fused multiply-add happens only where the
//! code asks for one with `mul_add`, and that rounds once in both versions
//! (an instruction in the wide one, a correctly rounded library call in the
//! baseline one).

/// Set (to anything) to run the baseline copies even where AVX2 and FMA
/// are present: a way to check that both copies give the same bits.
pub(crate) const BASELINE_ENV: &str = "HIPACC_CPU_BASELINE";

/// True when the wide copies run: the CPU supports AVX2 and FMA and
/// [`BASELINE_ENV`] is not set (both read once per process).
#[inline]
pub(crate) fn avx2_fma() -> bool {
    static WIDE: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *WIDE.get_or_init(|| detected() && std::env::var_os(BASELINE_ENV).is_none())
}

/// Which copies run, for the device's name.
pub(crate) fn isa() -> &'static str {
    if avx2_fma() {
        "AVX2+FMA"
    } else {
        "baseline"
    }
}

fn detected() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        std::arch::is_x86_feature_detected!("avx2") && std::arch::is_x86_feature_detected!("fma")
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

/// `dispatch! { fn name<T: Bound>(args) { body } }` (with any visibility)
/// defines `name`, whose
/// body is compiled twice: with AVX2 and FMA enabled, run where
/// [`avx2_fma`] says so, and for the compilation target otherwise. Neither
/// copy is inlined into `name`, so that a slice argument stays a `noalias`
/// parameter of the loop that writes it: LLVM then vectorises without
/// run-time overlap checks.
macro_rules! dispatch {
    (
        $(#[$meta:meta])*
        $vis:vis fn $name:ident<$($g:ident: $bound:path),*>($($arg:ident: $ty:ty),* $(,)?) $body:block
    ) => {
        $(#[$meta])*
        $vis fn $name<$($g: $bound),*>($($arg: $ty),*) {
            #[inline(always)]
            fn body<$($g: $bound),*>($($arg: $ty),*) $body
            #[cfg(target_arch = "x86_64")]
            {
                #[target_feature(enable = "avx2,fma")]
                unsafe fn wide<$($g: $bound),*>($($arg: $ty),*) {
                    body::<$($g),*>($($arg),*)
                }
                if $crate::cpu::simd::avx2_fma() {
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

/// Asks the second-level cache for the line holding `p` (a hint: it never
/// faults, and does nothing where the target has no such instruction).
///
/// Not the first level: the callers prefetch a whole row (8 KiB at 2048
/// f32) while the rows they compute from fill the first-level cache, and
/// a burst of lines into it evicts those. Measured on the one-kernel
/// unsharp mask (2048² f32, 2 threads, `suite-ratios --only unsharp1`,
/// alternating runs): 2.01 to 2.36 ms into the first level, 1.71 to
/// 1.84 ms into the second.
#[inline(always)]
pub(crate) fn prefetch<T>(p: *const T) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch reads nothing and cannot fault.
    unsafe {
        std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T1 }>(p.cast());
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = p;
}
