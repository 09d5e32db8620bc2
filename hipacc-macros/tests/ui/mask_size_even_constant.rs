use hipacc_core::{kernel_body, Accessor, Kernel, Mask};

const RADIUS: usize = 1;
const WIDTH: usize = 2 * RADIUS;

#[derive(Kernel)]
#[kernel(output = f32)]
struct K {
    input: Accessor<f32>,
    mask: Mask<f32, WIDTH, 3>,
}

#[kernel_body]
impl K {
    fn kernel(&self) -> f32 {
        convolve(&self.mask, Sum, |dx, dy| self.mask.at(dx, dy) * self.input.at(dx, dy))
    }
}

fn main() {}
