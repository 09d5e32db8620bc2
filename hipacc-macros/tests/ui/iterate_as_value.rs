use hipacc_core::{kernel_body, Accessor, Kernel};

#[derive(Kernel)]
#[kernel(output = f32)]
struct K {
    input: Accessor<f32>,
    gain: f32,
}

#[kernel_body]
impl K {
    fn kernel(&self) -> f32 {
        let s = iterate(&self.input, |dx, dy| self.input.at(dx, dy));
        s
    }
}

fn main() {}
