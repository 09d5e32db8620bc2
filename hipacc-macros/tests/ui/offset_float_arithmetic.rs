use hipacc_core::{kernel_body, Accessor, Kernel};

#[derive(Kernel)]
#[kernel(output = f32)]
struct K {
    input: Accessor<f32>,
}

#[kernel_body]
impl K {
    fn kernel(&self) -> f32 {
        self.input.at(1 + 0.5, 0)
    }
}

fn main() {}
