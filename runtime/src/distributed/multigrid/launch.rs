//! The multigrid kernels' launches on distributed images.
//!
//! Each launch runs the origin-aware instance of a single-process kernel
//! (`k32_at`/`k64_at` of `multigrid::kernels`) through
//! [`execute`], its edge tests and colours in global coordinates from
//! [`Reads::origin`](crate::distributed::Reads::origin), with the
//! boundaries the single-process launches give the same reads.

use crate::distributed::{execute, DistImage, DistResult, LaunchStats};
use crate::multigrid::kernels::{k32_at, k64_at};
use crate::multigrid::real::{ghost_sign, Grid};
use crate::multigrid::Real;
use crate::Device;
use hipacc_core::Boundary;

/// A precision the distributed multigrid solver runs in: `f32` or `f64`.
pub trait DistReal: Real + sealed::DistLaunch {}

impl DistReal for f32 {}
impl DistReal for f64 {}

pub(crate) mod sealed {
    use super::*;

    /// One method per kernel, as the single-process `Launch`; `out` is
    /// the output image.
    pub trait DistLaunch: Sized + hipacc_core::Pixel {
        /// Weighted Jacobi (`colour` -1) or one colour of red-black
        /// Gauss-Seidel (`omega` 1).
        fn dist_smooth(
            d: &Device,
            g: Grid,
            u: &DistImage<Self>,
            f: &DistImage<Self>,
            out: &DistImage<Self>,
            omega: f64,
            colour: i32,
        ) -> DistResult<LaunchStats>;
        fn dist_residual(
            d: &Device,
            g: Grid,
            u: &DistImage<Self>,
            f: &DistImage<Self>,
            out: &DistImage<Self>,
        ) -> DistResult<LaunchStats>;
        /// Onto the next coarser grid.
        fn dist_restrict(
            d: &Device,
            fine: &DistImage<Self>,
            out: &DistImage<Self>,
        ) -> DistResult<LaunchStats>;
        /// Onto the next coarser grid.
        fn dist_residual_restrict(
            d: &Device,
            g: Grid,
            u: &DistImage<Self>,
            f: &DistImage<Self>,
            out: &DistImage<Self>,
        ) -> DistResult<LaunchStats>;
        /// `keep · u + P e` from the next coarser grid.
        fn dist_prolong(
            d: &Device,
            bc: f64,
            keep: f64,
            u: &DistImage<Self>,
            e: &DistImage<Self>,
            out: &DistImage<Self>,
        ) -> DistResult<LaunchStats>;
        fn dist_fill(d: &Device, value: f64, out: &DistImage<Self>) -> DistResult<LaunchStats>;
        fn dist_offset(
            d: &Device,
            input: &DistImage<Self>,
            value: f64,
            out: &DistImage<Self>,
        ) -> DistResult<LaunchStats>;
    }
}

