use hipacc_core::{kernel_body, Accessor, Domain, Kernel};

#[derive(Kernel)]
#[kernel(output = f32)]
struct K {
    input: Accessor<f32>,
    domain: Domain,
}

#[kernel_body]
impl K {
    fn kernel(&self) -> f32 {
        self.domain.at(0, 0) * self.input()
    }
}

fn main() {}
