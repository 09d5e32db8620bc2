//! Fused pipelines on the CPU equal the same kernels run one by one, bit
//! for bit: chains of 2 to 4 stages with mixed footprints (point-wise,
//! 3x3 and 5x5 windows, asymmetric offsets, two inputs), every boundary
//! mode on the intermediates, odd sizes, and images smaller than the
//! windows (Mirror and Repeat far outside).

use hipacc::pipeline::Pipeline;
use hipacc::prelude::*;
use proptest::prelude::*;

/// A 3x3 domain sum.
#[derive(Kernel)]
#[kernel(output = f32)]
struct Box3 {
    input: Accessor<f32>,
    window: Domain,
}

#[kernel_body]
impl Box3 {
    fn kernel(&self) -> f32 {
        reduce(&self.window, Sum, |dx, dy| self.input.at(dx, dy)) * 0.25
    }
}

/// A 7x5 domain mean: a box taller than the four rows the vertical pass
/// groups, whose sums are grouped by the row's position modulo four.
#[derive(Kernel)]
#[kernel(output = f32)]
struct Box7x5 {
    input: Accessor<f32>,
    window: Domain,
}

#[kernel_body]
impl Box7x5 {
    fn kernel(&self) -> f32 {
        reduce(&self.window, Sum, |dx, dy| self.input.at(dx, dy)) * (1.0 / 35.0)
    }
}

/// Reads at offsets reaching 2 rows up and 3 down, 1 column right.
#[derive(Kernel)]
#[kernel(output = f32)]
struct Shift {
    input: Accessor<f32>,
}

#[kernel_body]
impl Shift {
    fn kernel(&self) -> f32 {
        self.input.at(0, -2) - 0.5 * self.input.at(1, 3)
    }
}

/// Point-wise.
#[derive(Kernel)]
#[kernel(output = f32)]
struct Point {
    input: Accessor<f32>,
}

#[kernel_body]
impl Point {
    fn kernel(&self) -> f32 {
        self.input() * 1.5 - 0.25
    }
}

/// A 5x5 mask convolution inside a body (not a pure convolution).
#[derive(Kernel)]
#[kernel(output = f32)]
struct Conv5 {
    input: Accessor<f32>,
    mask: Mask<f32, 5, 5>,
}

#[kernel_body]
impl Conv5 {
    fn kernel(&self) -> f32 {
        convolve(&self.mask, Sum, |dx, dy| {
            self.mask.at(dx, dy) * self.input.at(dx, dy)
        }) + 1.0
    }
}

/// A pure 3x3 convolution: it may run as a separable one, so the
/// pipeline runs it whole.
#[derive(Kernel)]
#[kernel(output = f32)]
struct Pure3 {
    input: Accessor<f32>,
    mask: Mask<f32, 3, 3>,
}

#[kernel_body]
impl Pure3 {
    fn kernel(&self) -> f32 {
        convolve(&self.mask, Sum, |dx, dy| {
            self.mask.at(dx, dy) * self.input.at(dx, dy)
        })
    }
}

/// Two inputs: the previous stage and the pipeline's input.
#[derive(Kernel)]
#[kernel(output = f32)]
struct Pair {
    first: Accessor<f32>,
    second: Accessor<f32>,
}

#[kernel_body]
impl Pair {
    fn kernel(&self) -> f32 {
        self.first.at(-1, 1) + self.second.at(1, -1) * 0.5
    }
}

/// One stage of a test chain.
enum Stage {
    Box3(Box3),
    Shift(Shift),
    Point(Point),
    Conv5(Conv5),
    Pure3(Pure3),
    Pair(Pair),
    Box7x5(Box7x5),
}

const KINDS: usize = 7;

fn boundary(mode: usize) -> Boundary<f32> {
    match mode {
        0 => Boundary::Clamp,
        1 => Boundary::Repeat,
        2 => Boundary::Mirror,
        3 => Boundary::MirrorInterior,
        _ => Boundary::Constant(-2.5),
    }
}

const MODES: usize = 5;

