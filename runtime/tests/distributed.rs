//! Distributed execution is independent of the rank count.
//!
//! Run plainly (`cargo test --features distributed --test distributed`),
//! this binary launches itself under `mpirun` with 1, 2, 3 and 4 ranks
//! (`HIPACC_MPI_RANKS=2,4` picks others; beyond the core count with
//! `--oversubscribe`) and fails unless every run passes. Under `mpirun` it
//! is one rank of the check: every rank computes the single-process result
//! on the global images, runs the same kernels on distributed images, and
//! rank 0 compares the gathered results bit for bit; a difference aborts
//! all ranks with a nonzero status. Stencils (a 5x5 mask, an asymmetric
//! reach of 3, two inputs with different boundaries, a chain) run on every
//! boundary mode and odd sizes, including blocks narrower than the halo.
//! Restriction and prolongation between nested grids (`Grid::coarser`)
//! run on every level of the same sizes down to where a block would be
//! empty (which must be refused). Kernels comparing global coordinates
//! (edges, a red-black colour) take them from `Reads::origin`.
//! Histograms and argmin/argmax equal the single-process ones exactly on
//! every rank. The misuse runs check that ranks disagreeing on the size and a grid too
//! small to split are refused with one clear message, and that a rank
//! failing to read its input stops every rank with its message
//! (`distributed::all_ok`). The multigrid solver's cycles and full
//! multigrid give the single-process solutions (see `multigrid`).
//! The stencil, grid-level and multigrid checks run again with every
//! rank's blocks on its OpenCL device (PoCL in CI; a skip line where no
//! OpenCL device is found), against single-process runs on the same
//! device: the halo exchange moves only the block's edge band and the
//! halo ring between device and host, and the results stay bit-identical.

mod mpi_support;
#[path = "distributed/multigrid.rs"]
mod multigrid;

use hipacc::distributed::mpi::traits::*;
use hipacc::distributed::{self, DistError, DistImage, Grid};
use hipacc::prelude::*;
use mpi_support::{mpirun, pattern, rank_counts, rank_mode, Checker};
use std::rc::Rc;
const PASSED: &str = "distributed checks passed:";
const NO_OPENCL: &str = "no OpenCL device";

#[derive(Kernel)]
#[kernel(output = f32)]
struct Blur {
    input: Accessor<f32>,
    mask: Mask<f32>,
}

#[kernel_body]
impl Blur {
    fn kernel(&self) -> f32 {
        convolve(&self.mask, Sum, |dx, dy| {
            self.mask.at(dx, dy) * self.input.at(dx, dy)
        })
    }
}

/// Reaches 3 columns left and 2 rows down, 1 right and 1 up.
#[derive(Kernel)]
#[kernel(output = f32)]
struct Skew {
    input: Accessor<f32>,
}

#[kernel_body]
impl Skew {
    fn kernel(&self) -> f32 {
        self.input.at(-3, 2) * 0.5 + self.input.at(1, -1) - self.input.at(0, 0) * 0.25
    }
}

#[derive(Kernel)]
#[kernel(output = f32)]
struct Pair {
    a: Accessor<f32>,
    b: Accessor<f32>,
}

#[kernel_body]
impl Pair {
    fn kernel(&self) -> f32 {
        self.a.at(-1, 0) * 3.0 + self.b.at(0, 1) - self.a.at(1, 1)
    }
}

#[derive(Kernel)]
#[kernel(output = f32)]
struct Scale {
    input: Accessor<f32>,
}

#[kernel_body]
impl Scale {
    fn kernel(&self) -> f32 {
        self.input.at(0, 0) * 2.0 + 1.0
    }
}

/// The multigrid restriction: a quarter of the 2x2 fine cells under the
/// coarse cell (the fine image one level finer than the output).
#[derive(Kernel)]
#[kernel(output = f32)]
struct Restrict {
    fine: Accessor<f32>,
}

#[kernel_body]
impl Restrict {
    fn kernel(&self) -> f32 {
        let s = self.fine.at(x(), y())
            + self.fine.at(x() + 1, y())
            + self.fine.at(x(), y() + 1)
            + self.fine.at(x() + 1, y() + 1);
        0.25 * s
    }
}

