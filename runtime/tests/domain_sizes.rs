//! A domain whose size is in its type (`Domain<3, 3>`) runs like the same
//! domain of run-time size: a cross-shaped max over `u8` pixels and a
//! masked sum over `f32`, on the CPU (parallel and serial) and in the
//! evaluator, each checked against the same window computed in this file
//! with clamped reads. Odd image sizes down to 1x1.

use hipacc::core::ir::evaluate_kernel;
use hipacc::prelude::*;

#[derive(Kernel)]
#[kernel(output = u8)]
struct CrossMax {
    input: Accessor<u8>,
    window: Domain<3, 3>,
}

#[kernel_body]
impl CrossMax {
    fn kernel(&self) -> u8 {
        reduce(&self.window, Max, |dx, dy| self.input.at(dx, dy))
    }
}

#[derive(Kernel)]
#[kernel(output = f32)]
struct RingSum {
    input: Accessor<f32>,
    window: Domain<5, 3>,
}

#[kernel_body]
impl RingSum {
    fn kernel(&self) -> f32 {
        reduce(&self.window, Sum, |dx, dy| self.input.at(dx, dy))
    }
}

const SIZES: [(usize, usize); 4] = [(1, 1), (3, 2), (17, 5), (64, 33)];

/// The same reduction written out: clamped reads at the enabled offsets.
fn reference<T: Copy>(
    src: &[T],
    (w, h): (usize, usize),
    offsets: &[(i32, i32)],
    combine: impl Fn(T, T) -> T,
) -> Vec<T> {
    let read = |x: i64, y: i64| {
        let (x, y) = (x.clamp(0, w as i64 - 1), y.clamp(0, h as i64 - 1));
        src[y as usize * w + x as usize]
    };
    (0..w * h)
        .map(|i| {
            let (x, y) = ((i % w) as i64, (i / w) as i64);
            offsets
                .iter()
                .map(|&(dx, dy)| read(x + dx as i64, y + dy as i64))
                .reduce(&combine)
                .expect("a non-empty domain")
        })
        .collect()
}

/// The kernel's output on each CPU device and in the evaluator.
fn outputs<K: Kernel>(kernel: &K, (w, h): (usize, usize)) -> Vec<Vec<K::Output>> {
    let mut all = Vec::new();
    for device in [Device::cpu_serial_below(0), Device::cpu()] {
        let out = Image::<K::Output>::new(w, h).expect("out");
        kernel
            .execute(&device, &IterationSpace::full(&out))
            .expect("cpu");
        all.push(out.to_vec().expect("pixels"));
    }
    let out = Image::<K::Output>::new(w, h).expect("out");
    evaluate_kernel(kernel, &IterationSpace::full(&out)).expect("evaluator");
    all.push(out.to_vec().expect("pixels"));
    all
}

#[test]
fn domains_sized_in_their_type_match_a_written_out_window() {
    let cross: Domain<3, 3> = Domain::from_flags([
        [false, true, false],
        [true, true, true],
        [false, true, false],
    ])
    .expect("odd");
    let mut ring: Domain<5, 3> = Domain::fixed().expect("odd");
    ring.set(0, 0, false).expect("inside");
    ring.set(2, -1, false).expect("inside");
    for size in SIZES {
        let bytes =
            Image::from_fn(size.0, size.1, |x, y| ((x * 37 + y * 91) % 251) as u8).expect("image");
        let floats = Image::from_fn(size.0, size.1, |x, y| {
            ((x * 13 + y * 7) % 29) as f32 * 0.25 - 3.0
        })
        .expect("image");
        let k = CrossMax {
            input: Accessor::new(&bytes).with_boundary(Boundary::Clamp),
            window: cross.clone(),
        };
        let want = reference(
            &bytes.to_vec().expect("pixels"),
            size,
            &cross.positions(),
            u8::max,
        );
        for got in outputs(&k, size) {
            assert_eq!(got, want, "cross max {size:?}");
        }
        let k = RingSum {
            input: Accessor::new(&floats).with_boundary(Boundary::Clamp),
            window: ring.clone(),
        };
        // Quarter-integers summed in row-major order: every partial sum is
        // exact in f32, so any order gives the same bits.
        let want = reference(
            &floats.to_vec().expect("pixels"),
            size,
            &ring.positions(),
            |a, b| a + b,
        );
        for got in outputs(&k, size) {
            assert_eq!(got, want, "ring sum {size:?}");
        }
    }
}

#[test]
fn an_even_run_time_size_is_refused_for_a_sized_domain() {
    assert!(Domain::<4, 3>::fixed().is_err());
    assert!(Domain::<0, 0>::fixed().is_err());
}
