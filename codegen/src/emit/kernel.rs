//! The kernel skeleton: parameters, the per-block region dispatch, tile
//! staging, the pixels-per-thread loop and the output store, around the body
//! printed by `c_common`.
//!
//! ```c
//! static inline void hipacc_body_E(params…, int cl, int cr, int ct, int cb) {
//!     const int tx = …, ty = …, u0 = blockIdx.x * BX, v0 = blockIdx.y * ROWS, u = u0 + tx;
//!     /* stage tiles */ … barrier;
//!     for (int k = 0; k < PPT; ++k) {
//!         const int ly = ty + k * BY, v = v0 + ly;
//!         if (u < space_w && v < space_h) { const int gx = …, gy = …; body; out[…] = result; }
//!     }
//! }
//! kernel void E(params…) {
//!     if (fallback) hipacc_body_E(…, 1, 1, 1, 1);
//!     else if (top && left) hipacc_body_E(…, 1, 0, 1, 0);   /* TL */
//!     …
//!     else hipacc_body_E(…, 0, 0, 0, 0);                    /* interior */
//! }
//! ```
//!
//! A variant with local tiles stages them and waits at a barrier inside the
//! body; since every work-item must reach that barrier through the same
//! call, its entry calls the body once, with the block's edge flags as
//! run-time values:
//!
//! ```c
//! kernel void E(params…) { const int fb = …; hipacc_body_E(…, fb || l, fb || r, fb || t, fb || b); }
//! ```

use super::c_common::{c_type, sanitize, scalar_c, Helpers, Printer};
use super::dialect::Dialect;
use super::program::{ArgKind, ConstantSymbol, KernelArg, KernelInfo};
use super::reads::{AccessorSite, MaskSite, ReadCtx};
use crate::arch::Target;
use crate::config::{BoundaryScheme, Config, MaskHandling, MemoryKind};
use crate::passes::analysis::needs_checks;
use crate::passes::reach::{footprints, reaches};
use crate::vocab::Language;
use crate::Result;
use hipacc_core::ir::footprint::AffineFootprint;
use hipacc_core::ir::{Kernel, ScalarType};

/// The stable entry name: `<kernel>_<ir hash>_<variant key>`.
pub(crate) fn entry_name(k: &Kernel, c: &Config) -> String {
    format!("{}_{:016x}_{}", snake(&k.name), k.stable_hash(), c.key())
}

fn snake(name: &str) -> String {
    let mut s = String::new();
    for (i, ch) in name.chars().enumerate() {
        if ch.is_ascii_uppercase() && i > 0 {
            s.push('_');
        }
        s.push(ch.to_ascii_lowercase());
    }
    sanitize(&s)
}

fn arg(name: String, kind: ArgKind, c_type: String, scalar: Option<ScalarType>) -> KernelArg {
    KernelArg {
        name,
        kind,
        c_type,
        scalar,
    }
}