macro_rules! dist_launches {
    ($t:ident, $m:ident) => {
        impl sealed::DistLaunch for $t {
            fn dist_smooth(
                d: &Device,
                g: Grid,
                u: &DistImage<$t>,
                f: &DistImage<$t>,
                out: &DistImage<$t>,
                omega: f64,
                colour: i32,
            ) -> DistResult<LaunchStats> {
                if g.equal_cells() {
                    return execute(d, out, |r| $m::Smooth {
                        u: r.accessor(u, Boundary::Constant(0.0)),
                        f: r.accessor(f, Boundary::Undefined),
                        omega: omega as $t,
                        h2: g.h2 as $t,
                        bc: g.bc as $t,
                        w: g.w as i32,
                        h: g.h as i32,
                        x0: r.origin().0,
                        y0: r.origin().1,
                        colour,
                    });
                }
                execute(d, out, |r| $m::SmoothCells {
                    u: r.accessor(u, Boundary::Constant(0.0)),
                    f: r.accessor(f, Boundary::Undefined),
                    omega: omega as $t,
                    h2: g.h2 as $t,
                    bc: g.bc as $t,
                    w: g.w as i32,
                    h: g.h as i32,
                    x0: r.origin().0,
                    y0: r.origin().1,
                    last_w: g.last_w as $t,
                    last_h: g.last_h as $t,
                    face_w: g.face_w() as $t,
                    face_h: g.face_h() as $t,
                    colour,
                })
            }
            fn dist_residual(
                d: &Device,
                g: Grid,
                u: &DistImage<$t>,
                f: &DistImage<$t>,
                out: &DistImage<$t>,
            ) -> DistResult<LaunchStats> {
                if g.equal_cells() {
                    return execute(d, out, |r| $m::Residual {
                        u: r.accessor(u, Boundary::Constant(0.0)),
                        f: r.accessor(f, Boundary::Undefined),
                        inv_h2: (1.0 / g.h2) as $t,
                        bc: g.bc as $t,
                        w: g.w as i32,
                        h: g.h as i32,
                        x0: r.origin().0,
                        y0: r.origin().1,
                    });
                }
                execute(d, out, |r| $m::ResidualCells {
                    u: r.accessor(u, Boundary::Constant(0.0)),
                    f: r.accessor(f, Boundary::Undefined),
                    inv_h2: (1.0 / g.h2) as $t,
                    bc: g.bc as $t,
                    w: g.w as i32,
                    h: g.h as i32,
                    x0: r.origin().0,
                    y0: r.origin().1,
                    last_w: g.last_w as $t,
                    last_h: g.last_h as $t,
                    face_w: g.face_w() as $t,
                    face_h: g.face_h() as $t,
                })
            }
            fn dist_restrict(
                d: &Device,
                fine: &DistImage<$t>,
                out: &DistImage<$t>,
            ) -> DistResult<LaunchStats> {
                execute(d, out, |r| $m::Restrict {
                    fine: r.accessor(fine, Boundary::Constant(0.0)),
                })
            }
            fn dist_residual_restrict(
                d: &Device,
                g: Grid,
                u: &DistImage<$t>,
                f: &DistImage<$t>,
                out: &DistImage<$t>,
            ) -> DistResult<LaunchStats> {
                if g.equal_cells() {
                    return execute(d, out, |r| $m::ResidualRestrict {
                        u: r.accessor(u, Boundary::Constant(0.0)),
                        f: r.accessor(f, Boundary::Constant(0.0)),
                        inv_h2: (1.0 / g.h2) as $t,
                        bc: g.bc as $t,
                        w: g.w as i32,
                        h: g.h as i32,
                        x0: r.origin().0,
                        y0: r.origin().1,
                    });
                }
                execute(d, out, |r| $m::ResidualRestrictCells {
                    u: r.accessor(u, Boundary::Constant(0.0)),
                    f: r.accessor(f, Boundary::Constant(0.0)),
                    inv_h2: (1.0 / g.h2) as $t,
                    bc: g.bc as $t,
                    w: g.w as i32,
                    h: g.h as i32,
                    x0: r.origin().0,
                    y0: r.origin().1,
                    last_w: g.last_w as $t,
                    last_h: g.last_h as $t,
                    face_w: g.face_w() as $t,
                    face_h: g.face_h() as $t,
                })
            }
            fn dist_prolong(
                d: &Device,
                bc: f64,
                keep: f64,
                u: &DistImage<$t>,
                e: &DistImage<$t>,
                out: &DistImage<$t>,
            ) -> DistResult<LaunchStats> {
                let (cw, ch) = (e.grid().width() as i32, e.grid().height() as i32);
                execute(d, out, |r| $m::ProlongAdd {
                    u: r.accessor(u, Boundary::Undefined),
                    e: r.accessor(e, Boundary::Clamp),
                    sign: ghost_sign(bc) as $t,
                    keep: keep as $t,
                    cw,
                    ch,
                    x0: r.origin().0,
                    y0: r.origin().1,
                })
            }
            fn dist_fill(d: &Device, value: f64, out: &DistImage<$t>) -> DistResult<LaunchStats> {
                execute(d, out, |_| $m::Fill { value: value as $t })
            }
            fn dist_offset(
                d: &Device,
                input: &DistImage<$t>,
                value: f64,
                out: &DistImage<$t>,
            ) -> DistResult<LaunchStats> {
                execute(d, out, |r| $m::Offset {
                    input: r.accessor(input, Boundary::Undefined),
                    offset: value as $t,
                })
            }
        }
    };
}

dist_launches!(f32, k32_at);
dist_launches!(f64, k64_at);
