use hipacc_core::{kernel_body, Accessor, Kernel};

#[derive(Kernel)]
#[kernel(output = f32)]
struct K {
    input: Accessor<f32>,
}

#[kernel_body]
impl K {
    #[deny(unused_assignments)]
    fn kernel(&self) -> f32 {
        let mut sum = 0.0;
        sum = self.input();
        sum
    }
}

fn main() {}
