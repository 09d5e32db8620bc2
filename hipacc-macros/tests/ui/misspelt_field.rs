use hipacc_core::{kernel_body, Accessor, Kernel};

#[derive(Kernel)]
#[kernel(output = f32)]
struct Blur {
    input: Accessor<f32>,
    gain: f32,
}

#[kernel_body]
impl Blur {
    fn kernel(&self) -> f32 {
        self.inptu.at(1, 0) * self.gain
    }
}

fn main() {}
