//! The WGSL printer: kernels as WebGPU compute shaders (run through wgpu on
//! Vulkan, Metal or DirectX 12).
//!
//! WGSL is not a C dialect (no pointers to pass, no implicit conversions,
//! no `?:`), so this printer walks the IR itself; the semantics it spells
//! out are the C printer's (Rust's): wrapping integers, division by zero
//! giving 0, saturating float-to-integer casts, NaN-ignoring `min`/`max`,
//! `round` half away from zero.
//!
//! Layout of a kernel's resources, all in bind group 0:
//! - binding 0: a uniform struct of every scalar argument of
//!   [`KernelInfo::args`] in order (geometry `i32`, parameters in their
//!   type; `u8`/`u16` parameters widened to `u32`, `bool` as an `i32`),
//!   see [`wgsl_layout`];
//! - bindings 1..: every buffer argument in order (output, accessors, masks
//!   in constant memory) as a storage buffer.
//!
//! Images are storage buffers of tightly packed pixels: `array<f32>`,
//! `array<vec4<f32>>`, …; `u8` pixels are packed four to a `u32` word and
//! `u16` pixels two (an output of such pixels is written with atomic
//! and/or on its word, since neighbouring invocations share words),
//! `Rgba<u8>` is one word and `Rgba<u16>` a `vec2<u32>`. Buffer sizes are
//! rounded up to whole words by the runtime.
//!
//! An accessor in local memory is staged, tile plus halo, into a
//! `var<workgroup>` array of its pixels as the kernel computes them (`u8` and
//! `u16` lanes widened to `u32`, since workgroup memory has no narrower
//! type), followed by `workgroupBarrier()`; see [`tile_bytes`].
//!
//! Interpolating reads call a sample helper per accessor (module `interp`).
//!
//! Masks in constant memory are storage buffers of their coefficients as
//! the host lays them out: `u8` and `u16` coefficients packed in words like
//! pixels.
//!
//! Not printed yet (an error names them): texture memory and masks of
//! vector coefficients in constant memory.

mod interp;

use super::kernel::entry_name;
use super::program::{ArgKind, KernelArg, KernelInfo, Program};
use crate::arch::Target;
use crate::config::{BoundaryScheme, Config, MaskHandling, MemoryKind};
use crate::passes::analysis::{needs_checks, uses_f64};
use crate::passes::reach::{footprints, reaches};
use crate::vocab::Language;
use crate::{Error, Result};
use hipacc_core::ir::{
    BinaryOp, Block, Expr, ExprKind, Intrinsic, Kernel, Literal, ReduceOp, ScalarType, Stmt, Type,
    UnaryOp, VarId, Window,
};
use hipacc_core::{BoundaryMode, Interpolation};
use std::collections::HashMap;

use super::c_common::{is_simple, paren, sanitize, Helpers, Offset};

/// Where a kernel argument goes in the WGSL resource layout.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WgslSlot {
    /// A scalar in the uniform struct at binding 0, at this byte offset,
    /// this many bytes wide (4, or 8 for `f64`).
    Uniform {
        /// Byte offset in the struct.
        offset: usize,
        /// Width in bytes.
        size: usize,
    },
    /// A storage buffer at this binding of group 0.
    Binding(u32),
}

/// The resource layout of a WGSL kernel's arguments (in order) and the
/// uniform struct's size in bytes (a multiple of 16).
pub fn wgsl_layout(args: &[KernelArg]) -> (Vec<WgslSlot>, usize) {
    let mut offset = 0usize;
    let mut binding = 1u32;
    let mut slots = Vec::with_capacity(args.len());
    for a in args {
        match a.scalar {
            Some(s) => {
                let size = if s == ScalarType::F64 { 8 } else { 4 };
                offset = offset.next_multiple_of(size);
                slots.push(WgslSlot::Uniform { offset, size });
                offset += size;
            }
            None => {
                slots.push(WgslSlot::Binding(binding));
                binding += 1;
            }
        }
    }
    (slots, offset.next_multiple_of(16).max(16))
}

fn unsupported(k: &Kernel, c: &Config, target: &Target, reason: String) -> Error {
    Error::InvalidConfig {
        config: format!("{} of `{}`", c.key(), k.name),
        target: target.name.to_string(),
        reason: format!("WGSL: {reason}"),
    }
}

/// Prints kernels into one WGSL module.
pub(super) fn generate_batch(items: &[(&Kernel, &Config)], target: &Target) -> Result<Program> {
    let fp64 = items.iter().any(|(k, _)| uses_f64(k));
    let mut helpers = Helpers::default();
    let mut bodies = String::new();
    let mut kernels: Vec<KernelInfo> = Vec::new();
    for (k, c) in items {
        c.validate_for(k, target)?;
        if kernels.iter().any(|i| i.entry == entry_name(k, c)) {
            continue;
        }
        let (text, info) = emit(k, c, target, &mut helpers)?;
        bodies.push_str(&text);
        kernels.push(info);
    }
    let mut source =
        format!(
        "// hipacc: WGSL for target `{}` ({}). Generated; one entry point per variant below.\n{}",
        target.name,
        target.description,
        if fp64 { "// f64: needs the SHADER_F64 feature.\n" } else { "" }
    );
    source.push_str(PRELUDE);
    source.push_str(&helpers.text());
    source.push('\n');
    source.push_str(&bodies);
    Ok(Program {
        language: Language::Wgsl,
        target: target.name,
        source,
        kernels,
    })
}

/// Helpers every WGSL module starts with.
pub(super) const PRELUDE: &str = "\
// Boundary index maths (hipacc_core::boundary), exact at any distance; n >= 1.
fn hipacc_repeat(i: i32, n: i32) -> i32 {
    let m = i % n;
    return select(m, m + n, m < 0);
}
fn hipacc_mirror(i: i32, n: i32) -> i32 {
    let m = hipacc_repeat(i, 2 * n);
    return select(2 * n - 1 - m, m, m < n);
}
fn hipacc_mirror_interior(i: i32, n: i32) -> i32 {
    if (n == 1) { return 0; }
    let m = hipacc_repeat(i, 2 * (n - 1));
    return select(2 * (n - 1) - m, m, m < n);
}
fn hipacc_isnan_f32(x: f32) -> bool {
    return (bitcast<u32>(x) & 0x7fffffffu) > 0x7f800000u;
}

";

/// The WGSL name of a scalar type (`u8`, `u16` are held in `u32`).
pub(super) fn scalar_w(s: ScalarType) -> &'static str {
    match s {
        ScalarType::Bool => "bool",
        ScalarType::I32 => "i32",
        ScalarType::U8 | ScalarType::U16 | ScalarType::U32 => "u32",
        ScalarType::F32 => "f32",
        ScalarType::F64 => "f64",
    }
}

/// The WGSL name of a value type.
fn wty(t: Type) -> String {
    if t.lanes == 4 {
        format!("vec4<{}>", scalar_w(t.scalar))
    } else {
        scalar_w(t.scalar).to_string()
    }
}

/// A short name of a type for helper names: `f32`, `v4u8`.
fn tname(t: Type) -> String {
    let s = match t.scalar {
        ScalarType::Bool => "bool",
        ScalarType::U8 => "u8",
        ScalarType::U16 => "u16",
        ScalarType::I32 => "i32",
        ScalarType::U32 => "u32",
        ScalarType::F32 => "f32",
        ScalarType::F64 => "f64",
    };
    if t.lanes == 4 {
        format!("v4{s}")
    } else {
        s.to_string()
    }
}

/// The element type of an image's storage array.
fn storage_elem(pixel: Type) -> Option<String> {
    Some(match (pixel.scalar, pixel.lanes) {
        (ScalarType::Bool, _) => return None,
        (ScalarType::U8, 1) | (ScalarType::U16, 1) | (ScalarType::U8, 4) => "u32".into(),
        (ScalarType::U16, 4) => "vec2<u32>".into(),
        _ => wty(pixel),
    })
}

/// Lane `i` (an `i32` expression) of `buf`, an array of `u32` words
/// holding lanes of the narrow type `s` (`u8`: four to a word, `u16`: two)
/// as a `u32`.
pub(super) fn packed_lane(buf: &str, s: ScalarType, i: &str) -> String {
    let (per, bits, mask) = packing(s);
    let i = paren(i);
    format!("(({buf}[{i} / {per}] >> (u32({i} % {per}) * {bits}u)) & {mask})")
}