/// A wider restriction: 4x4 fine cells around the coarse cell, weighted
/// 1, 3, 3, 1 per axis (reaches a fine pixel past either side).
#[derive(Kernel)]
#[kernel(output = f32)]
struct Restrict4 {
    fine: Accessor<f32>,
}

#[kernel_body]
impl Restrict4 {
    fn kernel(&self) -> f32 {
        let mut s: f32 = 0.0;
        for j in 0..4 {
            for i in 0..4 {
                let wx: f32 = if i == 0 || i == 3 { 1.0 } else { 3.0 };
                let wy: f32 = if j == 0 || j == 3 { 1.0 } else { 3.0 };
                s += wx * wy * self.fine.at(x() + i - 1, y() + j - 1);
            }
        }
        s / 64.0
    }
}

/// The multigrid prolongation (bilinear between cell centres, weights 9,
/// 3, 3, 1 over 16) added to `u`, the coarse ghost cells given by the
/// coarse image's boundary mode.
#[derive(Kernel)]
#[kernel(output = f32)]
struct Prolong {
    u: Accessor<f32>,
    e: Accessor<f32>,
}

#[kernel_body]
impl Prolong {
    fn kernel(&self) -> f32 {
        let cx = x() / 2;
        let cy = y() / 2;
        let nx = 2 * x() - 3 * cx - 1;
        let ny = 2 * y() - 3 * cy - 1;
        let c = self.e.at(cx - x(), cy - y());
        let a = self.e.at(nx - x(), cy - y());
        let b = self.e.at(cx - x(), ny - y());
        let g = self.e.at(nx - x(), ny - y());
        self.u() + 0.0625 * (9.0 * c + 3.0 * a + 3.0 * b + g)
    }
}

/// Global coordinates through `Reads::origin`: the global image's left and
/// right columns and a red-black colour.
#[derive(Kernel)]
#[kernel(output = f32)]
struct Coords {
    input: Accessor<f32>,
    x0: i32,
    y0: i32,
    w: i32,
}

#[kernel_body]
impl Coords {
    fn kernel(&self) -> f32 {
        let gx = x() + self.x0;
        let gy = y() + self.y0;
        let edge: f32 = if gx == 0 || gx == self.w - 1 {
            100.0
        } else {
            0.0
        };
        let mut v = self.input.at(-1, 0) + self.input.at(1, 0) + edge;
        if (gx + gy) % 2 == 0 {
            v = -v;
        }
        v
    }
}

/// The 2x2 restriction counting only fine cells inside the global fine
/// image (its global fine coordinates from the coarse origin).
#[derive(Kernel)]
#[kernel(output = f32)]
struct RestrictInside {
    fine: Accessor<f32>,
    x0: i32,
    y0: i32,
    w: i32,
    h: i32,
}

#[kernel_body]
impl RestrictInside {
    fn kernel(&self) -> f32 {
        let mut s: f32 = 0.0;
        for j in 0..2 {
            for i in 0..2 {
                let fx = 2 * (x() + self.x0) + i;
                let fy = 2 * (y() + self.y0) + j;
                let inside: f32 = if fx < self.w && fy < self.h { 1.0 } else { 0.0 };
                s += inside * self.fine.at(x() + i, y() + j);
            }
        }
        0.25 * s
    }
}

/// The multigrid's Dirichlet prolongation: a coarse neighbour outside the
/// coarse grid (found from global coarse coordinates) is the ghost `-e`.
#[derive(Kernel)]
#[kernel(output = f32)]
struct ProlongGhost {
    e: Accessor<f32>,
    x0: i32,
    y0: i32,
    cw: i32,
    ch: i32,
}

#[kernel_body]
impl ProlongGhost {
    fn kernel(&self) -> f32 {
        let cx = x() / 2;
        let cy = y() / 2;
        let nx = 2 * x() - 3 * cx - 1;
        let ny = 2 * y() - 3 * cy - 1;
        let mut sx: f32 = 1.0;
        if nx + self.x0 / 2 < 0 || nx + self.x0 / 2 >= self.cw {
            sx = -1.0;
        }
        let mut sy: f32 = 1.0;
        if ny + self.y0 / 2 < 0 || ny + self.y0 / 2 >= self.ch {
            sy = -1.0;
        }
        let c = self.e.at(cx - x(), cy - y());
        let a = self.e.at(nx - x(), cy - y());
        let b = self.e.at(cx - x(), ny - y());
        let g = self.e.at(nx - x(), ny - y());
        0.0625 * (9.0 * c + 3.0 * sx * a + 3.0 * sy * b + sx * sy * g)
    }
}

