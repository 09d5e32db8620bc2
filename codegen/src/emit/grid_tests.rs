//! Reads of finer and coarser grids (a restriction's `2x + i`, a
//! prolongation's `x / 2`) have affine footprints: their region variants
//! leave the interior blocks without bounds checks, on OpenCL and CUDA,
//! and the host's region starts keep every read of those blocks inside.

use super::*;
use crate::arch::Target;
use crate::config::Config;
use crate::config::{BoundaryScheme, PixelsPerThread};
use crate::test_kernels as tk;
use crate::BlockShape;
use hipacc_core::ir::Kernel;
use hipacc_core::Rect;

/// The dispatch of a region variant with a 32x4 block over four pixels per
/// thread, as both grids' kernels print it: every region, interior last.
const DISPATCH: &str =
    "    const int l = bx < rs_left, r = bx >= rs_right, t = by < rs_top, b = by >= rs_bottom;
    if ((l && r) || (t && b)) { /* fallback: every check */
        hipacc_body_ENTRY(ARGS, 1, 1, 1, 1);
    } else if (t && l) { /* top left */
        hipacc_body_ENTRY(ARGS, 1, 0, 1, 0);
    } else if (t && r) { /* top right */
        hipacc_body_ENTRY(ARGS, 0, 1, 1, 0);
    } else if (t) { /* top */
        hipacc_body_ENTRY(ARGS, 0, 0, 1, 0);
    } else if (b && l) { /* bottom left */
        hipacc_body_ENTRY(ARGS, 1, 0, 0, 1);
    } else if (b && r) { /* bottom right */
        hipacc_body_ENTRY(ARGS, 0, 1, 0, 1);
    } else if (b) { /* bottom */
        hipacc_body_ENTRY(ARGS, 0, 0, 0, 1);
    } else if (l) { /* left */
        hipacc_body_ENTRY(ARGS, 1, 0, 0, 0);
    } else if (r) { /* right */
        hipacc_body_ENTRY(ARGS, 0, 1, 0, 0);
    } else { /* interior: no checks */
        hipacc_body_ENTRY(ARGS, 0, 0, 0, 0);
    }
}
";

fn region_config() -> Config {
    Config {
        boundary: BoundaryScheme::Regions,
        pixels_per_thread: PixelsPerThread::Four,
        ..Config::uniform(1, BlockShape { x: 32, y: 4 })
    }
}

/// The printed dispatch of `k`'s region variant, with the entry name and
/// the forwarded arguments replaced by `ENTRY` and `ARGS`.
fn dispatch(k: &Kernel, target: &str, language: Language) -> (String, Program) {
    let t = Target::by_name(target).unwrap_or_else(|| panic!("no target {target}"));
    let p = generate(k, &region_config(), t, language).unwrap_or_else(|e| panic!("{e}"));
    let entry = &p.kernels[0].entry;
    let start = p
        .source
        .find("    const int l = bx")
        .unwrap_or_else(|| panic!("no region dispatch:\n{}", p.source));
    let rest = &p.source[start..];
    let text = rest[..rest.find("\n}\n").map_or(rest.len(), |i| i + 3)].to_string();
    let call = format!("hipacc_body_{entry}(");
    let args_start = text.find(&call).map(|i| i + call.len()).unwrap_or(0);
    let args_end = text[args_start..].find(", 1, 1, 1, 1)").unwrap_or(0) + args_start;
    let args = text[args_start..args_end].to_string();
    let text = text.replace(&args, "ARGS").replace(entry.as_str(), "ENTRY");
    (text, p)
}

#[test]
fn restriction_and_prolongation_interiors_have_no_checks() {
    for k in [tk::restriction(), tk::prolongation()] {
        for (target, language) in [("pocl", Language::OpenCl), ("h100", Language::Cuda)] {
            let (text, p) = dispatch(&k, target, language);
            assert_eq!(text, DISPATCH, "{} on {target}:\n{}", k.name, p.source);
            // Every read of the grid takes the block's edge flags, so the
            // interior call reads without any check.
            let read = format!("hipacc_read_{}_acc_", p.kernels[0].entry);
            let reads: Vec<&str> = p
                .source
                .match_indices(&read)
                .map(|(i, _)| &p.source[i..])
                .collect();
            assert!(reads.len() > 1, "{}", p.source);
            for r in reads.iter().skip(1) {
                let call = &r[..r.find(';').unwrap_or(r.len())];
                assert!(
                    call.contains("cl, cr, ct, cb"),
                    "checked read `{call}` in {}",
                    k.name
                );
            }
            assert!(p.source.contains(" * accessor `"), "{}", p.source);
        }
    }
}

/// Every pixel of a block the region starts leave unchecked reads inside
/// the accessor's region: checked by brute force over `read(u, v)`, the
/// accessor positions a pixel of the iteration space reads.
fn assert_interior_reads_inside(
    k: &Kernel,
    space: Rect,
    region: Rect,
    read: impl Fn(i64, i64) -> Vec<(i64, i64)>,
) {
    let c = region_config();
    let t = Target::by_name("pocl").unwrap_or_else(|| panic!("no target pocl"));
    let p = generate(k, &c, t, Language::OpenCl).unwrap_or_else(|e| panic!("{e}"));
    let launch = p.kernels[0]
        .launch(space, &[region])
        .unwrap_or_else(|e| panic!("{e}"));
    let s = launch.region_starts;
    assert!(
        s.left < s.right && s.top < s.bottom,
        "{} has no interior: {s:?}",
        k.name
    );
    let (bw, rows) = (c.block.x as i64, c.rows_per_block() as i64);
    for by in s.top as i64..s.bottom as i64 {
        for bx in s.left as i64..s.right as i64 {
            for v in (by * rows..(by + 1) * rows).filter(|&v| v < space.height as i64) {
                for u in (bx * bw..(bx + 1) * bw).filter(|&u| u < space.width as i64) {
                    for (px, py) in read(u, v) {
                        let inside = (0..region.width as i64).contains(&px)
                            && (0..region.height as i64).contains(&py);
                        assert!(inside, "{}: pixel ({u}, {v}) reads ({px}, {py})", k.name);
                    }
                }
            }
        }
    }
}

#[test]
fn region_starts_keep_grid_reads_inside() {
    // The restriction's space at (3, 2) reads x() = 3 + u: positions
    // u + (3 + u) + i of the fine grid.
    let (coarse, fine) = (Rect::new(3, 2, 70, 45), Rect::full(147, 94));
    assert_interior_reads_inside(&tk::restriction(), coarse, fine, |u, v| {
        let (x, y) = (3 + u, 2 + v);
        [(0, 0), (1, 0), (0, 1), (1, 1)]
            .map(|(i, j)| (u + x + i, v + y + j))
            .to_vec()
    });
    // The prolongation reads u + x / 2 - x with x = u at origin 0.
    let (space, coarse) = (Rect::full(140, 90), Rect::full(70, 45));
    assert_interior_reads_inside(&tk::prolongation(), space, coarse, |u, v| {
        vec![(u + u / 2 - u, v + v / 2 - v)]
    });
}