/// Lanes of the narrow type `s` per `u32` word, their width in bits and
/// mask.
pub(super) fn packing(s: ScalarType) -> (u32, u32, &'static str) {
    if s == ScalarType::U8 {
        (4, 8, "0xffu")
    } else {
        (2, 16, "0xffffu")
    }
}

/// Statements storing `v` (a `u32`) as lane `i` (an `i32` variable) of
/// `buf`, an `array<atomic<u32>>` of words holding lanes of the narrow type
/// `s`: atomic and/or on the lane's word, since neighbouring invocations
/// may write its other lanes.
pub(super) fn packed_store(buf: &str, s: ScalarType, i: &str, v: &str) -> [String; 4] {
    let (per, bits, mask) = packing(s);
    [
        format!("let sh = u32({i} % {per}) * {bits}u;"),
        format!("let ow = {i} / {per};"),
        format!("atomicAnd(&{buf}[ow], ~({mask} << sh));"),
        format!("atomicOr(&{buf}[ow], ({v} & {mask}) << sh);"),
    ]
}

/// Whether `x`, a float of type `s`, is NaN: `f32` by its bits, so that no
/// compiler folds the test away; `f64` (which has no `bitcast`) as
/// `!(x == x)`, since naga prints `!=` on floats as an ordered comparison,
/// false for NaN.
pub(super) fn is_nan(s: ScalarType, x: &str) -> String {
    if s == ScalarType::F32 {
        format!("hipacc_isnan_f32({x})")
    } else {
        format!("(!({x} == {x}))")
    }
}

/// The WGSL function `name(a, b)` of Rust's `min` (`max == false`) or
/// `max` on floats of type `s` (C's `fmin`, `fmax`): a NaN operand gives
/// the other.
pub(super) fn nan_ignoring_extreme(name: &str, s: ScalarType, max: bool) -> String {
    let (t, f) = (scalar_w(s), if max { "max" } else { "min" });
    let (na, nb) = (is_nan(s, "a"), is_nan(s, "b"));
    format!(
        "// Rust `{f}`: a NaN operand gives the other.\nfn {name}(a: {t}, b: {t}) -> {t} {{\n    if ({na}) {{ return b; }}\n    if ({nb}) {{ return a; }}\n    return {f}(a, b);\n}}\n"
    )
}

/// The mask of a narrow unsigned type, if any.
pub(super) fn narrow_mask(s: ScalarType) -> Option<&'static str> {
    match s {
        ScalarType::U8 => Some("0xffu"),
        ScalarType::U16 => Some("0xffffu"),
        _ => None,
    }
}

/// A literal of type `ty` as WGSL.
fn literal(lit: Literal, ty: Type) -> String {
    let s = scalar_literal(lit, ty.scalar);
    if ty.lanes == 4 {
        format!("{}({s})", wty(ty))
    } else {
        s
    }
}

/// A literal of scalar type `s` as WGSL.
pub(super) fn scalar_literal(lit: Literal, s: ScalarType) -> String {
    match s {
        ScalarType::Bool => if lit.as_i64() != 0 { "true" } else { "false" }.to_string(),
        ScalarType::I32 => {
            let v = lit.as_i64() as i32;
            if v < 0 {
                format!("i32({v})")
            } else {
                format!("{v}i")
            }
        }
        ScalarType::U32 => format!("{}u", lit.as_i64() as u32),
        ScalarType::U8 => format!("{}u", lit.as_i64() as u8),
        ScalarType::U16 => format!("{}u", lit.as_i64() as u16),
        ScalarType::F32 => {
            let v = lit.as_f64() as f32;
            if !v.is_finite() {
                format!("bitcast<f32>(0x{:08x}u)", v.to_bits())
            } else if v.is_sign_negative() {
                format!("({v:?}f)")
            } else {
                format!("{v:?}f")
            }
        }
        ScalarType::F64 => {
            let v = lit.as_f64();
            if !v.is_finite() {
                format!("f64(bitcast<f32>(0x{:08x}u))", (v as f32).to_bits())
            } else {
                format!("f64({v:?})")
            }
        }
    }
}

fn i32_lit(v: i64) -> String {
    literal(Literal::Int(v), Type::I32)
}

/// One accessor as this printer sees it.
struct Site {
    name: String,
    pixel: Type,
    mode: BoundaryMode,
    constant: Vec<Literal>,
    interpolation: Interpolation,
    bounded: bool,
    tile: Option<Tile>,
}

/// The workgroup tile of an accessor in local memory.
#[derive(Clone, Copy)]
struct Tile {
    /// The footprint's least offsets: tile column 0 is `u0 + min.0`, row 0
    /// is `v0 + min.1`.
    min: (i32, i32),
    /// Columns and rows staged.
    size: (u32, u32),
    /// Elements per tile row (`size.0` or more).
    pitch: u32,
}

/// Bytes of workgroup memory the tile of a `pixel` accessor with footprint
/// `fp` takes: the C printer's shape, with lanes of `u8` and `u16` widened
/// to `u32` words.
pub fn tile_bytes(c: &Config, target: &Target, pixel: Type, fp: crate::Footprint) -> u32 {
    let (_, h, pitch) = c.tile_shape(target, pixel, fp);
    pitch * h * workgroup_lane_bytes(pixel.scalar) * pixel.lanes as u32
}

/// Bytes of one lane of a pixel held in workgroup memory.
fn workgroup_lane_bytes(s: ScalarType) -> u32 {
    match s {
        ScalarType::U8 | ScalarType::U16 | ScalarType::Bool => 4,
        s => s.size() as u32,
    }
}

/// One mask.
struct MaskSite {
    size: (u32, u32),
    ty: Type,
    coefficients: Option<Vec<Literal>>,
    handling: MaskHandling,
    name: String,
}

impl MaskSite {
    /// Coefficient `i` (an `i32` expression, row-major) of the mask's
    /// array: a constant-memory buffer holds `u8` and `u16` coefficients
    /// packed in words as the host lays them out, a literal array holds
    /// them widened.
    fn at(&self, i: &str) -> String {
        match self.handling {
            MaskHandling::ConstantMemory if narrow_mask(self.ty.scalar).is_some() => {
                packed_lane(&self.name, self.ty.scalar, i)
            }
            _ => format!("{}[{i}]", self.name),
        }
    }
}

fn arg(name: String, kind: ArgKind, c_type: String, scalar: Option<ScalarType>) -> KernelArg {
    KernelArg {
        name,
        kind,
        c_type,
        scalar,
    }
}