fn boundaries() -> Vec<Boundary<f32>> {
    vec![
        Boundary::Clamp,
        Boundary::Repeat,
        Boundary::Mirror,
        Boundary::MirrorInterior,
        Boundary::Constant(-7.5),
    ]
}

fn mask() -> Mask<f32> {
    let c: Vec<f32> = (0..25).map(|i| 1.0 / (1.0 + (i * 7 % 11) as f32)).collect();
    Mask::from_vec(5, 5, c).expect("mask")
}

/// The single-process run of `k` on `dev` into a new `w x h` image.
fn single<K: Kernel<Output = f32>>(
    dev: &Device,
    w: usize,
    h: usize,
    k: impl Fn() -> K,
) -> Image<f32> {
    let kernel = k();
    let out = Image::new(w, h).expect("image");
    kernel
        .execute(dev, &IterationSpace::full(&out))
        .expect("single-process run");
    out
}

fn check_size(
    world: &hipacc::distributed::mpi::topology::SimpleCommunicator,
    c: &mut Checker,
    dev: &Device,
    w: usize,
    h: usize,
) {
    let grid = Rc::new(Grid::new(world, w, h).expect("grid"));
    let src = Image::from_fn(w, h, pattern(1)).expect("image");
    let src2 = Image::from_fn(w, h, pattern(2)).expect("image");
    let din = DistImage::from_fn(&grid, pattern(1)).expect("dist");
    let din2 = DistImage::scatter(&grid, 0, (grid.rank() == 0).then_some(&src2)).expect("scatter");
    let levels = DistImage::from_fn(&grid, pattern(3)).expect("dist");
    check_levels(
        c,
        dev,
        &grid,
        Image::from_fn(w, h, pattern(3)).expect("image"),
        levels,
    );

    for b in boundaries() {
        let what = format!("5x5 mask {w}x{h} {b:?}");
        let expected = single(dev, w, h, || Blur {
            input: Accessor::new(&src).with_boundary(b),
            mask: mask(),
        });
        let out = DistImage::new(&grid).expect("dist");
        distributed::execute(dev, &out, |r| Blur {
            input: r.accessor(&din, b),
            mask: mask(),
        })
        .expect(&what);
        c.same(&what, &expected, &out);

        let what = format!("skewed reach {w}x{h} {b:?}");
        let expected = single(dev, w, h, || Skew {
            input: Accessor::new(&src).with_boundary(b),
        });
        let out = DistImage::new(&grid).expect("dist");
        distributed::execute(dev, &out, |r| Skew {
            input: r.accessor(&din, b),
        })
        .expect(&what);
        c.same(&what, &expected, &out);

        // Two inputs, each with its own boundary; then a chain that reads
        // the first result (its halo is regrown and exchanged again).
        let other = Boundary::Repeat;
        let what = format!("two inputs {w}x{h} {b:?} + Repeat, then a chain");
        let pair = single(dev, w, h, || Pair {
            a: Accessor::new(&src).with_boundary(b),
            b: Accessor::new(&src2).with_boundary(other),
        });
        let expected = single(dev, w, h, || Skew {
            input: Accessor::new(&pair).with_boundary(other),
        });
        let mid = DistImage::new(&grid).expect("dist");
        distributed::execute(dev, &mid, |r| Pair {
            a: r.accessor(&din, b),
            b: r.accessor(&din2, other),
        })
        .expect(&what);
        let out = DistImage::new(&grid).expect("dist");
        distributed::execute(dev, &out, |r| Skew {
            input: r.accessor(&mid, other),
        })
        .expect(&what);
        c.same(&what, &expected, &out);
    }

    // Global coordinates from the launch's origin.
    let what = format!("global coordinates {w}x{h}");
    let expected = single(dev, w, h, || Coords {
        input: Accessor::new(&src).with_boundary(Boundary::Mirror),
        x0: 0,
        y0: 0,
        w: w as i32,
    });
    let out = DistImage::new(&grid).expect("dist");
    distributed::execute(dev, &out, |r| Coords {
        input: r.accessor(&din, Boundary::Mirror),
        x0: r.origin().0,
        y0: r.origin().1,
        w: w as i32,
    })
    .expect(&what);
    c.same(&what, &expected, &out);

    // Undefined: only reads inside the image are valid, so a point-wise kernel.
    let what = format!("point-wise {w}x{h} Undefined");
    let expected = single(dev, w, h, || Scale {
        input: Accessor::new(&src),
    });
    let out = DistImage::new(&grid).expect("dist");
    distributed::execute(dev, &out, |r| Scale {
        input: r.accessor(&din, Boundary::Undefined),
    })
    .expect(&what);
    c.same(&what, &expected, &out);

    // Reductions: min and max exact, the sum to f64 rounding.
    let e_min = hipacc::reduce::min(dev, &expected, None).expect("min");
    let e_max = hipacc::reduce::max(dev, &expected, None).expect("max");
    let e_sum = hipacc::reduce::sum(dev, &expected, None).expect("sum");
    c.close(
        "min",
        e_min as f64,
        distributed::min(dev, &out).expect("min") as f64,
        0.0,
    );
    c.close(
        "max",
        e_max as f64,
        distributed::max(dev, &out).expect("max") as f64,
        0.0,
    );
    c.close(
        "sum",
        e_sum,
        distributed::sum(dev, &out).expect("sum"),
        1e-13,
    );

    // Histograms: the ranks' counts summed exactly, windows included.
    let e_hist = hipacc::reduce::histogram(dev, &expected, None, 17, -20.0, 40.0).expect("hist");
    c.equal(
        "histogram",
        &e_hist,
        &distributed::histogram(dev, &out, 17, -20.0, 40.0).expect("histogram"),
    );
    let e_window = hipacc::reduce::histogram_window(dev, &expected, None, 17, -20.0, 40.0, 3..11)
        .expect("window");
    c.equal(
        "histogram window",
        &e_window,
        &distributed::histogram_window(dev, &out, 17, -20.0, 40.0, 3..11).expect("window"),
    );
    // Argmin/argmax: the pattern repeats values, so ties go to the lowest
    // global index across blocks.
    for (name, e, got) in [
        (
            "argmin",
            hipacc::reduce::argmin(dev, &expected, None).expect("argmin"),
            distributed::argmin(dev, &out).expect("argmin"),
        ),
        (
            "argmax",
            hipacc::reduce::argmax(dev, &expected, None).expect("argmax"),
            distributed::argmax(dev, &out).expect("argmax"),
        ),
    ] {
        c.equal(
            name,
            &[e.0.to_bits() as u64, e.1 as u64],
            &[got.0.to_bits() as u64, got.1 as u64],
        );
    }
}

