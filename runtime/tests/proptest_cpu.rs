//! Property tests of the CPU backend against the evaluator: random image
//! sizes, iteration spaces, accessor regions, boundary modes, offsets given
//! as kernel parameters (computed offsets) and window sizes.
//!
//! Inputs are multiples of 1/16 in `[0.5, 1.5)` and mask coefficients small
//! integers, so every result is exact in `f32` and the comparison is exact.

use hipacc::prelude::*;
use proptest::prelude::*;

#[derive(Kernel)]
#[kernel(output = f32)]
struct Offsets {
    input: Accessor<f32>,
    dx: i32,
    dy: i32,
}

#[kernel_body]
impl Offsets {
    fn kernel(&self) -> f32 {
        self.input.at(self.dx, self.dy) * 2.0 + self.input.at(self.dx + 1, 3 - self.dy)
    }
}

#[derive(Kernel)]
#[kernel(output = f32)]
struct Window {
    input: Accessor<f32>,
    mask: Mask<f32>,
}

#[kernel_body]
impl Window {
    fn kernel(&self) -> f32 {
        convolve(&self.mask, Sum, |dx, dy| {
            self.mask.at(dx, dy) * self.input.at(dx, dy)
        })
    }
}

fn boundary(mode: usize) -> Boundary<f32> {
    match mode {
        0 => Boundary::Undefined,
        1 => Boundary::Clamp,
        2 => Boundary::Repeat,
        3 => Boundary::Mirror,
        4 => Boundary::MirrorInterior,
        _ => Boundary::Constant(-2.5),
    }
}

fn image(w: usize, h: usize, seed: u64) -> Image<f32> {
    Image::from_fn(w, h, |x, y| {
        let mut v = (x as u64 + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15)
            ^ (y as u64 + seed).wrapping_mul(0xC2B2_AE3D_27D4_EB4F);
        v ^= v >> 29;
        ((v % 16) + 8) as f32 / 16.0
    })
    .expect("sizes are at least 1")
}

/// A rectangle inside a `w x h` image from fractions in `[0, 1)`.
fn rect_in(w: usize, h: usize, f: [f64; 4]) -> Rect {
    let x = (f[0] * w as f64) as usize;
    let y = (f[1] * h as f64) as usize;
    let rw = 1 + (f[2] * (w - x) as f64) as usize;
    let rh = 1 + (f[3] * (h - y) as f64) as usize;
    Rect::new(x, y, rw.min(w - x), rh.min(h - y))
}

/// Runs `kernel` over `space` of a fresh output on the CPU and on the
/// evaluator; every pixel of both outputs must be equal.
fn same<K: Execute + Kernel<Output = f32>>(
    kernel: &K,
    out: (usize, usize),
    space: Rect,
) -> Result<(), TestCaseError> {
    let cpu = Image::from_vec(out.0, out.1, vec![-7.0f32; out.0 * out.1]).expect("valid size");
    let eval = Image::from_vec(out.0, out.1, vec![-7.0f32; out.0 * out.1]).expect("valid size");
    kernel
        .execute(
            &Device::cpu(),
            &IterationSpace::region(&cpu, space).expect("space inside"),
        )
        .map_err(|e| TestCaseError::fail(format!("cpu: {e}")))?;
    hipacc::core::ir::evaluate_kernel(
        kernel,
        &IterationSpace::region(&eval, space).expect("space inside"),
    )
    .map_err(|e| TestCaseError::fail(format!("evaluator: {e}")))?;
    let (c, e) = (cpu.to_vec().expect("host"), eval.to_vec().expect("host"));
    for i in 0..c.len() {
        prop_assert_eq!(c[i], e[i], "pixel ({}, {})", i % out.0, i / out.0);
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(160))]

    #[test]
    fn computed_offsets_match_the_evaluator(
        w in 1usize..70, h in 1usize..70,
        ow in 1usize..70, oh in 1usize..70,
        dx in -80i32..80, dy in -80i32..80,
        mode in 0usize..6,
        region in prop::array::uniform4(0.0f64..1.0),
        space in prop::array::uniform4(0.0f64..1.0),
        seed in 0u64..1000,
    ) {
        let img = image(w, h, seed);
        let region = rect_in(w, h, region);
        let mut space = rect_in(ow, oh, space);
        if mode == 0 {
            // Undefined: reads x at dx and dx + 1, y at dy and 3 - dy must
            // stay inside the region for the whole space.
            let (ylo, yhi) = (dy.min(3 - dy), dy.max(3 - dy));
            prop_assume!(dx >= 0 && ylo >= 0);
            let cols = region.width as i64 - i64::from(dx) - 1;
            let rows = region.height as i64 - i64::from(yhi);
            prop_assume!(cols >= 1 && rows >= 1);
            space.width = space.width.min(cols as usize);
            space.height = space.height.min(rows as usize);
        }
        let kernel = Offsets {
            input: Accessor::new(&img).with_region(region).with_boundary(boundary(mode)),
            dx,
            dy,
        };
        same(&kernel, (ow, oh), space)?;
    }

    #[test]
    fn windows_match_the_evaluator(
        w in 1usize..70, h in 1usize..70,
        mw in 0usize..8, mh in 0usize..8,
        mode in 1usize..6,
        region in prop::array::uniform4(0.0f64..1.0),
        space in prop::array::uniform4(0.0f64..1.0),
        seed in 0u64..1000,
    ) {
        let (mw, mh) = (2 * mw + 1, 2 * mh + 1);
        let img = image(w + 3, h + 2, seed);
        let region = rect_in(w + 3, h + 2, region);
        let space = rect_in(w, h, space);
        let coefficients = (0..mw * mh).map(|i| (1 + (i * 5 + seed as usize) % 4) as f32).collect();
        let kernel = Window {
            input: Accessor::new(&img).with_region(region).with_boundary(boundary(mode)),
            mask: Mask::from_vec(mw, mh, coefficients).expect("odd sizes"),
        };
        same(&kernel, (w, h), space)?;
    }
}
