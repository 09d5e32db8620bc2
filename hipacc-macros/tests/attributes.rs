//! Attributes on `fn kernel` and on the `#[kernel_body]` impl reach the
//! generated code: this file denies the lints the kernels below allow, so
//! it compiles only if the `#[allow]`s reach the body (the compile-fail
//! case `ui/kernel_attribute_lint.rs` shows a `#[deny]` reaching it too).

#![deny(unused_assignments, unused_mut)]

use hipacc_core::cpu::Border;
use hipacc_core::{kernel_body, Accessor, Image, Kernel, KernelBody, KernelFields};

#[derive(Kernel)]
#[kernel(output = f32)]
struct Overwrite {
    input: Accessor<f32>,
}

/// Documentation on the impl stays.
#[kernel_body]
#[allow(unused_mut)]
impl Overwrite {
    /// Documentation on the method moves to the impl.
    #[allow(unused_assignments)]
    #[inline(never)]
    fn kernel(&self) -> f32 {
        let mut sum = 0.0;
        sum = self.input() * 2.0;
        let mut scale = 1.0;
        sum * scale
    }
}

#[test]
fn allowed_lints_do_not_stop_the_kernel() {
    let image = match Image::from_vec(2, 1, vec![1.5f32, -4.0]) {
        Ok(i) => i,
        Err(e) => panic!("image: {e}"),
    };
    let k = Overwrite {
        input: Accessor::new(&image),
    };
    let views = match k.cpu_views((0, 0)) {
        Ok(v) => v,
        Err(e) => panic!("cpu_views failed: {e}"),
    };
    // SAFETY: `Border` checks every read.
    let out: Vec<f32> = (0..2)
        .map(|x| unsafe { Overwrite::cpu_pixel::<Border>(&views, x, 0) })
        .collect();
    assert_eq!(out, [3.0, -8.0]);
}
