//! `#[kernel_body]`: reads `impl Name { fn kernel(&self) -> T { body } }`,
//! checks the body and implements `KernelBody` for `Name`:
//!
//! ```text
//! impl KernelBody for Name {
//!     fn surface() -> &'static SBlock { /* built once, in a OnceLock */ }
//!     #[inline(always)]
//!     unsafe fn cpu_pixel<__M: ReadMode>(__v: &Self::CpuViews<'_>, __x: isize, __y: isize)
//!         -> Self::Output { /* cpu_pixel_in::<__M, AnyShape> */ }
//!     #[inline(always)]
//!     unsafe fn cpu_pixel_in<__M: ReadMode, __S: WindowShape>(..) -> Self::Output
//!         { /* the body, see emit_cpu */ }
//! }
//! ```
//!
//! The `kernel` method itself is not kept: its body is not Rust that
//! compiles on its own (`self.f.at(..)` exists only inside the macro).

use crate::body;
use crate::diag::Diag;
use crate::emit_cpu::Cpu;
use crate::emit_surface::Surface;
use crate::paths::{parse_crate_value, Paths};
use proc_macro2::TokenStream;
use quote::{quote, quote_spanned};
use syn::parse::Parser;
use syn::spanned::Spanned;
use syn::{ImplItem, ImplItemFn, ItemImpl};

/// Expands `#[kernel_body]`.
pub(crate) fn kernel_body_impl(attr: &TokenStream, item: &TokenStream) -> syn::Result<TokenStream> {
    let crate_path = parse_attr(attr.clone())?;
    let imp: ItemImpl = syn::parse2(item.clone())?;
    let mut diag = Diag::new();
    check_impl(&imp, &mut diag);
    let method = kernel_method(&imp, &mut diag);
    let attrs = method.map(|m| method_attrs(m, &mut diag));
    let body = method.map(|m| {
        check_signature(m, &mut diag);
        let body = body::convert(&m.block, &mut diag);
        if body.result.is_none() {
            diag.error_at(
                m.block.brace_token.span.close(),
                "the kernel body must end with an expression (no `;`): the output pixel value",
            );
        }
        body
    });
    diag.finish()?;
    let (Some(method), Some(body), Some(attrs)) = (method, body, attrs) else {
        unreachable!("bug: no kernel method yet no error reported");
    };
    let syn::ReturnType::Type(_, ret) = &method.sig.output else {
        unreachable!("bug: kernel method without return type yet no error reported");
    };
    let paths = Paths::new(crate_path.as_ref());
    let self_ty = &imp.self_ty;
    let (kernel_body, read_mode) = (paths.kernel_body(), paths.read_mode());
    let (window_shape, any_shape) = (paths.window_shape(), paths.any_shape());
    let sblock = paths.surface("SBlock");
    let surface = Surface::new(&paths).block(&body);
    let emitter = Cpu::new(&paths);
    let cpu = emitter.block(&body);
    let extremes = emitter.emitted_extremes();
    // Located at the return type (type errors point there) but resolved
    // where `let __out` is: they differ when the type comes from a
    // `macro_rules!` fragment.
    let out_span = ret.span().resolved_at(proc_macro2::Span::call_site());
    let out = quote_spanned!(out_span=> __out);
    let impl_attrs = &imp.attrs;
    let MethodAttrs {
        lints,
        docs,
        inline,
    } = attrs;
    let inline = inline.unwrap_or_else(|| quote!(#[inline(always)]));
    Ok(quote! {
        #(#impl_attrs)*
        #(#docs)*
        impl #kernel_body for #self_ty {
            const EXTREMES: bool = #extremes;

            fn surface() -> &'static #sblock {
                static SURFACE: ::std::sync::OnceLock<#sblock> = ::std::sync::OnceLock::new();
                SURFACE.get_or_init(|| #surface)
            }

            #[inline(always)]
            unsafe fn cpu_pixel<__M: #read_mode>(
                __v: &Self::CpuViews<'_>,
                __x: isize,
                __y: isize,
            ) -> Self::Output {
                // SAFETY: the caller's contract; no shape is promised.
                unsafe { Self::cpu_pixel_in::<__M, #any_shape>(__v, __x, __y) }
            }

            #inline
            #[allow(unused_unsafe, unused_parens)]
            #(#lints)*
            unsafe fn cpu_pixel_in<__M: #read_mode, __S: #window_shape>(
                __v: &Self::CpuViews<'_>,
                __x: isize,
                __y: isize,
            ) -> Self::Output {
                // SAFETY: the only unsafe operations are the field reads,
                // whose contract (`M = Interior` reads inside the region,
                // windows of the shape `S`) is this function's own.
                let __out: #ret = unsafe #cpu;
                #out
            }
        }
    })
}

/// The attributes of `fn kernel`, by where they go in the generated impl.
struct MethodAttrs<'a> {
    /// Lint levels (`allow`, `warn`, ...): on the function holding the body.
    lints: Vec<&'a syn::Attribute>,
    /// Documentation: on the impl, which rustdoc shows.
    docs: Vec<&'a syn::Attribute>,
    /// `#[inline(..)]`: replaces the default `#[inline(always)]` of the
    /// function holding the body.
    inline: Option<TokenStream>,
}

