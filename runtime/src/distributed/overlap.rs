//! Computing a block's interior while its halo is in flight.
//!
//! A kernel of footprint `[min_dx, max_dx] x [min_dy, max_dy]` computes
//! the pixels of the block at least `-min_dx` columns from its left edge,
//! `max_dx` from its right one (and so on) from the block alone. So
//! [`launch`] posts every input's halo messages, computes that interior,
//! waits for the messages, and then computes the four border strips.
//!
//! A launch's first pixel reads accessor position `(0, 0)`, and an
//! accessor's boundary applies at its region's edges; so a launch that
//! starts inside the block reads the blocks through accessors whose region
//! starts where the launch does ([`Reads`]' window), and starts early
//! enough (at the footprint's reach before the pixels it must compute)
//! that those pixels never read past the region's start. The pixels it
//! computes before them are wrong; each launch is placed so that they fall
//! on the discarded ring around the block or on pixels a later launch
//! computes. The right and bottom strips, whose early pixels would fall on
//! the interior, are computed into small images and copied. Every pixel
//! reads the pixels it reads in a single launch, so the results are the
//! same bit for bit.

use super::execute::{LaunchStats, Reads};
use super::halo::{in_flight, InFlight};
use super::{DistImage, DistResult};
use crate::{Device, Execute};
use hipacc_core::ir::Footprint;
use hipacc_core::{Image, IterationSpace, Kernel, Rect};

/// How one part of the block is launched.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Part {
    /// Straight into the output from `start`: the pixels between `start`
    /// and the part's rectangle are garbage that a later part or the ring
    /// takes.
    Direct,
    /// Into an image of its own from `start`, of which only the part's
    /// rectangle is copied.
    Copied,
}

/// One launch of a part: how, the local pixel it starts at, and the
/// rectangle of the block it computes.
type Launch = (Part, (usize, usize), Rect);

/// The launches that compute a `w x h` block at `(h0, h0)` of its local
/// image (halo `h0`) for a kernel reaching `fp`, in order: the interior
/// first (while the halo is in flight), then the border strips. Each is
/// `(part, start, rectangle)`; empty rectangles are left out. `None` when
/// the block has no interior.
fn plan(fp: Footprint, h0: usize, w: usize, h: usize) -> Option<Vec<Launch>> {
    let (l, t) = ((-fp.min_dx).max(0) as usize, (-fp.min_dy).max(0) as usize);
    let (r, b) = (fp.max_dx.max(0) as usize, fp.max_dy.max(0) as usize);
    if w <= l + r || h <= t + b {
        return None;
    }
    let (x0, x1) = (h0 + l, h0 + w - r);
    let (y0, y1) = (h0 + t, h0 + h - b);
    let span = |a: usize, z: usize| z - a;
    let parts = [
        // The interior; its garbage falls on the left and top strips.
        (
            Part::Direct,
            (h0, h0),
            Rect::new(x0, y0, span(x0, x1), span(y0, y1)),
        ),
        // Right and bottom strips, whose garbage would fall on the interior.
        (
            Part::Copied,
            (x1 - l, y0 - t),
            Rect::new(x1, y0, r, span(y0, h0 + h)),
        ),
        (
            Part::Copied,
            (x0 - l, y1 - t),
            Rect::new(x0, y1, span(x0, x1), b),
        ),
        // The left strip (garbage on the top strip), then the top strip
        // (garbage on the ring).
        (
            Part::Direct,
            (h0 - l, y0 - t),
            Rect::new(h0, y0, l, span(y0, h0 + h)),
        ),
        (Part::Direct, (h0 - l, h0 - t), Rect::new(h0, h0, w, t)),
    ];
    Some(
        parts
            .into_iter()
            .filter(|(_, _, rect)| rect.width > 0 && rect.height > 0)
            .collect(),
    )
}

