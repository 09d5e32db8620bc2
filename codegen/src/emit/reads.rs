//! How accessor reads and mask coefficients print, per memory kind and mask
//! handling. Boundary index maths is printed once per accessor as a read
//! helper whose edge flags are compile-time constants at every call site.

use super::c_common::{c_type, i_lit, literal, Offset, Printer};
use super::dialect::Dialect;
use crate::config::{MaskHandling, MemoryKind};
use crate::vocab::Language;
use hipacc_core::ir::{Literal, Type};
use hipacc_core::{BoundaryMode, Interpolation};

/// One accessor as the printer sees it.
pub(crate) struct AccessorSite {
    /// Parameter base name (`acc_input`).
    pub(crate) c_name: String,
    /// Pixel type.
    pub(crate) pixel: Type,
    /// Boundary mode.
    pub(crate) mode: BoundaryMode,
    /// The constant of `Constant`, one literal per lane.
    pub(crate) constant: Vec<Literal>,
    /// Memory kind.
    pub(crate) memory: MemoryKind,
    /// The footprint is bounded (else every read checks every edge).
    pub(crate) bounded: bool,
    /// For tiles: `(min_dx, min_dy, pitch)`.
    pub(crate) tile: Option<(i32, i32, u32)>,
    /// How reads between pixels are weighed (`None`: whole pixels).
    pub(crate) interpolation: Interpolation,
}

/// One mask as the printer sees it.
pub(crate) struct MaskSite {
    /// Width and height.
    pub(crate) size: (u32, u32),
    /// Coefficient type.
    pub(crate) ty: Type,
    /// Literal coefficients (for `Literal` handling).
    pub(crate) coefficients: Option<Vec<Literal>>,
    /// How the coefficients reach the kernel.
    pub(crate) handling: MaskHandling,
    /// The constant array, parameter or symbol holding them.
    pub(crate) c_name: String,
}

/// Everything reads and mask coefficients print from.
pub(crate) struct ReadCtx {
    /// Kernel entry name (prefix of helper names).
    pub(crate) entry: String,
    /// Accessors in slot order.
    pub(crate) accessors: Vec<AccessorSite>,
    /// Masks in slot order.
    pub(crate) masks: Vec<MaskSite>,
}

impl ReadCtx {
    /// The name of accessor `i`'s read helper.
    pub(crate) fn read_helper_name(&self, i: usize, tile_load: bool) -> String {
        format!(
            "hipacc_{}_{}_{}",
            if tile_load { "stage" } else { "read" },
            self.entry,
            self.accessors[i].c_name
        )
    }

    /// The arguments every read helper call of accessor `i` starts with.
    pub(crate) fn read_args(&self, i: usize) -> String {
        let n = &self.accessors[i].c_name;
        format!("{n}, {n}_stride, {n}_x, {n}_y, {n}_w, {n}_h")
    }

    // tile[(ly + dy - min_dy) * pitch + tx + dx - min_dx]   or
    // hipacc_read_<entry>_<acc>(args, u + dx, v + dy, cl, cr, ct, cb)
    pub(crate) fn read(&self, p: &mut Printer, i: usize, dx: Offset, dy: Offset) -> String {
        let a = &self.accessors[i];
        if a.interpolation != Interpolation::None {
            return self.sample(p, i, dx, dy);
        }
        if let (MemoryKind::LocalTile, Some((mx, my, pitch))) = (a.memory, a.tile) {
            let col = shift(&dx, -(mx as i64)).add_to("tx");
            let row = shift(&dy, -(my as i64)).add_to("ly");
            return format!("tile_{}[({row}) * {pitch} + {col}]", a.c_name);
        }
        let flags = if a.bounded {
            "cl, cr, ct, cb"
        } else {
            "1, 1, 1, 1"
        };
        let _ = p;
        format!(
            "{}({}, {}, {}, {flags})",
            self.read_helper_name(i, false),
            self.read_args(i),
            dx.add_to("u"),
            dy.add_to("v")
        )
    }

