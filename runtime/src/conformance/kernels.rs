//! The kernels of the suite, written with the DSL macros as users write them.
//!
//! Per pixel type: a weighted window (`convolve` over a mask, the footprint
//! being the mask's size), reads at offsets given as parameters, and a
//! stencil with asymmetric constant offsets and the coordinates. Integer
//! types widen to `i32` before arithmetic (`as` truncates back to `u8`), so
//! no sum overflows. Then the local operators in every form (`reduce`,
//! `convolve`, `iterate`) with each of Sum, Min, Max and Prod, for `f32` and
//! `i32`, a two-accessor kernel and a vector (RGBA) kernel.

// Casts such as `f32 as f32` come from stamping one body out per type.
#![allow(clippy::unnecessary_cast)]

/// The per-type kernels of a scalar pixel type `$t` computing in `$w`.
macro_rules! scalar_kernels {
    ($m:ident, $t:ident, $w:ident) => {
        #[doc = concat!("Kernels over `", stringify!($t), "` pixels.")]
        pub(crate) mod $m {
            use crate::prelude::*;

            /// `Σ mask(dx, dy) · input(dx, dy)` over the mask.
            #[derive(Kernel)]
            #[kernel(output = $t)]
            pub(crate) struct Window {
                pub(crate) input: Accessor<$t>,
                pub(crate) mask: Mask<$w>,
            }

            #[kernel_body]
            impl Window {
                fn kernel(&self) -> $t {
                    convolve(&self.mask, Sum, |dx, dy| {
                        self.mask.at(dx, dy) * (self.input.at(dx, dy) as $w)
                    }) as $t
                }
            }

            /// The window read 7 pixels right and down of the centre, so
            /// that masks up to 15x15 read at non-negative offsets only.
            #[derive(Kernel)]
            #[kernel(output = $t)]
            pub(crate) struct ShiftedWindow {
                pub(crate) input: Accessor<$t>,
                pub(crate) mask: Mask<$w>,
            }

            #[kernel_body]
            impl ShiftedWindow {
                fn kernel(&self) -> $t {
                    convolve(&self.mask, Sum, |dx, dy| {
                        self.mask.at(dx, dy) * (self.input.at(dx + 7, dy + 7) as $w)
                    }) as $t
                }
            }

            /// `input(dx, dy)` with offsets from parameters.
            #[derive(Kernel)]
            #[kernel(output = $t)]
            pub(crate) struct Shift {
                pub(crate) input: Accessor<$t>,
                pub(crate) dx: i32,
                pub(crate) dy: i32,
            }

            #[kernel_body]
            impl Shift {
                fn kernel(&self) -> $t {
                    self.input.at(self.dx, self.dy)
                }
            }

            /// Reads at `(-1, 0)`, `(0, -2)`, `(0, 0)`, `(3, 1)` plus the
            /// coordinates: footprint x in `-1..=3`, y in `-2..=1`.
            #[derive(Kernel)]
            #[kernel(output = $t)]
            pub(crate) struct Stencil {
                pub(crate) input: Accessor<$t>,
            }

            #[kernel_body]
            impl Stencil {
                fn kernel(&self) -> $t {
                    let a = self.input.at(-1, 0) as $w + self.input.at(0, -2) as $w;
                    let b = self.input() as $w + self.input.at(3, 1) as $w;
                    (a + b + ((x() % 7) * 3 + y() % 5) as $w) as $t
                }
            }
        }
    };
}

scalar_kernels!(u8_kernels, u8, i32);
scalar_kernels!(i32_kernels, i32, i32);
scalar_kernels!(f32_kernels, f32, f32);
scalar_kernels!(f64_kernels, f64, f64);

/// Kernels over `Rgba<f32>` pixels, the counterparts of the scalar ones.
pub(crate) mod rgba_kernels {
    use crate::prelude::*;

    /// `Σ mask(dx, dy) · input(dx, dy)` over the mask, lane-wise.
    #[derive(Kernel)]
    #[kernel(output = Rgba<f32>)]
    pub(crate) struct Window {
        pub(crate) input: Accessor<Rgba<f32>>,
        pub(crate) mask: Mask<f32>,
    }

    #[kernel_body]
    impl Window {
        fn kernel(&self) -> Rgba<f32> {
            convolve(&self.mask, Sum, |dx, dy| {
                self.input.at(dx, dy) * self.mask.at(dx, dy)
            })
        }
    }

    /// The window read 7 pixels right and down of the centre.
    #[derive(Kernel)]
    #[kernel(output = Rgba<f32>)]
    pub(crate) struct ShiftedWindow {
        pub(crate) input: Accessor<Rgba<f32>>,
        pub(crate) mask: Mask<f32>,
    }

