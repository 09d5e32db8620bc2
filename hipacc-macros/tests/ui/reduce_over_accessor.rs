use hipacc_core::{kernel_body, Accessor, Kernel};

#[derive(Kernel)]
#[kernel(output = f32)]
struct K {
    input: Accessor<f32>,
}

#[kernel_body]
impl K {
    fn kernel(&self) -> f32 {
        reduce(&self.input, Sum, |dx, dy| self.input.at(dx, dy))
    }
}

fn main() {}
