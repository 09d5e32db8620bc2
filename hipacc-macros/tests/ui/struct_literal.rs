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
        let p = Rgba { r: 1.0, g: 0.0, b: 0.0, a: 1.0 };
        self.input() * self.gain
    }
}

fn main() {}
