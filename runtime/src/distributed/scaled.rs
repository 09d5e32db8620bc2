//! Kernels whose inputs live on a finer or coarser grid than the output
//! (restriction, prolongation): the inputs are staged in images laid out
//! for the rank's block, so the kernel's coordinate-computed offsets read
//! the pixels they read in the single-process run.
//!
//! A kernel reading position `s·x + d` of an input (its affine footprint:
//! offset coefficient `s - 1`, `s` 2 for a finer input, 1/2 for a coarser
//! one, 1 for one on the output's grid; `d` in `[lo, hi]`) runs on a local
//! output whose column `P + i` is the block's column `i` (`P` of the
//! block's start's parity, so `x() / 2` truncates as it does globally),
//! with its iteration space at 0. Column `x` of the local output is then
//! global column `x + m` (`m = x0 - P`, even), and the kernel reads local
//! position `s·x + d`, which is global position `s·x + d + s·m`. Each input
//! is staged in an image whose position `p` holds global pixel `p + s·m`
//! (from the block and its exchanged halo, the boundary applied at the
//! global edges), for the positions the block's outputs read; `P` is
//! chosen so that none is negative. The halo each input exchanges is the
//! widest reach of any rank's block past its input block, derived from the
//! footprint alone (every rank computes every rank's), which for nested
//! grids ([`Grid::coarser`](super::Grid::coarser)) is one pixel.

use super::execute::{LaunchStats, Reads};
use super::{Block, DistError, DistImage, DistResult, Grid};
use crate::{Device, Execute};
use hipacc_core::ir::footprint::{AffineAxis, AffineFootprint};
use hipacc_core::ir::Footprint;
use hipacc_core::{Image, IterationSpace, Kernel, Pixel, Rect};
use std::any::Any;
use std::collections::HashMap;

/// One input's reads along one axis: position `s·x + [lo, hi]`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) struct Reach {
    s: f64,
    lo: f64,
    hi: f64,
}

impl Reach {
    /// The reads of `axis`, if the input's grid is the output's, or one
    /// level finer or coarser.
    fn of(axis: AffineAxis) -> Option<Reach> {
        let s = 1.0 + axis.coef;
        [0.5, 1.0, 2.0].contains(&s).then_some(Reach {
            s,
            lo: axis.lo.floor(),
            hi: axis.hi.ceil(),
        })
    }
}

/// The staged positions of one input along one axis: `[first, last]`,
/// position `p` holding global pixel `p + shift`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Span {
    pub(super) first: i64,
    pub(super) last: i64,
    pub(super) shift: i64,
}

/// The output's pad `P` for a block starting at `start`: of its parity,
/// and wide enough that no interior read is at a negative position.
fn pad(start: usize, reaches: &[Reach]) -> usize {
    let mut p = start % 2;
    while reaches.iter().any(|r| r.s * p as f64 + r.lo < 0.0) {
        p += 2;
    }
    p
}

/// The span of an input read as `reach` by a block at `start` of `len`
/// with pad `pad`.
fn span(reach: Reach, start: usize, len: usize, pad: usize) -> Span {
    let m = start as i64 - pad as i64;
    Span {
        first: (reach.s * pad as f64 + reach.lo).floor() as i64,
        last: (reach.s * (pad + len - 1) as f64 + reach.hi).ceil() as i64,
        // `m` is even, so `s·m` is an integer for `s = 1/2` too.
        shift: (reach.s * m as f64) as i64,
    }
}

/// Both axes of a rank's layout for every input.
struct Layout {
    pads: (usize, usize),
    spans: Vec<(Span, Span)>,
}

fn layout(block: Block, reaches: &[(Reach, Reach)]) -> Layout {
    let xs: Vec<Reach> = reaches.iter().map(|r| r.0).collect();
    let ys: Vec<Reach> = reaches.iter().map(|r| r.1).collect();
    let pads = (pad(block.x, &xs), pad(block.y, &ys));
    let spans = reaches
        .iter()
        .map(|(rx, ry)| {
            (
                span(*rx, block.x, block.width, pads.0),
                span(*ry, block.y, block.height, pads.1),
            )
        })
        .collect();
    Layout { pads, spans }
}

/// The footprint around the input blocks of `input` that covers every
/// rank's staged span (the same on every rank).
fn exchange_footprint(
    output: &Grid,
    input: &Grid,
    reach: (Reach, Reach),
    all: &[(Reach, Reach)],
) -> Footprint {
    let mut fp = Footprint::ZERO;
    for r in 0..output.ranks() {
        let l = layout(output.block(r), all);
        let (sx, sy) = (
            span(reach.0, output.block(r).x, output.block(r).width, l.pads.0),
            span(reach.1, output.block(r).y, output.block(r).height, l.pads.1),
        );
        let b = input.block(r);
        let (x0, x1) = (b.x as i64, (b.x + b.width) as i64 - 1);
        let (y0, y1) = (b.y as i64, (b.y + b.height) as i64 - 1);
        fp.min_dx = fp.min_dx.min((sx.first + sx.shift - x0) as i32);
        fp.max_dx = fp.max_dx.max((sx.last + sx.shift - x1) as i32);
        fp.min_dy = fp.min_dy.min((sy.first + sy.shift - y0) as i32);
        fp.max_dy = fp.max_dy.max((sy.last + sy.shift - y1) as i32);
    }
    fp
}

