use hipacc_core::{Accessor, Kernel, Pixel};

#[derive(Kernel)]
#[kernel(output = f32)]
struct K<T: Pixel> {
    input: Accessor<T>,
}

fn main() {}
