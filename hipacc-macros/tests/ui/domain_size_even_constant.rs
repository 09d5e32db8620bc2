use hipacc_core::{kernel_body, Accessor, Domain, Kernel};

const SIDE: usize = 6;

#[derive(Kernel)]
#[kernel(output = f32)]
struct K {
    input: Accessor<f32>,
    window: Domain<5, SIDE>,
}

#[kernel_body]
impl K {
    fn kernel(&self) -> f32 {
        reduce(&self.window, Min, |dx, dy| self.input.at(dx, dy))
    }
}

fn main() {}
