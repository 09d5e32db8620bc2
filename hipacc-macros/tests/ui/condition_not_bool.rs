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
        if self.gain { self.input() } else { 0.0 }
    }
}

fn main() {}
