use hipacc_core::{Accessor, Kernel};

#[derive(Kernel)]
#[kernel(output = f32)]
struct K(Accessor<f32>);

fn main() {}
