//! The precisions the solver runs in, and the launches of its kernels.

use super::kernels::{k32, k64};
use crate::cpu::replay::Record;
#[cfg(feature = "distributed")]
use crate::distributed::{self, DistImage, DistResult, LaunchStats};
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
        /// [`Self::smooth`] on distributed images.
        #[cfg(feature = "distributed")]
        fn dist_smooth(
            d: &Device,
            g: Grid,
            u: &DistImage<Self>,
            f: &DistImage<Self>,
            out: &DistImage<Self>,
            omega: f64,
            colour: i32,
        ) -> DistResult<LaunchStats>;
        /// [`Self::residual`] on distributed images.
        #[cfg(feature = "distributed")]
        fn dist_residual(
            d: &Device,
            g: Grid,
            u: &DistImage<Self>,
            f: &DistImage<Self>,
            out: &DistImage<Self>,
        ) -> DistResult<LaunchStats>;
        /// [`Self::restrict`] onto the next coarser distributed grid.
        #[cfg(feature = "distributed")]
        fn dist_restrict(
            d: &Device,
            fine: &DistImage<Self>,
            out: &DistImage<Self>,
        ) -> DistResult<LaunchStats>;
        /// [`Self::residual_restrict`] onto the next coarser distributed grid.
        #[cfg(feature = "distributed")]
        fn dist_residual_restrict(
            d: &Device,
            g: Grid,
            u: &DistImage<Self>,
            f: &DistImage<Self>,
            out: &DistImage<Self>,
        ) -> DistResult<LaunchStats>;
        /// [`Self::prolong`] from the next coarser distributed grid.
        #[cfg(feature = "distributed")]
        fn dist_prolong(
            d: &Device,
            bc: f64,
            keep: f64,
            u: &DistImage<Self>,
            e: &DistImage<Self>,
            out: &DistImage<Self>,
        ) -> DistResult<LaunchStats>;
        /// [`Self::fill`] on a distributed image.
        #[cfg(feature = "distributed")]
        fn dist_fill(d: &Device, value: f64, out: &DistImage<Self>) -> DistResult<LaunchStats>;
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
fn ghost_sign(bc: f64) -> f64 {
    -bc
}

/// Binds `$k` to a closure building the smoothing kernel for grid `$g`
/// from the accessors of `u` and `f` and the launch's origin, and
/// evaluates `$run` with it: the plain kernel on equal cells, the coupled
/// one otherwise. Single-process and distributed launches share it.
macro_rules! smooth_kernel {
    ($m:ident, $t:ident, $g:expr, $omega:expr, $colour:expr, |$k:ident| $run:expr) => {{
        let (g, omega, colour): (Grid, f64, i32) = ($g, $omega, $colour);
        if g.equal_cells() {
            let $k = |u: Accessor<$t>, f: Accessor<$t>, o: (i32, i32)| $m::Smooth {
                u,
                f,
                omega: omega as $t,
                h2: g.h2 as $t,
                bc: g.bc as $t,
                w: g.w as i32,
                h: g.h as i32,
                x0: o.0,
                y0: o.1,
                colour,
            };
            $run
        } else {
            let $k = |u: Accessor<$t>, f: Accessor<$t>, o: (i32, i32)| $m::SmoothCells {
                u,
                f,
                omega: omega as $t,
                h2: g.h2 as $t,
                bc: g.bc as $t,
                w: g.w as i32,
                h: g.h as i32,
                x0: o.0,
                y0: o.1,
                last_w: g.last_w as $t,
                last_h: g.last_h as $t,
                face_w: g.face_w() as $t,
                face_h: g.face_h() as $t,
                colour,
            };
            $run
        }
    }};
}

/// [`smooth_kernel`] for the residual (`$restrict` false) or the fused
/// residual and restriction (`$restrict` true: `$plain`/`$cells` name
/// those kernels).
macro_rules! residual_kernel {
    ($m:ident, $t:ident, $plain:ident, $cells:ident, $g:expr, |$k:ident| $run:expr) => {{
        let g: Grid = $g;
        if g.equal_cells() {
            let $k = |u: Accessor<$t>, f: Accessor<$t>, o: (i32, i32)| $m::$plain {
                u,
                f,
                inv_h2: (1.0 / g.h2) as $t,
                bc: g.bc as $t,
                w: g.w as i32,
                h: g.h as i32,
                x0: o.0,
                y0: o.1,
            };
            $run
        } else {
            let $k = |u: Accessor<$t>, f: Accessor<$t>, o: (i32, i32)| $m::$cells {
                u,
                f,
                inv_h2: (1.0 / g.h2) as $t,
                bc: g.bc as $t,
                w: g.w as i32,
                h: g.h as i32,
                x0: o.0,
                y0: o.1,
                last_w: g.last_w as $t,
                last_h: g.last_h as $t,
                face_w: g.face_w() as $t,
                face_h: g.face_h() as $t,
            };
            $run
        }
    }};
}

