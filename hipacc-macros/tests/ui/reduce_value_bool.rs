use hipacc_core::{kernel_body, Accessor, Domain, Kernel};

#[derive(Kernel)]
#[kernel(output = f32)]
struct K {
    input: Accessor<f32>,
    window: Domain,
}

#[kernel_body]
impl K {
    fn kernel(&self) -> f32 {
        let any = reduce(&self.window, Max, |dx, dy| self.input.at(dx, dy) > 0.0);
        if any { 1.0 } else { 0.0 }
    }
}

fn main() {}