/// Restriction and prolongation between `fine` and the next coarser grid,
/// then one level further down while the grid splits; the restriction of
/// `fine` becomes the next level's image.
fn check_levels(
    c: &mut Checker,
    dev: &Device,
    fine_grid: &Rc<Grid>,
    src: Image<f32>,
    din: DistImage<f32>,
) {
    let (w, h) = (fine_grid.width(), fine_grid.height());
    let coarse_grid = match fine_grid.coarser() {
        Ok(g) => Rc::new(g),
        Err(DistError::TooSmall { .. }) => {
            // Refused only where halving leaves a block empty.
            let empty = (0..fine_grid.ranks()).map(|r| fine_grid.block(r)).any(|b| {
                b.x.div_ceil(2) == (b.x + b.width).div_ceil(2)
                    || b.y.div_ceil(2) == (b.y + b.height).div_ceil(2)
            });
            if !empty {
                eprintln!("MISMATCH {w}x{h}: coarser grid refused without an empty block");
                c.world.abort(1);
            }
            return;
        }
        Err(e) => panic!("coarser grid: {e}"),
    };
    let (cw, ch) = (coarse_grid.width(), coarse_grid.height());
    assert_eq!((cw, ch), (w.div_ceil(2), h.div_ceil(2)));
    let zero = Boundary::Constant(0.0);

    // The multigrid's restriction.
    let what = format!("restriction {w}x{h} -> {cw}x{ch}");
    let coarse = single(dev, cw, ch, || Restrict {
        fine: Accessor::new(&src).with_boundary(zero),
    });
    let dcoarse = DistImage::new(&coarse_grid).expect("dist");
    let halo = din.halo();
    distributed::execute(dev, &dcoarse, |r| Restrict {
        fine: r.accessor(&din, zero),
    })
    .expect(&what);
    c.same(&what, &coarse, &dcoarse);
    // Nested blocks: a 2x2 restriction needs a halo of one fine pixel.
    if din.halo() > halo.max(1) {
        eprintln!(
            "MISMATCH {what}: a halo of {} for a 2x2 restriction",
            din.halo()
        );
        c.world.abort(1);
    }

    // Kernels taking global coordinates from the launch's origin.
    let what = format!("restriction inside {w}x{h} -> {cw}x{ch}");
    let (wi, hi) = (w as i32, h as i32);
    let expected = single(dev, cw, ch, || RestrictInside {
        fine: Accessor::new(&src).with_boundary(Boundary::Repeat),
        x0: 0,
        y0: 0,
        w: wi,
        h: hi,
    });
    let out = DistImage::new(&coarse_grid).expect("dist");
    distributed::execute(dev, &out, |r| RestrictInside {
        fine: r.accessor(&din, Boundary::Repeat),
        x0: r.origin().0,
        y0: r.origin().1,
        w: wi,
        h: hi,
    })
    .expect(&what);
    c.same(&what, &expected, &out);
    let what = format!("prolongation with ghosts {cw}x{ch} -> {w}x{h}");
    let (cwi, chi) = (cw as i32, ch as i32);
    let expected = single(dev, w, h, || ProlongGhost {
        e: Accessor::new(&coarse).with_boundary(Boundary::Clamp),
        x0: 0,
        y0: 0,
        cw: cwi,
        ch: chi,
    });
    let out = DistImage::new(fine_grid).expect("dist");
    distributed::execute(dev, &out, |r| ProlongGhost {
        e: r.accessor(&dcoarse, Boundary::Clamp),
        x0: r.origin().0,
        y0: r.origin().1,
        cw: cwi,
        ch: chi,
    })
    .expect(&what);
    c.same(&what, &expected, &out);

    for b in boundaries() {
        let what = format!("4x4 restriction {w}x{h} {b:?}");
        let expected = single(dev, cw, ch, || Restrict4 {
            fine: Accessor::new(&src).with_boundary(b),
        });
        let out = DistImage::new(&coarse_grid).expect("dist");
        distributed::execute(dev, &out, |r| Restrict4 {
            fine: r.accessor(&din, b),
        })
        .expect(&what);
        c.same(&what, &expected, &out);

        let what = format!("prolongation {cw}x{ch} -> {w}x{h} {b:?}");
        let expected = single(dev, w, h, || Prolong {
            u: Accessor::new(&src),
            e: Accessor::new(&coarse).with_boundary(b),
        });
        let out = DistImage::new(fine_grid).expect("dist");
        distributed::execute(dev, &out, |r| Prolong {
            u: r.accessor(&din, Boundary::Undefined),
            e: r.accessor(&dcoarse, b),
        })
        .expect(&what);
        c.same(&what, &expected, &out);
    }
    if cw * ch > 1 {
        check_levels(c, dev, &coarse_grid, coarse, dcoarse);
    }
}

