//! The evaluator: runs a kernel's IR on host images, one pixel at a time.
//!
//! It is the oracle every backend is tested against, so it is slow and
//! obviously correct rather than fast: every value is an [`ir::Value`] in
//! its type's own precision (an `f32` expression rounds as `f32`), integers
//! wrap as Rust's do without overflow checks, integer division by zero is
//! an error, casts follow Rust's `as`, math methods call Rust's own
//! functions, and every accessor read goes through the index maths of
//! [`crate::boundary`] at the accessor's region (a read outside the region
//! of an `Undefined` accessor is an [`Error::UndefinedRead`]). Interpolating
//! accessors read through [`crate::interpolate::sample`], with the boundary
//! condition applied to every tap. Local
//! reductions start from the value at the first position of their window
//! and combine in row-major order.

mod exec;
mod intrinsics;
mod ops;

use self::exec::{zero, Frame};
use crate::image::DynImage;
use crate::ir::{self, Kernel, Scalar4, Value, Window};
use crate::{Bindings, BoundaryMode, Error, Interpolation, IterationSpace, Rect, Result};

/// Computes every pixel of `space` of `output` with `kernel`, reading the
/// images, masks and parameters of `bindings`; the other pixels of `output`
/// keep their values.
///
/// `bindings` must have the kernel's slots (as [`ir::lower`] was given) and
/// no accessor may read `output` ([`Error::Aliasing`]).
pub fn evaluate(
    kernel: &Kernel,
    bindings: &Bindings,
    output: &dyn DynImage,
    space: Rect,
) -> Result<()> {
    let inputs = Inputs::new(kernel, bindings, output, space)?;
    let (w, h) = (output.width(), output.height());
    let mut pixels = output.values()?;
    let mut frame = Frame {
        inputs: &inputs,
        x: 0,
        y: 0,
        vars: vec![None; kernel.vars.len()],
    };
    for y in space.y..space.y + space.height {
        for x in space.x..space.x + space.width {
            frame.x = x as i64;
            frame.y = y as i64;
            let v = frame.block(&kernel.body)?;
            match v {
                Some(v) if v.ty() == kernel.output => pixels[y * w + x] = v,
                other => {
                    return Err(Error::Evaluation {
                        kernel: kernel.name.clone(),
                        x: x as i64,
                        y: y as i64,
                        message: format!(
                            "bug: the body gave {:?} for a `{}` output",
                            other.map(|v| v.ty()),
                            kernel.output
                        ),
                    })
                }
            }
        }
    }
    debug_assert_eq!(pixels.len(), w * h);
    output.set_values(&pixels)
}

/// [`evaluate`] for a kernel instance: lowers it ([`crate::Kernel::ir`]) and
/// computes the pixels of `space` in its output image.
pub fn evaluate_kernel<K: crate::Kernel>(k: &K, space: &IterationSpace<K::Output>) -> Result<()> {
    let ir = k.ir()?;
    evaluate(&ir, &k.bindings(), &*space.image().to_dyn(), space.rect())
}

/// An accessor ready to read.
struct AccessorInput {
    pixels: Vec<Value>,
    stride: usize,
    region: Rect,
    mode: BoundaryMode,
    /// The `Constant` boundary's value (unused otherwise).
    constant: Value,
    /// How reads between pixels are answered.
    interpolation: Interpolation,
}

/// A mask ready to read.
struct MaskInput {
    values: Vec<Value>,
    width: i64,
    height: i64,
    zero: Value,
}

impl MaskInput {
    /// The coefficient at offset `(dx, dy)` from the centre; 0 outside.
    fn at(&self, dx: i64, dy: i64) -> Value {
        let (ix, iy) = (dx + self.width / 2, dy + self.height / 2);
        if (0..self.width).contains(&ix) && (0..self.height).contains(&iy) {
            self.values[(iy * self.width + ix) as usize]
        } else {
            self.zero
        }
    }
}

/// Everything a pixel's evaluation reads, checked against the kernel.
struct Inputs<'a> {
    kernel: &'a Kernel,
    accessors: Vec<AccessorInput>,
    masks: Vec<MaskInput>,
    params: Vec<Value>,
    mask_positions: Vec<Vec<(i32, i32)>>,
    domain_positions: Vec<Vec<(i32, i32)>>,
    /// Origin of the iteration space.
    origin: (i64, i64),
    /// Size of the iteration space (for interpolating accessors).
    extent: (usize, usize),
}

