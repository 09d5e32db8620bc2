//! Masks and domains whose size is in their type (`Mask<f32, 5, 3>`,
//! `Domain<5, 5>`) have odd sizes: a window is centred on the output pixel,
//! `at(dx, dy)` for `dx` in `-w/2..=w/2`.
//!
//! A size written as a literal is checked here, at the literal. A size
//! named by a constant (`Mask<f32, N, N>`) is known only to rustc, so the
//! derive emits a constant assertion at the argument, which fails at
//! compile time with the same message. `Mask<T, 0, 0>` is `Mask<T>` and
//! `Domain<0, 0>` is `Domain`: the windows whose size is chosen at run time.

use crate::diag::Diag;
use proc_macro2::TokenStream;
use quote::{quote_spanned, ToTokens};
use syn::spanned::Spanned;
use syn::{GenericArgument, Type};

/// Checks the literal sizes of a mask or domain field and returns the
/// constant assertions for the sizes that are not literals.
pub(crate) fn check_window_size(field: &syn::Ident, ty: &Type, diag: &mut Diag) -> TokenStream {
    let Some((what, size)) = crate::types::window_size(ty) else {
        return TokenStream::new();
    };
    let (run_time, reads) = if what == "mask" {
        ("`Mask<T>`", "`at(dx, dy)` reads offsets")
    } else {
        ("`Domain`", "`reduce` and `iterate` visit offsets")
    };
    let literals = size.map(literal);
    if literals == [Some(0), Some(0)] {
        return TokenStream::new();
    }
    let mut asserts = TokenStream::new();
    for ((arg, value), axis) in size.into_iter().zip(literals).zip(["width", "height"]) {
        let msg = format!(
            "the {axis} of {what} `{field}` must be odd, so that the {what} has a centre pixel \
             ({reads} -{axis}/2..={axis}/2); use {run_time} for a size \
             chosen at run time"
        );
        match value {
            Some(v) if v % 2 == 1 => {}
            Some(v) => diag.error(arg, format!("{msg}; {v} is {}", parity(v))),
            None => {
                let arg = arg.to_token_stream();
                asserts.extend(quote_spanned!(arg.span()=>
                    const _: () = ::core::assert!((#arg) % 2 == 1, #msg);
                ));
            }
        }
    }
    asserts
}

/// The value of a size written as an integer literal.
fn literal(arg: &GenericArgument) -> Option<u64> {
    match arg {
        GenericArgument::Const(syn::Expr::Lit(syn::ExprLit {
            lit: syn::Lit::Int(i),
            ..
        })) => i.base10_parse().ok(),
        _ => None,
    }
}

fn parity(v: u64) -> &'static str {
    if v == 0 {
        "zero"
    } else {
        "even"
    }
}