fn image(w: usize, h: usize, seed: u64) -> Image<f32> {
    Image::from_fn(w, h, |x, y| {
        let mut v = (x as u64 + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15)
            ^ (y as u64 + seed).wrapping_mul(0xC2B2_AE3D_27D4_EB4F);
        v ^= v >> 29;
        ((v % 16) + 8) as f32 / 16.0
    })
    .expect("sizes are at least 1")
}

impl Stage {
    /// Stage `kind` reading `prev` through `mode`, and `input` as well
    /// for the two-input stage.
    fn new(kind: usize, prev: &Image<f32>, input: &Image<f32>, mode: usize) -> Stage {
        let acc = Accessor::new(prev).with_boundary(boundary(mode));
        match kind {
            0 => Stage::Box3(Box3 {
                input: acc,
                window: Domain::new(3, 3).expect("odd"),
            }),
            1 => Stage::Shift(Shift { input: acc }),
            // A point-wise read never leaves the image: Undefined is safe.
            2 => Stage::Point(Point {
                input: Accessor::new(prev),
            }),
            3 => Stage::Conv5(Conv5 {
                input: acc,
                mask: Mask::fixed(std::array::from_fn(|r| {
                    std::array::from_fn(|c| ((r * 5 + c * 3) % 7) as f32 - 3.0)
                }))
                .expect("odd"),
            }),
            4 => Stage::Pure3(Pure3 {
                input: acc,
                mask: Mask::fixed([[1.0, 2.0, 1.0], [2.0, 4.0, 2.0], [1.0, 2.0, 1.0]])
                    .expect("odd"),
            }),
            5 => Stage::Pair(Pair {
                first: acc,
                second: Accessor::new(input).with_boundary(Boundary::Mirror),
            }),
            _ => Stage::Box7x5(Box7x5 {
                input: acc,
                window: Domain::new(5, 7).expect("odd"),
            }),
        }
    }

    fn add<'a>(&'a self, p: Pipeline<'a>, space: &'a IterationSpace<f32>) -> Pipeline<'a> {
        match self {
            Stage::Box3(k) => p.stage(k, space),
            Stage::Shift(k) => p.stage(k, space),
            Stage::Point(k) => p.stage(k, space),
            Stage::Conv5(k) => p.stage(k, space),
            Stage::Pure3(k) => p.stage(k, space),
            Stage::Pair(k) => p.stage(k, space),
            Stage::Box7x5(k) => p.stage(k, space),
        }
    }

    fn execute(&self, space: &IterationSpace<f32>) -> hipacc::Result<()> {
        let dev = Device::cpu();
        match self {
            Stage::Box3(k) => k.execute(&dev, space),
            Stage::Shift(k) => k.execute(&dev, space),
            Stage::Point(k) => k.execute(&dev, space),
            Stage::Conv5(k) => k.execute(&dev, space),
            Stage::Pure3(k) => k.execute(&dev, space),
            Stage::Pair(k) => k.execute(&dev, space),
            Stage::Box7x5(k) => k.execute(&dev, space),
        }
    }
}

/// Runs the chain `(kind, mode)` over a `w x h` input fused and one stage
/// at a time, and compares the last outputs bit for bit.
fn check_chain(w: usize, h: usize, chain: &[(usize, usize)], device: &Device) {
    let input = image(w, h, 3);
    let images: Vec<Image<f32>> = chain
        .iter()
        .map(|_| Image::new(w, h).expect("sizes are at least 1"))
        .collect();
    let spaces: Vec<IterationSpace<f32>> = images.iter().map(IterationSpace::full).collect();
    let stages: Vec<Stage> = chain
        .iter()
        .enumerate()
        .map(|(i, &(kind, mode))| {
            let prev = if i == 0 { &input } else { &images[i - 1] };
            Stage::new(kind, prev, &input, mode)
        })
        .collect();
    let pipeline = stages
        .iter()
        .zip(&spaces)
        .fold(Pipeline::new(), |p, (s, space)| s.add(p, space));
    pipeline.execute(device).expect("the pipeline runs");
    let last = images.last().expect("a chain has stages");
    let fused = last.to_vec().expect("readable");
    for (s, space) in stages.iter().zip(&spaces) {
        s.execute(space).expect("the stage runs");
    }
    let unfused = last.to_vec().expect("readable");
    let differ = fused
        .iter()
        .zip(&unfused)
        .position(|(a, b)| a.to_bits() != b.to_bits());
    assert!(
        differ.is_none(),
        "{w}x{h} {chain:?}: pixel {:?} is {} fused, {} unfused",
        differ.map(|i| (i % w, i / w)),
        differ.map_or(0.0, |i| fused[i]),
        differ.map_or(0.0, |i| unfused[i]),
    );
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn fused_chains_equal_unfused(
        w in 1usize..48,
        h in 1usize..80,
        chain in prop::collection::vec((0..KINDS, 0..MODES), 2..=4),
    ) {
        check_chain(w, h, &chain, &Device::cpu());
    }
}