fn emit(
    k: &Kernel,
    c: &Config,
    target: &Target,
    helpers: &mut Helpers,
) -> Result<(String, KernelInfo)> {
    let entry = entry_name(k, c);
    let fps = footprints(k);
    let reach = reaches(k);
    let i32t = Some(ScalarType::I32);
    let int = || "i32".to_string();
    let g = |n: &str| format!("hipacc_{entry}_{n}");
    let out_elem = storage_elem(k.output)
        .ok_or_else(|| unsupported(k, c, target, "bool output images".into()))?;
    let out_atomic = k.output.lanes == 1 && narrow_mask(k.output.scalar).is_some();
    let mut args = vec![
        arg(
            "out".into(),
            ArgKind::OutputBuffer,
            format!("array<{out_elem}>"),
            None,
        ),
        arg("out_stride".into(), ArgKind::OutputStride, int(), i32t),
        arg("space_x".into(), ArgKind::SpaceX, int(), i32t),
        arg("space_y".into(), ArgKind::SpaceY, int(), i32t),
        arg("space_w".into(), ArgKind::SpaceWidth, int(), i32t),
        arg("space_h".into(), ArgKind::SpaceHeight, int(), i32t),
    ];
    let mut sites = Vec::new();
    let mut shared_bytes = 0u32;
    for (i, a) in k.accessors.iter().enumerate() {
        match c.memory[i] {
            MemoryKind::Global | MemoryKind::ReadOnly | MemoryKind::LocalTile => {}
            m => {
                return Err(unsupported(
                    k,
                    c,
                    target,
                    format!("accessor `{}` in {m:?} memory is not printed yet", a.name),
                ))
            }
        }
        let n = format!("acc_{}", sanitize(&a.name));
        let elem =
            storage_elem(a.pixel).ok_or_else(|| unsupported(k, c, target, "bool images".into()))?;
        args.push(arg(
            n.clone(),
            ArgKind::AccessorBuffer(i),
            format!("array<{elem}>"),
            None,
        ));
        for (suffix, kind) in [
            ("stride", ArgKind::AccessorStride(i)),
            ("x", ArgKind::AccessorX(i)),
            ("y", ArgKind::AccessorY(i)),
            ("w", ArgKind::AccessorWidth(i)),
            ("h", ArgKind::AccessorHeight(i)),
        ] {
            args.push(arg(format!("{n}_{suffix}"), kind, int(), i32t));
        }
        let tile = match (c.memory[i], fps[i]) {
            (MemoryKind::LocalTile, Some(fp)) => {
                let (_, h, pitch) = c.tile_shape(target, a.pixel, fp);
                shared_bytes += tile_bytes(c, target, a.pixel, fp);
                Some(Tile {
                    min: (fp.min_dx, fp.min_dy),
                    size: (c.block.x + fp.width() - 1, h),
                    pitch,
                })
            }
            _ => None,
        };
        sites.push(Site {
            name: n,
            pixel: a.pixel,
            mode: a.boundary,
            constant: a.constant.clone(),
            interpolation: a.interpolation,
            bounded: reach[i].is_some(),
            tile,
        });
    }
    for (i, p) in k.params.iter().enumerate() {
        if p.ty.lanes != 1 {
            return Err(unsupported(
                k,
                c,
                target,
                format!("parameter `{}` of type {}", p.name, p.ty),
            ));
        }
        args.push(arg(
            format!("prm_{}", sanitize(&p.name)),
            ArgKind::Param(i),
            // A `bool` is passed as an `i32` (0 or 1), as to C.
            if p.ty.scalar == ScalarType::Bool {
                "i32".to_string()
            } else {
                scalar_w(p.ty.scalar).to_string()
            },
            Some(p.ty.scalar),
        ));
    }
    let mut masks = Vec::new();
    for (i, m) in k.masks.iter().enumerate() {
        let name = match c.masks {
            MaskHandling::Literal => g(&format!("mask_{}", sanitize(&m.name))),
            MaskHandling::ConstantMemory => {
                if m.ty.lanes != 1 {
                    return Err(unsupported(
                        k,
                        c,
                        target,
                        format!("mask `{}` of {} in constant memory", m.name, m.ty),
                    ));
                }
                let n = format!("msk_{}", sanitize(&m.name));
                args.push(arg(
                    n.clone(),
                    ArgKind::MaskBuffer(i),
                    format!("array<{}>", wty(m.ty)),
                    None,
                ));
                g(&n)
            }
        };
        masks.push(MaskSite {
            size: (m.width, m.height),
            ty: m.ty,
            coefficients: m.coefficients.clone(),
            handling: c.masks,
            name,
        });
    }
    if c.boundary == BoundaryScheme::Regions {
        for (n, kind) in [
            ("rs_left", ArgKind::RegionLeft),
            ("rs_right", ArgKind::RegionRight),
            ("rs_top", ArgKind::RegionTop),
            ("rs_bottom", ArgKind::RegionBottom),
        ] {
            args.push(arg(n.into(), kind, int(), i32t));
        }
    }

    // Resources.
    let (slots, _) = wgsl_layout(&args);
    let a_var = g("args");
    let mut text = format!(
        "// {entry}: kernel `{}`, IR hash {:016x}, variant {}, {} boundary, block {}x{}, {} pixel(s) per thread\n",
        k.name,
        k.stable_hash(),
        c.key(),
        match c.boundary {
            BoundaryScheme::Regions => "regions",
            BoundaryScheme::Generic => "generic",
        },
        c.block.x,
        c.block.y,
        c.pixels_per_thread.get()
    );
    text.push_str(&format!("struct HipaccArgs_{entry} {{\n"));
    for a in args.iter().filter(|a| a.scalar.is_some()) {
        text.push_str(&format!("    {}: {},\n", a.name, a.c_type));
    }
    text.push_str("}\n");
    text.push_str(&format!(
        "@group(0) @binding(0) var<uniform> {a_var}: HipaccArgs_{entry};\n"
    ));
    for (a, slot) in args.iter().zip(&slots) {
        let WgslSlot::Binding(b) = slot else { continue };
        let (access, ty) = match a.kind {
            ArgKind::OutputBuffer if out_atomic => ("read_write", "array<atomic<u32>>".into()),
            ArgKind::OutputBuffer => ("read_write", a.c_type.clone()),
            _ => ("read", a.c_type.clone()),
        };
        text.push_str(&format!(
            "@group(0) @binding({b}) var<storage, {access}> {}: {ty};\n",
            g(&a.name)
        ));
    }
    for m in &masks {
        if m.handling == MaskHandling::Literal {
            let values: Vec<String> = m
                .coefficients
                .iter()
                .flatten()
                .map(|v| literal(*v, m.ty))
                .collect();
            let n = values.len();
            text.push_str(&format!(
                "var<private> {}: array<{t}, {n}> = array<{t}, {n}>({});\n",
                m.name,
                values.join(", "),
                t = wty(m.ty)
            ));
        }
    }
    let ctx = Ctx {
        entry: entry.clone(),
        args: a_var.clone(),
        sites,
        masks,
    };
    for (i, a) in ctx.sites.iter().enumerate() {
        match a.tile {
            Some(t) => {
                text.push_str(&format!(
                    "var<workgroup> {}: array<{}, {}>;\n",
                    ctx.tile_name(i),
                    wty(a.pixel),
                    t.pitch * t.size.1
                ));
                text.push_str(&ctx.read_helper(i, true));
            }
            None => text.push_str(&ctx.read_helper(i, false)),
        }
    }

    // The body function.
    let (bx, by) = (c.block.x, c.block.y);
    let rows = c.rows_per_block();
    let ppt = c.pixels_per_thread.get();
    text.push_str(&format!(
        "fn hipacc_body_{entry}(tx: i32, ty: i32, bx: i32, by: i32, cl: bool, cr: bool, ct: bool, cb: bool) {{\n    let u0 = bx * {bx};\n    let v0 = by * {rows};\n    let u = u0 + tx;\n"
    ));
    text.push_str(&ctx.stage_tiles(bx, bx * by));
    text.push_str(&format!(
        "    for (var k: i32 = 0; k < {ppt}; k = k + 1) {{\n        let ly = ty + k * {by};\n        let v = v0 + ly;\n        if (u < {a_var}.space_w && v < {a_var}.space_h) {{\n            let gx = {a_var}.space_x + u;\n            let gy = {a_var}.space_y + v;\n"
    ));
    let mut p = Printer::new(k, helpers, &ctx, 3);
    let result = p
        .block(&k.body)
        .unwrap_or_else(|| literal(Literal::Int(0), k.output));
    let result = p.materialize(result, k.output);
    let out = g("out");
    let idx = format!("gy * {a_var}.out_stride + gx");
    match (k.output.scalar, k.output.lanes) {
        (ScalarType::U8, 1) | (ScalarType::U16, 1) => {
            p.line(&format!("let oi = {idx};"));
            for line in packed_store(&out, k.output.scalar, "oi", &result) {
                p.line(&line);
            }
        }
        (ScalarType::U8, 4) => p.line(&format!(
            "{out}[{idx}] = ({result}.x & 0xffu) | (({result}.y & 0xffu) << 8u) | (({result}.z & 0xffu) << 16u) | ({result}.w << 24u);"
        )),
        (ScalarType::U16, 4) => p.line(&format!(
            "{out}[{idx}] = vec2<u32>(({result}.x & 0xffffu) | ({result}.y << 16u), ({result}.z & 0xffffu) | ({result}.w << 16u));"
        )),
        _ => p.line(&format!("{out}[{idx}] = {result};")),
    }
    text.push_str(&p.out);
    text.push_str("        }\n    }\n}\n");

    // The entry point: picks the region of this workgroup.
    text.push_str(&format!(
        "@compute @workgroup_size({bx}, {by}, 1)\nfn {entry}(@builtin(local_invocation_id) lid: vec3<u32>, @builtin(workgroup_id) wid: vec3<u32>) {{\n    let bx = i32(wid.x);\n    let by = i32(wid.y);\n"
    ));
    let call =
        |flags: &str| format!("hipacc_body_{entry}(i32(lid.x), i32(lid.y), bx, by, {flags});");
    let checked: Vec<bool> = k.accessors.iter().map(needs_checks).collect();
    let tiled = ctx.sites.iter().any(|a| a.tile.is_some());
    if c.boundary == BoundaryScheme::Generic {
        text.push_str(&format!("    {}\n}}\n\n", call("true, true, true, true")));
    } else {
        let (mut has_x, mut has_y) = (false, false);
        for r in reach
            .iter()
            .zip(&checked)
            .filter(|(_, &c)| c)
            .filter_map(|(r, _)| *r)
        {
            has_x |= r.x.coef != 0.0 || r.x.lo != 0.0 || r.x.hi != 0.0;
            has_y |= r.y.coef != 0.0 || r.y.lo != 0.0 || r.y.hi != 0.0;
        }
        text.push_str(&format!(
            "    let l = bx < {a_var}.rs_left;\n    let r = bx >= {a_var}.rs_right;\n    let t = by < {a_var}.rs_top;\n    let b = by >= {a_var}.rs_bottom;\n"
        ));
        let mut fallback = "(l && r) || (t && b)".to_string();
        if !has_x {
            fallback.push_str(" || l || r");
        }
        if !has_y {
            fallback.push_str(" || t || b");
        }
        if tiled {
            // Staging ends in a barrier, which the whole workgroup must
            // reach in uniform control flow: one call with this
            // workgroup's edge flags as run-time values instead of one call
            // site per region.
            text.push_str(&format!(
                "    let fb = {fallback};\n    {}\n}}\n\n",
                call("fb || l, fb || r, fb || t, fb || b")
            ));
        } else {
            text.push_str(&format!(
                "    if ({fallback}) {{ // fallback: every check\n        {}\n    }}",
                call("true, true, true, true")
            ));
            let mut arms: Vec<(&str, &str, &str)> = Vec::new();
            if has_y {
                if has_x {
                    arms.push(("t && l", "top left", "true, false, true, false"));
                    arms.push(("t && r", "top right", "false, true, true, false"));
                }
                arms.push(("t", "top", "false, false, true, false"));
                if has_x {
                    arms.push(("b && l", "bottom left", "true, false, false, true"));
                    arms.push(("b && r", "bottom right", "false, true, false, true"));
                }
                arms.push(("b", "bottom", "false, false, false, true"));
            }
            if has_x {
                arms.push(("l", "left", "true, false, false, false"));
                arms.push(("r", "right", "false, true, false, false"));
            }
            for (cond, name, flags) in arms {
                text.push_str(&format!(
                    " else if ({cond}) {{ // {name}\n        {}\n    }}",
                    call(flags)
                ));
            }
            text.push_str(&format!(
                " else {{ // interior: no checks\n        {}\n    }}\n}}\n\n",
                call("false, false, false, false")
            ));
        }
    }
    let info = KernelInfo {
        entry,
        kernel_name: k.name.clone(),
        ir_hash: k.stable_hash(),
        config: c.clone(),
        args,
        constant_symbols: Vec::new(),
        footprints: fps,
        reaches: reach,
        shared_bytes,
        checked,
    };
    Ok((text, info))
}

