//! Pipelines with several outputs ([`Pipeline::output`]) equal the same
//! kernels run one by one, bit for bit: on the CPU (strips), and on OpenCL
//! both as device launches and, on a CPU device (PoCL), as the native
//! CPU's strips; for sibling outputs of
//! different kernels (a five-input flow update read at 4-neighbour
//! offsets, an asymmetric offset read, a pure convolution that runs as a
//! separable one), with and without a producer stage they share, every
//! boundary mode, odd sizes, full and partial iteration spaces, serial and
//! parallel strips (the boundary modes but `Undefined`, which leaves reads
//! outside the image to chance). Pixels outside the space keep their
//! values; outputs that a stage reads or that cover different spaces run
//! (`pipeline_read_outputs.rs` checks those at length).

use hipacc::pipeline::Pipeline;
use hipacc::prelude::*;

mod pipeline_support;
use pipeline_support::{bits, fresh, image, modes, on_opencl, Box3, Shift, UNTOUCHED};

/// One component of a Horn-Schunck update: five inputs, `a` and `b` read
/// at their four neighbours.
#[derive(Kernel)]
#[kernel(output = f32)]
struct Flow {
    ia: Accessor<f32>,
    ib: Accessor<f32>,
    it: Accessor<f32>,
    a: Accessor<f32>,
    b: Accessor<f32>,
}

#[kernel_body]
impl Flow {
    fn kernel(&self) -> f32 {
        let abar = (self.a.at(-1, 0) + self.a.at(1, 0) + self.a.at(0, -1) + self.a.at(0, 1)) * 0.25;
        let bbar = (self.b.at(-1, 0) + self.b.at(1, 0) + self.b.at(0, -1) + self.b.at(0, 1)) * 0.25;
        let ia = self.ia();
        let ib = self.ib();
        let t = (ia * abar + ib * bbar + self.it()) / (0.25 + ia * ia + ib * ib);
        abar - ia * t
    }
}

/// A pure 3x3 convolution: computed per strip as a separable one.
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

/// The four outputs over `rect` of `w x h` images, read through `mode`,
/// reading a shared 3x3 mean of the input when `producer`: run as one
/// pipeline on `device`, then one by one on `alone`, compared bit for bit.
fn check(
    (w, h): (usize, usize),
    rect: Rect,
    mode: Boundary<f32>,
    producer: bool,
    (device, alone): (&Device, &Device),
) {
    let what = format!("{w}x{h} {rect:?} {:?} producer {producer}", mode.mode());
    let (ix, iy, it, u, v) = (
        image(w, h, 1),
        image(w, h, 2),
        image(w, h, 3),
        image(w, h, 4),
        image(w, h, 5),
    );
    let mean = fresh(w, h);
    let src = if producer { &mean } else { &u };
    let acc = |img| Accessor::new(img).with_boundary(mode);
    let blur = Box3 {
        input: acc(&u),
        window: Domain::new(3, 3).expect("odd"),
    };
    let flow = |ia, ib, a, b| Flow {
        ia: Accessor::new(ia),
        ib: Accessor::new(ib),
        it: Accessor::new(&it),
        a: acc(a),
        b: acc(b),
    };
    let (flow_u, flow_v) = (flow(&ix, &iy, src, &v), flow(&iy, &ix, &v, src));
    let shift = Shift { input: acc(src) };
    let pure = Pure3 {
        input: acc(&v),
        mask: Mask::fixed([[1.0, 2.0, 1.0], [2.0, 4.0, 2.0], [1.0, 2.0, 1.0]]).expect("odd"),
    };
    let outs: Vec<Image<f32>> = (0..4).map(|_| fresh(w, h)).collect();
    let spaces: Vec<IterationSpace<f32>> = outs
        .iter()
        .map(|o| IterationSpace::region(o, rect).expect("inside"))
        .collect();
    let full = IterationSpace::full(&mean);
    let pipeline = if producer {
        Pipeline::new().stage(&blur, &full)
    } else {
        Pipeline::new()
    };
    pipeline
        .output(&flow_u, &spaces[0])
        .output(&shift, &spaces[1])
        .output(&pure, &spaces[2])
        .stage(&flow_v, &spaces[3])
        .execute(device)
        .unwrap_or_else(|e| panic!("{what}: {e}"));
    let fused: Vec<Vec<u32>> = outs.iter().map(bits).collect();

    for o in &outs {
        o.copy_from_slice(&vec![UNTOUCHED; w * h])
            .expect("same size");
    }
    if producer {
        blur.execute(alone, &full).expect("runs");
    }
    flow_u.execute(alone, &spaces[0]).expect("runs");
    shift.execute(alone, &spaces[1]).expect("runs");
    pure.execute(alone, &spaces[2]).expect("runs");
    flow_v.execute(alone, &spaces[3]).expect("runs");
    for (k, (f, o)) in fused.iter().zip(&outs).enumerate() {
        let alone = bits(o);
        let differ = f.iter().zip(&alone).position(|(a, b)| a != b);
        assert!(
            differ.is_none(),
            "{what}: output {k} pixel {:?} is {} in the pipeline, {} alone",
            differ.map(|i| (i % w, i / w)),
            differ.map_or(0.0, |i| f32::from_bits(f[i])),
            differ.map_or(0.0, |i| f32::from_bits(alone[i])),
        );
    }
}

/// Every output check over `sizes`, the pipeline on `device`, the kernels
/// alone on `alone`.
fn check_all(sizes: &[(usize, usize)], device: &Device, alone: &Device) {
    for &(w, h) in sizes {
        let inner = Rect::new(w / 4, h / 3, w - w / 4 - w / 5, h - h / 3 - h / 7);
        for rect in [Rect::full(w, h), inner] {
            for mode in modes() {
                for producer in [false, true] {
                    check((w, h), rect, mode, producer, (device, alone));
                }
            }
        }
    }
}