/// Sorts the attributes of `fn kernel`; any other attribute is an error.
fn method_attrs<'a>(m: &'a ImplItemFn, diag: &mut Diag) -> MethodAttrs<'a> {
    let mut out = MethodAttrs {
        lints: Vec::new(),
        docs: Vec::new(),
        inline: None,
    };
    for attr in &m.attrs {
        let path = attr.path();
        if ["allow", "warn", "deny", "forbid", "expect"]
            .iter()
            .any(|lint| path.is_ident(lint))
        {
            out.lints.push(attr);
        } else if path.is_ident("doc") {
            out.docs.push(attr);
        } else if path.is_ident("inline") && out.inline.is_none() {
            out.inline = Some(quote!(#attr));
        } else {
            diag.error(
                attr,
                "attributes on `fn kernel` are lint levels (`#[allow(..)]`, `#[warn(..)]`, \
                 `#[deny(..)]`, `#[forbid(..)]`, `#[expect(..)]`), documentation and one \
                 `#[inline(..)]`; put others on the impl",
            );
        }
    }
    out
}

/// An impl of `KernelBody` that only satisfies the type checker, emitted
/// next to the errors of a rejected body so that they do not cascade into
/// "trait not implemented" errors wherever the kernel is used.
pub(crate) fn fallback_impl(attr: TokenStream, item: &TokenStream) -> TokenStream {
    let Ok(imp) = syn::parse2::<ItemImpl>(item.clone()) else {
        return TokenStream::new();
    };
    let crate_path = parse_attr(attr).ok().flatten();
    if imp.trait_.is_some() || !imp.generics.params.is_empty() {
        return TokenStream::new();
    }
    let paths = Paths::new(crate_path.as_ref());
    let self_ty = &imp.self_ty;
    let (kernel_body, read_mode) = (paths.kernel_body(), paths.read_mode());
    let sblock = paths.surface("SBlock");
    let attrs = &imp.attrs;
    quote! {
        #(#attrs)*
        impl #kernel_body for #self_ty {
            fn surface() -> &'static #sblock {
                ::core::unreachable!("the kernel body did not compile")
            }
            unsafe fn cpu_pixel<__M: #read_mode>(
                _: &Self::CpuViews<'_>,
                _: isize,
                _: isize,
            ) -> Self::Output {
                ::core::unreachable!("the kernel body did not compile")
            }
        }
    }
}

/// Reads `crate = path` from `#[kernel_body(..)]`.
fn parse_attr(attr: TokenStream) -> syn::Result<Option<syn::Path>> {
    let mut crate_path = None;
    let parser = syn::meta::parser(|meta| {
        if meta.path.is_ident("crate") {
            crate_path = Some(parse_crate_value(&meta)?);
            Ok(())
        } else {
            Err(meta.error("unknown `kernel_body` attribute key; expected `crate = path`"))
        }
    });
    parser.parse2(attr)?;
    Ok(crate_path)
}

/// The impl is inherent, not generic, not `unsafe`.
fn check_impl(imp: &ItemImpl, diag: &mut Diag) {
    if let Some((_, path, _)) = &imp.trait_ {
        diag.error(
            path,
            "`#[kernel_body]` goes on an inherent impl: `impl Name { fn kernel(&self) -> T { .. } }`",
        );
    }
    if !imp.generics.params.is_empty() || imp.generics.where_clause.is_some() {
        diag.error(&imp.generics, "a kernel impl cannot be generic");
    }
    if let Some(u) = &imp.unsafety {
        diag.error(u, "a kernel impl cannot be `unsafe`");
    }
}

/// The one `fn kernel` of the impl; anything else in it is an error.
fn kernel_method<'a>(imp: &'a ItemImpl, diag: &mut Diag) -> Option<&'a ImplItemFn> {
    let mut found = None;
    for item in &imp.items {
        match item {
            ImplItem::Fn(f) if f.sig.ident == "kernel" && found.is_none() => found = Some(f),
            ImplItem::Fn(f) => diag.error(
                &f.sig.ident,
                "a `#[kernel_body]` impl holds exactly one method, `fn kernel(&self) -> T`; \
                 move other methods to another impl block",
            ),
            other => diag.error(
                other,
                "a `#[kernel_body]` impl holds exactly one method, `fn kernel(&self) -> T`",
            ),
        }
    }
    if found.is_none() {
        diag.error(
            &imp.self_ty,
            "missing `fn kernel(&self) -> T { .. }` in the `#[kernel_body]` impl",
        );
    }
    found
}

/// `fn kernel(&self) -> T`: no qualifiers, generics or other parameters.
fn check_signature(m: &ImplItemFn, diag: &mut Diag) {
    let sig = &m.sig;
    let form = "the kernel method is `fn kernel(&self) -> T`";
    if let Some(c) = &sig.constness {
        diag.error(c, format!("{form}; `const` is not allowed"));
    }
    if let Some(a) = &sig.asyncness {
        diag.error(a, format!("{form}; `async` is not allowed"));
    }
    if let Some(u) = &sig.unsafety {
        diag.error(u, format!("{form}; `unsafe` is not allowed"));
    }
    if let Some(abi) = &sig.abi {
        diag.error(abi, format!("{form}; `extern` is not allowed"));
    }
    if !sig.generics.params.is_empty() || sig.generics.where_clause.is_some() {
        diag.error(&sig.generics, format!("{form}; it cannot be generic"));
    }
    let by_ref_self = matches!(
        sig.inputs.first(),
        Some(syn::FnArg::Receiver(r)) if r.reference.is_some() && r.mutability.is_none()
    );
    if sig.inputs.len() != 1 || !by_ref_self {
        diag.error(
            &sig.inputs,
            format!("{form}; it takes only `&self` (read pixel coordinates with `x()`, `y()`)"),
        );
    }
    if let syn::ReturnType::Default = sig.output {
        diag.error(
            &sig.ident,
            format!("{form}; add the output pixel type: `-> T`"),
        );
    }
}
