//! The one place where paths into the core crate are built.
//!
//! The root is found with `proc-macro-crate` from the calling crate's
//! manifest: a crate depending on the `hipacc` facade gets
//! `::hipacc::core`, one depending on `hipacc-core` gets `::hipacc_core`
//! (both crates also name themselves that way with `extern crate self as`).
//! `#[kernel(crate = path)]` / `#[kernel_body(crate = path)]` override it.

use proc_macro2::TokenStream;
use proc_macro_crate::{crate_name, FoundCrate};
use quote::{format_ident, quote};

/// Paths into the core crate for the generated code.
pub(crate) struct Paths {
    root: TokenStream,
}

impl Paths {
    /// Paths rooted at `override_path` if given, else at the core crate as
    /// the calling crate's manifest names it.
    pub(crate) fn new(override_path: Option<&syn::Path>) -> Paths {
        let root = match override_path {
            Some(p) => quote!(#p),
            None => default_root(),
        };
        Paths { root }
    }

    /// `KernelFields`.
    pub(crate) fn kernel_fields(&self) -> TokenStream {
        self.item(quote!(kernel::KernelFields))
    }

    /// `KernelField`.
    pub(crate) fn kernel_field(&self) -> TokenStream {
        self.item(quote!(kernel::KernelField))
    }

    /// `KernelBody`.
    pub(crate) fn kernel_body(&self) -> TokenStream {
        self.item(quote!(kernel::KernelBody))
    }

    /// `Bindings`.
    pub(crate) fn bindings(&self) -> TokenStream {
        self.item(quote!(kernel::Bindings))
    }

    /// `Rect`.
    pub(crate) fn rect(&self) -> TokenStream {
        self.item(quote!(Rect))
    }

    /// The core crate's `Result`.
    pub(crate) fn result(&self) -> TokenStream {
        self.item(quote!(Result))
    }

    /// `cpu::ReadMode`.
    pub(crate) fn read_mode(&self) -> TokenStream {
        self.item(quote!(cpu::ReadMode))
    }

    /// `cpu::WindowShape`.
    pub(crate) fn window_shape(&self) -> TokenStream {
        self.item(quote!(cpu::WindowShape))
    }

    /// `cpu::AnyShape`.
    pub(crate) fn any_shape(&self) -> TokenStream {
        self.item(quote!(cpu::AnyShape))
    }

    /// `cpu::Extremes`.
    pub(crate) fn extremes(&self) -> TokenStream {
        self.item(quote!(cpu::Extremes))
    }

    /// `cpu::CpuRead`.
    pub(crate) fn cpu_read(&self) -> TokenStream {
        self.item(quote!(cpu::CpuRead))
    }

    /// `cpu::pixel_offset`.
    pub(crate) fn pixel_offset(&self) -> TokenStream {
        self.item(quote!(cpu::pixel_offset))
    }

    /// `cpu::param_value`.
    pub(crate) fn param_value(&self) -> TokenStream {
        self.item(quote!(cpu::param_value))
    }

    /// `cpu::CpuWindow`.
    pub(crate) fn cpu_window(&self) -> TokenStream {
        self.item(quote!(cpu::CpuWindow))
    }

    /// `Reducible`.
    pub(crate) fn reducible(&self) -> TokenStream {
        self.item(quote!(Reducible))
    }

    /// `Rgba`.
    pub(crate) fn rgba(&self) -> TokenStream {
        self.item(quote!(Rgba))
    }

    /// A type or variant of `ir::surface` (`SBlock`, `SExpr`, `SStmt`).
    pub(crate) fn surface(&self, name: &str) -> TokenStream {
        let name = format_ident!("{name}");
        self.item(quote!(ir::surface::#name))
    }

    /// A type of `ir` (`BinaryOp`, `UnaryOp`, `ReduceOp`).
    pub(crate) fn ir(&self, name: &str) -> TokenStream {
        let name = format_ident!("{name}");
        self.item(quote!(ir::#name))
    }

    fn item(&self, rest: TokenStream) -> TokenStream {
        let root = &self.root;
        quote!(#root::#rest)
    }
}

/// The core crate's path as the calling crate's manifest names it.
fn default_root() -> TokenStream {
    match crate_name("hipacc") {
        Ok(FoundCrate::Itself) => return quote!(::hipacc::core),
        Ok(FoundCrate::Name(name)) => {
            let name = format_ident!("{name}");
            return quote!(::#name::core);
        }
        Err(_) => {}
    }
    match crate_name("hipacc-core") {
        Ok(FoundCrate::Name(name)) => {
            let name = format_ident!("{name}");
            quote!(::#name)
        }
        // `Itself` and "not found": the crate's own name, which the core crate
        // also declares for itself; if it is not there, rustc says so.
        Ok(FoundCrate::Itself) | Err(_) => quote!(::hipacc_core),
    }
}

/// Parses `crate = some::path` (or `crate = "some::path"`) inside an
/// attribute, as `parse_nested_meta` hands it over.
pub(crate) fn parse_crate_value(meta: &syn::meta::ParseNestedMeta<'_>) -> syn::Result<syn::Path> {
    let value = meta.value()?;
    if value.peek(syn::LitStr) {
        let s: syn::LitStr = value.parse()?;
        s.parse()
    } else {
        syn::Path::parse_mod_style(value)
    }
}
