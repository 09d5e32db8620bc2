//! Distributed images: one block per rank, stored with a halo.

use super::{DistResult, Grid};
use hipacc_core::image::{as_bytes, as_bytes_mut};
use hipacc_core::{Image, Pixel, Rect};
use mpi::traits::*;
use std::cell::{Cell, RefCell};
use std::rc::Rc;

/// Message tag of gathers and scatters.
const TAG_GATHER: i32 = 7101;

/// An image of the grid's global size, of which this rank holds its block.
///
/// The block is an ordinary [`Image`] with a halo of `halo()` pixels on
/// every side: `local()` is `(block.width + 2 halo) x (block.height + 2
/// halo)` and the block's pixel `(0, 0)` is at `(halo, halo)`. The halo
/// starts at zero and grows to the widest footprint of a kernel that reads
/// the image (see [`execute`](super::execute)); its contents are only
/// defined right after an exchange.
pub struct DistImage<T: Pixel> {
    grid: Rc<Grid>,
    halo: Cell<usize>,
    local: RefCell<Image<T>>,
    /// Block-sized images kept across launches for the launches that
    /// cannot work in `local` itself (see [`scratch`](Self::scratch)).
    scratch: RefCell<Vec<Image<T>>>,
}

impl<T: Pixel> std::fmt::Debug for DistImage<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DistImage")
            .field("grid", &self.grid)
            .field("halo", &self.halo.get())
            .finish()
    }
}

impl<T: Pixel> DistImage<T> {
    /// A distributed image of default pixels.
    pub fn new(grid: &Rc<Grid>) -> DistResult<DistImage<T>> {
        let b = grid.my_block();
        Ok(DistImage {
            grid: grid.clone(),
            halo: Cell::new(0),
            local: RefCell::new(Image::new(b.width, b.height)?),
            scratch: RefCell::new(Vec::new()),
        })
    }

    /// A distributed image whose global pixel `(x, y)` is `f(x, y)`; each
    /// rank evaluates its own block only.
    pub fn from_fn(grid: &Rc<Grid>, f: impl Fn(usize, usize) -> T) -> DistResult<DistImage<T>> {
        let b = grid.my_block();
        Ok(DistImage {
            grid: grid.clone(),
            halo: Cell::new(0),
            local: RefCell::new(Image::from_fn(b.width, b.height, |x, y| {
                f(b.x + x, b.y + y)
            })?),
            scratch: RefCell::new(Vec::new()),
        })
    }

    /// Distributes `global`, which only `root` needs to pass (the other
    /// ranks pass `None`). Collective.
    pub fn scatter(grid: &Rc<Grid>, root: usize, global: Option<&Image<T>>) -> DistResult<Self> {
        let me = grid.rank();
        let out = DistImage::new(grid)?;
        if me == root {
            let g = global.ok_or(super::DistError::Usage(
                "scatter: the root rank must pass the image",
            ))?;
            if (g.width(), g.height()) != (grid.width(), grid.height()) {
                return Err(super::DistError::Usage(
                    "scatter: the image is not the grid's size",
                ));
            }
            let pixels = g.to_vec()?;
            for r in 0..grid.ranks() {
                let b = grid.block(r);
                let mut part = Vec::with_capacity(b.width * b.height);
                for y in b.y..b.y + b.height {
                    let row = y * g.width();
                    part.extend_from_slice(&pixels[row + b.x..row + b.x + b.width]);
                }
                if r == me {
                    out.local.borrow().copy_from_slice(&part)?;
                } else {
                    grid.comm()
                        .process_at_rank(r as i32)
                        .send_with_tag(as_bytes(&part), TAG_GATHER);
                }
            }
        } else {
            let b = grid.my_block();
            let mut part = vec![T::default(); b.width * b.height];
            grid.comm()
                .process_at_rank(root as i32)
                .receive_into_with_tag(as_bytes_mut(&mut part), TAG_GATHER);
            out.local.borrow().copy_from_slice(&part)?;
        }
        Ok(out)
    }

    /// The grid.
    pub fn grid(&self) -> &Rc<Grid> {
        &self.grid
    }

    /// Halo width in pixels (every side).
    pub fn halo(&self) -> usize {
        self.halo.get()
    }

    /// This rank's block with its halo.
    pub fn local(&self) -> Image<T> {
        self.local.borrow().clone()
    }

