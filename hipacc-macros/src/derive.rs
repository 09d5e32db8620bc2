//! `#[derive(Kernel)]`: checks the kernel struct and implements
//! `KernelFields` (output type, name, bindings, CPU views).
//!
//! Generated for `struct Name { a: Accessor<f32>, k: f32 }`:
//!
//! ```text
//! struct __HipaccCpuViews_Name<'a> { a: <Accessor<f32> as KernelField>::CpuView<'a>, .. }
//! impl KernelFields for Name {
//!     type Output = T; type CpuViews<'a> = __HipaccCpuViews_Name<'a>;
//!     const NAME = "Name";
//!     fn bindings(&self) -> Bindings { /* KernelField::bind(&self.a, "a", &mut b); .. */ }
//!     fn cpu_views(&self, origin) -> Result<..> { /* KernelField::cpu_view(&self.a, origin)?, .. */ }
//! }
//! ```

use crate::diag::Diag;
use crate::paths::{parse_crate_value, Paths};
use crate::types::{self, FieldKind, PIXELS_TEXT, SCALARS_TEXT};
use crate::window_size::check_window_size;
use proc_macro2::TokenStream;
use quote::{format_ident, quote};
use syn::{Data, DeriveInput, Fields, Ident, Type};

/// The `#[kernel(..)]` attribute's settings.
#[derive(Default)]
struct KernelAttr {
    output: Option<Type>,
    crate_path: Option<syn::Path>,
}

/// One named field of the kernel struct.
struct Field<'a> {
    name: &'a Ident,
    ty: &'a Type,
}

/// Expands `#[derive(Kernel)]`.
pub(crate) fn derive_kernel_impl(input: TokenStream) -> syn::Result<TokenStream> {
    let input: DeriveInput = syn::parse2(input)?;
    let mut diag = Diag::new();
    let attr = parse_kernel_attr(&input, &mut diag);
    check_generics(&input, &mut diag);
    let fields = named_fields(&input, &mut diag);
    let output = check_output(&input, attr.output.as_ref(), &mut diag);
    // A wrong mask size does not keep the impl from being emitted, so that
    // its error does not cascade into "`KernelFields` not implemented".
    let (mut size_diag, mut size_checks) = (Diag::new(), TokenStream::new());
    for f in &fields {
        check_field(f, &mut diag);
        size_checks.extend(check_window_size(f.name, f.ty, &mut size_diag));
    }
    let size_errors = size_diag.finish().err();
    if let Err(mut e) = diag.finish() {
        e.extend(size_errors);
        return Err(e);
    }
    size_checks.extend(size_errors.map(|e| e.to_compile_error()));
    let Some(output) = output else {
        unreachable!("bug: no output type yet no error reported");
    };
    let paths = Paths::new(attr.crate_path.as_ref());
    let mut tokens = emit(&input, output, &fields, &paths);
    tokens.extend(size_checks);
    Ok(tokens)
}

/// Reads `#[kernel(output = T, crate = path)]`, reporting unknown keys.
fn parse_kernel_attr(input: &DeriveInput, diag: &mut Diag) -> KernelAttr {
    let mut out = KernelAttr::default();
    for attr in input.attrs.iter().filter(|a| a.path().is_ident("kernel")) {
        let parsed = attr.parse_nested_meta(|meta| {
            if meta.path.is_ident("output") {
                out.output = Some(meta.value()?.parse()?);
            } else if meta.path.is_ident("crate") {
                out.crate_path = Some(parse_crate_value(&meta)?);
            } else {
                return Err(meta.error(
                    "unknown `kernel` attribute key; expected `output = T` or `crate = path`",
                ));
            }
            Ok(())
        });
        if let Err(e) = parsed {
            diag.push(e);
        }
    }
    out
}

/// Kernel structs have no generic parameters: each kernel is one IR.
fn check_generics(input: &DeriveInput, diag: &mut Diag) {
    let g = &input.generics;
    if !g.params.is_empty() || g.where_clause.is_some() {
        diag.error(
            g,
            "a kernel struct cannot be generic; write one struct per pixel type",
        );
    }
}

/// The struct's named fields; tuple structs, enums and unions are rejected.
fn named_fields<'a>(input: &'a DeriveInput, diag: &mut Diag) -> Vec<Field<'a>> {
    let fields = match &input.data {
        Data::Struct(s) => &s.fields,
        Data::Enum(e) => {
            diag.error(
                e.enum_token,
                "`#[derive(Kernel)]` needs a struct with named fields, not an enum",
            );
            return Vec::new();
        }
        Data::Union(u) => {
            diag.error(
                u.union_token,
                "`#[derive(Kernel)]` needs a struct with named fields, not a union",
            );
            return Vec::new();
        }
    };
    match fields {
        Fields::Named(named) => named
            .named
            .iter()
            .filter_map(|f| f.ident.as_ref().map(|name| Field { name, ty: &f.ty }))
            .collect(),
        Fields::Unnamed(unnamed) => {
            diag.error(
                unnamed,
                "a kernel struct needs named fields (`struct K { input: Accessor<f32> }`); \
                 the body reads them as `self.name`",
            );
            Vec::new()
        }
        Fields::Unit => Vec::new(),
    }
}

