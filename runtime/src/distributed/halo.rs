//! Halo exchange: exactly the pixels a footprint reads around each block,
//! global boundary conditions included.
//!
//! Every rank derives every other rank's needs from the decomposition, the
//! footprint and the boundary mode alone, so no request is sent: rank `s`
//! packs, for each rank `r`, the pixels of its block that `r`'s halo maps
//! to, in the order `r` enumerates its halo (row-major); `r` unpacks them
//! in that same order. A halo pixel outside the global image is mapped by
//! the boundary mode on the global extent (Repeat and Mirror may then name
//! a pixel of the far rank), filled with the constant (`Constant`), or left
//! alone (`Undefined`: a correct kernel never reads it).

use super::{DistImage, DistResult, Grid};
use hipacc_core::image::{as_bytes, as_bytes_mut};
use hipacc_core::ir::Footprint;
use hipacc_core::{Boundary, Pixel};
use mpi::traits::*;

/// Message tag of halo exchanges.
const TAG_HALO: i32 = 7102;

/// Where a halo pixel's value comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Origin {
    /// The global pixel.
    Pixel(usize, usize),
    /// The boundary constant.
    Constant,
    /// Nothing (an `Undefined` boundary outside the image).
    None,
}

fn source<T>(boundary: &Boundary<T>, gx: i64, gy: i64, w: usize, h: usize) -> Origin {
    let mode = boundary.mode();
    match (mode.remap(gx, w as i64), mode.remap(gy, h as i64)) {
        (Some(x), Some(y)) => Origin::Pixel(x as usize, y as usize),
        _ if mode == hipacc_core::BoundaryMode::Constant => Origin::Constant,
        _ => Origin::None,
    }
}

/// Calls `f(gx, gy, source)` for every halo pixel of `rank`'s block that a
/// kernel of footprint `fp` reads, row-major.
fn for_each_needed<T>(
    grid: &Grid,
    rank: usize,
    fp: Footprint,
    boundary: &Boundary<T>,
    mut f: impl FnMut(i64, i64, Origin),
) {
    let b = grid.block(rank);
    let (bx, by) = (b.x as i64, b.y as i64);
    let (bw, bh) = (b.width as i64, b.height as i64);
    let x0 = bx + fp.min_dx.min(0) as i64;
    let x1 = bx + bw + fp.max_dx.max(0) as i64;
    let y0 = by + fp.min_dy.min(0) as i64;
    let y1 = by + bh + fp.max_dy.max(0) as i64;
    for gy in y0..y1 {
        // Rows of the block: only the columns left and right of it.
        let skip = if (by..by + bh).contains(&gy) {
            bx..bx + bw
        } else {
            x0..x0
        };
        for gx in (x0..skip.start).chain(skip.end..x1) {
            f(
                gx,
                gy,
                source(boundary, gx, gy, grid.width(), grid.height()),
            );
        }
    }
}

/// What one exchange moved.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct ExchangeStats {
    /// Bytes this rank sent to other ranks.
    pub bytes_sent: usize,
    /// Messages this rank sent.
    pub messages: usize,
    /// Wall time of the exchange on this rank, in seconds.
    pub seconds: f64,
}

impl std::ops::AddAssign for ExchangeStats {
    fn add_assign(&mut self, o: ExchangeStats) {
        self.bytes_sent += o.bytes_sent;
        self.messages += o.messages;
        self.seconds += o.seconds;
    }
}