/// Prints one kernel variant; returns its text and description.
pub(crate) fn emit_kernel(
    d: &dyn Dialect,
    k: &Kernel,
    c: &Config,
    target: &Target,
    helpers: &mut Helpers,
) -> Result<(String, KernelInfo)> {
    let entry = entry_name(k, c);
    let fps = footprints(k);
    let reach = reaches(k);
    let i32t = Some(ScalarType::I32);
    let int = || "int".to_string();

    let mut args = vec![
        arg(
            "out".into(),
            ArgKind::OutputBuffer,
            d.global_ptr(&c_type(k.output), false),
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
        let n = format!("acc_{}", sanitize(&a.name));
        let mem = c.memory[i];
        let cty = c_type(a.pixel);
        let (kind, ty) = match mem {
            MemoryKind::Texture => (ArgKind::AccessorImage(i), d.image_param().to_string()),
            MemoryKind::ReadOnly => (ArgKind::AccessorBuffer(i), d.global_ptr(&cty, true)),
            _ => (ArgKind::AccessorBuffer(i), d.global_ptr(&cty, false)),
        };
        args.push(arg(n.clone(), kind, ty, None));
        args.push(arg(
            format!("{n}_stride"),
            ArgKind::AccessorStride(i),
            int(),
            i32t,
        ));
        args.push(arg(format!("{n}_x"), ArgKind::AccessorX(i), int(), i32t));
        args.push(arg(format!("{n}_y"), ArgKind::AccessorY(i), int(), i32t));
        args.push(arg(
            format!("{n}_w"),
            ArgKind::AccessorWidth(i),
            int(),
            i32t,
        ));
        args.push(arg(
            format!("{n}_h"),
            ArgKind::AccessorHeight(i),
            int(),
            i32t,
        ));
        let tile = match (mem, fps[i]) {
            (MemoryKind::LocalTile, Some(fp)) => {
                let (_, h, pitch) = c.tile_shape(target, a.pixel, fp);
                shared_bytes += pitch * h * a.pixel.size() as u32;
                Some((fp.min_dx, fp.min_dy, pitch))
            }
            _ => None,
        };
        sites.push(AccessorSite {
            c_name: n,
            pixel: a.pixel,
            mode: a.boundary,
            constant: a.constant.clone(),
            memory: mem,
            bounded: reach[i].is_some(),
            tile,
            interpolation: a.interpolation,
        });
    }
    for (i, p) in k.params.iter().enumerate() {
        args.push(arg(
            format!("prm_{}", sanitize(&p.name)),
            ArgKind::Param(i),
            c_type(p.ty),
            Some(p.ty.scalar),
        ));
    }
    let mut symbols = Vec::new();
    let mut masks = Vec::new();
    for (i, m) in k.masks.iter().enumerate() {
        let cty = c_type(m.ty);
        let len = (m.width * m.height) as usize;
        let c_name = match (c.masks, d.language()) {
            (MaskHandling::Literal, _) => format!("hipacc_{entry}_mask_{}", sanitize(&m.name)),
            (MaskHandling::ConstantMemory, Language::OpenCl) => {
                let n = format!("msk_{}", sanitize(&m.name));
                let ty = d.mask_param(&cty).unwrap_or_default();
                args.push(arg(n.clone(), ArgKind::MaskBuffer(i), ty, None));
                n
            }
            (MaskHandling::ConstantMemory, Language::Cuda | Language::Wgsl) => {
                let n = format!("hipacc_{entry}_{}", sanitize(&m.name));
                let decl = d.mask_symbol(&cty, &n, len);
                helpers.add(n.clone(), || decl);
                symbols.push(ConstantSymbol {
                    name: n.clone(),
                    mask: i,
                    bytes: len * m.ty.size(),
                });
                n
            }
        };
        masks.push(MaskSite {
            size: (m.width, m.height),
            ty: m.ty,
            coefficients: m.coefficients.clone(),
            handling: c.masks,
            c_name,
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
    let ctx = ReadCtx {
        entry: entry.clone(),
        accessors: sites,
        masks,
    };
    for (i, a) in ctx.accessors.iter().enumerate() {
        if a.memory != MemoryKind::LocalTile {
            let h = ctx.read_helper(d, i, false);
            helpers.add(ctx.read_helper_name(i, false), || h);
        } else {
            let h = ctx.read_helper(d, i, true);
            helpers.add(ctx.read_helper_name(i, true), || h);
        }
    }

    let checked: Vec<bool> = k.accessors.iter().map(needs_checks).collect();
    let mut text = super::header::comment(k, c, target, d.language(), &entry, &ctx, &reach);
    text.push_str(&body_function(d, k, c, &ctx, &args, helpers, &fps));
    text.push_str(&entry_function(d, c, &ctx, &args, &fps, &reach, &checked));
    text.push('\n');
    let info = KernelInfo {
        entry,
        kernel_name: k.name.clone(),
        ir_hash: k.stable_hash(),
        config: c.clone(),
        args,
        constant_symbols: symbols,
        footprints: fps,
        reaches: reach,
        shared_bytes,
        checked,
    };
    Ok((text, info))
}

/// The parameters of the entry (and body) function, declared.
fn param_list(args: &[KernelArg], extra: &[String]) -> String {
    let mut v: Vec<String> = args
        .iter()
        .filter(|a| {
            !matches!(
                a.kind,
                ArgKind::RegionLeft
                    | ArgKind::RegionRight
                    | ArgKind::RegionTop
                    | ArgKind::RegionBottom
            )
        })
        .map(|a| format!("{} {}", a.c_type, a.name))
        .collect();
    v.extend_from_slice(extra);
    v.join(",\n    ")
}

fn body_function(
    d: &dyn Dialect,
    k: &Kernel,
    c: &Config,
    ctx: &ReadCtx,
    args: &[KernelArg],
    helpers: &mut Helpers,
    fps: &[Option<crate::Footprint>],
) -> String {
    let (bx, by) = (c.block.x, c.block.y);
    let rows = c.rows_per_block();
    let ppt = c.pixels_per_thread.get();
    let mut extra: Vec<String> = ctx
        .accessors
        .iter()
        .filter(|a| a.tile.is_some())
        .map(|a| format!("{} tile_{}", d.local_ptr(&c_type(a.pixel)), a.c_name))
        .collect();
    extra.extend(["int cl", "int cr", "int ct", "int cb"].map(String::from));
    let mut s = format!(
        "{} void hipacc_body_{}(\n    {}) {{\n",
        d.func_decl(),
        ctx.entry,
        param_list(args, &extra)
    );
    s.push_str(&format!(
        "    const int tx = {}, ty = {};\n    const int u0 = {} * {bx}, v0 = {} * {rows};\n    const int u = u0 + tx;\n",
        d.local_id(0),
        d.local_id(1),
        d.group_id(0),
        d.group_id(1)
    ));
    let mut any_tile = false;
    for (i, a) in ctx.accessors.iter().enumerate() {
        let (Some((mx, my, pitch)), Some(fp)) = (a.tile, fps[i]) else {
            continue;
        };
        any_tile = true;
        let tw = bx + fp.width() - 1;
        let th = rows + fp.height() - 1;
        let flags = if a.mode == hipacc_core::BoundaryMode::Undefined {
            "1, 1, 1, 1"
        } else {
            "cl, cr, ct, cb"
        };
        s.push_str(&format!(
            "    /* Stage `{n}`: a {tw}x{th} tile (pitch {pitch}) of columns u0{mx:+}.., rows v0{my:+}.. */\n    for (int i = ty * {bx} + tx; i < {tw} * {th}; i += {threads}) {{\n        const int r = i / {tw}, c = i - r * {tw};\n        tile_{n}[r * {pitch} + c] = {h}({args}, u0 + ({mx}) + c, v0 + ({my}) + r, {flags});\n    }}\n",
            n = a.c_name,
            threads = bx * by,
            h = ctx.read_helper_name(i, true),
            args = ctx.read_args(i),
        ));
    }
    if any_tile {
        s.push_str(&format!("    {}\n", d.barrier()));
    }
    if ppt > 1 {
        s.push_str("#pragma unroll\n");
    }
    s.push_str(&format!(
        "    for (int k = 0; k < {ppt}; ++k) {{\n        const int ly = ty + k * {by};\n        const int v = v0 + ly;\n        if (u < space_w && v < space_h) {{\n            const int gx = space_x + u, gy = space_y + v;\n"
    ));
    let mut p = Printer::new(d, k, helpers, ctx, 3);
    let result = p
        .block(&k.body)
        .unwrap_or_else(|| super::c_common::literal(d, hipacc_core::ir::Literal::Int(0), k.output));
    p.line(&format!("out[gy * out_stride + gx] = {result};"));
    s.push_str(&p.out);
    s.push_str("        }\n    }\n}\n");
    let _ = scalar_c;
    s
}

fn entry_function(
    d: &dyn Dialect,
    c: &Config,
    ctx: &ReadCtx,
    args: &[KernelArg],
    fps: &[Option<crate::Footprint>],
    reach: &[Option<AffineFootprint>],
    checked: &[bool],
) -> String {
    let mut s = String::new();
    let mut decls = Vec::new();
    let mut call_args: Vec<String> = args
        .iter()
        .filter(|a| {
            !matches!(
                a.kind,
                ArgKind::RegionLeft
                    | ArgKind::RegionRight
                    | ArgKind::RegionTop
                    | ArgKind::RegionBottom
            )
        })
        .map(|a| a.name.clone())
        .collect();
    for (i, a) in ctx.accessors.iter().enumerate() {
        if let (Some((_, _, pitch)), Some(fp)) = (a.tile, fps[i]) {
            let th = c.rows_per_block() + fp.height() - 1;
            decls.push(d.local_array(&c_type(a.pixel), &format!("tile_{}", a.c_name), pitch * th));
            call_args.push(format!("tile_{}", a.c_name));
        }
    }
    let all = call_args.join(", ");
    let call = |flags: &str| format!("hipacc_body_{}({all}, {flags});", ctx.entry);
    s.push_str(&format!(
        "{} {}(\n    {}) {{\n",
        d.kernel_decl(),
        ctx.entry,
        param_list(
            args,
            &if c.boundary == BoundaryScheme::Regions {
                ["int rs_left", "int rs_right", "int rs_top", "int rs_bottom"]
                    .map(String::from)
                    .to_vec()
            } else {
                Vec::new()
            }
        )
    ));
    for decl in &decls {
        s.push_str(&format!("    {decl}\n"));
    }
    if c.boundary == BoundaryScheme::Generic {
        s.push_str(&format!("    {}\n}}\n", call("1, 1, 1, 1")));
        return s;
    }
    let bounded_checked = reach
        .iter()
        .zip(checked)
        .filter(|(_, &c)| c)
        .filter_map(|(r, _)| *r);
    let (mut has_x, mut has_y) = (false, false);
    for r in bounded_checked {
        has_x |= r.x.coef != 0.0 || r.x.lo != 0.0 || r.x.hi != 0.0;
        has_y |= r.y.coef != 0.0 || r.y.lo != 0.0 || r.y.hi != 0.0;
    }
    s.push_str(&format!(
        "    const int bx = {}, by = {};\n    const int l = bx < rs_left, r = bx >= rs_right, t = by < rs_top, b = by >= rs_bottom;\n",
        d.group_id(0),
        d.group_id(1)
    ));
    let mut fallback = "(l && r) || (t && b)".to_string();
    if !has_x {
        fallback.push_str(" || l || r");
    }
    if !has_y {
        fallback.push_str(" || t || b");
    }
    if ctx.accessors.iter().any(|a| a.tile.is_some()) {
        // Staging ends in a barrier, which every work-item must reach in
        // the same call (PoCL, like the OpenCL specification, requires
        // that): one call with this block's edge flags as run-time values
        // instead of one call site per region.
        s.push_str(&format!(
            "    const int fb = {fallback};\n    {}\n}}\n",
            call("fb || l, fb || r, fb || t, fb || b")
        ));
        return s;
    }
    s.push_str(&format!(
        "    if ({fallback}) {{ /* fallback: every check */\n        {}\n    }}",
        call("1, 1, 1, 1")
    ));
    let mut arms: Vec<(&str, &str, &str)> = Vec::new();
    if has_y {
        if has_x {
            arms.push(("t && l", "top left", "1, 0, 1, 0"));
            arms.push(("t && r", "top right", "0, 1, 1, 0"));
        }
        arms.push(("t", "top", "0, 0, 1, 0"));
        if has_x {
            arms.push(("b && l", "bottom left", "1, 0, 0, 1"));
            arms.push(("b && r", "bottom right", "0, 1, 0, 1"));
        }
        arms.push(("b", "bottom", "0, 0, 0, 1"));
    }
    if has_x {
        arms.push(("l", "left", "1, 0, 0, 0"));
        arms.push(("r", "right", "0, 1, 0, 0"));
    }
    for (cond, name, flags) in arms {
        s.push_str(&format!(
            " else if ({cond}) {{ /* {name} */\n        {}\n    }}",
            call(flags)
        ));
    }
    s.push_str(&format!(
        " else {{ /* interior: no checks */\n        {}\n    }}\n}}\n",
        call("0, 0, 0, 0")
    ));
    s
}
