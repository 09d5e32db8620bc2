use hipacc_core::{Accessor, Kernel, Mask, Rgba};

#[derive(Kernel)]
#[kernel(output = f32)]
struct K {
    input: Accessor<f32>,
    mask: Mask<Rgba<f32>>,
    taps: Vec<f32>,
    count: usize,
}

fn main() {}
