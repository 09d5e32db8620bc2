//! Distributed pyramids equal single-process ones bit for bit.
//!
//! Run plainly (`cargo test --features distributed --test
//! distributed_pyramid`), this binary launches itself under `mpirun` with 1,
//! 2, 3 and 4 ranks (`HIPACC_MPI_RANKS` picks others) and fails unless
//! every run passes. Each rank builds the Burt-Adelson Gaussian and
//! Laplacian pyramids of odd-sized images and collapses the Laplacian one
//! again, with the same kernels and the same traversal body as the
//! single-process run (`traverse` over `Pyramid`s), under every boundary
//! mode; rank 0 compares every level of the three pyramids bit for bit. The
//! pyramids are as deep as the grid can split, which on one rank is as
//! deep as the image allows (down to 1x1); one level more is refused on
//! every rank with the same message.

mod mpi_support;

use hipacc::distributed::mpi::traits::*;
use hipacc::distributed::{self, DistError, DistImage, DistPyramid, Grid};
use hipacc::prelude::*;
use hipacc::{max_depth, Trace};
use mpi_support::{mpirun, pattern, rank_counts, rank_mode, Checker};
use std::rc::Rc;

const PASSED: &str = "distributed pyramid checks passed:";

/// `G_{k+1}(x, y) = sum w(i) w(j) G_k(2x + i, 2y + j)`, the 5x5 binomial.
#[derive(Kernel)]
#[kernel(output = f32)]
struct Downsample {
    fine: Accessor<f32>,
    mask: Mask<f32, 5, 5>,
}

#[kernel_body]
impl Downsample {
    fn kernel(&self) -> f32 {
        convolve(&self.mask, Sum, |dx, dy| {
            self.mask.at(dx, dy) * self.fine.at(x() + dx, y() + dy)
        })
    }
}

/// `base + sign · expand(coarse)` in one pass: per axis, weights `1/8,
/// 6/8, 1/8` at `x/2 - 1, x/2, x/2 + 1` for even `x` and `1/2, 1/2` at
/// `(x-1)/2, (x+1)/2` for odd `x` (the Laplacian level with `sign = -1`,
/// the collapse with `sign = 1`).
#[derive(Kernel)]
#[kernel(output = f32)]
struct Expand {
    base: Accessor<f32>,
    coarse: Accessor<f32>,
    sign: f32,
}

#[kernel_body]
impl Expand {
    fn kernel(&self) -> f32 {
        let cx = x() / 2 - x();
        let cy = y() / 2 - y();
        let ex: f32 = if x() % 2 == 0 { 1.0 } else { 0.0 };
        let ey: f32 = if y() % 2 == 0 { 1.0 } else { 0.0 };
        let x0 = 0.125 * ex;
        let x1 = 0.5 + 0.25 * ex;
        let x2 = 0.5 - 0.375 * ex;
        let y0 = 0.125 * ey;
        let y1 = 0.5 + 0.25 * ey;
        let y2 = 0.5 - 0.375 * ey;
        let r0 = x0 * self.coarse.at(cx - 1, cy - 1)
            + x1 * self.coarse.at(cx, cy - 1)
            + x2 * self.coarse.at(cx + 1, cy - 1);
        let r1 = x0 * self.coarse.at(cx - 1, cy)
            + x1 * self.coarse.at(cx, cy)
            + x2 * self.coarse.at(cx + 1, cy);
        let r2 = x0 * self.coarse.at(cx - 1, cy + 1)
            + x1 * self.coarse.at(cx, cy + 1)
            + x2 * self.coarse.at(cx + 1, cy + 1);
        self.base() + self.sign * (y0 * r0 + y1 * r1 + y2 * r2)
    }
}

/// A copy (the coarsest level of the Laplacian and of the collapse).
#[derive(Kernel)]
#[kernel(output = f32)]
struct Copy {
    input: Accessor<f32>,
}

#[kernel_body]
impl Copy {
    fn kernel(&self) -> f32 {
        self.input()
    }
}

fn binomial() -> Mask<f32, 5, 5> {
    let tap = [1.0f32, 4.0, 6.0, 4.0, 1.0].map(|c| c / 16.0);
    Mask::fixed(tap.map(|r| tap.map(|c| r * c))).expect("mask")
}

fn boundaries() -> [Boundary<f32>; 5] {
    [
        Boundary::Clamp,
        Boundary::Repeat,
        Boundary::Mirror,
        Boundary::MirrorInterior,
        Boundary::Constant(-7.5),
    ]
}

/// The single-process Gaussian `g` and Laplacian `l` of `g`'s level 0,
/// then the collapse of `l` into `r`.
fn single(g: &Pyramid<f32>, l: &Pyramid<f32>, r: &Pyramid<f32>, b: Boundary<f32>) -> Trace {
    let dev = Device::cpu();
    let read = |img: &Image<f32>| Accessor::new(img).with_boundary(b);
    traverse(&[g, l], |t| {
        let (here, lap) = (t.image(g, 0)?, t.image(l, 0)?);
        let out = IterationSpace::full(&lap);
        if t.is_bottom_level() {
            return Copy { input: read(&here) }.execute(&dev, &out);
        }
        let coarse = t.image(g, 1)?;
        let mask = binomial();
        Downsample {
            fine: read(&here),
            mask,
        }
        .execute(&dev, &IterationSpace::full(&coarse))?;
        t.recurse()?;
        let (base, coarse) = (read(&here), read(&coarse));
        Expand {
            base,
            coarse,
            sign: -1.0,
        }
        .execute(&dev, &out)
    })
    .expect("single-process decomposition");
    traverse(&[l, r], |t| {
        let (lap, rec) = (t.image(l, 0)?, t.image(r, 0)?);
        let out = IterationSpace::full(&rec);
        if t.is_bottom_level() {
            return Copy { input: read(&lap) }.execute(&dev, &out);
        }
        t.recurse()?;
        let (base, coarse) = (read(&lap), read(&t.image(r, 1)?));
        Expand {
            base,
            coarse,
            sign: 1.0,
        }
        .execute(&dev, &out)
    })
    .expect("single-process collapse")
}