fn rank_main(mode: &str) {
    let universe = distributed::initialize().expect("MPI");
    let world = universe.world();
    match mode {
        "sizes" => {
            // Rank 1 disagrees on the height.
            let h = if world.rank() == 1 { 9 } else { 8 };
            match Grid::new(&world, 10, h) {
                Err(e @ DistError::SizeMismatch { .. }) => {
                    if world.rank() == 0 {
                        println!("refused: {e}");
                    }
                }
                other => {
                    eprintln!("size mismatch not refused: {other:?}");
                    world.abort(1);
                }
            }
        }
        "fail" => {
            // Every rank passes: each gets its own value back.
            let mine: Result<i32, String> = Ok(world.rank() * 10);
            if distributed::all_ok(&world, mine).ok() != Some(world.rank() * 10) {
                eprintln!("all_ok changed a passing rank's value");
                world.abort(1);
            }
            // Rank 1 cannot read its input: every rank stops with its message.
            let name = if world.rank() == 1 {
                "input-of-rank-1-that-does-not-exist.raw".into()
            } else {
                std::env::current_exe().expect("test binary")
            };
            let read = std::fs::read(&name).map_err(|e| format!("{}: {e}", name.display()));
            match distributed::all_ok(&world, read) {
                Err(e @ DistError::RankFailed { rank: 1, .. })
                    if e.to_string()
                        .contains("input-of-rank-1-that-does-not-exist.raw") =>
                {
                    if world.rank() == 0 {
                        println!("stopped: {e}");
                    }
                }
                other => {
                    eprintln!(
                        "rank {}: a failed read not agreed on: {other:?}",
                        world.rank()
                    );
                    world.abort(1);
                }
            }
        }
        "small" => match Grid::new(&world, 1, 1) {
            Err(e @ DistError::TooSmall { .. }) => {
                if world.rank() == 0 {
                    println!("refused: {e}");
                }
            }
            other => {
                eprintln!("too small a grid not refused: {other:?}");
                world.abort(1);
            }
        },
        "opencl" => {
            // Every rank's blocks on its OpenCL device (PoCL in CI),
            // against the single-process runs on the same device.
            let Ok(dev) = Device::opencl() else {
                if world.rank() == 0 {
                    println!("{NO_OPENCL}");
                }
                return;
            };
            let mut c = Checker {
                world: &world,
                checks: 0,
            };
            for (w, h) in [(37, 23), (7, 5)] {
                check_size(&world, &mut c, &dev, w, h);
            }
            multigrid::check(&world, &mut c, &dev);
            if world.rank() == 0 {
                println!(
                    "{PASSED} {} with {} ranks on OpenCL",
                    c.checks,
                    world.size()
                );
            }
        }
        _ => {
            let mut c = Checker {
                world: &world,
                checks: 0,
            };
            let dev = Device::cpu();
            for (w, h) in [(37, 23), (7, 5), (64, 3), (2, 41)] {
                check_size(&world, &mut c, &dev, w, h);
            }
            multigrid::check(&world, &mut c, &dev);
            if world.rank() == 0 {
                println!("{PASSED} {} with {} ranks", c.checks, world.size());
            }
        }
    }
}