    #[kernel_body]
    impl ShiftedWindow {
        fn kernel(&self) -> Rgba<f32> {
            convolve(&self.mask, Sum, |dx, dy| {
                self.input.at(dx + 7, dy + 7) * self.mask.at(dx, dy)
            })
        }
    }

    /// `input(dx, dy)` with offsets from parameters.
    #[derive(Kernel)]
    #[kernel(output = Rgba<f32>)]
    pub(crate) struct Shift {
        pub(crate) input: Accessor<Rgba<f32>>,
        pub(crate) dx: i32,
        pub(crate) dy: i32,
    }

    #[kernel_body]
    impl Shift {
        fn kernel(&self) -> Rgba<f32> {
            self.input.at(self.dx, self.dy)
        }
    }

    /// The scalar `Stencil`'s reads, with the coordinates in lanes.
    #[derive(Kernel)]
    #[kernel(output = Rgba<f32>)]
    pub(crate) struct Stencil {
        pub(crate) input: Accessor<Rgba<f32>>,
    }

    #[kernel_body]
    impl Stencil {
        fn kernel(&self) -> Rgba<f32> {
            let s =
                self.input.at(-1, 0) + self.input.at(0, -2) + self.input() + self.input.at(3, 1);
            s + Rgba::new(x() as f32, y() as f32, (x() % 7) as f32, 0.5)
        }
    }

    /// Lane access and construction: a swizzle with lane arithmetic.
    #[derive(Kernel)]
    #[kernel(output = Rgba<f32>)]
    pub(crate) struct Swizzle {
        pub(crate) input: Accessor<Rgba<f32>>,
        pub(crate) gain: f32,
    }

    #[kernel_body]
    impl Swizzle {
        fn kernel(&self) -> Rgba<f32> {
            let p = self.input();
            let q = self.input.at(1, 2);
            Rgba::new(p.g, q.b * self.gain, p.a + q.r, p.r - q.a) * 0.5 + q
        }
    }
}

/// The local operators over a pixel type `$t` (`f32` or `i32`): one kernel
/// per form and operator. `$zero`, `$one`, `$big` are literals of `$t`.
macro_rules! local_kernels {
    ($m:ident, $t:ident, $zero:literal, $one:literal, $big:literal) => {
        #[doc = concat!("Local operators over `", stringify!($t), "`.")]
        pub(crate) mod $m {
            use crate::prelude::*;

            local_kernels!(@reduce $t, ReduceSum, Sum);
            local_kernels!(@reduce $t, ReduceMin, Min);
            local_kernels!(@reduce $t, ReduceMax, Max);
            local_kernels!(@reduce $t, ReduceProd, Prod);
            local_kernels!(@convolve $t, ConvolveSum, Sum);
            local_kernels!(@convolve $t, ConvolveMin, Min);
            local_kernels!(@convolve $t, ConvolveMax, Max);
            local_kernels!(@convolve $t, ConvolveProd, Prod);

            /// `iterate` accumulating a sum.
            #[derive(Kernel)]
            #[kernel(output = $t)]
            pub(crate) struct IterateSum {
                pub(crate) input: Accessor<$t>,
                pub(crate) dom: Domain,
            }

            #[kernel_body]
            impl IterateSum {
                fn kernel(&self) -> $t {
                    let mut s = $zero;
                    iterate(&self.dom, |dx, dy| {
                        s += self.input.at(dx, dy);
                    });
                    s
                }
            }

            /// `iterate` keeping the minimum.
            #[derive(Kernel)]
            #[kernel(output = $t)]
            pub(crate) struct IterateMin {
                pub(crate) input: Accessor<$t>,
                pub(crate) dom: Domain,
            }

            #[kernel_body]
            impl IterateMin {
                fn kernel(&self) -> $t {
                    let mut m = $big;
                    iterate(&self.dom, |dx, dy| {
                        let v = self.input.at(dx, dy);
                        m = if v < m { v } else { m };
                    });
                    m
                }
            }

            /// `iterate` keeping the maximum.
            #[derive(Kernel)]
            #[kernel(output = $t)]
            pub(crate) struct IterateMax {
                pub(crate) input: Accessor<$t>,
                pub(crate) dom: Domain,
            }

            #[kernel_body]
            impl IterateMax {
                fn kernel(&self) -> $t {
                    let mut m = -$big;
                    iterate(&self.dom, |dx, dy| {
                        let v = self.input.at(dx, dy);
                        m = if v > m { v } else { m };
                    });
                    m
                }
            }

            /// `iterate` accumulating a product.
            #[derive(Kernel)]
            #[kernel(output = $t)]
            pub(crate) struct IterateProd {
                pub(crate) input: Accessor<$t>,
                pub(crate) dom: Domain,
            }

            #[kernel_body]
            impl IterateProd {
                fn kernel(&self) -> $t {
                    let mut p = $one;
                    iterate(&self.dom, |dx, dy| {
                        p *= self.input.at(dx, dy);
                    });
                    p
                }
            }
        }
    };
    (@reduce $t:ident, $name:ident, $op:ident) => {
        #[doc = concat!("`reduce` over a domain with `", stringify!($op), "`.")]
        #[derive(Kernel)]
        #[kernel(output = $t)]
        pub(crate) struct $name {
            pub(crate) input: Accessor<$t>,
            pub(crate) dom: Domain,
        }

        #[kernel_body]
        impl $name {
            fn kernel(&self) -> $t {
                reduce(&self.dom, $op, |dx, dy| self.input.at(dx, dy))
            }
        }
    };
    (@convolve $t:ident, $name:ident, $op:ident) => {
        #[doc = concat!("`convolve` with `", stringify!($op), "` of mask times input.")]
        #[derive(Kernel)]
        #[kernel(output = $t)]
        pub(crate) struct $name {
            pub(crate) input: Accessor<$t>,
            pub(crate) mask: Mask<$t>,
        }

        #[kernel_body]
        impl $name {
            fn kernel(&self) -> $t {
                convolve(&self.mask, $op, |dx, dy| self.mask.at(dx, dy) * self.input.at(dx, dy))
            }
        }
    };
}