/// Everything reads and mask coefficients print from.
struct Ctx {
    entry: String,
    /// The uniform struct variable.
    args: String,
    sites: Vec<Site>,
    masks: Vec<MaskSite>,
}

impl Ctx {
    fn read_name(&self, i: usize) -> String {
        format!("hipacc_read_{}_{}", self.entry, self.sites[i].name)
    }

    fn tile_name(&self, i: usize) -> String {
        format!("hipacc_{}_tile_{}", self.entry, self.sites[i].name)
    }

    fn stage_name(&self, i: usize) -> String {
        format!("hipacc_stage_{}_{}", self.entry, self.sites[i].name)
    }

    // tile[(ly + dy - min_dy) * pitch + tx + dx - min_dx]   or
    // hipacc_read_E_acc(u + dx, v + dy, cl, cr, ct, cb)
    fn read(&self, i: usize, dx: Offset, dy: Offset) -> String {
        if let Some(t) = self.sites[i].tile {
            let col = add_to(&moved(dx, -i64::from(t.min.0)), "tx");
            let row = add_to(&moved(dy, -i64::from(t.min.1)), "ly");
            return format!("{}[({row}) * {} + {col}]", self.tile_name(i), t.pitch);
        }
        let flags = if self.sites[i].bounded {
            "cl, cr, ct, cb"
        } else {
            "true, true, true, true"
        };
        format!(
            "{}({}, {}, {flags})",
            self.read_name(i),
            add_to(&dx, "u"),
            add_to(&dy, "v")
        )
    }

    /// The statements that fill every tile of the workgroup, `threads`
    /// invocations sharing the elements, then wait for all of them.
    fn stage_tiles(&self, bx: u32, threads: u32) -> String {
        let mut s = String::new();
        for (i, a) in self.sites.iter().enumerate() {
            let Some(t) = a.tile else { continue };
            let (tw, th) = t.size;
            let (mx, my) = t.min;
            let flags = if a.mode == BoundaryMode::Undefined {
                "true, true, true, true"
            } else {
                "cl, cr, ct, cb"
            };
            s.push_str(&format!(
                "    // Stage `{n}`: a {tw}x{th} tile (pitch {pitch}) of columns u0{mx:+}.., rows v0{my:+}..\n    for (var i: i32 = ty * {bx} + tx; i < {len}; i = i + {threads}) {{\n        let r = i / {tw};\n        let c = i - r * {tw};\n        {tile}[r * {pitch} + c] = {stage}(u0 + ({mx}) + c, v0 + ({my}) + r, {flags});\n    }}\n",
                n = a.name,
                pitch = t.pitch,
                len = tw * th,
                tile = self.tile_name(i),
                stage = self.stage_name(i),
            ));
        }
        if !s.is_empty() {
            s.push_str("    workgroupBarrier();\n");
        }
        s
    }

    /// Accessor `i`'s read helper: boundary index maths, then the load
    /// (unpacking narrow pixels). `stage` makes the staging variant, which
    /// clamps an `Undefined` accessor (a tile also covers pixels no output
    /// reads).
    fn read_helper(&self, i: usize, stage: bool) -> String {
        let a = &self.sites[i];
        let mode = if stage && a.mode == BoundaryMode::Undefined {
            BoundaryMode::Clamp
        } else {
            a.mode
        };
        let (n, args) = (&a.name, &self.args);
        let buf = format!("hipacc_{}_{n}", self.entry);
        let ty = wty(a.pixel);
        let mut body = String::new();
        let (lx, ly) = (
            "(cl && p < 0) || (cr && p >= w)",
            "(ct && q < 0) || (cb && q >= h)",
        );
        match mode {
            BoundaryMode::Undefined => {}
            BoundaryMode::Constant => {
                let lanes: Vec<String> = a
                    .constant
                    .iter()
                    .map(|l| scalar_literal(*l, a.pixel.scalar))
                    .collect();
                let c = if a.pixel.lanes == 4 && lanes.len() == 4 {
                    format!("{ty}({})", lanes.join(", "))
                } else {
                    lanes
                        .first()
                        .map(|l| {
                            if a.pixel.lanes == 4 {
                                format!("{ty}({l})")
                            } else {
                                l.clone()
                            }
                        })
                        .unwrap_or_else(|| literal(Literal::Int(0), a.pixel))
                };
                body.push_str(&format!("    if ({lx} || {ly}) {{ return {c}; }}\n"));
            }
            BoundaryMode::Clamp => {
                body.push_str(
                    "    if (cl && p < 0) { p = 0; }\n    if (cr && p >= w) { p = w - 1; }\n",
                );
                body.push_str(
                    "    if (ct && q < 0) { q = 0; }\n    if (cb && q >= h) { q = h - 1; }\n",
                );
            }
            BoundaryMode::Repeat | BoundaryMode::Mirror | BoundaryMode::MirrorInterior => {
                let f = match mode {
                    BoundaryMode::Repeat => "hipacc_repeat",
                    BoundaryMode::Mirror => "hipacc_mirror",
                    _ => "hipacc_mirror_interior",
                };
                body.push_str(&format!(
                    "    if ({lx}) {{ p = {f}(p, w); }}\n    if ({ly}) {{ q = {f}(q, h); }}\n"
                ));
            }
        }
        let index = format!("({args}.{n}_y + q) * {args}.{n}_stride + {args}.{n}_x + p");
        let load = match (a.pixel.scalar, a.pixel.lanes) {
            (ScalarType::U8 | ScalarType::U16, 1) => packed_lane(&buf, a.pixel.scalar, "i"),
            (ScalarType::U8, 4) => format!(
                "vec4<u32>({buf}[i] & 0xffu, ({buf}[i] >> 8u) & 0xffu, ({buf}[i] >> 16u) & 0xffu, {buf}[i] >> 24u)"
            ),
            (ScalarType::U16, 4) => format!(
                "vec4<u32>({buf}[i].x & 0xffffu, {buf}[i].x >> 16u, {buf}[i].y & 0xffffu, {buf}[i].y >> 16u)"
            ),
            _ => format!("{buf}[i]"),
        };
        format!(
            "// Reads accessor `{n}` ({:?}) at region position (p, q); cl/cr/ct/cb: check the left/right/top/bottom edge.\nfn {}(p0: i32, q0: i32, cl: bool, cr: bool, ct: bool, cb: bool) -> {ty} {{\n    var p = p0;\n    var q = q0;\n    let w = {args}.{n}_w;\n    let h = {args}.{n}_h;\n{body}    let i = {index};\n    return {load};\n}}\n",
            mode,
            if stage {
                self.stage_name(i)
            } else {
                self.read_name(i)
            }
        )
    }

