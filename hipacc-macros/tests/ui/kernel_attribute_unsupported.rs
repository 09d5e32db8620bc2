use hipacc_core::{kernel_body, Accessor, Kernel};

#[derive(Kernel)]
#[kernel(output = f32)]
struct K {
    input: Accessor<f32>,
}

#[kernel_body]
impl K {
    #[must_use]
    fn kernel(&self) -> f32 {
        self.input()
    }
}

fn main() {}