/// The same on distributed pyramids.
fn distributed(
    g: &DistPyramid<f32>,
    l: &DistPyramid<f32>,
    r: &DistPyramid<f32>,
    b: Boundary<f32>,
) -> Trace {
    let dev = Device::cpu();
    distributed::traverse(&[g, l], |t| {
        let (here, lap) = (t.image(g, 0)?, t.image(l, 0)?);
        if t.is_bottom_level() {
            distributed::execute(&dev, &lap, |rd| Copy {
                input: rd.accessor(&here, b),
            })?;
            return Ok(());
        }
        let coarse = t.image(g, 1)?;
        distributed::execute(&dev, &coarse, |rd| Downsample {
            fine: rd.accessor(&here, b),
            mask: binomial(),
        })?;
        t.recurse()?;
        distributed::execute(&dev, &lap, |rd| Expand {
            base: rd.accessor(&here, b),
            coarse: rd.accessor(&coarse, b),
            sign: -1.0,
        })?;
        Ok(())
    })
    .expect("distributed decomposition");
    distributed::traverse(&[l, r], |t| {
        let (lap, rec) = (t.image(l, 0)?, t.image(r, 0)?);
        if t.is_bottom_level() {
            distributed::execute(&dev, &rec, |rd| Copy {
                input: rd.accessor(&lap, b),
            })?;
            return Ok(());
        }
        t.recurse()?;
        let coarse = t.image(r, 1)?;
        distributed::execute(&dev, &rec, |rd| Expand {
            base: rd.accessor(&lap, b),
            coarse: rd.accessor(&coarse, b),
            sign: 1.0,
        })?;
        Ok(())
    })
    .expect("distributed collapse")
}

fn check_size(c: &mut Checker, w: usize, h: usize) {
    let world = c.world;
    let grid = Rc::new(Grid::new(world, w, h).expect("grid"));
    let depth = DistPyramid::<f32>::max_depth(&grid);
    if world.size() == 1 && depth != max_depth(w, h) {
        c.fail(&format!("{w}x{h}: one rank allows {depth} levels"));
    }
    let src = Image::from_fn(w, h, pattern(w as u32)).expect("image");
    let fine = Rc::new(DistImage::from_fn(&grid, pattern(w as u32)).expect("dist image"));
    if depth < max_depth(w, h) {
        match DistPyramid::new(&fine, depth + 1) {
            Err(e @ DistError::PyramidTooDeep { .. }) => {
                let text = e.to_string();
                if !text.contains(&format!("at most {depth} levels")) {
                    c.fail(&format!("{w}x{h}: unclear refusal: {text}"));
                }
            }
            other => c.fail(&format!("{w}x{h}: too deep a pyramid: {other:?}")),
        }
    }
    let dg = DistPyramid::new(&fine, depth).expect("pyramid");
    let (dl, dr) = (
        DistPyramid::like(&dg).expect("l"),
        DistPyramid::like(&dg).expect("r"),
    );
    let g = Pyramid::new(&src, depth).expect("pyramid");
    let (l, r) = (Pyramid::like(&g).expect("l"), Pyramid::like(&g).expect("r"));
    for b in boundaries() {
        let expected = single(&g, &l, &r, b);
        let got = distributed(&dg, &dl, &dr, b);
        if got.sync_levels() != expected.sync_levels() {
            c.fail(&format!("{w}x{h} {b:?}: levels visited differ"));
        }
        for k in 0..depth {
            for (name, single, dist) in [("G", &g, &dg), ("L", &l, &dl), ("R", &r, &dr)] {
                let what = format!("{w}x{h} {b:?} {name}_{k}");
                c.same(
                    &what,
                    &single.level(k).expect("level"),
                    &dist.level(k).expect("level"),
                );
            }
        }
    }
}

fn rank_main() {
    let universe = distributed::initialize().expect("MPI");
    let world = universe.world();
    let mut c = Checker {
        world: &world,
        checks: 0,
    };
    for (w, h) in [(131, 71), (64, 97), (5, 3)] {
        check_size(&mut c, w, h);
    }
    if world.rank() == 0 {
        println!("{PASSED} {} with {} ranks", c.checks, world.size());
    }
}

fn main() {
    if rank_mode().is_some() {
        rank_main();
        return;
    }
    let mut failed = false;
    for n in rank_counts() {
        let (ok, text) = mpirun(n, "check");
        let passed = ok && text.contains(PASSED);
        println!("{n} ranks: {}", if passed { "ok" } else { "FAILED" });
        if !passed {
            println!("{text}");
            failed = true;
        }
    }
    if failed {
        std::process::exit(1);
    }
}
