//! Time to first result, on the device `HIPACC_BACKEND` names, of
//! - a 3x3 box on a 1x1 image on every boundary mode but `Undefined` (five
//!   kernels), and
//! - a chain of three small kernels on a 131x77 image with `Mirror` borders
//!   (a horizontal gradient, its square, a 5x5 Gaussian of the square: the
//!   first steps of a corner detector), each reading the one before.
//!
//! Run it with an empty driver cache to see cold program builds, e.g. on
//! PoCL: `POCL_CACHE_DIR=$(mktemp -d) HIPACC_BACKEND=opencl cargo run
//! --release -p hipacc --example first_launch`. It prints the time of each
//! launch and read-back, then the totals.

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

/// A horizontal central difference.
#[derive(Kernel)]
#[kernel(output = f32)]
struct GradientX {
    input: Accessor<f32>,
}

#[kernel_body]
impl GradientX {
    fn kernel(&self) -> f32 {
        (self.input.at(1, 0) - self.input.at(-1, 0)) * 0.5
    }
}

/// The square of a pixel.
#[derive(Kernel)]
#[kernel(output = f32)]
struct Square {
    input: Accessor<f32>,
}

#[kernel_body]
impl Square {
    fn kernel(&self) -> f32 {
        self.input() * self.input()
    }
}

/// A weighted window sum.
#[derive(Kernel)]
#[kernel(output = f32)]
struct Smooth {
    input: Accessor<f32>,
    mask: Mask<f32, 5, 5>,
}

#[kernel_body]
impl Smooth {
    fn kernel(&self) -> f32 {
        convolve(&self.mask, Sum, |dx, dy| {
            self.mask.at(dx, dy) * self.input.at(dx, dy)
        })
    }
}

/// The three-kernel chain; returns one pixel of the result.
fn chain(device: &Device) -> Result<f32, Box<dyn std::error::Error>> {
    let (w, h) = (131, 77);
    let input = Image::from_fn(w, h, |x, y| ((x * 7 + y * 3) % 17) as f32)?;
    let gradient = Image::<f32>::new(w, h)?;
    let square = Image::<f32>::new(w, h)?;
    let smooth = Image::<f32>::new(w, h)?;
    GradientX {
        input: Accessor::new(&input).with_boundary(Boundary::Mirror),
    }
    .execute(device, &IterationSpace::full(&gradient))?;
    Square {
        input: Accessor::new(&gradient),
    }
    .execute(device, &IterationSpace::full(&square))?;
    let g = [1.0f32, 4.0, 6.0, 4.0, 1.0].map(|v| v / 16.0);
    let rows: [[f32; 5]; 5] = std::array::from_fn(|y| std::array::from_fn(|x| g[x] * g[y]));
    Smooth {
        input: Accessor::new(&square).with_boundary(Boundary::Mirror),
        mask: Mask::fixed(rows)?,
    }
    .execute(device, &IterationSpace::full(&smooth))?;
    Ok(smooth.get(w / 2, h / 2)?)
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
    let t = Instant::now();
    let value = chain(&device)?;
    println!(
        "three-kernel chain on 131x77: {value} in {:.2} s",
        t.elapsed().as_secs_f64()
    );
    Ok(())
}
