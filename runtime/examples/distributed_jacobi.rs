//! Strong scaling of a distributed stencil: weighted-free Jacobi sweeps for
//! the 5-point Poisson equation `-Δu = f` (zero Dirichlet boundary) on a
//! square grid split over the MPI ranks.
//!
//! ```sh
//! cargo build --release -p hipacc --features distributed --example distributed_jacobi
//! mpirun -np 2 target/release/examples/distributed_jacobi --size 4096 --sweeps 20
//! mpirun -np 2 target/release/examples/distributed_jacobi --size 2048 --backend opencl
//! ```
//!
//! `--backend cpu|opencl|cuda|wgpu|auto` picks every rank's device (default
//! `cpu`); on a GPU backend the blocks stay on the device and each exchange
//! moves only the block's edge band and halo ring over the bus.
//!
//! Rank 0 prints the residual norm every `--every` sweeps (17 significant
//! digits, to compare rank counts) and, per sweep, the slowest rank's kernel
//! and halo-exchange times and the bytes each rank sends.

use hipacc::distributed::{self, mpi::traits::*, DistImage, Grid, LaunchStats};
use hipacc::prelude::*;
use std::rc::Rc;

#[derive(Kernel)]
#[kernel(output = f32)]
struct Jacobi {
    u: Accessor<f32>,
    f: Accessor<f32>,
    h2: f32,
}

#[kernel_body]
impl Jacobi {
    fn kernel(&self) -> f32 {
        (self.u.at(-1, 0)
            + self.u.at(1, 0)
            + self.u.at(0, -1)
            + self.u.at(0, 1)
            + self.h2 * self.f.at(0, 0))
            * 0.25
    }
}

/// The squared residual `(f + Δu)²` per pixel.
#[derive(Kernel)]
#[kernel(output = f32)]
struct Residual2 {
    u: Accessor<f32>,
    f: Accessor<f32>,
    inv_h2: f32,
}

#[kernel_body]
impl Residual2 {
    fn kernel(&self) -> f32 {
        let r = self.f.at(0, 0)
            + (self.u.at(-1, 0) + self.u.at(1, 0) + self.u.at(0, -1) + self.u.at(0, 1)
                - 4.0 * self.u.at(0, 0))
                * self.inv_h2;
        r * r
    }
}

fn arg(name: &str, default: usize) -> usize {
    let args: Vec<String> = std::env::args().collect();
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1))
        .map(|v| {
            v.parse()
                .unwrap_or_else(|_| panic!("{name} takes a number"))
        })
        .unwrap_or(default)
}

/// The value of `--backend`, or `cpu`.
fn backend() -> String {
    let args: Vec<String> = std::env::args().collect();
    args.iter()
        .position(|a| a == "--backend")
        .and_then(|i| args.get(i + 1).cloned())
        .unwrap_or_else(|| "cpu".into())
}

fn main() -> Result<(), distributed::DistError> {
    let size = arg("--size", 1024);
    let sweeps = arg("--sweeps", 20);
    let every = arg("--every", 5).max(1);
    let universe = distributed::initialize()?;
    let world = universe.world();
    let grid = Rc::new(Grid::new(&world, size, size)?);
    let dev = Device::from_name(&backend())?;
    let h = 1.0 / (size + 1) as f32;
    let f = DistImage::from_fn(&grid, |x, y| {
        let (px, py) = ((x + 1) as f32 * h, (y + 1) as f32 * h);
        (px * 7.0).sin() * (py * 3.0).cos() + 1.0
    })?;
    let mut u = DistImage::<f32>::new(&grid)?;
    let mut v = DistImage::<f32>::new(&grid)?;
    let r2 = DistImage::<f32>::new(&grid)?;
    let zero = Boundary::Constant(0.0);
    let residual = |u: &DistImage<f32>| -> Result<f64, distributed::DistError> {
        distributed::execute(&dev, &r2, |r| Residual2 {
            u: r.accessor(u, zero),
            f: r.accessor(&f, Boundary::Clamp),
            inv_h2: 1.0 / (h * h),
        })?;
        Ok(distributed::sum(&dev, &r2)?.sqrt())
    };
    let (px, py) = grid.shape();
    if grid.rank() == 0 {
        println!(
            "{size}x{size} on {} ranks ({px}x{py}), {}",
            grid.ranks(),
            dev.name()
        );
        println!("sweep 0 residual {:.16e}", residual(&u)?);
    } else {
        residual(&u)?;
    }
    let mut total = LaunchStats::default();
    world.barrier();
    let start = std::time::Instant::now();
    for s in 1..=sweeps {
        let st = distributed::execute(&dev, &v, |r| Jacobi {
            u: r.accessor(&u, zero),
            f: r.accessor(&f, Boundary::Clamp),
            h2: h * h,
        })?;
        total.exchange += st.exchange;
        total.compute_seconds += st.compute_seconds;
        std::mem::swap(&mut u, &mut v);
        if s % every == 0 {
            let norm = residual(&u)?;
            if grid.rank() == 0 {
                println!("sweep {s} residual {norm:.16e}");
            }
        }
    }
    world.barrier();
    let wall = start.elapsed().as_secs_f64();
    // The slowest rank's times; every rank's bytes are the same order.
    let mut all = vec![0.0f64; 3 * grid.ranks()];
    let mine = [
        total.compute_seconds,
        total.exchange.seconds,
        total.exchange.bytes_sent as f64,
    ];
    world.all_gather_into(&mine[..], &mut all[..]);
    if grid.rank() == 0 {
        let max = |k: usize| {
            (0..grid.ranks())
                .map(|r| all[3 * r + k])
                .fold(0.0, f64::max)
        };
        let n = sweeps as f64;
        println!(
            "per sweep: wall {:.2} ms (residual checks included), kernel {:.2} ms, halo exchange {:.3} ms, {:.0} bytes sent per rank (max)",
            wall / n * 1e3,
            max(0) / n * 1e3,
            max(1) / n * 1e3,
            max(2) / n
        );
    }
    Ok(())
}