#[test]
fn every_mode_after_every_window_on_odd_sizes() {
    for (w, h) in [(97, 131), (3, 61), (45, 2)] {
        for mode in 0..MODES {
            for kind in [0, 1, 3, 5, 6] {
                check_chain(w, h, &[(3, mode), (kind, mode), (0, mode)], &Device::cpu());
            }
        }
    }
}

#[test]
fn windows_wider_than_the_image_wrap_and_reflect_far() {
    // A 5x5 window on a 2-row image reads rows -2 and 3 of the
    // intermediates: Repeat and Mirror map them to rows far from the strip.
    for mode in 0..MODES {
        check_chain(
            9,
            2,
            &[(0, mode), (3, mode), (1, mode), (3, mode)],
            &Device::cpu(),
        );
        check_chain(1, 1, &[(3, mode), (3, mode)], &Device::cpu());
    }
}

#[test]
fn serial_and_parallel_launches_agree() {
    check_chain(
        130,
        257,
        &[(3, 1), (2, 0), (0, 2), (1, 4)],
        &Device::cpu_serial_below(0),
    );
    check_chain(
        130,
        257,
        &[(6, 1), (6, 3), (2, 0)],
        &Device::cpu_serial_below(0),
    );
}

#[test]
fn stages_out_of_order_are_refused() {
    let input = image(8, 8, 1);
    let (a, b) = (
        Image::<f32>::new(8, 8).unwrap(),
        Image::<f32>::new(8, 8).unwrap(),
    );
    let first = Point {
        input: Accessor::new(&a),
    };
    let second = Point {
        input: Accessor::new(&input),
    };
    let (sa, sb) = (IterationSpace::full(&a), IterationSpace::full(&b));
    // `first` reads `a`, which `second` writes after it... into `a`.
    let err = Pipeline::new()
        .stage(&first, &sb)
        .stage(&second, &sa)
        .execute(&Device::cpu())
        .expect_err("a stage reads a later stage's output");
    assert!(
        err.to_string().contains("list each producer before"),
        "{err}"
    );
    let err = Pipeline::new()
        .stage(&second, &sa)
        .stage(&second, &sa)
        .execute(&Device::cpu())
        .expect_err("two stages write one image");
    assert!(err.to_string().contains("write the same image"), "{err}");
}

#[test]
fn fused_intermediates_stay_in_scratch() {
    // Fused stages write their rows to scratch, never to their images:
    // the intermediates keep the NaN they were filled with.
    let (w, h) = (61, 90);
    let input = image(w, h, 5);
    let images: Vec<Image<f32>> = (0..3)
        .map(|_| Image::from_fn(w, h, |_, _| f32::NAN).unwrap())
        .collect();
    let first = Stage::new(3, &input, &input, 2);
    let second = Stage::new(0, &images[0], &input, 1);
    let third = Stage::new(1, &images[1], &input, 4);
    let spaces: Vec<IterationSpace<f32>> = images.iter().map(IterationSpace::full).collect();
    let p = first.add(Pipeline::new(), &spaces[0]);
    let p = second.add(p, &spaces[1]);
    third
        .add(p, &spaces[2])
        .execute(&Device::cpu())
        .expect("the pipeline runs");
    for img in &images[..2] {
        assert!(img.to_vec().unwrap().iter().all(|v| v.is_nan()));
    }
    assert!(images[2].to_vec().unwrap().iter().all(|v| !v.is_nan()));
}
