use hipacc_core::{Accessor, Kernel, Rgba};

#[derive(Kernel)]
#[kernel(output = Rgba<f64>)]
struct K {
    input: Accessor<Rgba<u16>>,
}

fn main() {}
