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
        let mut s = 0.0;
        for i in 0..4 {
            s += self.input.at(i, 0);
            break;
        }
        s
    }
}

fn main() {}