/// Runs the kernel `build` returns on this rank's block of `output`, whose
/// inputs' halos `pending` exchanges (the kernel reads at most `fp` around
/// each pixel), overlapping the interior with the exchange. Collective.
pub(super) fn launch<'a, K: Kernel>(
    device: &Device,
    output: &'a DistImage<K::Output>,
    build: impl Fn(&mut Reads<'a>) -> K,
    fp: Footprint,
    mut pending: Vec<Box<dyn InFlight>>,
) -> DistResult<LaunchStats> {
    let halo = output.halo();
    let block = output.grid().my_block();
    let local = output.local();
    let mut stats = LaunchStats::default();
    let mut computing = 0.0;
    // One part of the block, launched from the local pixel `start`.
    let mut run = |part: Part, start: (usize, usize), rect: Rect| -> DistResult<()> {
        let clock = std::time::Instant::now();
        // `x()` counts the output's columns: the local block's for a direct
        // part, its own image's (which starts at `start`) for a copied one.
        let shift = match part {
            Part::Direct => (0, 0),
            Part::Copied => start,
        };
        let origin = (
            (block.x + shift.0) as i64 - halo as i64,
            (block.y + shift.1) as i64 - halo as i64,
        );
        let kernel = build(&mut Reads::windowed(origin, start));
        let (w, h) = (
            rect.x + rect.width - start.0,
            rect.y + rect.height - start.1,
        );
        match part {
            Part::Direct => {
                let space = IterationSpace::region(&local, Rect::new(start.0, start.1, w, h))?;
                kernel.execute(device, &space)?;
            }
            Part::Copied => {
                let own = Image::<K::Output>::new(w, h)?;
                kernel.execute(device, &IterationSpace::full(&own))?;
                let src = own.read()?;
                let (dx, dy) = (rect.x - start.0, rect.y - start.1);
                local.write_rects(&[rect], |dst| {
                    for y in 0..rect.height {
                        let s = (dy + y) * w + dx;
                        let d = (rect.y + y) * local.width() + rect.x;
                        dst[d..d + rect.width].copy_from_slice(&src[s..s + rect.width]);
                    }
                })?;
            }
        }
        computing += clock.elapsed().as_secs_f64();
        Ok(())
    };
    let messages: usize = pending.iter().map(|p| p.messages()).sum();
    let parts = plan(fp, halo, block.width, block.height).filter(|_| messages > 0);
    let mut parts = parts.unwrap_or_default().into_iter();
    let interior = parts.next();
    stats.exchange.seconds = in_flight(&mut pending, || match interior {
        Some((part, start, rect)) => run(part, start, rect),
        None => Ok(()),
    })?;
    for p in pending {
        stats.exchange += p.finish()?;
    }
    if interior.is_none() {
        // Nothing to overlap: the block and the ring before it, at once.
        let whole = Rect::new(0, 0, halo + block.width, halo + block.height);
        run(Part::Direct, (0, 0), whole)?;
    }
    for (part, start, rect) in parts {
        run(part, start, rect)?;
    }
    stats.compute_seconds = computing;
    Ok(stats)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cover(parts: &[Launch], w: usize, h: usize, h0: usize) -> Vec<u32> {
        let mut n = vec![0u32; w * h];
        for (_, _, r) in parts {
            for y in r.y..r.y + r.height {
                for x in r.x..r.x + r.width {
                    n[(y - h0) * w + x - h0] += 1;
                }
            }
        }
        n
    }

    #[test]
    fn parts_tile_the_block_and_garbage_lands_later() {
        let fp = Footprint {
            min_dx: -3,
            max_dx: 1,
            min_dy: -1,
            max_dy: 2,
        };
        let (h0, w, h) = (3, 11, 9);
        let parts = plan(fp, h0, w, h).expect("an interior");
        assert!(cover(&parts, w, h, h0).iter().all(|&c| c == 1));
        // A direct part's garbage (between its start and its rectangle)
        // lies in the ring or in a rectangle of a later part.
        for (i, (part, start, r)) in parts.iter().enumerate() {
            if *part != Part::Direct {
                continue;
            }
            for y in start.1..r.y + r.height {
                for x in start.0..r.x + r.width {
                    let mine = r.x <= x && r.y <= y;
                    let ring = x < h0 || y < h0;
                    let later = parts[i + 1..].iter().any(|(_, _, o)| {
                        (o.x..o.x + o.width).contains(&x) && (o.y..o.y + o.height).contains(&y)
                    });
                    assert!(mine || ring || later, "part {i} spoils ({x}, {y})");
                }
            }
        }
        // Every part starts the footprint's reach before its pixels, so
        // they read nothing before the start.
        for (_, start, r) in &parts {
            assert_eq!((start.0 + 3, start.1 + 1), (r.x, r.y));
        }
        assert_eq!(plan(fp, h0, 4, 9), None);
    }
}