    // 0.0625f   or   mask[(dy + 2) * 5 + dx + 2] through a helper
    fn mask(&self, p: &mut Printer, m: usize, dx: Offset, dy: Offset) -> String {
        let s = &self.masks[m];
        let (w, h) = (s.size.0 as i64, s.size.1 as i64);
        let (hw, hh) = (w / 2, h / 2);
        if let (Offset::Const(x), Offset::Const(y)) = (&dx, &dy) {
            if x.abs() > hw || y.abs() > hh {
                return literal(Literal::Int(0), s.ty);
            }
            let idx = ((y + hh) * w + x + hw) as usize;
            if s.handling == MaskHandling::Literal {
                if let Some(c) = s.coefficients.as_ref().and_then(|c| c.get(idx)) {
                    return literal(*c, s.ty);
                }
            }
            return s.at(&idx.to_string());
        }
        let name = format!("hipacc_coef_{}", s.name);
        let ty = wty(s.ty);
        let zero = literal(Literal::Int(0), s.ty);
        let text = format!(
            "// Coefficient of mask `{}` at offset (dx, dy) from its centre; 0 outside.\nfn {name}(dx: i32, dy: i32) -> {ty} {{\n    if (dx < -{hw} || dx > {hw} || dy < -{hh} || dy > {hh}) {{ return {zero}; }}\n    let i = (dy + {hh}) * {w} + dx + {hw};\n    return {};\n}}\n",
            s.name,
            s.at("i")
        );
        let h = p.helpers.add(name, || text);
        format!("{h}({}, {})", off_expr(dx), off_expr(dy))
    }
}

fn off_expr(o: Offset) -> String {
    match o {
        Offset::Const(v) => i32_lit(v),
        Offset::Expr(e) => e,
    }
}

/// `o + by`, folded.
fn moved(o: Offset, by: i64) -> Offset {
    match o {
        Offset::Const(v) => Offset::Const(v + by),
        Offset::Expr(e) if by == 0 => Offset::Expr(e),
        Offset::Expr(e) => Offset::Expr(format!("{} + {}", paren(&e), i32_lit(by))),
    }
}

/// `base + offset`, folded.
fn add_to(o: &Offset, base: &str) -> String {
    match o {
        Offset::Const(0) => base.to_string(),
        Offset::Const(v) if *v > 0 => format!("{base} + {v}"),
        Offset::Const(v) => format!("{base} - {}", -v),
        Offset::Expr(e) => format!("{base} + {}", paren(e)),
    }
}

/// Prints IR statements and expressions into WGSL statements.
struct Printer<'a> {
    k: &'a Kernel,
    helpers: &'a mut Helpers,
    reads: &'a Ctx,
    out: String,
    indent: usize,
    tmp: u32,
    consts: HashMap<VarId, i64>,
}

/// Windows with more positions than this are printed as a loop.
const UNROLL_MAX_POSITIONS: usize = 64;

impl<'a> Printer<'a> {
    fn new(k: &'a Kernel, helpers: &'a mut Helpers, reads: &'a Ctx, indent: usize) -> Self {
        Printer {
            k,
            helpers,
            reads,
            out: String::new(),
            indent,
            tmp: 0,
            consts: HashMap::new(),
        }
    }

    fn line(&mut self, s: &str) {
        for _ in 0..self.indent {
            self.out.push_str("    ");
        }
        self.out.push_str(s);
        self.out.push('\n');
    }

    fn fresh(&mut self) -> String {
        self.tmp += 1;
        format!("t{}", self.tmp)
    }

    fn var_name(&self, v: VarId) -> String {
        let base = self
            .k
            .vars
            .get(v.0 as usize)
            .map(|i| sanitize(&i.name))
            .unwrap_or_else(|| "v".to_string());
        format!("{}_{}", base.trim_start_matches('_'), v.0)
    }

    fn var_type(&self, v: VarId) -> Type {
        self.k.vars.get(v.0 as usize).map_or(Type::I32, |i| i.ty)
    }

    fn block(&mut self, b: &Block) -> Option<String> {
        for s in &b.stmts {
            self.stmt(s);
        }
        b.result.as_ref().map(|e| self.expr(e))
    }

    fn scoped_block(&mut self, b: &Block, target: Option<&str>) {
        self.indent += 1;
        let r = self.block(b);
        if let (Some(t), Some(r)) = (target, r) {
            self.line(&format!("{t} = {r};"));
        }
        self.indent -= 1;
    }

    fn stmt(&mut self, s: &Stmt) {
        match s {
            Stmt::Let { var, value } => {
                let v = self.expr(value);
                let decl = format!(
                    "var {}: {} = {v};",
                    self.var_name(*var),
                    wty(self.var_type(*var))
                );
                self.consts.remove(var);
                self.line(&decl);
            }
            Stmt::Assign { var, value } => {
                let v = self.expr(value);
                let line = format!("{} = {v};", self.var_name(*var));
                self.line(&line);
            }
            Stmt::If { cond, then, els } => {
                let c = self.expr(cond);
                self.line(&format!("if ({c}) {{"));
                self.scoped_block(then, None);
                if els.stmts.is_empty() && els.result.is_none() {
                    self.line("}");
                } else {
                    self.line("} else {");
                    self.scoped_block(els, None);
                    self.line("}");
                }
            }
            Stmt::For {
                var,
                start,
                end,
                body,
            } => {
                let n = self.var_name(*var);
                let (s, e) = (i32_lit(*start as i64), i32_lit(*end as i64));
                self.line(&format!(
                    "for (var {n}: i32 = {s}; {n} < {e}; {n} = {n} + 1) {{"
                ));
                self.scoped_block(body, None);
                self.line("}");
            }
            Stmt::Iterate {
                window,
                dx,
                dy,
                body,
            } => {
                let positions = crate::passes::window::positions(self.k, *window);
                if let Some(shape) = rolled(self.k, *window, positions.len()) {
                    self.open_rolled(*dx, *dy, shape, 0);
                    self.block(body);
                    self.indent -= 1;
                    self.line("}");
                    return;
                }
                for (px, py) in positions {
                    self.open_position(*dx, *dy, px, py);
                    self.block(body);
                    self.close_position(*dx, *dy);
                }
            }
            Stmt::Expr(e) => {
                let s = self.expr(e);
                if !is_simple(&s) {
                    self.line(&format!("_ = {s};"));
                }
            }
        }
    }

    fn open_position(&mut self, dx: VarId, dy: VarId, px: i32, py: i32) {
        self.line(&format!("{{ // dx = {px}, dy = {py}"));
        self.indent += 1;
        let (nx, ny) = (self.var_name(dx), self.var_name(dy));
        self.line(&format!(
            "let {nx} = {};\n{}let {ny} = {};",
            i32_lit(px as i64),
            "    ".repeat(self.indent),
            i32_lit(py as i64)
        ));
        self.consts.insert(dx, px as i64);
        self.consts.insert(dy, py as i64);
    }

