//! The precisions the solver runs in, and the launches of its kernels.

use super::blocked;
use super::kernels::{k32, k64};
use crate::cpu::replay::Record;
use crate::prelude::*;
use crate::Result;
use hipacc_core::Pixel;

/// A floating-point pixel type the multigrid solver runs in: `f32` or `f64`.
pub trait Real: Pixel + Into<f64> + sealed::Launch {
    /// The nearest value of this type.
    fn from_f64(v: f64) -> Self;
}

impl Real for f32 {
    fn from_f64(v: f64) -> f32 {
        v as f32
    }
}

impl Real for f64 {
    fn from_f64(v: f64) -> f64 {
        v
    }
}

/// The geometry of one launch on level `k`: its size and spacing (part of
/// the sealed [`sealed::Launch`], not nameable outside the crate).
#[derive(Clone, Copy, Debug)]
pub struct Grid {
    pub(crate) w: usize,
    pub(crate) h: usize,
    /// `h_k²`.
    pub(crate) h2: f64,
    /// `+1` Dirichlet, `-1` Neumann.
    pub(crate) bc: f64,
    /// The width of the last column of cells in units of this level's
    /// cell width, in `(0, 1]` (below 1 where coarsening met odd sizes).
    pub(crate) last_w: f64,
    /// The height of the last row of cells likewise.
    pub(crate) last_h: f64,
}

impl Grid {
    /// The grid of level `level` (`w x h` cells) of the hierarchy whose
    /// finest `finest` grid has cell width `spacing`.
    pub(crate) fn of_level(
        (w, h): (usize, usize),
        (fine_w, fine_h): (usize, usize),
        level: usize,
        spacing: f64,
        bc: super::Bc,
    ) -> Grid {
        let cell = 1usize << level;
        let hk = spacing * cell as f64;
        // Cell `j` of level `k` covers the finest cells `[j 2^k, (j + 1) 2^k)`
        // that exist: only the last one can be narrower.
        let last = |cells: usize, fine: usize| (fine - (cells - 1) * cell) as f64 / cell as f64;
        Grid {
            w,
            h,
            h2: hk * hk,
            bc: bc.sign(),
            last_w: last(w, fine_w),
            last_h: last(h, fine_h),
        }
    }

    /// The coupling across the face into the last column, relative to a
    /// face between full cells: the centres are `(1 + last_w) / 2` apart.
    pub(crate) fn face_w(&self) -> f64 {
        2.0 / (1.0 + self.last_w)
    }

    /// The coupling across the face into the last row likewise.
    pub(crate) fn face_h(&self) -> f64 {
        2.0 / (1.0 + self.last_h)
    }

    /// Whether every cell is a full one: the plain 5-point kernels apply,
    /// which do less arithmetic per cell than the coupled ones.
    pub(crate) fn equal_cells(&self) -> bool {
        self.last_w == 1.0 && self.last_h == 1.0
    }
}

/// Reads the solution: outside neighbours are 0 (the diagonal carries the
/// boundary condition).
fn sol<T: Pixel>(img: &Image<T>) -> Accessor<T> {
    Accessor::new(img).with_boundary(Boundary::Constant(T::default()))
}

fn clamped<T: Pixel>(img: &Image<T>) -> Accessor<T> {
    Accessor::new(img).with_boundary(Boundary::Clamp)
}

pub(crate) mod sealed {
    use super::*;

    /// One method per kernel; `out` is the output image.
    pub trait Launch: Pixel {
        /// Weighted Jacobi (`colour` -1) or one colour of red-black
        /// Gauss-Seidel (`omega` 1).
        fn smooth(
            d: &Device,
            g: Grid,
            u: &Image<Self>,
            f: &Image<Self>,
            out: &Image<Self>,
            omega: f64,
            colour: i32,
        ) -> Result<()>;
        /// Runs `chain`'s correction and sweeps over grid `g` with
        /// right-hand side `f` as one pipeline.
        fn smooth_chain(
            d: &Device,
            g: Grid,
            f: &Image<Self>,
            chain: &blocked::Chain<'_, Self>,
        ) -> Result<()>;
        fn residual(
            d: &Device,
            g: Grid,
            u: &Image<Self>,
            f: &Image<Self>,
            out: &Image<Self>,
        ) -> Result<()>;
        fn restrict(d: &Device, fine: &Image<Self>, out: &Image<Self>) -> Result<()>;
        fn residual_restrict(
            d: &Device,
            g: Grid,
            u: &Image<Self>,
            f: &Image<Self>,
            out: &Image<Self>,
        ) -> Result<()>;
        /// `keep · u + P e` (`keep` 1: a correction; 0: interpolation).
        fn prolong(
            d: &Device,
            bc: f64,
            keep: f64,
            u: &Image<Self>,
            e: &Image<Self>,
            out: &Image<Self>,
        ) -> Result<()>;
        fn fill(d: &Device, value: f64, out: &Image<Self>) -> Result<()>;
        fn offset(d: &Device, input: &Image<Self>, value: f64, out: &Image<Self>) -> Result<()>;
        /// The IR of every kernel, bound to `fine` and `coarse` images.
        fn kernel_irs(
            g: Grid,
            fine: &Image<Self>,
            coarse: &Image<Self>,
        ) -> Result<Vec<hipacc_core::ir::Kernel>>;
    }
}

