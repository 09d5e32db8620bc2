//! The traits `#[derive(Kernel)]` and `#[kernel_body]` implement, and the
//! run-time description of a kernel's fields ([`Bindings`]).
//!
//! A kernel is a struct whose fields are accessors, masks, domains and scalar
//! parameters. `#[derive(Kernel)]` implements [`KernelFields`]: the output
//! type, the fields' bindings (what backends and the IR need to know of each
//! field at launch) and the CPU views. `#[kernel_body]` implements
//! [`KernelBody`]: the captured body (as a [`surface`](crate::ir::surface)
//! AST, lowered to IR at run time) and the same body compiled by rustc for
//! the CPU backend.

use crate::cpu::{AccessorView, DomainView, MaskView, ReadMode, WindowShape};
use crate::image::DynImage;
use crate::ir::{self, surface::SBlock, AccessorSlot, DomainSlot, MaskSlot, ParamSlot, Value};
use crate::{Accessor, Domain, Mask, Pixel, Rect, Result};
use std::sync::Arc;

/// An accessor field at launch: its IR slot, image and region.
#[derive(Clone)]
pub struct AccessorBinding {
    /// The IR slot (name, pixel type, boundary, interpolation).
    pub slot: AccessorSlot,
    /// The image read.
    pub image: Arc<dyn DynImage>,
    /// The region of interest read.
    pub region: Rect,
}

/// A mask field at launch.
#[derive(Clone, Debug)]
pub struct MaskBinding {
    /// The IR slot; `coefficients` is `Some` unless the mask is dynamic.
    pub slot: MaskSlot,
    /// The coefficients, row-major (always present, for launch arguments).
    pub values: Vec<Value>,
}

/// A scalar parameter field at launch.
#[derive(Clone, Debug)]
pub struct ParamBinding {
    /// The IR slot.
    pub slot: ParamSlot,
    /// Its value.
    pub value: Value,
}

/// Every field of a kernel instance, by kind, in field order.
#[derive(Clone, Default)]
pub struct Bindings {
    /// Accessor fields.
    pub accessors: Vec<AccessorBinding>,
    /// Mask fields.
    pub masks: Vec<MaskBinding>,
    /// Domain fields.
    pub domains: Vec<DomainSlot>,
    /// Scalar parameter fields.
    pub params: Vec<ParamBinding>,
}

/// A type that can be a field of a kernel struct.
pub trait KernelField: Sync {
    /// What the CPU backend's compiled body reads this field through.
    type CpuView<'a>: Sync
    where
        Self: 'a;
    /// True for a window whose size is not in its type.
    const RUNTIME_WINDOW: bool = false;
    /// Adds this field, named `name`, to `out`.
    fn bind(&self, name: &'static str, out: &mut Bindings);
    /// The CPU view for an iteration space whose origin is `origin`.
    fn cpu_view(&self, origin: (usize, usize)) -> Result<Self::CpuView<'_>>;
    /// The CPU view for the iteration space `space`: what interpolating
    /// accessors need, as they map the whole space onto their region.
    fn cpu_view_in(&self, space: Rect) -> Result<Self::CpuView<'_>> {
        self.cpu_view((space.x, space.y))
    }
}

/// Implemented by `#[derive(Kernel)]`: the kernel's fields.
pub trait KernelFields: Sync + Sized {
    /// The output pixel type (`#[kernel(output = T)]`).
    type Output: Pixel;
    /// The fields' CPU views, one struct member per field.
    type CpuViews<'a>: Sync
    where
        Self: 'a;
    /// The struct's name.
    const NAME: &'static str;
    /// True when a field is a window whose size is not in its type (a
    /// [`Domain`], a `Mask<T>`): the CPU backend then also compiles the
    /// kernel for the usual window sizes ([`crate::cpu::WindowShape`]).
    const RUNTIME_WINDOWS: bool = false;
    /// The fields' bindings.
    fn bindings(&self) -> Bindings;
    /// The CPU views for an iteration space with origin `origin`.
    fn cpu_views(&self, origin: (usize, usize)) -> Result<Self::CpuViews<'_>>;
    /// The CPU views for the iteration space `space` (see
    /// [`KernelField::cpu_view_in`]); `#[derive(Kernel)]` implements it.
    fn cpu_views_in(&self, space: Rect) -> Result<Self::CpuViews<'_>> {
        self.cpu_views((space.x, space.y))
    }
}

/// Implemented by `#[kernel_body]`: the kernel's body.
pub trait KernelBody: KernelFields {
    /// The body calls `min` or `max`, which a read mode with
    /// [`ReadMode::PLAIN_EXTREMES`] runs as a plain compare-and-select ([`crate::cpu::Extremes`]): the CPU
    /// backend instantiates the body in that mode only then.
    const EXTREMES: bool = false;
    /// The body as captured, for lowering to IR.
    fn surface() -> &'static SBlock;
    /// The body compiled for the CPU: the output value at pixel `(x, y)`.
    ///
    /// # Safety
    /// With `M = Interior` (or `InteriorPlain`) every accessor read is
    /// unchecked: the caller must
    /// guarantee that all reads at `(x, y)` fall inside each accessor's region
    /// at positions that fit in `i32`, as `x` and `y` do (the CPU backend
    /// computes that interior from the IR's footprints).
    /// The other modes have no precondition; for the values of the
    /// boundary conditions, the axes `M` leaves unchecked must read inside.
    unsafe fn cpu_pixel<M: ReadMode>(
        views: &Self::CpuViews<'_>,
        x: isize,
        y: isize,
    ) -> Self::Output;

