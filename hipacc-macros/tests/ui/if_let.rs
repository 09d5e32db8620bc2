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
        let v = 1.0;
        if let 1.0 = v {
            self.input()
        } else {
            self.gain
        }
    }
}

fn main() {}