    fn open_rolled(&mut self, dx: VarId, dy: VarId, shape: (u32, u32), first: usize) {
        let i = self.fresh();
        let (nx, ny) = (self.var_name(dx), self.var_name(dy));
        self.line(&format!(
            "for (var {i}: i32 = {first}; {i} < {}; {i} = {i} + 1) {{",
            shape.0 * shape.1
        ));
        self.indent += 1;
        self.line(&format!(
            "let {nx} = {i} % {w} - {hw};\n{}let {ny} = {i} / {w} - {hh};",
            "    ".repeat(self.indent),
            w = shape.0,
            hw = shape.0 / 2,
            hh = shape.1 / 2
        ));
    }

    fn close_position(&mut self, dx: VarId, dy: VarId) {
        self.consts.remove(&dx);
        self.consts.remove(&dy);
        self.indent -= 1;
        self.line("}");
    }

    fn materialize(&mut self, s: String, ty: Type) -> String {
        if is_simple(&s) {
            return s;
        }
        let t = self.fresh();
        self.line(&format!("let {t}: {} = {s};", wty(ty)));
        t
    }

    fn operands(&mut self, es: &[&Expr]) -> Vec<String> {
        let mut out: Vec<(String, Type)> = Vec::new();
        for e in es {
            let before = self.out.len();
            let s = self.expr(e);
            if self.out.len() != before {
                let indent = "    ".repeat(self.indent);
                let mut inserted = String::new();
                for (prev, ty) in out.iter_mut() {
                    if !is_simple(prev) {
                        self.tmp += 1;
                        let t = format!("t{}", self.tmp);
                        inserted.push_str(&format!("{indent}let {t}: {} = {prev};\n", wty(*ty)));
                        *prev = t;
                    }
                }
                self.out.insert_str(before, &inserted);
            }
            out.push((s, e.ty));
        }
        out.into_iter().map(|(s, _)| s).collect()
    }

    fn expr(&mut self, e: &Expr) -> String {
        match &e.kind {
            ExprKind::Const(l) => literal(*l, e.ty),
            ExprKind::Param(i) => {
                let p = &self.k.params[*i];
                let field = format!("{}.prm_{}", self.reads.args, sanitize(&p.name));
                if p.ty.scalar == ScalarType::Bool {
                    format!("({field} != 0i)")
                } else {
                    field
                }
            }
            ExprKind::Var(v) => match self.consts.get(v) {
                Some(c) => i32_lit(*c),
                None => self.var_name(*v),
            },
            ExprKind::X => "gx".to_string(),
            ExprKind::Y => "gy".to_string(),
            ExprKind::Read { acc, dx, dy } => {
                let (ox, oy) = (self.offset(dx), self.offset(dy));
                if self.reads.sites[*acc].interpolation != Interpolation::None {
                    return interp::sample(self, *acc, ox, oy);
                }
                self.reads.read(*acc, ox, oy)
            }
            ExprKind::MaskCoef { mask, dx, dy } => {
                let (ox, oy) = (self.offset(dx), self.offset(dy));
                let reads = self.reads;
                reads.mask(self, *mask, ox, oy)
            }
            ExprKind::Unary { op, arg } => {
                let a = self.expr(arg);
                self.unary(*op, arg.ty, a)
            }
            ExprKind::Binary { op, lhs, rhs } => self.binary(*op, lhs, rhs, e.ty),
            ExprKind::Call { func, args } => {
                let refs: Vec<&Expr> = args.iter().collect();
                let a = self.operands(&refs);
                let tys: Vec<Type> = args.iter().map(|x| x.ty).collect();
                self.call(*func, &tys, e.ty, a)
            }
            ExprKind::If { cond, then, els } => {
                let c = self.expr(cond);
                let t = self.fresh();
                self.line(&format!("var {t}: {};", wty(e.ty)));
                self.line(&format!("if ({c}) {{"));
                self.scoped_block(then, Some(&t));
                self.line("} else {");
                self.scoped_block(els, Some(&t));
                self.line("}");
                t
            }
            ExprKind::Cast(arg) => {
                let a = self.expr(arg);
                self.cast(arg.ty, e.ty, a)
            }
            ExprKind::Reduce {
                window,
                op,
                dx,
                dy,
                body,
            } => self.reduce(*window, *op, *dx, *dy, body, e.ty),
            ExprKind::Lane { arg, lane } => {
                let a = self.expr(arg);
                let l = ["x", "y", "z", "w"][(*lane as usize).min(3)];
                format!("{}.{l}", paren(&a))
            }
            ExprKind::MakeVec(args) => {
                let refs: Vec<&Expr> = args.iter().collect();
                let a = self.operands(&refs);
                format!("{}({})", wty(e.ty), a.join(", "))
            }
        }
    }

    fn offset(&mut self, e: &Expr) -> Offset {
        match self.fold(e) {
            Some(v) => Offset::Const(v),
            None => Offset::Expr(self.expr(e)),
        }
    }

    fn fold(&self, e: &Expr) -> Option<i64> {
        match &e.kind {
            ExprKind::Const(Literal::Int(v)) => Some(*v),
            ExprKind::Var(v) => self.consts.get(v).copied(),
            ExprKind::Unary {
                op: UnaryOp::Neg,
                arg,
            } => self.fold(arg).map(|v| -v),
            ExprKind::Binary { op, lhs, rhs } if e.ty == Type::I32 => {
                let (a, b) = (self.fold(lhs)?, self.fold(rhs)?);
                let r = match op {
                    BinaryOp::Add => a + b,
                    BinaryOp::Sub => a - b,
                    BinaryOp::Mul => a * b,
                    _ => return None,
                };
                (r.abs() < (1 << 30)).then_some(r)
            }
            _ => None,
        }
    }

    fn binary(&mut self, op: BinaryOp, lhs: &Expr, rhs: &Expr, ty: Type) -> String {
        let logical = lhs.ty == Type::BOOL && matches!(op, BinaryOp::And | BinaryOp::Or);
        if logical {
            let a = self.expr(lhs);
            let saved = std::mem::take(&mut self.out);
            self.indent += 1;
            let b = self.expr(rhs);
            self.indent -= 1;
            let inner = std::mem::replace(&mut self.out, saved);
            let sym = if op == BinaryOp::And { "&&" } else { "||" };
            if inner.is_empty() {
                return format!("({a} {sym} {b})");
            }
            let t = self.fresh();
            self.line(&format!("var {t}: bool = {a};"));
            let test = if op == BinaryOp::And {
                t.clone()
            } else {
                format!("!{t}")
            };
            self.line(&format!("if ({test}) {{"));
            self.out.push_str(&inner);
            self.indent += 1;
            self.line(&format!("{t} = {b};"));
            self.indent -= 1;
            self.line("}");
            return t;
        }
        let v = self.operands(&[lhs, rhs]);
        self.binop(op, lhs.ty, rhs.ty, ty, v[0].clone(), v[1].clone())
    }

    /// A lane-wise vector helper built from the scalar printer.
    fn vec_helper(
        &mut self,
        name: String,
        params: &[(Type, &str)],
        result: Type,
        lane: impl Fn(&mut Printer, &[String]) -> String,
    ) -> String {
        let mut lanes = Vec::with_capacity(4);
        for l in ["x", "y", "z", "w"] {
            let args: Vec<String> = params
                .iter()
                .map(|(t, n)| {
                    if t.lanes == 4 {
                        format!("{n}.{l}")
                    } else {
                        n.to_string()
                    }
                })
                .collect();
            lanes.push(lane(self, &args));
        }
        let ps: Vec<String> = params
            .iter()
            .map(|(t, n)| format!("{n}: {}", wty(*t)))
            .collect();
        let rt = wty(result);
        let text = format!(
            "fn {name}({}) -> {rt} {{\n    return {rt}({});\n}}\n",
            ps.join(", "),
            lanes.join(", ")
        );
        self.helpers.add(name, || text)
    }

