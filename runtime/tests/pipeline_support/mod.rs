//! Kernels and images shared by the tests of pipelines with several
//! outputs.

#![allow(dead_code)]

use hipacc::prelude::*;

/// A 3x3 domain mean: a producer stage.
#[derive(Kernel)]
#[kernel(output = f32)]
pub(crate) struct Box3 {
    pub(crate) input: Accessor<f32>,
    pub(crate) window: Domain,
}

#[kernel_body]
impl Box3 {
    fn kernel(&self) -> f32 {
        reduce(&self.window, Sum, |dx, dy| self.input.at(dx, dy)) * (1.0 / 9.0)
    }
}

/// Reads 2 rows up and 3 down: more rows of a producer than a 3x3 window.
#[derive(Kernel)]
#[kernel(output = f32)]
pub(crate) struct Shift {
    pub(crate) input: Accessor<f32>,
}

#[kernel_body]
impl Shift {
    fn kernel(&self) -> f32 {
        self.input.at(0, -2) - 0.5 * self.input.at(1, 3)
    }
}

/// The value of an output pixel no launch has written.
pub(crate) const UNTOUCHED: f32 = -1234.5;

/// The defined modes (`Undefined` leaves reads outside the image to
/// chance).
pub(crate) fn modes() -> [Boundary<f32>; 5] {
    [
        Boundary::Clamp,
        Boundary::Repeat,
        Boundary::Mirror,
        Boundary::MirrorInterior,
        Boundary::Constant(-2.5),
    ]
}

/// A `w x h` image of hashed multiples of 1/16 in `[0.5, 1.5)`, different
/// per `seed`.
pub(crate) fn image(w: usize, h: usize, seed: u64) -> Image<f32> {
    Image::from_fn(w, h, |x, y| {
        let mut v = (x as u64 + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15)
            ^ (y as u64 + seed).wrapping_mul(0xC2B2_AE3D_27D4_EB4F);
        v ^= v >> 29;
        ((v % 16) + 8) as f32 / 16.0
    })
    .expect("sizes are at least 1")
}

/// A `w x h` image of [`UNTOUCHED`] pixels.
pub(crate) fn fresh(w: usize, h: usize) -> Image<f32> {
    Image::from_vec(w, h, vec![UNTOUCHED; w * h]).expect("sizes are at least 1")
}

/// The pixels' bits, to compare bit for bit.
pub(crate) fn bits(img: &Image<f32>) -> Vec<u32> {
    img.to_vec()
        .expect("readable")
        .iter()
        .map(|v| v.to_bits())
        .collect()
}

/// Runs `check(pipeline device, alone device)` on OpenCL: as device
/// launches (with [`hipacc::pipeline::PIPELINE_ENV`], against the kernels
/// launched alone there), then, on a CPU device (PoCL), as the native
/// CPU's strips (against the kernels alone on the native CPU). Prints a
/// skip line when no OpenCL platform is present. The only place of a test
/// binary that sets the variable.
pub(crate) fn on_opencl(check: impl Fn(&Device, &Device)) {
    let device = match Device::opencl() {
        Ok(d) => d,
        Err(e) => {
            println!("[SKIP] opencl: {e}");
            return;
        }
    };
    std::env::set_var(hipacc::pipeline::PIPELINE_ENV, "launches");
    check(&device, &device);
    std::env::remove_var(hipacc::pipeline::PIPELINE_ENV);
    if device.is_gpu() {
        println!("[SKIP] native strips: {} is no CPU device", device.name());
    } else {
        check(&device, &Device::cpu());
    }
}
