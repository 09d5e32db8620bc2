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
        let mut p = Rgba::new(1.0, 2.0, 3.0, 4.0);
        p.r = self.input();
        p.g
    }
}

fn main() {}
