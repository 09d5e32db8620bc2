use hipacc_core::{Accessor, Kernel};

#[derive(Kernel)]
struct K {
    input: Accessor<f32>,
}

fn main() {}