const SIZES: [(usize, usize); 6] = [(1, 1), (3, 2), (2, 7), (17, 9), (67, 33), (97, 131)];

#[test]
fn sibling_outputs_equal_kernels_run_alone() {
    check_all(&SIZES, &Device::cpu(), &Device::cpu());
}

#[test]
fn serial_and_parallel_strips_agree() {
    let cpu = Device::cpu();
    // 1500 columns: the outputs take turns of a few rows within a strip.
    check_all(
        &[(130, 257), (31, 5), (1500, 300)],
        &Device::cpu_serial_below(0),
        &cpu,
    );
    check_all(&[(130, 257)], &Device::cpu_serial_below(usize::MAX), &cpu);
}

/// On OpenCL the outputs run as launches of their own, equal to the
/// kernels launched alone; on a CPU device (PoCL) without
/// [`hipacc::pipeline::PIPELINE_ENV`] the pipeline runs as the native
/// CPU's strips, equal to the kernels alone there. Prints a skip line when
/// no OpenCL platform is present.
#[test]
fn opencl_runs_outputs_as_launches_or_native_strips() {
    let sizes = [(3, 2), (17, 9), (67, 33)];
    on_opencl(|device, alone| check_all(&sizes, device, alone));
}

/// A stage may read an output, and outputs may cover different spaces
/// (here a partial one): each output is what its kernel writes alone.
#[test]
fn outputs_read_by_a_stage_or_over_other_spaces_run() {
    let input = image(8, 8, 1);
    let (a, b, c) = (fresh(8, 8), fresh(8, 8), fresh(8, 8));
    let shift = |img| Shift {
        input: Accessor::new(img).with_boundary(Boundary::Clamp),
    };
    let (from_input, from_a) = (shift(&input), shift(&a));
    let (sa, sb) = (IterationSpace::full(&a), IterationSpace::full(&b));
    let part = IterationSpace::region(&c, Rect::new(1, 0, 7, 8)).expect("inside");
    Pipeline::new()
        .output(&from_input, &sa)
        .output(&from_a, &part)
        .stage(&from_a, &sb)
        .execute(&Device::cpu())
        .expect("runs");
    let fused: Vec<Vec<u32>> = [&a, &b, &c].iter().map(|i| bits(i)).collect();
    for img in [&a, &b, &c] {
        img.copy_from_slice(&[UNTOUCHED; 64]).expect("same size");
    }
    from_input.execute(&Device::cpu(), &sa).expect("runs");
    from_a.execute(&Device::cpu(), &part).expect("runs");
    from_a.execute(&Device::cpu(), &sb).expect("runs");
    let alone: Vec<Vec<u32>> = [&a, &b, &c].iter().map(|i| bits(i)).collect();
    assert_eq!(fused, alone);
}

/// Reads far to both sides and four rows up and down: its interior starts
/// 600 columns in and ends 590 before the right edge.
#[derive(Kernel)]
#[kernel(output = f32)]
struct Far {
    input: Accessor<f32>,
}

#[kernel_body]
impl Far {
    fn kernel(&self) -> f32 {
        self.input.at(-600, -4) - 0.5 * self.input.at(590, 4)
            + self.input.at(0, 0) * self.input.at(3, -2)
            - self.input.at(-7, 2)
    }
}

/// Outputs computed pixel by pixel take turns within rows, a chunk of
/// columns each. Two [`Far`] outputs read 18 rows per column, so the
/// chunks are 512 columns: at 1300 columns the first lies wholly in the
/// left strip read through the boundary condition, the second holds the
/// rest of the left strip, the interior and part of the right strip, the
/// third only the right strip; at 900 columns there is no interior.
/// Every output equals its kernel run alone, bit for bit.
#[test]
fn outputs_in_column_chunks_equal_kernels_run_alone() {
    for (w, h) in [(1300, 11), (900, 3), (1901, 20)] {
        for rect in [Rect::full(w, h), Rect::new(37, 2, w - 100, h - 2)] {
            for mode in modes() {
                for device in [Device::cpu(), Device::cpu_serial_below(usize::MAX)] {
                    let what = format!("{w}x{h} {rect:?} {:?}", mode.mode());
                    let (p, q) = (image(w, h, 7), image(w, h, 8));
                    let far = |img| Far {
                        input: Accessor::new(img).with_boundary(mode),
                    };
                    let (a, b) = (far(&p), far(&q));
                    let outs = [fresh(w, h), fresh(w, h)];
                    let spaces: Vec<IterationSpace<f32>> = outs
                        .iter()
                        .map(|o| IterationSpace::region(o, rect).expect("inside"))
                        .collect();
                    Pipeline::new()
                        .output(&a, &spaces[0])
                        .stage(&b, &spaces[1])
                        .execute(&device)
                        .unwrap_or_else(|e| panic!("{what}: {e}"));
                    let fused: Vec<Vec<u32>> = outs.iter().map(bits).collect();
                    for o in &outs {
                        o.copy_from_slice(&vec![UNTOUCHED; w * h])
                            .expect("same size");
                    }
                    a.execute(&device, &spaces[0]).expect("runs");
                    b.execute(&device, &spaces[1]).expect("runs");
                    let alone: Vec<Vec<u32>> = outs.iter().map(bits).collect();
                    assert!(fused == alone, "{what}: the pipeline differs");
                }
            }
        }
    }
}
