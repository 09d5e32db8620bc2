//! Syntactic classification of the types a kernel may name: scalars, pixel
//! types and field types. Types are recognised by name (the last path
//! segment), since a macro cannot resolve them.

use quote::ToTokens;
use syn::{GenericArgument, PathArguments, Type};

/// The scalar types of pixels and parameters, as written in Rust.
pub(crate) const SCALARS: [&str; 6] = ["u8", "u16", "i32", "u32", "f32", "f64"];

/// The list of allowed pixel types, for messages.
pub(crate) const PIXELS_TEXT: &str = "u8, u16, i32, u32, f32, f64, Rgba<f32> or Rgba<u8>";

/// The list of allowed scalar types, for messages.
pub(crate) const SCALARS_TEXT: &str = "u8, u16, i32, u32, f32, f64";

/// What a kernel struct field is, by its type's last path segment.
pub(crate) enum FieldKind<'a> {
    /// `Accessor<T>` with its pixel type.
    Accessor(&'a Type),
    /// `Mask<T>` or `Mask<T, W, H>` with its coefficient type.
    Mask(&'a Type),
    /// `Domain` or `Domain<W, H>`.
    Domain,
    /// A scalar parameter.
    Scalar,
    /// `Accessor`/`Mask` without exactly one type argument.
    MissingArgument(&'static str),
    /// Anything else.
    Unknown,
}

/// Classifies a field type.
pub(crate) fn field_kind(ty: &Type) -> FieldKind<'_> {
    if scalar_name(ty).is_some() {
        return FieldKind::Scalar;
    }
    let Some((name, args)) = last_segment(ty) else {
        return FieldKind::Unknown;
    };
    if name == "Mask" {
        if let Some(t) = mask_type_argument(args) {
            return FieldKind::Mask(t);
        }
    }
    match (name.as_str(), one_type_argument(args)) {
        ("Accessor", Some(t)) => FieldKind::Accessor(t),
        ("Accessor", None) => FieldKind::MissingArgument("Accessor"),
        ("Mask", None) => FieldKind::MissingArgument("Mask"),
        ("Domain", _) if args.is_empty() || domain_size_arguments(args).is_some() => {
            FieldKind::Domain
        }
        _ => FieldKind::Unknown,
    }
}

/// `ty` without the invisible groups and parentheses that `macro_rules!`
/// substitution (`$t:ty`) or the user put around it.
pub(crate) fn ungroup(mut ty: &Type) -> &Type {
    loop {
        match ty {
            Type::Group(g) => ty = &g.elem,
            Type::Paren(p) => ty = &p.elem,
            _ => return ty,
        }
    }
}

/// The name of a scalar type (`f32`), if `ty` is one.
pub(crate) fn scalar_name(ty: &Type) -> Option<&'static str> {
    let Type::Path(p) = ungroup(ty) else {
        return None;
    };
    if p.qself.is_some() {
        return None;
    }
    let ident = p.path.get_ident()?;
    SCALARS.iter().copied().find(|s| ident == s)
}

/// The canonical name of a pixel type (`f32`, `Rgba<u8>`), if `ty` is one
/// of the allowed pixel types.
pub(crate) fn pixel_name(ty: &Type) -> Option<String> {
    if let Some(s) = scalar_name(ty) {
        return Some(s.to_string());
    }
    let (name, args) = last_segment(ty)?;
    let lane = scalar_name(one_type_argument(args)?)?;
    (name == "Rgba" && matches!(lane, "f32" | "u8")).then(|| format!("Rgba<{lane}>"))
}

/// The lane type of `Rgba<T>` for any scalar `T`, if `ty` is one.
pub(crate) fn rgba_lane(ty: &Type) -> Option<&'static str> {
    let (name, args) = last_segment(ty)?;
    if name != "Rgba" {
        return None;
    }
    scalar_name(one_type_argument(args)?)
}

/// A type as the user wrote it, for messages (`Rgba<f64>`).
pub(crate) fn type_text(ty: &Type) -> String {
    let text = ty.to_token_stream().to_string();
    text.replace(" < ", "<")
        .replace(" <", "<")
        .replace("< ", "<")
        .replace(" >", ">")
        .replace(" :: ", "::")
}

fn last_segment(ty: &Type) -> Option<(String, &PathArguments)> {
    let Type::Path(p) = ungroup(ty) else {
        return None;
    };
    if p.qself.is_some() {
        return None;
    }
    let seg = p.path.segments.last()?;
    Some((seg.ident.to_string(), &seg.arguments))
}

/// The coefficient type of `Mask<T>` or `Mask<T, W, H>` (size in the type).
fn mask_type_argument(args: &PathArguments) -> Option<&Type> {
    let PathArguments::AngleBracketed(a) = args else {
        return None;
    };
    let mut it = a.args.iter();
    match (it.next(), it.next(), it.next(), it.next()) {
        (Some(GenericArgument::Type(t)), None, None, None) => Some(t),
        (Some(GenericArgument::Type(t)), Some(w), Some(h), None)
            if is_const_argument(w) && is_const_argument(h) =>
        {
            Some(t)
        }
        _ => None,
    }
}

/// The `W, H` arguments of `Domain<W, H>`.
fn domain_size_arguments(args: &PathArguments) -> Option<[&GenericArgument; 2]> {
    let PathArguments::AngleBracketed(a) = args else {
        return None;
    };
    match a.args.iter().collect::<Vec<_>>().as_slice() {
        [w, h] if is_const_argument(w) && is_const_argument(h) => Some([*w, *h]),
        _ => None,
    }
}

/// The window a field's type names (`"mask"` or `"domain"`) and its `W, H`
/// arguments, if the field is a `Mask<T, W, H>` or `Domain<W, H>` with its
/// size in the type.
pub(crate) fn window_size(ty: &Type) -> Option<(&'static str, [&GenericArgument; 2])> {
    let (name, args) = last_segment(ty)?;
    if name == "Domain" {
        return domain_size_arguments(args).map(|size| ("domain", size));
    }
    let PathArguments::AngleBracketed(a) = args else {
        return None;
    };
    match (name.as_str(), a.args.iter().collect::<Vec<_>>().as_slice()) {
        ("Mask", [_, w, h]) => Some(("mask", [*w, *h])),
        _ => None,
    }
}

/// A const generic argument: `5`, `{ N }` or a constant's name.
fn is_const_argument(arg: &GenericArgument) -> bool {
    match arg {
        GenericArgument::Const(_) => true,
        GenericArgument::Type(Type::Path(p)) => p.path.get_ident().is_some(),
        _ => false,
    }
}

fn one_type_argument(args: &PathArguments) -> Option<&Type> {
    let PathArguments::AngleBracketed(a) = args else {
        return None;
    };
    let mut it = a.args.iter();
    match (it.next(), it.next()) {
        (Some(GenericArgument::Type(t)), None) => Some(t),
        _ => None,
    }
}