fn main() {
    if let Some(mode) = rank_mode() {
        rank_main(&mode);
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
        let (ok, text) = mpirun(n, "opencl");
        if ok && text.contains(NO_OPENCL) {
            println!("[SKIP] {n} ranks on OpenCL: no OpenCL device");
            continue;
        }
        let passed = ok && text.contains(PASSED);
        println!(
            "{n} ranks on OpenCL: {}",
            if passed { "ok" } else { "FAILED" }
        );
        if !passed {
            println!("{text}");
            failed = true;
        }
    }
    let (ok, text) = mpirun(2, "sizes");
    let refused =
        ok && text.contains("ranks disagree on the image size: rank 0 has 10x8, rank 1 has 10x9");
    println!(
        "size disagreement refused: {}",
        if refused { "ok" } else { "FAILED" }
    );
    failed |= !refused;
    if !refused {
        println!("{text}");
    }
    let (ok, text) = mpirun(2, "small");
    let refused = ok && text.contains("too small to split over 2 ranks");
    println!(
        "too small a grid refused: {}",
        if refused { "ok" } else { "FAILED" }
    );
    failed |= !refused;
    if !refused {
        println!("{text}");
    }
    let (ok, text) = mpirun(3, "fail");
    let stopped = ok
        && text
            .matches("stopped: rank 1 failed: input-of-rank-1-that-does-not-exist.raw")
            .count()
            == 1;
    println!(
        "one rank's failure stops every rank: {}",
        if stopped { "ok" } else { "FAILED" }
    );
    failed |= !stopped;
    if !stopped {
        println!("{text}");
    }
    if failed {
        std::process::exit(1);
    }
}
