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

use super::edges::{frame, ring};
use super::{DistImage, DistResult, Grid};
use hipacc_core::image::{as_bytes, as_bytes_mut};
use hipacc_core::ir::Footprint;
use hipacc_core::{Boundary, Pixel, Rect};
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
    let mut pending: [Box<dyn InFlight>; 1] = [Box::new(plan(img, fp, boundary)?)];
    let waited = in_flight(&mut pending, || Ok(()))?;
    let [p] = pending;
    let mut stats = p.finish()?;
    stats.seconds += waited;
    Ok(stats)
}

/// A halo exchange planned but not finished: the packed sends, the buffers
/// the receives fill, and where their pixels go once they have arrived.
pub(crate) struct Pending<T: Pixel> {
    grid: std::rc::Rc<Grid>,
    local: hipacc_core::Image<T>,
    /// The halo ring of `local`: every pixel the exchange writes.
    ring: Vec<Rect>,
    sends: Vec<(usize, Vec<T>)>,
    received: Vec<(usize, Vec<T>)>,
    /// Per source rank, the halo indices its pixels fill, in order.
    from: Vec<Vec<usize>>,
    /// Halo pixels copied from this rank's own block: `(dst, value)`.
    copies: Vec<(usize, T)>,
    /// Halo pixels set to the boundary constant.
    constants: Vec<usize>,
    constant: Option<T>,
    /// Seconds spent planning (and then unpacking).
    seconds: f64,
}

/// Plans the exchange of the halo of `img` that `fp` reads: packs what
/// every other rank needs of this block. Local; nothing is sent until
/// [`in_flight`] posts it. Only the band of the block that holds those
/// pixels is read, so a block on a device stays there.
pub(crate) fn plan<T: Pixel>(
    img: &DistImage<T>,
    fp: Footprint,
    boundary: &Boundary<T>,
) -> DistResult<Pending<T>> {
    let start = std::time::Instant::now();
    let grid = img.grid();
    let me = grid.rank();
    let h = img.halo() as i64;
    let local = img.local();
    let stride = local.width() as i64;
    let mine = grid.my_block();
    let index =
        |gx: i64, gy: i64| ((gy - mine.y as i64 + h) * stride + gx - mine.x as i64 + h) as usize;

    // Local indices of what each other rank needs of this block.
    let mut wanted: Vec<(usize, Vec<usize>)> = Vec::new();
    for r in (0..grid.ranks()).filter(|&r| r != me) {
        let mut idx = Vec::new();
        for_each_needed(grid, r, fp, boundary, |_, _, s| {
            if let Origin::Pixel(sx, sy) = s {
                if mine.contains(sx, sy) {
                    idx.push(index(sx as i64, sy as i64));
                }
            }
        });
        if !idx.is_empty() {
            wanted.push((r, idx));
        }
    }

    let mut from: Vec<Vec<usize>> = vec![Vec::new(); grid.ranks()];
    let mut own: Vec<(usize, usize)> = Vec::new();
    let mut constants: Vec<usize> = Vec::new();
    for_each_needed(grid, me, fp, boundary, |gx, gy, s| {
        let dst = index(gx, gy);
        match s {
            Origin::Pixel(sx, sy) => {
                let owner = grid.owner(sx, sy);
                if owner == me {
                    own.push((dst, index(sx as i64, sy as i64)));
                } else {
                    from[owner].push(dst);
                }
            }
            Origin::Constant => constants.push(dst),
            Origin::None => {}
        }
    });
    let sources = wanted.iter().flat_map(|(_, i)| i.iter().copied());
    let band = frame(
        sources.chain(own.iter().map(|&(_, s)| s)),
        stride as usize,
        h as usize,
        mine.width,
        mine.height,
    );
    let (sends, copies) = local.read_rects(&band, |pixels| {
        let sends: Vec<(usize, Vec<T>)> = wanted
            .iter()
            .map(|(r, idx)| (*r, idx.iter().map(|&i| pixels[i]).collect()))
            .collect();
        let copies: Vec<(usize, T)> = own.iter().map(|&(d, s)| (d, pixels[s])).collect();
        (sends, copies)
    })?;
    let received: Vec<(usize, Vec<T>)> = from
        .iter()
        .enumerate()
        .filter(|(_, t)| !t.is_empty())
        .map(|(r, t)| (r, vec![T::default(); t.len()]))
        .collect();
    Ok(Pending {
        grid: grid.clone(),
        ring: ring(h as usize, mine.width, mine.height),
        local,
        sends,
        received,
        from,
        copies,
        constants,
        constant: match boundary {
            Boundary::Constant(c) => Some(*c),
            _ => None,
        },
        seconds: start.elapsed().as_secs_f64(),
    })
}