/// Stages `image` for `spans`: position `p` of the result holds the global
/// pixel `p + shift` where `p` lies in the span (the kernel reads no other
/// position, so the others keep what the image's reused scratch held).
/// The halo must have been exchanged over the spans.
pub(super) fn stage<T: Pixel>(image: &DistImage<T>, spans: (Span, Span)) -> DistResult<Image<T>> {
    let (sx, sy) = spans;
    let (w, h) = ((sx.last + 1) as usize, (sy.last + 1) as usize);
    let b = image.grid().my_block();
    let halo = image.halo() as i64;
    let local = image.local();
    let stride = local.width() as i64;
    let pixels = local.read()?;
    let staged = image.scratch(w, h)?;
    {
        let mut data = staged.write()?;
        for py in sy.first..=sy.last {
            let ly = py + sy.shift - b.y as i64 + halo;
            let lx = sx.first + sx.shift - b.x as i64 + halo;
            let from = (ly * stride + lx) as usize;
            let to = py as usize * w + sx.first as usize;
            let n = (sx.last - sx.first + 1) as usize;
            data[to..to + n].copy_from_slice(&pixels[from..from + n]);
        }
    }
    Ok(staged)
}

/// One input as [`in_place`] sees it along one axis: its reach, its staged
/// span, its block's start and its halo.
#[derive(Clone, Copy, Debug)]
struct Axis {
    reach: Reach,
    span: Span,
    start: usize,
    halo: usize,
}

/// Where a launch straight into the output's block starts along one axis,
/// and where each input's accessor starts in its block; `None` if it
/// cannot.
///
/// The launch's `x()` is then the block's local column (halo included),
/// so the origin is `x0 = start - halo`, and a kernel reading position
/// `s·x() + d` reads, at launch column `x() - c`, the position
/// `s·x() + d - c` of an accessor starting at `o`: local pixel
/// `o + s·x() + d - c` of the input, global pixel `o + s·x() + d - c +
/// start' - halo'`. That is the global pixel `s·(x() + x0) + d` the
/// single-process run reads when `o = s·x0 + c - start' + halo'`, with
/// `x0` even where some `s` is 1/2 (so `x() / 2` truncates as the global
/// coordinate does). `c` is the smallest start with every `o >= 0`; the
/// block's pixels must not read before any `o` (their first read, the
/// span's first global pixel, at least `s·x0 + c`), and `c` must not pass
/// the block.
fn in_place(start: usize, halo: usize, inputs: &[Axis]) -> Option<(usize, Vec<usize>)> {
    let x0 = start as i64 - halo as i64;
    if x0 % 2 != 0 && inputs.iter().any(|a| a.reach.s < 1.0) {
        return None;
    }
    let base = |a: &Axis| (a.reach.s * x0 as f64) as i64 - a.start as i64 + a.halo as i64;
    let c = inputs.iter().map(|a| -base(a)).fold(0, i64::max);
    let fits = c <= halo as i64
        && inputs
            .iter()
            .all(|a| (a.reach.s * x0 as f64) as i64 + c <= a.span.first + a.span.shift);
    fits.then(|| {
        let offsets = inputs.iter().map(|a| (base(a) + c) as usize).collect();
        (c as usize, offsets)
    })
}

