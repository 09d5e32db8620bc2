use hipacc_core::{kernel_body, Accessor, Domain, Kernel};

#[derive(Kernel)]
#[kernel(output = f32)]
struct K {
    dom: Domain,
    input: Accessor<f32>,
    gain: f32,
}

#[kernel_body]
impl K {
    fn kernel(&self) -> f32 {
        reduce(&self.dom, Sum, |d| self.input.at(d, 0))
    }
}

fn main() {}
