//! The multigrid kernels, written in the DSL once per precision.
//!
//! Every kernel reads the solution with [`Boundary::Constant`]`(0)`: a
//! neighbour outside the grid contributes nothing to the neighbour sum and
//! the boundary condition enters through the diagonal instead (see the
//! [multigrid docs](super)). `e` counts the sides of the cell on the
//! boundary, so the diagonal is `4 + bc * e` with `bc = +1` (Dirichlet,
//! ghost `-u`) or `-1` (Neumann, ghost `u`) on a grid of equal cells.
//!
//! The last column and row of a coarse level may be narrower than the
//! other cells (`last_w`, `last_h` in cell widths). The operator is then
//! the finite-volume one: each face couples its two cells with its length
//! over the distance of their centres, `c = a⊥ · 2 / (a + a')`, and the
//! diagonal is the sum of the couplings (plus `2 e` for Dirichlet, whose
//! grids have equal cells). Those are the `*Cells` kernels; a level of
//! equal cells (every finest level, and every level of an even size) runs
//! the plain 5-point kernels, which do less arithmetic per cell.
//!
//! Kernels that read a grid of another size (restriction, prolongation)
//! read through computed offsets: with the space's origin at 0, the offset
//! `x() + i` reads position `2 x + i` of the finer grid, and `x() / 2 - x()`
//! position `x / 2` of the coarser one.
//!
//! The distributed solver runs one rank's block of a grid, whose edge
//! tests and red-black colours need global coordinates: its instances
//! (`origin(x0, y0)`) take the launch's origin as two more parameters and
//! add it where a coordinate is compared. The single-process instances
//! have no such parameters and compare `x()` itself: the CPU backend
//! folds those edge tests, which it cannot do against a run-time origin.

// `1 as f64` and friends come from stamping one body out per precision.
#![allow(clippy::unnecessary_cast)]