/// An exchange's communicator, receive buffers and send buffers (with
/// their ranks), as bytes.
pub(crate) type Buffers<'b> = (
    &'b mpi::topology::SimpleCommunicator,
    Vec<(usize, &'b mut [u8])>,
    Vec<(usize, &'b [u8])>,
);

/// An exchange whose messages [`in_flight`] posts, whatever its pixel type.
pub(crate) trait InFlight {
    /// Messages this rank receives and sends.
    fn messages(&self) -> usize;
    /// The communicator, the receive buffers and the send buffers, with
    /// their ranks.
    fn buffers(&mut self) -> Buffers<'_>;
    /// Writes the received pixels, the local copies and the constants into
    /// the halo (after [`in_flight`]).
    fn finish(self: Box<Self>) -> DistResult<ExchangeStats>;
}

impl<T: Pixel> InFlight for Pending<T> {
    fn messages(&self) -> usize {
        self.sends.len() + self.received.len()
    }

    fn buffers(&mut self) -> Buffers<'_> {
        let recvs = self
            .received
            .iter_mut()
            .map(|(r, b)| (*r, as_bytes_mut(b)))
            .collect();
        let sends = self.sends.iter().map(|(r, b)| (*r, as_bytes(b))).collect();
        (self.grid.comm(), recvs, sends)
    }

    fn finish(self: Box<Self>) -> DistResult<ExchangeStats> {
        let start = std::time::Instant::now();
        {
            // Only the ring is written (and, on a device, moved).
            self.local.write_rects(&self.ring, |pixels| {
                for &(dst, v) in &self.copies {
                    pixels[dst] = v;
                }
                if let Some(c) = self.constant {
                    for &dst in &self.constants {
                        pixels[dst] = c;
                    }
                }
                for (r, buf) in &self.received {
                    for (&dst, &v) in self.from[*r].iter().zip(buf) {
                        pixels[dst] = v;
                    }
                }
            })?;
        }
        Ok(ExchangeStats {
            bytes_sent: self
                .sends
                .iter()
                .map(|(_, b)| std::mem::size_of_val(&b[..]))
                .sum(),
            messages: self.sends.len(),
            seconds: self.seconds + start.elapsed().as_secs_f64(),
        })
    }
}

/// Posts every message of `pending` (non-blocking receives first, then
/// sends; exchange `i` under its own tag, so several exchanges on one
/// communicator never mix), runs `during` while they are in flight, then
/// waits for all of them. Collective: every rank passes its exchanges in
/// the same order. Returns the seconds spent posting and waiting (not in
/// `during`); `during`'s error, if any, after every message has completed.
pub(crate) fn in_flight(
    pending: &mut [Box<dyn InFlight>],
    during: impl FnOnce() -> DistResult<()>,
) -> DistResult<f64> {
    let start = std::time::Instant::now();
    let mut busy = 0.0;
    let result = mpi::request::scope(|scope| {
        let mut requests = Vec::new();
        for (i, p) in pending.iter_mut().enumerate() {
            let tag = TAG_HALO + i as i32;
            let (comm, recvs, sends) = p.buffers();
            for (r, buf) in recvs {
                requests.push(
                    comm.process_at_rank(r as i32)
                        .immediate_receive_into_with_tag(scope, buf, tag),
                );
            }
            for (r, buf) in sends {
                requests.push(
                    comm.process_at_rank(r as i32)
                        .immediate_send_with_tag(scope, buf, tag),
                );
            }
        }
        let compute = std::time::Instant::now();
        let result = during();
        busy = compute.elapsed().as_secs_f64();
        for q in requests {
            q.wait();
        }
        result
    });
    result.map(|()| start.elapsed().as_secs_f64() - busy)
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