    // hipacc_sample_<entry>_<acc>(args, u, v, dx, dy, space_w, space_h)
    fn sample(&self, p: &mut Printer, i: usize, dx: Offset, dy: Offset) -> String {
        let a = &self.accessors[i];
        let d = p.d;
        let (taps, taps_def, kernel) = super::interp::taps_helper(d, a.interpolation);
        if let Some((k, def)) = kernel {
            p.helpers.add(k, || def);
        }
        p.helpers.add(taps.clone(), || taps_def);
        let read = self.read_helper_name(i, false);
        let site = super::interp::SampleSite {
            name: format!("hipacc_sample_{}_{}", self.entry, a.c_name),
            read: &read,
            buf_ty: self.buffer_type(d, i),
            acc: &a.c_name,
            pixel: a.pixel,
            mode: a.interpolation,
            taps,
        };
        let def = super::interp::sample_helper(d, &site);
        let name = p.helpers.add(site.name.clone(), || def);
        let off = |o: Offset| match o {
            Offset::Const(v) => i_lit(v as i32),
            Offset::Expr(e) => e,
        };
        format!(
            "{name}({}, u, v, {}, {}, space_w, space_h)",
            self.read_args(i),
            off(dx),
            off(dy)
        )
    }

    /// The parameter type of accessor `i`'s buffer in helpers.
    fn buffer_type(&self, d: &dyn Dialect, i: usize) -> String {
        let a = &self.accessors[i];
        let cty = c_type(a.pixel);
        match a.memory {
            MemoryKind::Texture => d.image_param().to_string(),
            MemoryKind::ReadOnly => d.global_ptr(&cty, true),
            MemoryKind::Global | MemoryKind::LocalTile => d.global_ptr(&cty, false),
        }
    }

    // 0.0625f   or   hipacc_coef_<entry>_<mask>(dx, dy)   or   msk[(dy + 2) * 5 + dx + 2]
    pub(crate) fn mask(&self, p: &mut Printer, m: usize, dx: Offset, dy: Offset) -> String {
        let s = &self.masks[m];
        let (w, h) = (s.size.0 as i64, s.size.1 as i64);
        let (hw, hh) = (w / 2, h / 2);
        if let (Offset::Const(x), Offset::Const(y)) = (&dx, &dy) {
            if x.abs() > hw || y.abs() > hh {
                return literal(p.d, Literal::Int(0), s.ty);
            }
            let idx = ((y + hh) * w + x + hw) as usize;
            if s.handling == MaskHandling::Literal {
                if let Some(c) = s.coefficients.as_ref().and_then(|c| c.get(idx)) {
                    return literal(p.d, *c, s.ty);
                }
            }
            return format!("{}[{idx}]", s.c_name);
        }
        let name = format!("hipacc_coef_{}_{}", self.entry, s.c_name);
        let cty = c_type(s.ty);
        let d = p.d;
        let pass_ptr =
            s.handling == MaskHandling::ConstantMemory && d.language() == Language::OpenCl;
        if s.handling == MaskHandling::Literal {
            let values: Vec<String> = s
                .coefficients
                .iter()
                .flatten()
                .map(|c| literal(d, *c, s.ty))
                .collect();
            let arr = d.const_array(&cty, &s.c_name, &values);
            p.helpers.add(s.c_name.clone(), || arr);
        }
        let ptr_param = if pass_ptr {
            format!("{} m, ", d.mask_param(&cty).unwrap_or_default())
        } else {
            String::new()
        };
        let arr = if pass_ptr {
            "m".to_string()
        } else {
            s.c_name.clone()
        };
        let decl = d.func_decl();
        let zero = literal(d, Literal::Int(0), s.ty);
        let text = format!(
            "/* Coefficient of mask `{}` at offset (dx, dy) from its centre; 0 outside. */\n{decl} {cty} {name}({ptr_param}int dx, int dy) {{\n    if (dx < -{hw} || dx > {hw} || dy < -{hh} || dy > {hh}) return {zero};\n    return {arr}[(dy + {hh}) * {w} + dx + {hw}];\n}}\n",
            s.c_name
        );
        let h = p.helpers.add(name, || text);
        let ex = match dx {
            Offset::Const(v) => i_lit(v as i32),
            Offset::Expr(e) => e,
        };
        let ey = match dy {
            Offset::Const(v) => i_lit(v as i32),
            Offset::Expr(e) => e,
        };
        if pass_ptr {
            format!("{h}({}, {ex}, {ey})", s.c_name)
        } else {
            format!("{h}({ex}, {ey})")
        }
    }

