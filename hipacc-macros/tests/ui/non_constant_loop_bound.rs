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
        let n = x();
        let mut s = 0.0;
        for i in 0..n {
            s += self.input.at(i, 0);
        }
        s
    }
}

fn main() {}