    /// The block's rectangle inside [`local`](Self::local).
    pub fn interior(&self) -> Rect {
        let b = self.grid.my_block();
        Rect::new(self.halo(), self.halo(), b.width, b.height)
    }

    /// This rank's block without halo, row-major.
    pub fn block_pixels(&self) -> DistResult<Vec<T>> {
        let h = self.halo();
        let b = self.grid.my_block();
        let local = self.local.borrow();
        let pixels = local.read()?;
        let stride = local.width();
        let mut out = Vec::with_capacity(b.width * b.height);
        for y in 0..b.height {
            let row = (y + h) * stride + h;
            out.extend_from_slice(&pixels[row..row + b.width]);
        }
        Ok(out)
    }

    /// Reallocates the block with a halo of `halo` pixels, keeping the
    /// block's pixels (the new halo holds default pixels).
    pub(crate) fn set_halo(&self, halo: usize) -> DistResult<()> {
        if halo == self.halo() {
            return Ok(());
        }
        let b = self.grid.my_block();
        let block = self.block_pixels()?;
        let (w, h) = (b.width + 2 * halo, b.height + 2 * halo);
        let mut data = vec![T::default(); w * h];
        for y in 0..b.height {
            let row = (y + halo) * w + halo;
            data[row..row + b.width].copy_from_slice(&block[y * b.width..(y + 1) * b.width]);
        }
        *self.local.borrow_mut() = Image::from_vec(w, h, data)?;
        self.halo.set(halo);
        Ok(())
    }

    /// A `width x height` image of this image's own, kept for the next
    /// call: a launch that stages the block (as an input) or computes it
    /// aside (as the output) reuses it instead of allocating, and zeroing,
    /// a block-sized image every time. Its pixels are whatever the last
    /// user left there. The two most recent shapes are kept, one for each
    /// of those uses.
    pub(crate) fn scratch(&self, width: usize, height: usize) -> DistResult<Image<T>> {
        let mut kept = self.scratch.borrow_mut();
        let shape = |i: &Image<T>| (i.width(), i.height()) == (width, height);
        if let Some(i) = kept.iter().position(shape) {
            let image = kept.remove(i);
            kept.push(image.clone());
            return Ok(image);
        }
        let image = Image::new(width, height)?;
        if kept.len() == 2 {
            kept.remove(0);
        }
        kept.push(image.clone());
        Ok(image)
    }

    /// Writes the pixels of `from` starting at `origin` into the block
    /// (`from` holds at least the block's size past `origin`).
    pub(crate) fn write_block(&self, from: &Image<T>, origin: (usize, usize)) -> DistResult<()> {
        let b = self.grid.my_block();
        let h = self.halo();
        let local = self.local.borrow();
        let stride = local.width();
        let src = from.read()?;
        let mut dst = local.write()?;
        for y in 0..b.height {
            let s = (origin.1 + y) * from.width() + origin.0;
            let d = (h + y) * stride + h;
            dst[d..d + b.width].copy_from_slice(&src[s..s + b.width]);
        }
        Ok(())
    }

    /// The whole image on `root` (`None` on the other ranks). Collective.
    pub fn gather(&self, root: usize) -> DistResult<Option<Image<T>>> {
        let grid = &self.grid;
        let me = grid.rank();
        let mine = self.block_pixels()?;
        if me != root {
            grid.comm()
                .process_at_rank(root as i32)
                .send_with_tag(as_bytes(&mine), TAG_GATHER);
            return Ok(None);
        }
        let (gw, gh) = (grid.width(), grid.height());
        let mut all = vec![T::default(); gw * gh];
        for r in 0..grid.ranks() {
            let b = grid.block(r);
            let part = if r == me {
                mine.clone()
            } else {
                let mut part = vec![T::default(); b.width * b.height];
                grid.comm()
                    .process_at_rank(r as i32)
                    .receive_into_with_tag(as_bytes_mut(&mut part), TAG_GATHER);
                part
            };
            for y in 0..b.height {
                let row = (b.y + y) * gw + b.x;
                all[row..row + b.width].copy_from_slice(&part[y * b.width..(y + 1) * b.width]);
            }
        }
        Ok(Some(Image::from_vec(gw, gh, all)?))
    }
}