/// The ghost sign of a correction or solution: `-1` (odd reflection) for
/// Dirichlet, `+1` (even) for Neumann.
pub(crate) fn ghost_sign(bc: f64) -> f64 {
    -bc
}

macro_rules! launches {
    ($t:ident, $m:ident) => {
        impl $m::Smooth {
            /// A sweep (or half-sweep) over grid `g` reading `u` and `f`.
            fn on_grid(g: Grid, u: &Image<$t>, f: &Image<$t>, omega: f64, colour: i32) -> Self {
                $m::Smooth {
                    u: sol(u),
                    f: Accessor::new(f),
                    omega: omega as $t,
                    h2: g.h2 as $t,
                    bc: g.bc as $t,
                    w: g.w as i32,
                    h: g.h as i32,
                    colour,
                }
            }
        }

        impl $m::SmoothCells {
            /// [`$m::Smooth::on_grid`] on a grid of unequal cells.
            fn on_grid(g: Grid, u: &Image<$t>, f: &Image<$t>, omega: f64, colour: i32) -> Self {
                $m::SmoothCells {
                    u: sol(u),
                    f: Accessor::new(f),
                    omega: omega as $t,
                    h2: g.h2 as $t,
                    bc: g.bc as $t,
                    w: g.w as i32,
                    h: g.h as i32,
                    last_w: g.last_w as $t,
                    last_h: g.last_h as $t,
                    face_w: g.face_w() as $t,
                    face_h: g.face_h() as $t,
                    colour,
                }
            }
        }

        impl $m::Residual {
            /// The residual `f - A u` over grid `g`.
            fn on_grid(g: Grid, u: &Image<$t>, f: &Image<$t>) -> Self {
                $m::Residual {
                    u: sol(u),
                    f: Accessor::new(f),
                    inv_h2: (1.0 / g.h2) as $t,
                    bc: g.bc as $t,
                    w: g.w as i32,
                    h: g.h as i32,
                }
            }
        }

        impl $m::ResidualCells {
            /// [`$m::Residual::on_grid`] on a grid of unequal cells.
            fn on_grid(g: Grid, u: &Image<$t>, f: &Image<$t>) -> Self {
                $m::ResidualCells {
                    u: sol(u),
                    f: Accessor::new(f),
                    inv_h2: (1.0 / g.h2) as $t,
                    bc: g.bc as $t,
                    w: g.w as i32,
                    h: g.h as i32,
                    last_w: g.last_w as $t,
                    last_h: g.last_h as $t,
                    face_w: g.face_w() as $t,
                    face_h: g.face_h() as $t,
                }
            }
        }

        impl $m::ResidualRestrict {
            /// The residual over grid `g` restricted to the coarser grid.
            fn on_grid(g: Grid, u: &Image<$t>, f: &Image<$t>) -> Self {
                $m::ResidualRestrict {
                    u: sol(u),
                    f: sol(f),
                    inv_h2: (1.0 / g.h2) as $t,
                    bc: g.bc as $t,
                    w: g.w as i32,
                    h: g.h as i32,
                }
            }
        }

        impl $m::ResidualRestrictCells {
            /// [`$m::ResidualRestrict::on_grid`] on a grid of unequal cells.
            fn on_grid(g: Grid, u: &Image<$t>, f: &Image<$t>) -> Self {
                $m::ResidualRestrictCells {
                    u: sol(u),
                    f: sol(f),
                    inv_h2: (1.0 / g.h2) as $t,
                    bc: g.bc as $t,
                    w: g.w as i32,
                    h: g.h as i32,
                    last_w: g.last_w as $t,
                    last_h: g.last_h as $t,
                    face_w: g.face_w() as $t,
                    face_h: g.face_h() as $t,
                }
            }
        }

        impl $m::ProlongAdd {
            /// `keep · u + P e` with the ghost sign of boundary `bc`.
            fn on_grid(bc: f64, keep: f64, u: &Image<$t>, e: &Image<$t>) -> Self {
                $m::ProlongAdd {
                    u: Accessor::new(u),
                    e: clamped(e),
                    sign: ghost_sign(bc) as $t,
                    keep: keep as $t,
                    cw: e.width() as i32,
                    ch: e.height() as i32,
                }
            }
        }

        impl sealed::Launch for $t {
            fn smooth(
                d: &Device,
                g: Grid,
                u: &Image<$t>,
                f: &Image<$t>,
                out: &Image<$t>,
                omega: f64,
                colour: i32,
            ) -> Result<()> {
                if g.equal_cells() {
                    return $m::Smooth::on_grid(g, u, f, omega, colour)
                        .launch(d, IterationSpace::full(out));
                }
                $m::SmoothCells::on_grid(g, u, f, omega, colour)
                    .launch(d, IterationSpace::full(out))
            }
            fn smooth_chain(
                d: &Device,
                g: Grid,
                f: &Image<$t>,
                chain: &blocked::Chain<'_, $t>,
            ) -> Result<()> {
                let correction = chain
                    .correction
                    .map(|(bc, e)| $m::ProlongAdd::on_grid(bc, 1.0, chain.input, e));
                let last = chain.outs.last();
                let residual = chain.restrict.and(last);
                if g.equal_cells() {
                    let residual = residual.map(|u| $m::ResidualRestrict::on_grid(g, u, f));
                    return blocked::run(
                        d,
                        chain,
                        correction,
                        |u, (omega, colour)| $m::Smooth::on_grid(g, u, f, omega, colour),
                        residual,
                    );
                }
                let residual = residual.map(|u| $m::ResidualRestrictCells::on_grid(g, u, f));
                blocked::run(
                    d,
                    chain,
                    correction,
                    |u, (omega, colour)| $m::SmoothCells::on_grid(g, u, f, omega, colour),
                    residual,
                )
            }
            fn residual(
                d: &Device,
                g: Grid,
                u: &Image<$t>,
                f: &Image<$t>,
                out: &Image<$t>,
            ) -> Result<()> {
                if g.equal_cells() {
                    return $m::Residual::on_grid(g, u, f).launch(d, IterationSpace::full(out));
                }
                $m::ResidualCells::on_grid(g, u, f).launch(d, IterationSpace::full(out))
            }
            fn restrict(d: &Device, fine: &Image<$t>, out: &Image<$t>) -> Result<()> {
                $m::Restrict { fine: sol(fine) }.launch(d, IterationSpace::full(out))
            }
            fn residual_restrict(
                d: &Device,
                g: Grid,
                u: &Image<$t>,
                f: &Image<$t>,
                out: &Image<$t>,
            ) -> Result<()> {
                if g.equal_cells() {
                    return $m::ResidualRestrict::on_grid(g, u, f)
                        .launch(d, IterationSpace::full(out));
                }
                $m::ResidualRestrictCells::on_grid(g, u, f).launch(d, IterationSpace::full(out))
            }
            fn prolong(
                d: &Device,
                bc: f64,
                keep: f64,
                u: &Image<$t>,
                e: &Image<$t>,
                out: &Image<$t>,
            ) -> Result<()> {
                $m::ProlongAdd::on_grid(bc, keep, u, e).launch(d, IterationSpace::full(out))
            }
            fn fill(d: &Device, value: f64, out: &Image<$t>) -> Result<()> {
                $m::Fill { value: value as $t }.launch(d, IterationSpace::full(out))
            }
            fn offset(d: &Device, input: &Image<$t>, value: f64, out: &Image<$t>) -> Result<()> {
                $m::Offset {
                    input: Accessor::new(input),
                    offset: value as $t,
                }
                .launch(d, IterationSpace::full(out))
            }
            fn kernel_irs(
                g: Grid,
                fine: &Image<$t>,
                coarse: &Image<$t>,
            ) -> Result<Vec<hipacc_core::ir::Kernel>> {
                let (u, f) = (fine, fine);
                Ok(vec![
                    $m::Smooth::on_grid(g, u, f, 0.8, -1).ir()?,
                    $m::Residual::on_grid(g, u, f).ir()?,
                    $m::ResidualRestrict {
                        u: sol(u),
                        f: sol(f),
                        inv_h2: (1.0 / g.h2) as $t,
                        bc: g.bc as $t,
                        w: g.w as i32,
                        h: g.h as i32,
                    }
                    .ir()?,
                    $m::SmoothCells::on_grid(g, u, f, 0.8, -1).ir()?,
                    $m::ResidualCells::on_grid(g, u, f).ir()?,
                    $m::Restrict { fine: sol(fine) }.ir()?,
                    $m::ResidualRestrictCells {
                        u: sol(u),
                        f: sol(f),
                        inv_h2: (1.0 / g.h2) as $t,
                        bc: g.bc as $t,
                        w: g.w as i32,
                        h: g.h as i32,
                        last_w: g.last_w as $t,
                        last_h: g.last_h as $t,
                        face_w: g.face_w() as $t,
                        face_h: g.face_h() as $t,
                    }
                    .ir()?,
                    $m::ProlongAdd::on_grid(g.bc, 1.0, u, coarse).ir()?,
                    $m::Fill { value: 0.0 }.ir()?,
                    $m::Offset {
                        input: Accessor::new(fine),
                        offset: 0.0,
                    }
                    .ir()?,
                ])
            }
        }
    };
}

launches!(f32, k32);
launches!(f64, k64);
