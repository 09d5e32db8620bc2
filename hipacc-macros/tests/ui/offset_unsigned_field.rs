use hipacc_core::{kernel_body, Accessor, Kernel};

#[derive(Kernel)]
#[kernel(output = f32)]
struct K {
    input: Accessor<f32>,
    step: u32,
}

#[kernel_body]
impl K {
    fn kernel(&self) -> f32 {
        self.input.at(self.step, 0)
    }
}

fn main() {}
