//! The local operators: `reduce` over a domain, `convolve` over a mask and
//! `iterate`, each with Sum, Min, Max and Prod, over `f32` and `i32`.
//!
//! Domains have disabled positions (visited positions are the enabled ones,
//! in row-major order). Products run over small windows of values near 1
//! (`f32`: `1 + k/64`, `|k| <= 4`; `i32`: -1, 1 or 2) with a boundary
//! constant of 2, so they stay finite and, for `i32`, do not overflow.

use super::harness::{inside, Run};
use super::kernels::{f32_local, i32_local};
use super::pixel::{boundary, pixel_hash, TestPixel};
use hipacc_core::{Accessor, Boundary, BoundaryMode, Domain, Image, Mask, Pixel, Rect};

/// Output (and input) sizes.
const SIZES: [(usize, usize); 3] = [(2, 3), (5, 17), (33, 20)];

/// A scalar type the local operators are checked over.
trait LocalPixel: TestPixel + Pixel {
    /// A value near 1 for products.
    fn near_one(hash: u32) -> Self;
    /// The boundary constant of product cases.
    fn two() -> Self;
}

impl LocalPixel for f32 {
    fn near_one(hash: u32) -> f32 {
        1.0 + ((hash >> 8) % 9) as f32 / 64.0 - 4.0 / 64.0
    }
    fn two() -> f32 {
        2.0
    }
}

impl LocalPixel for i32 {
    fn near_one(hash: u32) -> i32 {
        [-1, 1, 2, 1][(hash >> 8) as usize % 4]
    }
    fn two() -> i32 {
        2
    }
}

/// A 3x3 domain without its top-right corner, a 5x3 one without the
/// centre row's middle three and a full 1x3 column.
fn domains() -> Vec<Domain> {
    let domain = |w, h, off: &[(i32, i32)]| {
        let mut d = Domain::new(w, h).unwrap_or_else(|e| unreachable!("bug: {e}"));
        for &(dx, dy) in off {
            d.set(dx, dy, false)
                .unwrap_or_else(|e| unreachable!("bug: {e}"));
        }
        d
    };
    vec![
        domain(3, 3, &[(1, -1)]),
        domain(5, 3, &[(-1, 0), (0, 0), (1, 0)]),
        domain(1, 3, &[]),
    ]
}

const MASKS: [(usize, usize); 2] = [(3, 3), (5, 1)];

/// The input image and accessor for one case.
fn accessor<T: LocalPixel>(
    size: (usize, usize),
    mode: BoundaryMode,
    prod: bool,
    salt: u32,
) -> Accessor<T> {
    let (w, h) = size;
    let data = (0..h)
        .flat_map(|y| (0..w).map(move |x| pixel_hash(x, y, salt)))
        .map(|hash| {
            if prod {
                T::near_one(hash)
            } else {
                T::sample(hash)
            }
        })
        .collect();
    let img = Image::from_vec(w, h, data).unwrap_or_else(|e| unreachable!("bug: {e}"));
    let bc = match mode {
        BoundaryMode::Constant if prod => Boundary::Constant(T::two()),
        _ => boundary::<T>(mode),
    };
    Accessor::new(&img).with_boundary(bc)
}

/// The rectangle to check for a window of `(w, h)` positions.
fn rect(mode: BoundaryMode, size: (usize, usize), window: (usize, usize)) -> Option<Rect> {
    let full = Rect::full(size.0, size.1);
    if mode != BoundaryMode::Undefined {
        return Some(full);
    }
    let (rx, ry) = ((window.0 / 2) as i32, (window.1 / 2) as i32);
    inside(full, size, (-rx, rx), (-ry, ry))
}

fn coefficients<T: LocalPixel>(width: usize, height: usize, prod: bool, salt: u32) -> Mask<T> {
    let c = (0..width * height)
        .map(|i| {
            let hash = pixel_hash(i, 1, salt);
            if prod {
                T::near_one(hash | 0x100)
            } else {
                T::sample(hash)
            }
        })
        .collect();
    Mask::from_vec(width, height, c).unwrap_or_else(|e| unreachable!("bug: {e}"))
}

macro_rules! operator_cases {
    ($fn:ident, $t:ident, $m:ident) => {
        /// Every form and operator over
        #[doc = concat!("`", stringify!($t), "`.")]
        pub(crate) fn $fn(run: &mut Run<'_>) {
            use $m::*;
            for mode in BoundaryMode::ALL {
                for (s, size) in SIZES.into_iter().enumerate() {
                    let salt = 97 + s as u32;
                    for dom in domains() {
                        let n = dom.positions().len();
                        let window = (dom.width(), dom.height());
                        let Some(r) = rect(mode, size, window) else {
                            continue;
                        };
                        let acc = |prod| accessor::<$t>(size, mode, prod, salt);
                        let what = format!("{mode:?}, domain {}x{}", window.0, window.1);
                        let d = || dom.clone();
                        run.check(
                            &what,
                            &ReduceSum {
                                input: acc(false),
                                dom: d(),
                            },
                            size,
                            r,
                            n,
                        );
                        run.check(
                            &what,
                            &ReduceMin {
                                input: acc(false),
                                dom: d(),
                            },
                            size,
                            r,
                            n,
                        );
                        run.check(
                            &what,
                            &ReduceMax {
                                input: acc(false),
                                dom: d(),
                            },
                            size,
                            r,
                            n,
                        );
                        run.check(
                            &what,
                            &ReduceProd {
                                input: acc(true),
                                dom: d(),
                            },
                            size,
                            r,
                            n,
                        );
                        run.check(
                            &what,
                            &IterateSum {
                                input: acc(false),
                                dom: d(),
                            },
                            size,
                            r,
                            n,
                        );
                        run.check(
                            &what,
                            &IterateMin {
                                input: acc(false),
                                dom: d(),
                            },
                            size,
                            r,
                            n,
                        );
                        run.check(
                            &what,
                            &IterateMax {
                                input: acc(false),
                                dom: d(),
                            },
                            size,
                            r,
                            n,
                        );
                        run.check(
                            &what,
                            &IterateProd {
                                input: acc(true),
                                dom: d(),
                            },
                            size,
                            r,
                            n,
                        );
                    }
                    for (mw, mh) in MASKS {
                        let n = mw * mh;
                        let Some(r) = rect(mode, size, (mw, mh)) else {
                            continue;
                        };
                        let acc = |prod| accessor::<$t>(size, mode, prod, salt);
                        let mask = |prod| coefficients::<$t>(mw, mh, prod, salt);
                        let what = format!("{mode:?}, mask {mw}x{mh}");
                        run.check(
                            &what,
                            &ConvolveSum {
                                input: acc(false),
                                mask: mask(false),
                            },
                            size,
                            r,
                            n,
                        );
                        run.check(
                            &what,
                            &ConvolveMin {
                                input: acc(false),
                                mask: mask(false),
                            },
                            size,
                            r,
                            n,
                        );
                        run.check(
                            &what,
                            &ConvolveMax {
                                input: acc(false),
                                mask: mask(false),
                            },
                            size,
                            r,
                            n,
                        );
                        run.check(
                            &what,
                            &ConvolveProd {
                                input: acc(true),
                                mask: mask(true),
                            },
                            size,
                            r,
                            n,
                        );
                    }
                }
            }
        }
    };
}

operator_cases!(f32_operators, f32, f32_local);
operator_cases!(i32_operators, i32, i32_local);