    fn unary(&mut self, op: UnaryOp, ty: Type, a: String) -> String {
        if ty.lanes == 4 {
            let s = Type::scalar(ty.scalar);
            let name = format!(
                "hipacc_{}_{}",
                if op == UnaryOp::Neg { "neg" } else { "not" },
                tname(ty)
            );
            let h = self.vec_helper(name, &[(ty, "a")], ty, |p, args| {
                p.unary(op, s, args[0].clone())
            });
            return format!("{h}({a})");
        }
        let pa = paren(&a);
        match (op, ty.scalar) {
            (UnaryOp::Neg, ScalarType::I32) => format!("(-{pa})"),
            (UnaryOp::Neg, s) if s.is_int() => match narrow_mask(s) {
                Some(m) => format!("((0u - {pa}) & {m})"),
                None => format!("(0u - {pa})"),
            },
            (UnaryOp::Neg, _) => format!("(-{pa})"),
            (UnaryOp::Not, ScalarType::Bool) => format!("(!{pa})"),
            (UnaryOp::Not, s) => match narrow_mask(s) {
                Some(m) => format!("((~{pa}) & {m})"),
                None => format!("(~{pa})"),
            },
        }
    }

    fn binop(
        &mut self,
        op: BinaryOp,
        lt: Type,
        rt: Type,
        ty: Type,
        a: String,
        b: String,
    ) -> String {
        if lt.lanes == 4 || rt.lanes == 4 {
            let (ls, rs) = (Type::scalar(lt.scalar), Type::scalar(rt.scalar));
            let rs_ty = Type::scalar(ty.scalar);
            let name = format!("hipacc_{}_{}_{}", op_name(op), tname(lt), tname(rt));
            let h = self.vec_helper(name, &[(lt, "a"), (rt, "b")], ty, |p, args| {
                p.binop(op, ls, rs, rs_ty, args[0].clone(), args[1].clone())
            });
            return format!("{h}({a}, {b})");
        }
        let s = lt.scalar;
        let (pa, pb) = (paren(&a), paren(&b));
        let sym = match op {
            BinaryOp::Add => "+",
            BinaryOp::Sub => "-",
            BinaryOp::Mul => "*",
            BinaryOp::Div => "/",
            BinaryOp::Rem => "%",
            BinaryOp::And => "&",
            BinaryOp::Or => "|",
            BinaryOp::BitXor => "^",
            BinaryOp::Shl => "<<",
            BinaryOp::Shr => ">>",
            BinaryOp::Eq => "==",
            BinaryOp::Ne => "!=",
            BinaryOp::Lt => "<",
            BinaryOp::Le => "<=",
            BinaryOp::Gt => ">",
            BinaryOp::Ge => ">=",
        };
        if op.is_comparison() {
            return format!("({pa} {sym} {pb})");
        }
        let wrap = |e: String| match narrow_mask(s) {
            Some(m) => format!("({e} & {m})"),
            None => e,
        };
        match op {
            BinaryOp::And | BinaryOp::Or if s == ScalarType::Bool => {
                let sym = if op == BinaryOp::And { "&&" } else { "||" };
                format!("({pa} {sym} {pb})")
            }
            BinaryOp::BitXor if s == ScalarType::Bool => format!("({pa} != {pb})"),
            BinaryOp::Rem if s.is_float() => {
                let h = self.fmod_helper(s);
                format!("{h}({a}, {b})")
            }
            _ if s.is_float() => format!("({pa} {sym} {pb})"),
            BinaryOp::Add | BinaryOp::Sub | BinaryOp::Mul => wrap(format!("({pa} {sym} {pb})")),
            BinaryOp::Div | BinaryOp::Rem => {
                let h = self.div_helper(op, s);
                format!("{h}({a}, {b})")
            }
            BinaryOp::Shl | BinaryOp::Shr => {
                let bits = s.size() * 8 - 1;
                wrap(format!("({pa} {sym} (u32({pb}) & {bits}u))"))
            }
            _ => format!("({pa} {sym} {pb})"),
        }
    }

    fn fmod_helper(&mut self, s: ScalarType) -> String {
        let t = scalar_w(s);
        let name = format!("hipacc_rem_{t}");
        let text = format!(
            "// Rust `%` on {t}: the remainder with the dividend's sign.\nfn {name}(a: {t}, b: {t}) -> {t} {{\n    return a - b * trunc(a / b);\n}}\n"
        );
        self.helpers.add(name, || text)
    }

    fn div_helper(&mut self, op: BinaryOp, s: ScalarType) -> String {
        let t = scalar_w(s);
        let name = format!("hipacc_{}_{t}", op_name(op));
        let sym = if op == BinaryOp::Div { "/" } else { "%" };
        let body = if s == ScalarType::I32 {
            let overflow = if op == BinaryOp::Div { "a" } else { "0" };
            format!("if (b == 0) {{ return 0; }}\n    if (a == i32(-2147483648) && b == -1) {{ return {overflow}; }}\n    return a {sym} b;")
        } else {
            format!("if (b == 0u) {{ return 0u; }}\n    return a {sym} b;")
        };
        let text = format!(
            "// Rust `{sym}` on {t}; division by zero gives 0 instead of a panic.\nfn {name}(a: {t}, b: {t}) -> {t} {{\n    {body}\n}}\n"
        );
        self.helpers.add(name, || text)
    }

    fn call(&mut self, func: Intrinsic, tys: &[Type], ty: Type, args: Vec<String>) -> String {
        if tys.iter().any(|t| t.lanes == 4) {
            let names = ["a", "b", "c"];
            let params: Vec<(Type, &str)> = tys.iter().copied().zip(names).collect();
            let scalars: Vec<Type> = tys.iter().map(|t| Type::scalar(t.scalar)).collect();
            let st = Type::scalar(ty.scalar);
            let name = format!(
                "hipacc_{}_{}",
                func.signature().0,
                tys.iter().map(|t| tname(*t)).collect::<Vec<_>>().join("_")
            );
            let h = self.vec_helper(name, &params, ty, |p, a| {
                p.call(func, &scalars, st, a.to_vec())
            });
            return format!("{h}({})", args.join(", "));
        }
        let s = tys.first().map_or(ty.scalar, |t| t.scalar);
        let j = args.join(", ");
        let t = scalar_w(s);
        if s.is_float() {
            let f = match func {
                Intrinsic::Abs => "abs",
                Intrinsic::Sqrt => "sqrt",
                Intrinsic::Exp => "exp",
                Intrinsic::Exp2 => "exp2",
                Intrinsic::Ln => "log",
                Intrinsic::Log2 => "log2",
                Intrinsic::Powf => "pow",
                Intrinsic::Sin => "sin",
                Intrinsic::Cos => "cos",
                Intrinsic::Tan => "tan",
                Intrinsic::Atan => "atan",
                Intrinsic::Atan2 => "atan2",
                Intrinsic::Floor => "floor",
                Intrinsic::Ceil => "ceil",
                Intrinsic::MulAdd => "fma",
                _ => {
                    let h = self.float_helper(func, s);
                    return format!("{h}({j})");
                }
            };
            return format!("{f}({j})");
        }
        let name = format!("hipacc_{}_{}", func.signature().0, tname(Type::scalar(s)));
        let text = match func {
            Intrinsic::Min => format!("fn {name}(a: {t}, b: {t}) -> {t} {{\n    return min(a, b);\n}}\n"),
            Intrinsic::Max => format!("fn {name}(a: {t}, b: {t}) -> {t} {{\n    return max(a, b);\n}}\n"),
            Intrinsic::Clamp => format!(
                "fn {name}(x: {t}, lo: {t}, hi: {t}) -> {t} {{\n    return select(select(x, hi, x > hi), lo, x < lo);\n}}\n"
            ),
            Intrinsic::Abs if s == ScalarType::I32 => {
                format!("// Rust `wrapping_abs`.\nfn {name}(a: i32) -> i32 {{\n    return select(a, -a, a < 0);\n}}\n")
            }
            Intrinsic::Abs => format!("fn {name}(a: {t}) -> {t} {{\n    return a;\n}}\n"),
            Intrinsic::Signum if s == ScalarType::I32 => format!(
                "fn {name}(a: i32) -> i32 {{\n    return select(select(0, -1, a < 0), 1, a > 0);\n}}\n"
            ),
            Intrinsic::Signum => {
                format!("fn {name}(a: {t}) -> {t} {{\n    return select(0u, 1u, a > 0u);\n}}\n")
            }
            Intrinsic::Powi => {
                let wrap = narrow_mask(s).map_or(String::new(), |m| format!(" & {m}"));
                format!(
                    "// Rust `wrapping_pow`.\nfn {name}(x: {t}, n: i32) -> {t} {{\n    var r: u32 = 1u;\n    var b: u32 = u32(x);\n    for (var e: u32 = u32(n); e != 0u; e = e >> 1u) {{\n        if ((e & 1u) != 0u) {{ r = r * b; }}\n        b = b * b;\n    }}\n    return {t}(r{wrap});\n}}\n"
                )
            }
            _ => return format!("{t}(0) /* {} is not defined on {t} */", func.signature().0),
        };
        let h = self.helpers.add(name, || text);
        format!("{h}({j})")
    }