local_kernels!(f32_local, f32, 0.0, 1.0, 1000.0);
local_kernels!(i32_local, i32, 0, 1, 100_000);

/// A weighted-Jacobi step of the 5-point Poisson operator: two accessors
/// whose boundaries and regions differ.
#[derive(hipacc_core::Kernel)]
#[kernel(output = f32)]
pub(crate) struct Jacobi {
    pub(crate) sol: hipacc_core::Accessor<f32>,
    pub(crate) rhs: hipacc_core::Accessor<f32>,
    pub(crate) omega: f32,
}

#[hipacc_core::kernel_body]
impl Jacobi {
    fn kernel(&self) -> f32 {
        let nb = self.sol.at(-1, 0) + self.sol.at(1, 0) + self.sol.at(0, -1) + self.sol.at(0, 1);
        (1.0 - self.omega) * self.sol() + self.omega * 0.25 * (self.rhs.at(0, 1) + nb)
    }
}

/// The per-type kernels of a pixel type, for suite functions generic over it.
pub(crate) trait TypeKernels: super::pixel::TestPixel {
    /// The weighted window.
    type Window: hipacc_core::Kernel<Output = Self>;
    /// The weighted window at offsets shifted by +7.
    type ShiftedWindow: hipacc_core::Kernel<Output = Self>;
    /// Reads at parameter offsets.
    type Shift: hipacc_core::Kernel<Output = Self>;
    /// Constant offsets and coordinates.
    type Stencil: hipacc_core::Kernel<Output = Self>;
    /// A weighted window over `input`.
    fn window(
        input: hipacc_core::Accessor<Self>,
        mask: hipacc_core::Mask<Self::Coef>,
    ) -> Self::Window;
    /// A weighted window over `input` shifted by `(7, 7)`.
    fn shifted_window(
        input: hipacc_core::Accessor<Self>,
        mask: hipacc_core::Mask<Self::Coef>,
    ) -> Self::ShiftedWindow;
    /// A read of `input` at `(dx, dy)`.
    fn shift(input: hipacc_core::Accessor<Self>, dx: i32, dy: i32) -> Self::Shift;
    /// The stencil over `input`.
    fn stencil(input: hipacc_core::Accessor<Self>) -> Self::Stencil;
}

macro_rules! type_kernels {
    ($t:ty, $m:ident) => {
        impl TypeKernels for $t {
            type Window = $m::Window;
            type ShiftedWindow = $m::ShiftedWindow;
            type Shift = $m::Shift;
            type Stencil = $m::Stencil;
            fn window(
                input: hipacc_core::Accessor<Self>,
                mask: hipacc_core::Mask<Self::Coef>,
            ) -> $m::Window {
                $m::Window { input, mask }
            }
            fn shifted_window(
                input: hipacc_core::Accessor<Self>,
                mask: hipacc_core::Mask<Self::Coef>,
            ) -> $m::ShiftedWindow {
                $m::ShiftedWindow { input, mask }
            }
            fn shift(input: hipacc_core::Accessor<Self>, dx: i32, dy: i32) -> $m::Shift {
                $m::Shift { input, dx, dy }
            }
            fn stencil(input: hipacc_core::Accessor<Self>) -> $m::Stencil {
                $m::Stencil { input }
            }
        }
    };
}

type_kernels!(u8, u8_kernels);
type_kernels!(i32, i32_kernels);
type_kernels!(f32, f32_kernels);
type_kernels!(f64, f64_kernels);
type_kernels!(hipacc_core::Rgba<f32>, rgba_kernels);
