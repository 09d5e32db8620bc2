//! Procedural macros of hipacc: `#[derive(Kernel)]` and `#[kernel_body]`.
//!
//! Users reach them through `hipacc_core` (or the `hipacc` facade), which
//! documents the kernel language. Each entry point here only converts tokens
//! and calls its `*_impl` function:
//!
//! - `derive` checks the struct (mask sizes in the type are odd:
//!   `window_size`) and implements `KernelFields`;
//! - `kernel_body` reads the `kernel()` method, checks its body against the
//!   kernel subset (`body`) and implements `KernelBody` with the captured
//!   surface AST (`emit_surface`) and the body compiled for the CPU
//!   (`emit_cpu`).
//!
//! Every rejected construct is reported with a span and a hint, all of them
//! at once (`diag`), before any code is generated; what only rustc can know
//! (the type of a field used as an offset, a parameter used as an image) is
//! reported by trait bounds of the emitted code that carry the same kind of
//! message, at the user's token. Attributes on `fn kernel` (lint levels,
//! docs, `#[inline]`) and on the impl reach the generated impl. Emitted code
//! names the core crate through `paths` only.

mod affine;
mod body;
mod derive;
mod diag;
mod emit_cpu;
mod emit_surface;
mod kernel_body;
mod paths;
mod types;
mod window_size;

use proc_macro::TokenStream;

/// Derives `KernelFields` for a kernel struct.
///
/// The struct has named fields of types `Accessor<T>`, `Mask<T>`, `Domain`
/// or a scalar parameter (`u8 u16 i32 u32 f32 f64`), and the attribute
/// `#[kernel(output = T)]` giving its output pixel type (a scalar or
/// `Rgba<f32>`/`Rgba<u8>`). `#[kernel(crate = path)]` overrides the path of
/// the core crate in the generated code.
#[proc_macro_derive(Kernel, attributes(kernel))]
pub fn derive_kernel(input: TokenStream) -> TokenStream {
    derive::derive_kernel_impl(input.into())
        .unwrap_or_else(|e| e.to_compile_error())
        .into()
}

/// Captures the body of `impl Name { fn kernel(&self) -> T { .. } }` and
/// implements `KernelBody` for `Name`.
///
/// The body is checked against the kernel subset (anything else is a
/// compile error with a hint), captured as a surface AST for the IR and
/// compiled as Rust for the CPU backend. `#[kernel_body(crate = path)]`
/// overrides the path of the core crate in the generated code.
#[proc_macro_attribute]
pub fn kernel_body(attr: TokenStream, item: TokenStream) -> TokenStream {
    let (attr, item) = (attr.into(), item.into());
    match kernel_body::kernel_body_impl(&attr, &item) {
        Ok(tokens) => tokens.into(),
        Err(e) => {
            let fallback = kernel_body::fallback_impl(attr, &item);
            let errors = e.to_compile_error();
            quote::quote!(#errors #fallback).into()
        }
    }
}
