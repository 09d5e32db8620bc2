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
        while s < 1.0 {
            s += 1.0;
        }
        let v = vec![s];
        self.gain = foo(s);
        s.frobnicate()
    }
}

fn main() {}
