//! Checks of a kernel's fields at launch, and the name table that lowering
//! resolves `self.<field>` against.

use crate::ir::{ScalarType, Type};
use crate::{Bindings, Error, Result};
use std::collections::HashMap;

/// What a field name refers to: the kind of slot and its index.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum SlotRef {
    Accessor(usize),
    Mask(usize),
    Domain(usize),
    Param(usize),
}

impl SlotRef {
    /// How the kind is named in messages.
    pub(super) fn kind(self) -> &'static str {
        match self {
            SlotRef::Accessor(_) => "an accessor",
            SlotRef::Mask(_) => "a mask",
            SlotRef::Domain(_) => "a domain",
            SlotRef::Param(_) => "a parameter",
        }
    }
}

/// Validates the fields and returns the table of their names.
///
/// Rules: accessor regions are non-empty and inside their images, and the
/// image's pixel type is the accessor's; a `Constant` boundary has one
/// literal per lane; masks and domains have odd sizes and as many entries as
/// positions; a domain enables at least one position; a parameter's value has
/// its slot's scalar type; field names are unique.
pub(super) fn check<'b>(kernel: &str, b: &'b Bindings) -> Result<HashMap<&'b str, SlotRef>> {
    let fail = |message: String| Error::InvalidKernel {
        kernel: kernel.into(),
        message,
    };
    let mut names: HashMap<&str, SlotRef> = HashMap::new();
    let mut entries = Vec::new();
    for (i, a) in b.accessors.iter().enumerate() {
        let name = a.slot.name.as_str();
        a.region
            .check_in(a.image.width(), a.image.height())
            .map_err(|e| fail(format!("accessor `{name}`: {e}")))?;
        if a.image.pixel_type() != a.slot.pixel {
            return Err(fail(format!(
                "accessor `{name}` reads `{}` pixels from an image of `{}`",
                a.slot.pixel,
                a.image.pixel_type()
            )));
        }
        check_pixel(&format!("accessor `{name}`"), a.slot.pixel).map_err(fail)?;
        if a.slot.boundary == crate::BoundaryMode::Constant
            && a.slot.constant.len() != a.slot.pixel.lanes as usize
        {
            return Err(fail(format!(
                "accessor `{name}`: a Constant boundary needs {} value(s), got {}",
                a.slot.pixel.lanes,
                a.slot.constant.len()
            )));
        }
        entries.push((name, SlotRef::Accessor(i)));
    }
    for (i, m) in b.masks.iter().enumerate() {
        let (name, s) = (m.slot.name.as_str(), &m.slot);
        check_window("mask", name, s.width, s.height).map_err(fail)?;
        let n = (s.width * s.height) as usize;
        let fixed = s.coefficients.as_ref().map_or(n, Vec::len);
        if m.values.len() != n || fixed != n {
            return Err(fail(format!(
                "mask `{name}` is {}x{} but has {} coefficients",
                s.width,
                s.height,
                m.values.len()
            )));
        }
        if let Some(v) = m.values.iter().find(|v| v.ty() != s.ty) {
            return Err(fail(format!(
                "mask `{name}` of `{}` holds a `{}` coefficient",
                s.ty,
                v.ty()
            )));
        }
        check_pixel(&format!("mask `{name}`"), s.ty).map_err(fail)?;
        entries.push((name, SlotRef::Mask(i)));
    }
    for (i, d) in b.domains.iter().enumerate() {
        let name = d.name.as_str();
        check_window("domain", name, d.width, d.height).map_err(fail)?;
        if d.enabled.len() != (d.width * d.height) as usize {
            return Err(fail(format!(
                "domain `{name}` is {}x{} but has {} flags",
                d.width,
                d.height,
                d.enabled.len()
            )));
        }
        if !d.enabled.contains(&true) {
            return Err(fail(format!(
                "domain `{name}` enables no position; a local operator needs at least one"
            )));
        }
        entries.push((name, SlotRef::Domain(i)));
    }
    for (i, p) in b.params.iter().enumerate() {
        let name = p.slot.name.as_str();
        if !p.slot.ty.is_scalar() || p.slot.ty.scalar == ScalarType::Bool {
            return Err(fail(format!(
                "parameter `{name}` has type `{}`; parameters are numeric scalars",
                p.slot.ty
            )));
        }
        if p.value.ty() != p.slot.ty {
            return Err(fail(format!(
                "parameter `{name}` of `{}` has a `{}` value",
                p.slot.ty,
                p.value.ty()
            )));
        }
        entries.push((name, SlotRef::Param(i)));
    }
    for (name, r) in entries {
        if names.insert(name, r).is_some() {
            return Err(fail(format!("two fields are named `{name}`")));
        }
    }
    Ok(names)
}

fn check_window(what: &str, name: &str, width: u32, height: u32) -> Result<(), String> {
    if width % 2 == 1 && height % 2 == 1 {
        Ok(())
    } else {
        Err(format!(
            "{what} `{name}` is {width}x{height}; width and height must be odd"
        ))
    }
}

/// Pixel types are 1 or 4 lanes of a numeric scalar.
pub(super) fn check_pixel(what: &str, ty: Type) -> Result<(), String> {
    if (ty.lanes == 1 || ty.lanes == 4) && ty.scalar != ScalarType::Bool {
        Ok(())
    } else {
        Err(format!("{what} has type `{ty}`, which is not a pixel type"))
    }
}