/// [`execute`](super::execute) for a kernel with an input on another grid
/// (`affine[i]` is binding `i`'s footprint, some not constant).
pub(super) fn execute<'a, K: Kernel>(
    device: &Device,
    output: &'a DistImage<K::Output>,
    build: impl Fn(&mut Reads<'a>) -> K,
    kernel: K,
    reads: Reads<'a>,
    affine: Vec<Option<AffineFootprint>>,
) -> DistResult<LaunchStats> {
    let bindings = kernel.bindings();
    drop(kernel);
    // One reach per input image (slots reading the same image are joined).
    let mut images: Vec<(u64, (Reach, Reach))> = Vec::new();
    for (binding, a) in bindings.accessors.iter().zip(affine) {
        let unbounded = || DistError::UnboundedFootprint {
            kernel: K::NAME,
            accessor: binding.slot.name.clone(),
        };
        let a = a.ok_or_else(unbounded)?;
        let reach =
            match (Reach::of(a.x), Reach::of(a.y)) {
                (Some(x), Some(y)) => (x, y),
                _ => return Err(DistError::Usage(
                    "a kernel's inputs must be on the output's grid or one level finer or coarser",
                )),
            };
        let id = binding.image.id();
        match images.iter_mut().find(|(i, _)| *i == id) {
            Some((_, r)) if r.0.s == reach.0.s && r.1.s == reach.1.s => {
                for (a, b) in [(&mut r.0, reach.0), (&mut r.1, reach.1)] {
                    a.lo = a.lo.min(b.lo);
                    a.hi = a.hi.max(b.hi);
                }
            }
            Some(_) => {
                return Err(DistError::Usage(
                    "one image read as two different grids in one kernel",
                ))
            }
            None => images.push((id, reach)),
        }
    }
    let all: Vec<(Reach, Reach)> = images.iter().map(|(_, r)| *r).collect();
    let mine = layout(output.grid().my_block(), &all);

    let mut stats = LaunchStats::default();
    let b = output.grid().my_block();
    // A coarser input reads `x() / 2`, which truncates as the global
    // coordinate does when the origin is even: an odd one grows the
    // output's halo by a pixel (once; the halos on its grid follow), so
    // that the launch can run in the block itself.
    let coarser = (
        all.iter().any(|r| r.0.s < 1.0),
        all.iter().any(|r| r.1.s < 1.0),
    );
    let odd = |start: usize, halo: usize| (start + halo) % 2 == 1;
    let h = output.halo();
    if (coarser.0 && odd(b.x, h) || coarser.1 && odd(b.y, h))
        && !(coarser.0 && odd(b.x, h + 1) || coarser.1 && odd(b.y, h + 1))
    {
        output.set_halo(h + 1)?;
    }
    let mut inputs = Vec::new();
    for (k, (id, reach)) in images.iter().enumerate() {
        let Some(input) = reads.inputs.iter().find(|r| r.local_id() == *id) else {
            return Err(DistError::Usage(
                "every accessor must come from Reads::accessor",
            ));
        };
        let fp = exchange_footprint(output.grid(), input.grid(), *reach, &all);
        stats.exchange += input.prepare(fp)?;
        inputs.push((input, k));
    }
    let axis = |pick: fn(&(Span, Span)) -> Span, x: bool| -> Vec<Axis> {
        inputs
            .iter()
            .map(|(input, k)| {
                let ib = input.grid().my_block();
                Axis {
                    reach: if x { images[*k].1 .0 } else { images[*k].1 .1 },
                    span: pick(&mine.spans[*k]),
                    start: if x { ib.x } else { ib.y },
                    halo: input.halo(),
                }
            })
            .collect()
    };
    let halo = output.halo();
    let direct =
        in_place(b.x, halo, &axis(|s| s.0, true)).zip(in_place(b.y, halo, &axis(|s| s.1, false)));
    if let Some(((cx, ox), (cy, oy))) = direct {
        let offsets = inputs
            .iter()
            .enumerate()
            .map(|(i, (input, _))| (input.local_id(), (ox[i], oy[i])))
            .collect();
        drop(inputs);
        drop(reads);
        let origin = (b.x as i64 - halo as i64, b.y as i64 - halo as i64);
        let kernel = build(&mut Reads::offset(offsets, origin));
        let start = std::time::Instant::now();
        let local = output.local();
        let rect = Rect::new(cx, cy, halo + b.width - cx, halo + b.height - cy);
        kernel.execute(device, &IterationSpace::region(&local, rect)?)?;
        stats.compute_seconds = start.elapsed().as_secs_f64();
        return Ok(stats);
    }

    let mut staged: HashMap<u64, Box<dyn Any>> = HashMap::new();
    for (input, k) in &inputs {
        staged.insert(input.local_id(), input.stage(mine.spans[*k])?);
    }
    drop(inputs);
    drop(reads);
    let (px, py) = mine.pads;
    let origin = (b.x as i64 - px as i64, b.y as i64 - py as i64);
    let mut again = Reads::staged(staged, origin);
    let kernel = build(&mut again);

    let start = std::time::Instant::now();
    let out = output.scratch(px + b.width, py + b.height)?;
    let space = IterationSpace::region(&out, Rect::new(0, 0, px + b.width, py + b.height))?;
    kernel.execute(device, &space)?;
    output.write_block(&out, (px, py))?;
    stats.compute_seconds = start.elapsed().as_secs_f64();
    Ok(stats)
}

#[cfg(test)]
mod tests {
    use super::*;

    const FINE: Reach = Reach {
        s: 2.0,
        lo: 0.0,
        hi: 1.0,
    };
    const COARSE: Reach = Reach {
        s: 0.5,
        lo: -2.0,
        hi: 1.0,
    };

    #[test]
    fn pads_keep_parity_and_positions_nonnegative() {
        for start in 0..9 {
            let p = pad(start, &[FINE, COARSE]);
            assert_eq!(p % 2, start % 2);
            assert!(0.5 * p as f64 - 2.0 >= 0.0);
        }
    }

    #[test]
    fn spans_map_to_the_global_reads() {
        // A coarse block at 3 of 4 cells reads fine 6..=13 (2x + [0, 1]).
        let p = pad(3, &[FINE]);
        let s = span(FINE, 3, 4, p);
        assert_eq!((s.first + s.shift, s.last + s.shift), (6, 13));
        // A fine block at 5 of 3 cells reads coarse (x / 2) + [-2, 1]:
        // x in 5..=7 -> 2..=3 -> 0..=4, and one more for the bound of
        // the truncation, 7 / 2 + 1 <= 3.5 + 1.
        let p = pad(5, &[COARSE]);
        let s = span(COARSE, 5, 3, p);
        assert_eq!((s.first + s.shift, s.last + s.shift), (0, 5));
    }
}