    /// [`KernelBody::cpu_pixel`] in a launch whose windows of run-time size
    /// have the shape `S` (see [`crate::cpu::CpuWindow`]): their loops then
    /// have constant trip counts. `#[kernel_body]` implements it; the
    /// default ignores the shape.
    ///
    /// # Safety
    /// As for [`KernelBody::cpu_pixel`]; and where `S::W > 0`, every mask
    /// of run-time size is `S::W x S::H` and every domain is `S::W x S::H`
    /// with all positions enabled.
    #[inline(always)]
    unsafe fn cpu_pixel_in<M: ReadMode, S: WindowShape>(
        views: &Self::CpuViews<'_>,
        x: isize,
        y: isize,
    ) -> Self::Output {
        // SAFETY: the caller's contract includes `cpu_pixel`'s.
        unsafe { Self::cpu_pixel::<M>(views, x, y) }
    }
}

/// A complete kernel: fields and body.
pub trait Kernel: KernelBody {
    /// The kernel's IR for this instance's field values (masks, domains,
    /// boundary constants become part of it).
    fn ir(&self) -> Result<ir::Kernel> {
        ir::lower(
            Self::NAME,
            <Self::Output as Pixel>::TYPE,
            &self.bindings(),
            Self::surface(),
        )
    }
}
impl<K: KernelBody> Kernel for K {}

impl<T: Pixel> KernelField for Accessor<T> {
    type CpuView<'a> = AccessorView<'a, T>;
    fn bind(&self, name: &'static str, out: &mut Bindings) {
        let constant = match self.boundary().constant() {
            Some(c) => literals_of(c.to_value()),
            None => Vec::new(),
        };
        out.accessors.push(AccessorBinding {
            slot: AccessorSlot {
                name: name.to_string(),
                pixel: T::TYPE,
                boundary: self.boundary().mode(),
                constant,
                interpolation: self.interpolation(),
            },
            image: self.image().to_dyn(),
            region: self.region(),
        });
    }
    fn cpu_view(&self, origin: (usize, usize)) -> Result<AccessorView<'_, T>> {
        AccessorView::new(self, origin)
    }
    fn cpu_view_in(&self, space: Rect) -> Result<AccessorView<'_, T>> {
        AccessorView::in_space(self, space)
    }
}

impl<T: Pixel, const W: usize, const H: usize> KernelField for Mask<T, W, H> {
    type CpuView<'a> = MaskView<'a, T, W, H>;
    const RUNTIME_WINDOW: bool = W == 0 || H == 0;
    fn bind(&self, name: &'static str, out: &mut Bindings) {
        let values: Vec<Value> = self.coefficients().iter().map(|c| c.to_value()).collect();
        // Vector coefficients have no scalar literal form: they are always
        // passed at launch, as for a dynamic mask.
        let coefficients = if self.is_dynamic() {
            None
        } else {
            values
                .iter()
                .map(|v| v.to_literal())
                .collect::<Option<Vec<_>>>()
        };
        out.masks.push(MaskBinding {
            slot: MaskSlot {
                name: name.to_string(),
                ty: T::TYPE,
                width: self.width() as u32,
                height: self.height() as u32,
                coefficients,
            },
            values,
        });
    }
    fn cpu_view(&self, _origin: (usize, usize)) -> Result<MaskView<'_, T, W, H>> {
        Ok(MaskView::new(self))
    }
}

impl<const W: usize, const H: usize> KernelField for Domain<W, H> {
    type CpuView<'a> = DomainView;
    const RUNTIME_WINDOW: bool = true;
    fn bind(&self, name: &'static str, out: &mut Bindings) {
        out.domains.push(DomainSlot {
            name: name.to_string(),
            width: self.width() as u32,
            height: self.height() as u32,
            enabled: self.enabled().to_vec(),
        });
    }
    fn cpu_view(&self, _origin: (usize, usize)) -> Result<DomainView> {
        Ok(DomainView::new(self))
    }
}

macro_rules! param_field {
    ($($t:ty),*) => {$(
        impl KernelField for $t {
            type CpuView<'a> = $t;
            fn bind(&self, name: &'static str, out: &mut Bindings) {
                out.params.push(ParamBinding {
                    slot: ParamSlot { name: name.to_string(), ty: <$t as Pixel>::TYPE },
                    value: self.to_value(),
                });
            }
            fn cpu_view(&self, _origin: (usize, usize)) -> Result<$t> {
                Ok(*self)
            }
        }
    )*};
}
param_field!(u8, u16, i32, u32, f32, f64);

/// The lanes of a value as literals (one for scalars, four for vectors).
pub fn literals_of(v: Value) -> Vec<ir::Literal> {
    match v {
        Value::Vec4(lanes) => lanes
            .iter()
            .filter_map(|l| l.to_value().to_literal())
            .collect(),
        v => v.to_literal().into_iter().collect(),
    }
}