    /// The read helper of accessor `i`: boundary index maths, then the load.
    /// `tile_load` makes the staging variant, which clamps an `Undefined`
    /// accessor (a tile also covers pixels no output reads).
    pub(crate) fn read_helper(&self, d: &dyn Dialect, i: usize, tile_load: bool) -> String {
        let a = &self.accessors[i];
        let name = self.read_helper_name(i, tile_load);
        let cty = c_type(a.pixel);
        let buf_ty = self.buffer_type(d, i);
        let mode = if tile_load && a.mode == BoundaryMode::Undefined {
            BoundaryMode::Clamp
        } else {
            a.mode
        };
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
                    .map(|l| literal(d, *l, Type::scalar(a.pixel.scalar)))
                    .collect();
                let c = if a.pixel.lanes == 4 && lanes.len() == 4 {
                    d.make_vec(
                        &cty,
                        &[
                            lanes[0].clone(),
                            lanes[1].clone(),
                            lanes[2].clone(),
                            lanes[3].clone(),
                        ],
                    )
                } else {
                    lanes
                        .first()
                        .cloned()
                        .unwrap_or_else(|| literal(d, Literal::Int(0), a.pixel))
                };
                body.push_str(&format!("    if ({lx} || {ly}) return {c};\n"));
            }
            BoundaryMode::Clamp => {
                body.push_str("    if (cl && p < 0) p = 0;\n    if (cr && p >= w) p = w - 1;\n");
                body.push_str("    if (ct && q < 0) q = 0;\n    if (cb && q >= h) q = h - 1;\n");
            }
            BoundaryMode::Repeat | BoundaryMode::Mirror | BoundaryMode::MirrorInterior => {
                let f = match mode {
                    BoundaryMode::Repeat => "hipacc_repeat",
                    BoundaryMode::Mirror => "hipacc_mirror",
                    _ => "hipacc_mirror_interior",
                };
                body.push_str(&format!(
                    "    if ({lx}) p = {f}(p, w);\n    if ({ly}) q = {f}(q, h);\n"
                ));
            }
        }
        let index = "(y + q) * stride + x + p";
        let load = match a.memory {
            MemoryKind::Texture => d.image_read(a.pixel, "buf", "x + p", "y + q", index),
            MemoryKind::ReadOnly => d.load("buf", index, true),
            _ => d.load("buf", index, false),
        };
        format!(
            "/* Reads accessor `{}` ({mode:?}) at region position (p, q); cl/cr/ct/cb: check the left/right/top/bottom edge. */\n{} {cty} {name}({buf_ty} buf, int stride, int x, int y, int w, int h, int p, int q, int cl, int cr, int ct, int cb) {{\n{body}    return {load};\n}}\n",
            a.c_name,
            d.func_decl()
        )
    }
}

/// `off + by` for constants; an expression offset gets `+ by` appended.
fn shift(off: &Offset, by: i64) -> Offset {
    match off {
        Offset::Const(v) => Offset::Const(v + by),
        Offset::Expr(e) if by == 0 => Offset::Expr(e.clone()),
        Offset::Expr(e) if by > 0 => Offset::Expr(format!("{} + {by}", super::c_common::paren(e))),
        Offset::Expr(e) => Offset::Expr(format!("{} - {}", super::c_common::paren(e), -by)),
    }
}