/// The kernels over `$t` pixels, in module `$m`.
macro_rules! multigrid_kernels {
    ($m:ident, $t:ident $(, origin($x0:ident, $y0:ident))?) => {
        #[doc = concat!("Multigrid kernels over `", stringify!($t), "`.")]
        pub(crate) mod $m {
            use crate::prelude::*;

            /// One smoothing launch: `u' = (1 - w) u + w (h² f + Σ nb) / d`
            /// on every cell (`colour` -1: weighted Jacobi) or on the cells of
            /// one colour (`(x + y) % 2 == colour`, `w` 1: a Gauss-Seidel
            /// half-sweep), the other colour passing through unchanged.
            #[derive(Kernel)]
            #[kernel(output = $t)]
            pub(crate) struct Smooth {
                pub(crate) u: Accessor<$t>,
                pub(crate) f: Accessor<$t>,
                pub(crate) omega: $t,
                pub(crate) h2: $t,
                pub(crate) bc: $t,
                pub(crate) w: i32,
                pub(crate) h: i32,
                $(
                    /// Global coordinates of the launch's `(0, 0)`.
                    pub(crate) $x0: i32,
                    pub(crate) $y0: i32,
                )?
                pub(crate) colour: i32,
            }

            #[kernel_body]
            impl Smooth {
                fn kernel(&self) -> $t {
                    let ex: $t = if x() $(+ self.$x0)? == 0 { 1.0 } else { 0.0 };
                    let ew: $t = if x() $(+ self.$x0)? == self.w - 1 { 1.0 } else { 0.0 };
                    let ey: $t = if y() $(+ self.$y0)? == 0 { 1.0 } else { 0.0 };
                    let eh: $t = if y() $(+ self.$y0)? == self.h - 1 { 1.0 } else { 0.0 };
                    let d = 4.0 + self.bc * (ex + ew + ey + eh);
                    let nb =
                        self.u.at(-1, 0) + self.u.at(1, 0) + self.u.at(0, -1) + self.u.at(0, 1);
                    let update =
                        (1.0 - self.omega) * self.u() + self.omega * (self.h2 * self.f() + nb) / d;
                    if self.colour < 0 || (x() $(+ self.$x0)? + y() $(+ self.$y0)?) % 2 == self.colour {
                        update
                    } else {
                        self.u()
                    }
                }
            }

            /// [`Smooth`] on a grid whose last column or row is narrower:
            /// `u' = (1 - w) u + w (h² f + Σ c nb) / d` with `c` the coupling
            /// of each face (see the [module docs](super)).
            #[derive(Kernel)]
            #[kernel(output = $t)]
            pub(crate) struct SmoothCells {
                pub(crate) u: Accessor<$t>,
                pub(crate) f: Accessor<$t>,
                pub(crate) omega: $t,
                pub(crate) h2: $t,
                pub(crate) bc: $t,
                pub(crate) w: i32,
                pub(crate) h: i32,
                $(
                    /// Global coordinates of the launch's `(0, 0)`.
                    pub(crate) $x0: i32,
                    pub(crate) $y0: i32,
                )?
                /// Width of the last column, in cell widths.
                pub(crate) last_w: $t,
                /// Height of the last row.
                pub(crate) last_h: $t,
                /// Coupling across the face into the last column.
                pub(crate) face_w: $t,
                /// Coupling across the face into the last row.
                pub(crate) face_h: $t,
                pub(crate) colour: i32,
            }

            #[kernel_body]
            impl SmoothCells {
                fn kernel(&self) -> $t {
                    let ex: $t = if x() $(+ self.$x0)? == 0 { 1.0 } else { 0.0 };
                    let ew: $t = if x() $(+ self.$x0)? == self.w - 1 { 1.0 } else { 0.0 };
                    let ey: $t = if y() $(+ self.$y0)? == 0 { 1.0 } else { 0.0 };
                    let eh: $t = if y() $(+ self.$y0)? == self.h - 1 { 1.0 } else { 0.0 };
                    let ax: $t = if x() $(+ self.$x0)? == self.w - 1 { self.last_w } else { 1.0 };
                    let ay: $t = if y() $(+ self.$y0)? == self.h - 1 { self.last_h } else { 1.0 };
                    let kw: $t = if x() $(+ self.$x0)? == self.w - 1 { self.face_w } else { 1.0 };
                    let ke: $t = if x() $(+ self.$x0)? == self.w - 2 { self.face_w } else { 1.0 };
                    let kn: $t = if y() $(+ self.$y0)? == self.h - 1 { self.face_h } else { 1.0 };
                    let ks: $t = if y() $(+ self.$y0)? == self.h - 2 { self.face_h } else { 1.0 };
                    let cw = ay * kw * (1.0 - ex);
                    let ce = ay * ke * (1.0 - ew);
                    let cn = ax * kn * (1.0 - ey);
                    let cs = ax * ks * (1.0 - eh);
                    let d = cw + ce + cn + cs + (1.0 + self.bc) * (ex + ew + ey + eh);
                    let nb = cw * self.u.at(-1, 0)
                        + ce * self.u.at(1, 0)
                        + cn * self.u.at(0, -1)
                        + cs * self.u.at(0, 1);
                    let update =
                        (1.0 - self.omega) * self.u() + self.omega * (self.h2 * self.f() + nb) / d;
                    if self.colour < 0 || (x() $(+ self.$x0)? + y() $(+ self.$y0)?) % 2 == self.colour {
                        update
                    } else {
                        self.u()
                    }
                }
            }

            /// The residual `r = f - (d u - Σ nb) / h²`.
            #[derive(Kernel)]
            #[kernel(output = $t)]
            pub(crate) struct Residual {
                pub(crate) u: Accessor<$t>,
                pub(crate) f: Accessor<$t>,
                pub(crate) inv_h2: $t,
                pub(crate) bc: $t,
                pub(crate) w: i32,
                pub(crate) h: i32,
                $(
                    /// Global coordinates of the launch's `(0, 0)`.
                    pub(crate) $x0: i32,
                    pub(crate) $y0: i32,
                )?
            }

            #[kernel_body]
            impl Residual {
                fn kernel(&self) -> $t {
                    let ex: $t = if x() $(+ self.$x0)? == 0 { 1.0 } else { 0.0 };
                    let ew: $t = if x() $(+ self.$x0)? == self.w - 1 { 1.0 } else { 0.0 };
                    let ey: $t = if y() $(+ self.$y0)? == 0 { 1.0 } else { 0.0 };
                    let eh: $t = if y() $(+ self.$y0)? == self.h - 1 { 1.0 } else { 0.0 };
                    let d = 4.0 + self.bc * (ex + ew + ey + eh);
                    let nb =
                        self.u.at(-1, 0) + self.u.at(1, 0) + self.u.at(0, -1) + self.u.at(0, 1);
                    self.f() - (d * self.u() - nb) * self.inv_h2
                }
            }

            /// [`Residual`] on a grid whose last column or row is narrower:
            /// `r = f - (d u - Σ c nb) / h²`.
            #[derive(Kernel)]
            #[kernel(output = $t)]
            pub(crate) struct ResidualCells {
                pub(crate) u: Accessor<$t>,
                pub(crate) f: Accessor<$t>,
                pub(crate) inv_h2: $t,
                pub(crate) bc: $t,
                pub(crate) w: i32,
                pub(crate) h: i32,
                $(
                    /// Global coordinates of the launch's `(0, 0)`.
                    pub(crate) $x0: i32,
                    pub(crate) $y0: i32,
                )?
                pub(crate) last_w: $t,
                pub(crate) last_h: $t,
                pub(crate) face_w: $t,
                pub(crate) face_h: $t,
            }

            #[kernel_body]
            impl ResidualCells {
                fn kernel(&self) -> $t {
                    let ex: $t = if x() $(+ self.$x0)? == 0 { 1.0 } else { 0.0 };
                    let ew: $t = if x() $(+ self.$x0)? == self.w - 1 { 1.0 } else { 0.0 };
                    let ey: $t = if y() $(+ self.$y0)? == 0 { 1.0 } else { 0.0 };
                    let eh: $t = if y() $(+ self.$y0)? == self.h - 1 { 1.0 } else { 0.0 };
                    let ax: $t = if x() $(+ self.$x0)? == self.w - 1 { self.last_w } else { 1.0 };
                    let ay: $t = if y() $(+ self.$y0)? == self.h - 1 { self.last_h } else { 1.0 };
                    let kw: $t = if x() $(+ self.$x0)? == self.w - 1 { self.face_w } else { 1.0 };
                    let ke: $t = if x() $(+ self.$x0)? == self.w - 2 { self.face_w } else { 1.0 };
                    let kn: $t = if y() $(+ self.$y0)? == self.h - 1 { self.face_h } else { 1.0 };
                    let ks: $t = if y() $(+ self.$y0)? == self.h - 2 { self.face_h } else { 1.0 };
                    let cw = ay * kw * (1.0 - ex);
                    let ce = ay * ke * (1.0 - ew);
                    let cn = ax * kn * (1.0 - ey);
                    let cs = ax * ks * (1.0 - eh);
                    let d = cw + ce + cn + cs + (1.0 + self.bc) * (ex + ew + ey + eh);
                    let nb = cw * self.u.at(-1, 0)
                        + ce * self.u.at(1, 0)
                        + cn * self.u.at(0, -1)
                        + cs * self.u.at(0, 1);
                    self.f() - (d * self.u() - nb) * self.inv_h2
                }
            }

            /// Restriction: a quarter of the sum of the 2x2 fine cells a
            /// coarse cell covers (read with a constant-0 boundary: past an
            /// odd edge the grid is padded with cells of zero residual).
            #[derive(Kernel)]
            #[kernel(output = $t)]
            pub(crate) struct Restrict {
                pub(crate) fine: Accessor<$t>,
            }

            #[kernel_body]
            impl Restrict {
                fn kernel(&self) -> $t {
                    let s = self.fine.at(x(), y())
                        + self.fine.at(x() + 1, y())
                        + self.fine.at(x(), y() + 1)
                        + self.fine.at(x() + 1, y() + 1);
                    0.25 * s
                }
            }

            /// Residual and restriction fused: a quarter of the sum of the
            /// residuals of the 2x2 fine cells under the coarse cell,
            /// computed where they are read (cells past an odd edge count
            /// as zero, as in [`Restrict`]).
            #[derive(Kernel)]
            #[kernel(output = $t)]
            pub(crate) struct ResidualRestrict {
                pub(crate) u: Accessor<$t>,
                pub(crate) f: Accessor<$t>,
                pub(crate) inv_h2: $t,
                pub(crate) bc: $t,
                /// Fine-grid width.
                pub(crate) w: i32,
                /// Fine-grid height.
                pub(crate) h: i32,
                $(
                    /// Global coordinates of the launch's `(0, 0)`.
                    pub(crate) $x0: i32,
                    pub(crate) $y0: i32,
                )?
            }

            #[kernel_body]
            impl ResidualRestrict {
                fn kernel(&self) -> $t {
                    let mut s: $t = 0.0;
                    for j in 0..2 {
                        for i in 0..2 {
                            let fx = 2 * x() + i;
                            let fy = 2 * y() + j;
                            let ex: $t = if fx $(+ 2 * self.$x0)? == 0 { 1.0 } else { 0.0 };
                            let ew: $t = if fx $(+ 2 * self.$x0)? == self.w - 1 { 1.0 } else { 0.0 };
                            let ey: $t = if fy $(+ 2 * self.$y0)? == 0 { 1.0 } else { 0.0 };
                            let eh: $t = if fy $(+ 2 * self.$y0)? == self.h - 1 { 1.0 } else { 0.0 };
                            let d = 4.0 + self.bc * (ex + ew + ey + eh);
                            let ox = fx - x();
                            let oy = fy - y();
                            let nb = self.u.at(ox - 1, oy)
                                + self.u.at(ox + 1, oy)
                                + self.u.at(ox, oy - 1)
                                + self.u.at(ox, oy + 1);
                            let r = self.f.at(ox, oy) - (d * self.u.at(ox, oy) - nb) * self.inv_h2;
                            // Cells past an odd edge are padding: no residual.
                            let in_x: $t = if fx $(+ 2 * self.$x0)? < self.w { 1.0 } else { 0.0 };
                            let in_y: $t = if fy $(+ 2 * self.$y0)? < self.h { 1.0 } else { 0.0 };
                            s += in_x * in_y * r;
                        }
                    }
                    0.25 * s
                }
            }

            /// [`ResidualRestrict`] from a fine grid whose last column or row
            /// is narrower: a quarter of the sum of the
            /// residuals of the 2x2 fine cells under the coarse cell,
            /// computed where they are read (cells past an odd edge count
            /// as zero, as in [`Restrict`]).
            #[derive(Kernel)]
            #[kernel(output = $t)]
            pub(crate) struct ResidualRestrictCells {
                pub(crate) u: Accessor<$t>,
                pub(crate) f: Accessor<$t>,
                pub(crate) inv_h2: $t,
                pub(crate) bc: $t,
                /// Fine-grid width.
                pub(crate) w: i32,
                /// Fine-grid height.
                pub(crate) h: i32,
                $(
                    /// Global coordinates of the launch's `(0, 0)`.
                    pub(crate) $x0: i32,
                    pub(crate) $y0: i32,
                )?
                /// The fine grid's last column width, as in [`Smooth`].
                pub(crate) last_w: $t,
                pub(crate) last_h: $t,
                pub(crate) face_w: $t,
                pub(crate) face_h: $t,
            }

            #[kernel_body]
            impl ResidualRestrictCells {
                fn kernel(&self) -> $t {
                    let mut s: $t = 0.0;
                    for j in 0..2 {
                        for i in 0..2 {
                            let fx = 2 * x() + i;
                            let fy = 2 * y() + j;
                            let ex: $t = if fx $(+ 2 * self.$x0)? == 0 { 1.0 } else { 0.0 };
                            let ew: $t = if fx $(+ 2 * self.$x0)? == self.w - 1 { 1.0 } else { 0.0 };
                            let ey: $t = if fy $(+ 2 * self.$y0)? == 0 { 1.0 } else { 0.0 };
                            let eh: $t = if fy $(+ 2 * self.$y0)? == self.h - 1 { 1.0 } else { 0.0 };
                            let ax: $t = if fx $(+ 2 * self.$x0)? == self.w - 1 { self.last_w } else { 1.0 };
                            let ay: $t = if fy $(+ 2 * self.$y0)? == self.h - 1 { self.last_h } else { 1.0 };
                            let kw: $t = if fx $(+ 2 * self.$x0)? == self.w - 1 { self.face_w } else { 1.0 };
                            let ke: $t = if fx $(+ 2 * self.$x0)? == self.w - 2 { self.face_w } else { 1.0 };
                            let kn: $t = if fy $(+ 2 * self.$y0)? == self.h - 1 { self.face_h } else { 1.0 };
                            let ks: $t = if fy $(+ 2 * self.$y0)? == self.h - 2 { self.face_h } else { 1.0 };
                            let cw = ay * kw * (1.0 - ex);
                            let ce = ay * ke * (1.0 - ew);
                            let cn = ax * kn * (1.0 - ey);
                            let cs = ax * ks * (1.0 - eh);
                            let d = cw + ce + cn + cs + (1.0 + self.bc) * (ex + ew + ey + eh);
                            let ox = fx - x();
                            let oy = fy - y();
                            let nb = cw * self.u.at(ox - 1, oy)
                                + ce * self.u.at(ox + 1, oy)
                                + cn * self.u.at(ox, oy - 1)
                                + cs * self.u.at(ox, oy + 1);
                            let r = self.f.at(ox, oy) - (d * self.u.at(ox, oy) - nb) * self.inv_h2;
                            // Cells past an odd edge are padding: no residual.
                            let in_x: $t = if fx $(+ 2 * self.$x0)? < self.w { 1.0 } else { 0.0 };
                            let in_y: $t = if fy $(+ 2 * self.$y0)? < self.h { 1.0 } else { 0.0 };
                            s += in_x * in_y * r;
                        }
                    }
                    0.25 * s
                }
            }

            /// Coarse-grid correction `keep · u + P e`, with `P` bilinear
            /// interpolation between cell centres (weights 9/16, 3/16, 3/16,
            /// 1/16): `keep = 1` adds a correction, `keep = 0` interpolates
            /// a coarse solution (the step up of full multigrid). A coarse
            /// neighbour outside the grid is the ghost `sign * e`.
            #[derive(Kernel)]
            #[kernel(output = $t)]
            pub(crate) struct ProlongAdd {
                pub(crate) u: Accessor<$t>,
                pub(crate) e: Accessor<$t>,
                pub(crate) sign: $t,
                pub(crate) keep: $t,
                /// Coarse-grid width.
                pub(crate) cw: i32,
                /// Coarse-grid height.
                pub(crate) ch: i32,
                $(
                    /// Global coordinates of the (even) launch's `(0, 0)`.
                    pub(crate) $x0: i32,
                    pub(crate) $y0: i32,
                )?
            }

            #[kernel_body]
            impl ProlongAdd {
                fn kernel(&self) -> $t {
                    let cx = x() / 2;
                    let cy = y() / 2;
                    // The coarse neighbour away from the cell centre: `cx - 1`
                    // for an even `x()`, `cx + 1` for an odd one (`x() % 2` is
                    // `x() - 2 cx`), written affinely in `x()` and `x() / 2`.
                    let nx = 2 * x() - 3 * cx - 1;
                    let ny = 2 * y() - 3 * cy - 1;
                    let mut sx: $t = 1.0;
                    if nx $(+ self.$x0 / 2)? < 0 || nx $(+ self.$x0 / 2)? >= self.cw {
                        sx = self.sign;
                    }
                    let mut sy: $t = 1.0;
                    if ny $(+ self.$y0 / 2)? < 0 || ny $(+ self.$y0 / 2)? >= self.ch {
                        sy = self.sign;
                    }
                    let c = self.e.at(cx - x(), cy - y());
                    let a = self.e.at(nx - x(), cy - y());
                    let b = self.e.at(cx - x(), ny - y());
                    let g = self.e.at(nx - x(), ny - y());
                    let p = 9.0 * c + 3.0 * sx * a + 3.0 * sy * b + sx * sy * g;
                    self.keep * self.u() + 0.0625 * p
                }
            }

            /// A constant (the zero initial guess of a coarse correction).
            #[derive(Kernel)]
            #[kernel(output = $t)]
            pub(crate) struct Fill {
                pub(crate) value: $t,
            }

            #[kernel_body]
            impl Fill {
                fn kernel(&self) -> $t {
                    self.value
                }
            }

            /// `input + offset` (mean corrections of pure Neumann problems).
            #[derive(Kernel)]
            #[kernel(output = $t)]
            pub(crate) struct Offset {
                pub(crate) input: Accessor<$t>,
                pub(crate) offset: $t,
            }

            #[kernel_body]
            impl Offset {
                fn kernel(&self) -> $t {
                    self.input() + self.offset
                }
            }
        }
    };
}

multigrid_kernels!(k32, f32);
multigrid_kernels!(k64, f64);
#[cfg(feature = "distributed")]
multigrid_kernels!(k32_at, f32, origin(x0, y0));
#[cfg(feature = "distributed")]
multigrid_kernels!(k64_at, f64, origin(x0, y0));
