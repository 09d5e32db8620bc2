//! The comment above each kernel listing its variant's features.

use super::reads::ReadCtx;
use crate::arch::Target;
use crate::config::{BoundaryScheme, Config, MaskHandling, MemoryKind};
use crate::vocab::Language;
use hipacc_core::ir::footprint::{AffineAxis, AffineFootprint};
use hipacc_core::ir::Kernel;

// /*
//  * kernel `Jacobi`, IR hash 0123…, variant reg_b32x8_p4_mlr_kl
//  * …
//  */
pub(super) fn comment(
    k: &Kernel,
    c: &Config,
    target: &Target,
    language: Language,
    entry: &str,
    ctx: &ReadCtx,
    reach: &[Option<AffineFootprint>],
) -> String {
    let mut s = format!(
        "/*\n * {entry}\n * kernel `{}`, IR hash {:016x}, variant {}\n * target: {} ({}), {}\n",
        k.name,
        k.stable_hash(),
        c.key(),
        target.name,
        target.description,
        language.name()
    );
    s.push_str(&format!(
        " * boundary: {}\n",
        match c.boundary {
            BoundaryScheme::Regions => "regions (9 border regions + interior + fallback, chosen per block from region starts)",
            BoundaryScheme::Generic => "generic (checks on every read)",
        }
    ));
    for (i, a) in k.accessors.iter().enumerate() {
        let fp = match reach[i] {
            Some(f) => format!("footprint x {}, y {}", axis(f.x, "x"), axis(f.y, "y")),
            None => "footprint unbounded".to_string(),
        };
        let mem = match (c.memory[i], ctx.accessors[i].tile) {
            (MemoryKind::LocalTile, Some((_, _, pitch))) => {
                format!("local tile (row pitch {pitch})")
            }
            (MemoryKind::Global, _) => "global".into(),
            (MemoryKind::ReadOnly, _) => "read-only path".into(),
            (MemoryKind::Texture, _) => match language {
                Language::OpenCl => "image2d_t".into(),
                Language::Cuda | Language::Wgsl => "texture object".into(),
            },
            (MemoryKind::LocalTile, None) => "local tile".into(),
        };
        s.push_str(&format!(
            " * accessor `{}`: {} pixels, {:?} boundary, {mem}, {fp}\n",
            a.name, a.pixel, a.boundary
        ));
    }
    s.push_str(&format!(
        " * block: {}x{} threads, {} pixel(s) per thread: {}x{} pixels per block\n",
        c.block.x,
        c.block.y,
        c.pixels_per_thread.get(),
        c.block.x,
        c.rows_per_block()
    ));
    if !k.masks.is_empty() {
        s.push_str(&format!(
            " * masks: {}\n",
            match c.masks {
                MaskHandling::Literal => "literal coefficients, windows unrolled",
                MaskHandling::ConstantMemory =>
                    "constant memory, given at launch; windows unrolled",
            }
        ));
    }
    s.push_str(" */\n");
    s
}

/// `lo..=hi` for constant offsets (as before affine ones were known, so
/// their sources are unchanged), `coef*x + lo..=hi` otherwise.
fn axis(a: AffineAxis, coordinate: &str) -> String {
    // `+ 0.0` prints a negative zero as `0`.
    let (lo, hi) = (a.lo + 0.0, a.hi + 0.0);
    if a.coef == 0.0 {
        format!("{lo}..={hi}")
    } else {
        format!("{}*{coordinate} + {lo}..={hi}", a.coef)
    }
}