/// `#[kernel(output = T)]` is present and `T` is a pixel type.
fn check_output<'a>(
    input: &DeriveInput,
    output: Option<&'a Type>,
    diag: &mut Diag,
) -> Option<&'a Type> {
    let Some(ty) = output else {
        diag.error(
            &input.ident,
            format!(
                "missing output type: add `#[kernel(output = T)]` to `{}`, where T is the \
                 output pixel type ({PIXELS_TEXT})",
                input.ident
            ),
        );
        return None;
    };
    if types::pixel_name(ty).is_none() {
        diag.error(
            ty,
            format!(
                "unsupported output pixel type `{}`; allowed: {PIXELS_TEXT}",
                types::type_text(ty)
            ),
        );
    }
    Some(ty)
}

/// A field is an accessor of a pixel type, a mask of a scalar type, a
/// domain or a scalar parameter.
fn check_field(f: &Field<'_>, diag: &mut Diag) {
    match types::field_kind(f.ty) {
        FieldKind::Accessor(t) if types::pixel_name(t).is_none() => diag.error(
            t,
            format!(
                "unsupported accessor pixel type `{}` for field `{}`; allowed: {PIXELS_TEXT}",
                types::type_text(t),
                f.name
            ),
        ),
        FieldKind::Mask(t) if types::scalar_name(t).is_none() => diag.error(
            t,
            format!(
                "unsupported mask coefficient type `{}` for field `{}`; masks hold scalars: \
                 {SCALARS_TEXT}",
                types::type_text(t),
                f.name
            ),
        ),
        FieldKind::MissingArgument(name) => diag.error(
            f.ty,
            format!("`{name}` needs its element type, e.g. `{name}<f32>`"),
        ),
        FieldKind::Unknown => diag.error(
            f.ty,
            format!(
                "unsupported type `{}` for kernel field `{}`; fields are `Accessor<T>`, \
                 `Mask<T>`, `Domain` or a scalar parameter ({SCALARS_TEXT})",
                types::type_text(f.ty),
                f.name
            ),
        ),
        FieldKind::Accessor(_) | FieldKind::Mask(_) | FieldKind::Domain | FieldKind::Scalar => {}
    }
}

/// The name of the hidden CPU views struct of kernel `name`.
fn views_ident(name: &Ident) -> Ident {
    format_ident!("__HipaccCpuViews_{}", name)
}

fn emit(input: &DeriveInput, output: &Type, fields: &[Field<'_>], paths: &Paths) -> TokenStream {
    let (name, vis) = (&input.ident, &input.vis);
    let views = views_ident(name);
    let name_str = name.to_string();
    let (kernel_fields, kernel_field) = (paths.kernel_fields(), paths.kernel_field());
    let (bindings, result) = (paths.bindings(), paths.result());
    let rect = paths.rect();
    let names: Vec<&Ident> = fields.iter().map(|f| f.name).collect();
    let name_strs: Vec<String> = names.iter().map(|n| n.to_string()).collect();
    let tys: Vec<&Type> = fields.iter().map(|f| f.ty).collect();
    let doc = format!("The CPU views of the fields of [`{name}`].");
    quote! {
        #[doc = #doc]
        #[doc(hidden)]
        #[allow(non_camel_case_types, missing_docs)]
        #vis struct #views<'a> {
            #( #vis #names: <#tys as #kernel_field>::CpuView<'a>, )*
            __hipacc_lifetime: ::core::marker::PhantomData<&'a ()>,
        }

        impl #kernel_fields for #name {
            type Output = #output;
            type CpuViews<'a> = #views<'a> where Self: 'a;
            const NAME: &'static str = #name_str;
            const RUNTIME_WINDOWS: bool =
                false #( || <#tys as #kernel_field>::RUNTIME_WINDOW )*;

            fn bindings(&self) -> #bindings {
                let mut bindings = <#bindings as ::core::default::Default>::default();
                #( #kernel_field::bind(&self.#names, #name_strs, &mut bindings); )*
                bindings
            }

            fn cpu_views(&self, origin: (usize, usize)) -> #result<Self::CpuViews<'_>> {
                ::core::result::Result::Ok(#views {
                    #( #names: #kernel_field::cpu_view(&self.#names, origin)?, )*
                    __hipacc_lifetime: ::core::marker::PhantomData,
                })
            }

            fn cpu_views_in(&self, space: #rect) -> #result<Self::CpuViews<'_>> {
                ::core::result::Result::Ok(#views {
                    #( #names: #kernel_field::cpu_view_in(&self.#names, space)?, )*
                    __hipacc_lifetime: ::core::marker::PhantomData,
                })
            }
        }
    }
}
