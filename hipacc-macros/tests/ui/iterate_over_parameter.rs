use hipacc_core::{kernel_body, Accessor, Kernel};

#[derive(Kernel)]
#[kernel(output = f32)]
struct K {
    input: Accessor<f32>,
    radius: i32,
}

#[kernel_body]
impl K {
    fn kernel(&self) -> f32 {
        let mut sum = 0.0;
        iterate(&self.radius, |dx, dy| {
            sum += self.input.at(dx, dy);
        });
        sum
    }
}

fn main() {}
