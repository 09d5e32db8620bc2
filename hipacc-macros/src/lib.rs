//! Procedural macros of hipacc.
use proc_macro::TokenStream;

/// Derives `hipacc_core::KernelFields`.
#[proc_macro_derive(Kernel, attributes(kernel))]
pub fn derive_kernel(input: TokenStream) -> TokenStream {
    let _ = input;
    TokenStream::new()
}

/// Captures a kernel body.
#[proc_macro_attribute]
pub fn kernel_body(_attr: TokenStream, item: TokenStream) -> TokenStream {
    item
}
