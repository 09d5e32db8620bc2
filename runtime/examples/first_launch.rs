//! Time to first result of a 3x3 box on a 1x1 image on every boundary mode
//! but `Undefined` (five kernels), on the device `HIPACC_BACKEND` names.
//!
//! Run it with an empty driver cache to see cold program builds, e.g. on
//! PoCL: `POCL_CACHE_DIR=$(mktemp -d) HIPACC_BACKEND=opencl cargo run
//! --release -p hipacc --example first_launch`. It prints the time of each
//! mode's launch and read-back, then the total.

use hipacc::prelude::*;
use std::time::Instant;

/// The sum of a 3x3 window.
#[derive(Kernel)]
#[kernel(output = f32)]
struct Box3 {
    input: Accessor<f32>,
    window: Domain,
}

#[kernel_body]
impl Box3 {
    fn kernel(&self) -> f32 {
        reduce(&self.window, Sum, |dx, dy| self.input.at(dx, dy))
    }
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let device = Device::auto()?;
    println!("device: {}", device.name());
    let input = Image::from_vec(1, 1, vec![2.0f32])?;
    let modes = [
        Boundary::Clamp,
        Boundary::Repeat,
        Boundary::Mirror,
        Boundary::MirrorInterior,
        Boundary::Constant(1.0),
    ];
    let start = Instant::now();
    for mode in modes {
        let t = Instant::now();
        let output = Image::<f32>::new(1, 1)?;
        let kernel = Box3 {
            input: Accessor::new(&input).with_boundary(mode),
            window: Domain::new(3, 3)?,
        };
        kernel.execute(&device, &IterationSpace::full(&output))?;
        let value = output.to_vec()?[0];
        println!("{mode:?}: {value} in {:.2} s", t.elapsed().as_secs_f64());
    }
    println!("total: {:.2} s", start.elapsed().as_secs_f64());
    Ok(())
}