impl<'a> Inputs<'a> {
    fn new(
        kernel: &'a Kernel,
        b: &Bindings,
        output: &dyn DynImage,
        space: Rect,
    ) -> Result<Inputs<'a>> {
        let fail = |message: String| Error::InvalidKernel {
            kernel: kernel.name.clone(),
            message,
        };
        space.check_in(output.width(), output.height())?;
        if output.pixel_type() != kernel.output {
            return Err(fail(format!(
                "computes `{}` pixels but the output image holds `{}`",
                kernel.output,
                output.pixel_type()
            )));
        }
        let counts = |k: usize, b: usize, what: &str| {
            (k == b)
                .then_some(())
                .ok_or_else(|| fail(format!("has {k} {what} but {b} were bound")))
        };
        counts(kernel.accessors.len(), b.accessors.len(), "accessors")?;
        counts(kernel.masks.len(), b.masks.len(), "masks")?;
        counts(kernel.params.len(), b.params.len(), "parameters")?;
        let mut accessors = Vec::new();
        for (slot, a) in kernel.accessors.iter().zip(&b.accessors) {
            if a.image.id() == output.id() {
                return Err(Error::Aliasing {
                    kernel: kernel.name.clone(),
                    accessor: slot.name.clone(),
                    image: output.id(),
                });
            }
            if a.image.pixel_type() != slot.pixel {
                return Err(fail(format!(
                    "accessor `{}` reads `{}` but its image holds `{}`",
                    slot.name,
                    slot.pixel,
                    a.image.pixel_type()
                )));
            }
            a.region.check_in(a.image.width(), a.image.height())?;
            let constant = constant_value(slot).map_err(fail)?;
            accessors.push(AccessorInput {
                pixels: a.image.values()?,
                stride: a.image.width(),
                region: a.region,
                mode: slot.boundary,
                constant,
                interpolation: slot.interpolation,
            });
        }
        let mut masks = Vec::new();
        for (slot, m) in kernel.masks.iter().zip(&b.masks) {
            // Fixed coefficients are the IR's (code generators print them);
            // a vector mask's lanes are only in the bound values.
            let values: Vec<Value> = match &slot.coefficients {
                Some(c) if slot.ty.is_scalar() => {
                    c.iter().map(|l| lane_value(*l, slot.ty)).collect()
                }
                _ => m.values.clone(),
            };
            if values.len() != (slot.width * slot.height) as usize
                || values.iter().any(|v| v.ty() != slot.ty)
            {
                return Err(fail(format!(
                    "mask `{}` needs {}x{} `{}` coefficients",
                    slot.name, slot.width, slot.height, slot.ty
                )));
            }
            masks.push(MaskInput {
                values,
                width: slot.width as i64,
                height: slot.height as i64,
                zero: zero(slot.ty),
            });
        }
        let mut params = Vec::new();
        for (slot, p) in kernel.params.iter().zip(&b.params) {
            if p.value.ty() != slot.ty {
                return Err(fail(format!(
                    "parameter `{}` is `{}` but was given a `{}`",
                    slot.name,
                    slot.ty,
                    p.value.ty()
                )));
            }
            params.push(p.value);
        }
        let grid = |w: u32, h: u32, on: &dyn Fn(usize) -> bool| -> Vec<(i32, i32)> {
            let (w, h) = (w as i32, h as i32);
            (0..h)
                .flat_map(|y| (0..w).map(move |x| (x, y)))
                .filter(|&(x, y)| on((y * w + x) as usize))
                .map(|(x, y)| (x - w / 2, y - h / 2))
                .collect()
        };
        Ok(Inputs {
            kernel,
            accessors,
            masks,
            params,
            mask_positions: kernel
                .masks
                .iter()
                .map(|m| grid(m.width, m.height, &|_| true))
                .collect(),
            domain_positions: kernel
                .domains
                .iter()
                .map(|d| grid(d.width, d.height, &|i| d.enabled.get(i) == Some(&true)))
                .collect(),
            origin: (space.x as i64, space.y as i64),
            extent: (space.width, space.height),
        })
    }

    /// The positions a window visits, row-major.
    fn positions(&self, w: Window) -> &[(i32, i32)] {
        match w {
            Window::Mask(i) => &self.mask_positions[i],
            Window::Domain(i) => &self.domain_positions[i],
        }
    }
}

/// A literal as one lane of type `ty`.
fn lane_value(l: ir::Literal, ty: ir::Type) -> Value {
    Value::from_literal(l, ty.scalar)
}

/// The value a `Constant` accessor returns outside its region.
fn constant_value(slot: &ir::AccessorSlot) -> Result<Value, String> {
    let ty = slot.pixel;
    if slot.boundary != BoundaryMode::Constant {
        return Ok(zero(ty));
    }
    let lanes: Vec<Value> = slot.constant.iter().map(|l| lane_value(*l, ty)).collect();
    match (ty.lanes, lanes.as_slice()) {
        (1, [v]) => Ok(*v),
        (4, [r, g, b, a]) => {
            let l = [r, g, b, a].map(|v| Scalar4::from_value(*v));
            match l {
                [Some(r), Some(g), Some(b), Some(a)] => Ok(Value::Vec4([r, g, b, a])),
                _ => Err(format!("accessor `{}`: bad constant", slot.name)),
            }
        }
        _ => Err(format!(
            "accessor `{}`: a Constant boundary needs {} value(s), got {}",
            slot.name,
            ty.lanes,
            lanes.len()
        )),
    }
}
