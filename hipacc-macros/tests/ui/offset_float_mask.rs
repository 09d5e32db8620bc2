use hipacc_core::{kernel_body, Accessor, Kernel, Mask};

#[derive(Kernel)]
#[kernel(output = f32)]
struct K {
    input: Accessor<f32>,
    mask: Mask<f32>,
}

#[kernel_body]
impl K {
    fn kernel(&self) -> f32 {
        convolve(&self.mask, Sum, |dx, dy| self.mask.at(dx as f32 * 0.5, dy) * self.input.at(dx, dy))
    }
}

fn main() {}
