use hipacc_core::{kernel_body, Accessor, Domain, Kernel};

#[derive(Kernel)]
#[kernel(output = f32)]
struct K {
    input: Accessor<f32>,
    window: Domain<4, 5>,
}

#[kernel_body]
impl K {
    fn kernel(&self) -> f32 {
        reduce(&self.window, Max, |dx, dy| self.input.at(dx, dy))
    }
}

fn main() {}