    fn float_helper(&mut self, func: Intrinsic, s: ScalarType) -> String {
        let t = scalar_w(s);
        let name = format!("hipacc_{}_{t}", func.signature().0);
        let nan = |x: &str| is_nan(s, x);
        let text = match func {
            Intrinsic::Min | Intrinsic::Max => {
                nan_ignoring_extreme(&name, s, func == Intrinsic::Max)
            }
            Intrinsic::Clamp => format!(
                "// Rust `clamp`: NaN stays NaN.\nfn {name}(x: {t}, lo: {t}, hi: {t}) -> {t} {{\n    return select(select(x, hi, x > hi), lo, x < lo);\n}}\n"
            ),
            Intrinsic::Signum => format!(
                "// Rust `signum`: NaN stays NaN, -0.0 gives -1.\nfn {name}(x: {t}) -> {t} {{\n    if ({}) {{ return x; }}\n    return select({t}(1.0), {t}(-1.0), x < {t}(0.0) || (x == {t}(0.0) && {t}(1.0) / x < {t}(0.0)));\n}}\n",
                nan("x")
            ),
            Intrinsic::Round => format!(
                "// Rust `round`: half away from zero.\nfn {name}(x: {t}) -> {t} {{\n    let r = trunc(x);\n    if (abs(x - r) >= {t}(0.5)) {{ return r + sign(x); }}\n    return r;\n}}\n"
            ),
            Intrinsic::Log10 => format!(
                "fn {name}(x: {t}) -> {t} {{\n    return log2(x) * {t}(0.30102999566398119521);\n}}\n"
            ),
            Intrinsic::Hypot => format!(
                "fn {name}(a: {t}, b: {t}) -> {t} {{\n    let m = max(abs(a), abs(b));\n    if (m == {t}(0.0)) {{ return m; }}\n    let x = a / m;\n    let y = b / m;\n    return m * sqrt(x * x + y * y);\n}}\n"
            ),
            _ => format!(
                "// Rust `powi`: repeated squaring.\nfn {name}(x0: {t}, n: i32) -> {t} {{\n    var x = x0;\n    var r: {t} = {t}(1.0);\n    var e: u32 = select(u32(n), 0u - u32(n), n < 0);\n    while (e != 0u) {{\n        if ((e & 1u) != 0u) {{ r = r * x; }}\n        x = x * x;\n        e = e >> 1u;\n    }}\n    return select(r, {t}(1.0) / r, n < 0);\n}}\n"
            ),
        };
        self.helpers.add(name, || text)
    }

    fn cast(&mut self, from: Type, to: Type, a: String) -> String {
        if from == to {
            return a;
        }
        if from.lanes == 4 || to.lanes == 4 {
            let (fs, ts) = (Type::scalar(from.scalar), Type::scalar(to.scalar));
            let name = format!("hipacc_cast_{}_{}", tname(from), tname(to));
            let h = self.vec_helper(name, &[(from, "a")], to, |p, args| {
                p.cast(fs, ts, args[0].clone())
            });
            return format!("{h}({a})");
        }
        let (f, t) = (from.scalar, to.scalar);
        if f.is_float() && t.is_int() {
            let (fw, tw) = (scalar_w(f), scalar_w(t));
            let name = format!("hipacc_cvt_{}_{}", tname(from), tname(to));
            let (lo, hi, lo_f, hi_f) = match t {
                ScalarType::U8 => ("0u", "255u", "0.0", "255.0"),
                ScalarType::U16 => ("0u", "65535u", "0.0", "65535.0"),
                ScalarType::U32 => ("0u", "4294967295u", "0.0", "4294967295.0"),
                _ => (
                    "i32(-2147483648)",
                    "2147483647i",
                    "-2147483648.0",
                    "2147483647.0",
                ),
            };
            let nan = is_nan(f, "v");
            let text = format!(
                "// Rust `as {}`: saturating, NaN gives 0.\nfn {name}(v: {fw}) -> {tw} {{\n    if ({nan}) {{ return {tw}(0); }}\n    if (v <= {fw}({lo_f})) {{ return {lo}; }}\n    if (v >= {fw}({hi_f})) {{ return {hi}; }}\n    return {tw}(v);\n}}\n",
                t.rust_name()
            );
            let h = self.helpers.add(name, || text);
            return format!("{h}({a})");
        }
        if t == ScalarType::Bool {
            return format!("({} != {})", paren(&a), literal(Literal::Int(0), from));
        }
        match narrow_mask(t) {
            // Widening from a narrower unsigned type needs no mask.
            Some(_) if f == ScalarType::Bool || (f == ScalarType::U8 && t == ScalarType::U16) => {
                format!("u32({a})")
            }
            Some(m) => format!("(u32({a}) & {m})"),
            None => format!("{}({a})", scalar_w(t)),
        }
    }

    fn reduce(
        &mut self,
        window: Window,
        op: ReduceOp,
        dx: VarId,
        dy: VarId,
        body: &Block,
        ty: Type,
    ) -> String {
        let t = self.fresh();
        let positions = crate::passes::window::positions(self.k, window);
        let zero = literal(Literal::Int(0), ty);
        self.line(&format!(
            "var {t}: {} = {zero}; // {op:?} over {} positions",
            wty(ty),
            positions.len()
        ));
        let shape = rolled(self.k, window, positions.len());
        for (i, (px, py)) in positions.into_iter().enumerate() {
            match shape {
                Some(shape) if i == 1 => self.open_rolled(dx, dy, shape, 1),
                Some(_) if i > 1 => break,
                _ => self.open_position(dx, dy, px, py),
            }
            let v = self.block(body).unwrap_or_else(|| zero.clone());
            let combined = if i == 0 {
                v
            } else {
                let v = self.materialize(v, ty);
                match op {
                    ReduceOp::Sum => self.binop(BinaryOp::Add, ty, ty, ty, t.clone(), v),
                    ReduceOp::Prod => self.binop(BinaryOp::Mul, ty, ty, ty, t.clone(), v),
                    ReduceOp::Min => self.call(Intrinsic::Min, &[ty, ty], ty, vec![t.clone(), v]),
                    ReduceOp::Max => self.call(Intrinsic::Max, &[ty, ty], ty, vec![t.clone(), v]),
                }
            };
            self.line(&format!("{t} = {combined};"));
            self.close_position(dx, dy);
        }
        t
    }
}

fn op_name(op: BinaryOp) -> &'static str {
    match op {
        BinaryOp::Add => "add",
        BinaryOp::Sub => "sub",
        BinaryOp::Mul => "mul",
        BinaryOp::Div => "div",
        BinaryOp::Rem => "rem",
        BinaryOp::And => "and",
        BinaryOp::Or => "or",
        BinaryOp::BitXor => "xor",
        BinaryOp::Shl => "shl",
        BinaryOp::Shr => "shr",
        BinaryOp::Eq => "eq",
        BinaryOp::Ne => "ne",
        BinaryOp::Lt => "lt",
        BinaryOp::Le => "le",
        BinaryOp::Gt => "gt",
        BinaryOp::Ge => "ge",
    }
}

/// `Some((width, height))` when `window` prints as a loop.
fn rolled(k: &Kernel, window: Window, positions: usize) -> Option<(u32, u32)> {
    let (width, height) = match window {
        Window::Mask(i) => k.masks.get(i).map(|m| (m.width, m.height))?,
        Window::Domain(i) => k.domains.get(i).map(|d| (d.width, d.height))?,
    };
    let full = positions == (width * height) as usize;
    (full && positions > UNROLL_MAX_POSITIONS).then_some((width, height))
}