/// The prolongation `keep · u + P e` from a `cw x ch` coarse grid.
macro_rules! prolong_kernel {
    ($m:ident, $t:ident, $bc:expr, $keep:expr, $cw:expr, $ch:expr) => {
        |u: Accessor<$t>, e: Accessor<$t>, o: (i32, i32)| $m::ProlongAdd {
            u,
            e,
            sign: ghost_sign($bc) as $t,
            keep: $keep as $t,
            cw: $cw as i32,
            ch: $ch as i32,
            x0: o.0,
            y0: o.1,
        }
    };
}

macro_rules! launches {
    ($t:ident, $m:ident) => {
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
                smooth_kernel!($m, $t, g, omega, colour, |k| k(
                    sol(u),
                    Accessor::new(f),
                    (0, 0)
                )
                .launch(d, IterationSpace::full(out)))
            }
            fn residual(
                d: &Device,
                g: Grid,
                u: &Image<$t>,
                f: &Image<$t>,
                out: &Image<$t>,
            ) -> Result<()> {
                residual_kernel!($m, $t, Residual, ResidualCells, g, |k| k(
                    sol(u),
                    Accessor::new(f),
                    (0, 0)
                )
                .launch(d, IterationSpace::full(out)))
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
                residual_kernel!($m, $t, ResidualRestrict, ResidualRestrictCells, g, |k| k(
                    sol(u),
                    sol(f),
                    (0, 0)
                )
                .launch(d, IterationSpace::full(out)))
            }
            fn prolong(
                d: &Device,
                bc: f64,
                keep: f64,
                u: &Image<$t>,
                e: &Image<$t>,
                out: &Image<$t>,
            ) -> Result<()> {
                let k = prolong_kernel!($m, $t, bc, keep, e.width(), e.height());
                k(Accessor::new(u), clamped(e), (0, 0)).launch(d, IterationSpace::full(out))
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
            #[cfg(feature = "distributed")]
            fn dist_smooth(
                d: &Device,
                g: Grid,
                u: &DistImage<$t>,
                f: &DistImage<$t>,
                out: &DistImage<$t>,
                omega: f64,
                colour: i32,
            ) -> DistResult<LaunchStats> {
                smooth_kernel!($m, $t, g, omega, colour, |k| distributed::execute(
                    d,
                    out,
                    |r| k(
                        r.accessor(u, Boundary::Constant(0.0)),
                        r.accessor(f, Boundary::Undefined),
                        r.origin()
                    )
                ))
            }
            #[cfg(feature = "distributed")]
            fn dist_residual(
                d: &Device,
                g: Grid,
                u: &DistImage<$t>,
                f: &DistImage<$t>,
                out: &DistImage<$t>,
            ) -> DistResult<LaunchStats> {
                residual_kernel!($m, $t, Residual, ResidualCells, g, |k| {
                    distributed::execute(d, out, |r| {
                        k(
                            r.accessor(u, Boundary::Constant(0.0)),
                            r.accessor(f, Boundary::Undefined),
                            r.origin(),
                        )
                    })
                })
            }
            #[cfg(feature = "distributed")]
            fn dist_restrict(
                d: &Device,
                fine: &DistImage<$t>,
                out: &DistImage<$t>,
            ) -> DistResult<LaunchStats> {
                distributed::execute(d, out, |r| $m::Restrict {
                    fine: r.accessor(fine, Boundary::Constant(0.0)),
                })
            }
            #[cfg(feature = "distributed")]
            fn dist_residual_restrict(
                d: &Device,
                g: Grid,
                u: &DistImage<$t>,
                f: &DistImage<$t>,
                out: &DistImage<$t>,
            ) -> DistResult<LaunchStats> {
                residual_kernel!($m, $t, ResidualRestrict, ResidualRestrictCells, g, |k| {
                    distributed::execute(d, out, |r| {
                        k(
                            r.accessor(u, Boundary::Constant(0.0)),
                            r.accessor(f, Boundary::Constant(0.0)),
                            r.origin(),
                        )
                    })
                })
            }
            #[cfg(feature = "distributed")]
            fn dist_prolong(
                d: &Device,
                bc: f64,
                keep: f64,
                u: &DistImage<$t>,
                e: &DistImage<$t>,
                out: &DistImage<$t>,
            ) -> DistResult<LaunchStats> {
                let (cw, ch) = (e.grid().width(), e.grid().height());
                let k = prolong_kernel!($m, $t, bc, keep, cw, ch);
                distributed::execute(d, out, |r| {
                    k(
                        r.accessor(u, Boundary::Undefined),
                        r.accessor(e, Boundary::Clamp),
                        r.origin(),
                    )
                })
            }
            #[cfg(feature = "distributed")]
            fn dist_fill(d: &Device, value: f64, out: &DistImage<$t>) -> DistResult<LaunchStats> {
                distributed::execute(d, out, |_| $m::Fill { value: value as $t })
            }
            fn kernel_irs(
                g: Grid,
                fine: &Image<$t>,
                coarse: &Image<$t>,
            ) -> Result<Vec<hipacc_core::ir::Kernel>> {
                let (u, f) = (fine, fine);
                Ok(vec![
                    $m::Smooth {
                        u: sol(u),
                        f: Accessor::new(f),
                        omega: 0.8,
                        h2: g.h2 as $t,
                        bc: g.bc as $t,
                        w: g.w as i32,
                        h: g.h as i32,
                        x0: 0,
                        y0: 0,
                        colour: -1,
                    }
                    .ir()?,
                    $m::Residual {
                        u: sol(u),
                        f: Accessor::new(f),
                        inv_h2: (1.0 / g.h2) as $t,
                        bc: g.bc as $t,
                        w: g.w as i32,
                        h: g.h as i32,
                        x0: 0,
                        y0: 0,
                    }
                    .ir()?,
                    $m::ResidualRestrict {
                        u: sol(u),
                        f: sol(f),
                        inv_h2: (1.0 / g.h2) as $t,
                        bc: g.bc as $t,
                        w: g.w as i32,
                        h: g.h as i32,
                        x0: 0,
                        y0: 0,
                    }
                    .ir()?,
                    $m::SmoothCells {
                        u: sol(u),
                        f: Accessor::new(f),
                        omega: 0.8,
                        h2: g.h2 as $t,
                        bc: g.bc as $t,
                        w: g.w as i32,
                        h: g.h as i32,
                        x0: 0,
                        y0: 0,
                        last_w: g.last_w as $t,
                        last_h: g.last_h as $t,
                        face_w: g.face_w() as $t,
                        face_h: g.face_h() as $t,
                        colour: -1,
                    }
                    .ir()?,
                    $m::ResidualCells {
                        u: sol(u),
                        f: Accessor::new(f),
                        inv_h2: (1.0 / g.h2) as $t,
                        bc: g.bc as $t,
                        w: g.w as i32,
                        h: g.h as i32,
                        x0: 0,
                        y0: 0,
                        last_w: g.last_w as $t,
                        last_h: g.last_h as $t,
                        face_w: g.face_w() as $t,
                        face_h: g.face_h() as $t,
                    }
                    .ir()?,
                    $m::Restrict { fine: sol(fine) }.ir()?,
                    $m::ResidualRestrictCells {
                        u: sol(u),
                        f: sol(f),
                        inv_h2: (1.0 / g.h2) as $t,
                        bc: g.bc as $t,
                        w: g.w as i32,
                        h: g.h as i32,
                        x0: 0,
                        y0: 0,
                        last_w: g.last_w as $t,
                        last_h: g.last_h as $t,
                        face_w: g.face_w() as $t,
                        face_h: g.face_h() as $t,
                    }
                    .ir()?,
                    $m::ProlongAdd {
                        u: Accessor::new(u),
                        e: clamped(coarse),
                        sign: ghost_sign(g.bc) as $t,
                        keep: 1.0,
                        cw: coarse.width() as i32,
                        ch: coarse.height() as i32,
                        x0: 0,
                        y0: 0,
                    }
                    .ir()?,
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