/// Fills the halo of `img` that footprint `fp` reads, under `boundary` at
/// the global edges. Collective over the grid's ranks. The halo must be at
/// least as wide as the footprint.
pub(crate) fn exchange<T: Pixel>(
    img: &DistImage<T>,
    fp: Footprint,
    boundary: &Boundary<T>,
) -> DistResult<ExchangeStats> {
    let start = std::time::Instant::now();
    let grid = img.grid();
    let me = grid.rank();
    let h = img.halo() as i64;
    let local = img.local();
    let stride = local.width() as i64;
    let mine = grid.my_block();
    let index =
        |gx: i64, gy: i64| ((gy - mine.y as i64 + h) * stride + gx - mine.x as i64 + h) as usize;

    let mut sends: Vec<(usize, Vec<T>)> = Vec::new();
    {
        let pixels = local.read()?;
        for r in (0..grid.ranks()).filter(|&r| r != me) {
            let mut buf = Vec::new();
            for_each_needed(grid, r, fp, boundary, |_, _, s| {
                if let Origin::Pixel(sx, sy) = s {
                    if mine.contains(sx, sy) {
                        buf.push(pixels[index(sx as i64, sy as i64)]);
                    }
                }
            });
            if !buf.is_empty() {
                sends.push((r, buf));
            }
        }
    }

    let mut from: Vec<Vec<usize>> = vec![Vec::new(); grid.ranks()];
    let mut copies: Vec<(usize, usize)> = Vec::new();
    let mut constants: Vec<usize> = Vec::new();
    for_each_needed(grid, me, fp, boundary, |gx, gy, s| {
        let dst = index(gx, gy);
        match s {
            Origin::Pixel(sx, sy) => {
                let owner = grid.owner(sx, sy);
                if owner == me {
                    copies.push((dst, index(sx as i64, sy as i64)));
                } else {
                    from[owner].push(dst);
                }
            }
            Origin::Constant => constants.push(dst),
            Origin::None => {}
        }
    });
    let mut received: Vec<(usize, Vec<T>)> = from
        .iter()
        .enumerate()
        .filter(|(_, t)| !t.is_empty())
        .map(|(r, t)| (r, vec![T::default(); t.len()]))
        .collect();

    let comm = grid.comm();
    mpi::request::scope(|scope| {
        let mut requests = Vec::with_capacity(received.len() + sends.len());
        for (r, buf) in received.iter_mut() {
            requests.push(
                comm.process_at_rank(*r as i32)
                    .immediate_receive_into_with_tag(scope, as_bytes_mut(buf), TAG_HALO),
            );
        }
        for (r, buf) in &sends {
            requests.push(comm.process_at_rank(*r as i32).immediate_send_with_tag(
                scope,
                as_bytes(buf),
                TAG_HALO,
            ));
        }
        for q in requests {
            q.wait();
        }
    });

    let mut pixels = local.write()?;
    for (dst, src) in copies {
        pixels[dst] = pixels[src];
    }
    if let Boundary::Constant(c) = boundary {
        for dst in constants {
            pixels[dst] = *c;
        }
    }
    for (r, buf) in received {
        for (&dst, v) in from[r].iter().zip(buf) {
            pixels[dst] = v;
        }
    }
    Ok(ExchangeStats {
        bytes_sent: sends
            .iter()
            .map(|(_, b)| std::mem::size_of_val(&b[..]))
            .sum(),
        messages: sends.len(),
        seconds: start.elapsed().as_secs_f64(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sources_follow_the_global_boundary() {
        let (w, h) = (5, 4);
        assert_eq!(
            source(&Boundary::<f32>::Repeat, -1, 0, w, h),
            Origin::Pixel(4, 0)
        );
        assert_eq!(
            source(&Boundary::<f32>::Mirror, 6, -2, w, h),
            Origin::Pixel(3, 1)
        );
        assert_eq!(
            source(&Boundary::<f32>::MirrorInterior, -1, 4, w, h),
            Origin::Pixel(1, 2)
        );
        assert_eq!(
            source(&Boundary::<f32>::Clamp, 9, 9, w, h),
            Origin::Pixel(4, 3)
        );
        assert_eq!(
            source(&Boundary::Constant(1.0f32), 2, -1, w, h),
            Origin::Constant
        );
        assert_eq!(
            source(&Boundary::<f32>::Undefined, 2, -1, w, h),
            Origin::None
        );
        assert_eq!(
            source(&Boundary::<f32>::Undefined, 2, 1, w, h),
            Origin::Pixel(2, 1)
        );
    }
}
