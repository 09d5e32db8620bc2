//! Pipeline outputs ([`Pipeline::output`]) that later stages read, and
//! outputs over spaces of another size, equal the same kernels run one by
//! one, bit for bit: a fine output read at row offsets by a later output
//! and by a restriction to a grid of half the size (reads at `2 y + j`,
//! one row above its cells too), with and without a producer stage before
//! it, the fine or the coarse grid as the last stage, every boundary mode
//! but `Undefined` (which leaves reads outside the image to chance), odd
//! sizes, serial and parallel strips; and an output read at rows no strip
//! holds, which makes the pipeline run its stages one by one. On the CPU (strips) and on
//! OpenCL, as device launches (the outputs never folded away) and, on a
//! CPU device (PoCL), as the native CPU's strips.

use hipacc::pipeline::Pipeline;
use hipacc::prelude::*;

mod pipeline_support;
use pipeline_support::{bits, fresh, image, modes, on_opencl, Box3, Shift, UNTOUCHED};

/// A restriction to a grid of half the size: a weighted sum of the fine
/// cells `2 x + i`, `2 y + j` for `i, j` in `-1..=1`.
#[derive(Kernel)]
#[kernel(output = f32)]
struct Restrict {
    fine: Accessor<f32>,
}

#[kernel_body]
impl Restrict {
    fn kernel(&self) -> f32 {
        let mut s: f32 = 0.0;
        for j in -1..2 {
            for i in -1..2 {
                let w = (2 - i * i) * (2 - j * j);
                s += w as f32 * self.fine.at(x() + i, y() + j);
            }
        }
        s * (1.0 / 16.0)
    }
}

/// The pixel plus half the first row's pixel above it: row 0 read from
/// every row (offset `-y`), which no strip holds, so a pipeline that reads
/// an output through it runs one by one.
#[derive(Kernel)]
#[kernel(output = f32)]
struct TopRow {
    input: Accessor<f32>,
}

#[kernel_body]
impl TopRow {
    fn kernel(&self) -> f32 {
        self.input() + 0.5 * self.input.at(0, -y())
    }
}

/// The shape of the pipeline checked.
#[derive(Clone, Copy, Debug)]
enum Shape {
    /// `fine` and `coarse` outputs, then `later` (fine size) last.
    FineLast,
    /// `fine` an output, `coarse` last: strips of the coarse grid.
    CoarseLast,
    /// As `FineLast` with [`TopRow`] of `fine` as `later`.
    ReadWhole,
}

/// One pipeline over `w x h` (its coarse grid `⌈w/2⌉ x ⌈h/2⌉`), reads
/// through `mode`, a 3x3 mean first when `producer`: run on `device`, then
/// one by one on `alone`, compared bit for bit.
fn check(
    (w, h): (usize, usize),
    mode: Boundary<f32>,
    producer: bool,
    shape: Shape,
    (device, alone): (&Device, &Device),
) {
    let what = format!("{w}x{h} {:?} producer {producer} {shape:?}", mode.mode());
    let input = image(w, h, 1);
    let mean = fresh(w, h);
    let (fine, later) = (fresh(w, h), fresh(w, h));
    let coarse = fresh(w.div_ceil(2), h.div_ceil(2));
    let acc = |img| Accessor::new(img).with_boundary(mode);
    let blur = Box3 {
        input: acc(&input),
        window: Domain::new(3, 3).expect("odd"),
    };
    let to_fine = Shift {
        input: acc(if producer { &mean } else { &input }),
    };
    let restrict = Restrict { fine: acc(&fine) };
    let shift = Shift { input: acc(&fine) };
    let top = TopRow { input: acc(&fine) };
    let (s_mean, s_fine) = (IterationSpace::full(&mean), IterationSpace::full(&fine));
    let (s_coarse, s_later) = (IterationSpace::full(&coarse), IterationSpace::full(&later));
    let mut pipeline = Pipeline::new();
    if producer {
        pipeline = pipeline.stage(&blur, &s_mean);
    }
    pipeline = match shape {
        Shape::FineLast => pipeline
            .output(&to_fine, &s_fine)
            .output(&restrict, &s_coarse)
            .stage(&shift, &s_later),
        Shape::CoarseLast => pipeline
            .output(&to_fine, &s_fine)
            .stage(&restrict, &s_coarse),
        Shape::ReadWhole => pipeline
            .output(&to_fine, &s_fine)
            .output(&restrict, &s_coarse)
            .stage(&top, &s_later),
    };
    pipeline
        .execute(device)
        .unwrap_or_else(|e| panic!("{what}: {e}"));
    let outs = [&fine, &coarse, &later];
    let fused: Vec<Vec<u32>> = outs.iter().map(|o| bits(o)).collect();
    if producer && device.kind() == hipacc::BackendKind::Cpu {
        // Fused per strip, the mean stays in scratch; run one by one, it
        // is written.
        let untouched = bits(&mean).iter().all(|&b| b == UNTOUCHED.to_bits());
        let one_by_one = matches!(shape, Shape::ReadWhole);
        assert_eq!(untouched, !one_by_one, "{what}: the mean written or not");
    }

    for o in outs {
        let n = o.width() * o.height();
        o.copy_from_slice(&vec![UNTOUCHED; n]).expect("same size");
    }
    if producer {
        blur.execute(alone, &s_mean).expect("runs");
    }
    to_fine.execute(alone, &s_fine).expect("runs");
    restrict.execute(alone, &s_coarse).expect("runs");
    match shape {
        Shape::FineLast => shift.execute(alone, &s_later).expect("runs"),
        Shape::CoarseLast => {}
        Shape::ReadWhole => top.execute(alone, &s_later).expect("runs"),
    }
    for (k, (f, o)) in fused.iter().zip(outs).enumerate() {
        let alone = bits(o);
        let differ = f.iter().zip(&alone).position(|(a, b)| a != b);
        assert!(
            differ.is_none(),
            "{what}: output {k} pixel {:?} is {} in the pipeline, {} alone",
            differ.map(|i| (i % o.width(), i / o.width())),
            differ.map_or(0.0, |i| f32::from_bits(f[i])),
            differ.map_or(0.0, |i| f32::from_bits(alone[i])),
        );
    }
}

/// Every check over `sizes` and `shapes`, the pipeline on `device`, the
/// kernels alone on `alone`.
fn check_all(sizes: &[(usize, usize)], shapes: &[Shape], device: &Device, alone: &Device) {
    for &(w, h) in sizes {
        for mode in modes() {
            for producer in [false, true] {
                for &shape in shapes {
                    check((w, h), mode, producer, shape, (device, alone));
                }
            }
        }
    }
}

const SIZES: [(usize, usize); 6] = [(1, 1), (3, 2), (2, 7), (17, 9), (67, 33), (97, 131)];
const SHAPES: [Shape; 3] = [Shape::FineLast, Shape::CoarseLast, Shape::ReadWhole];

#[test]
fn read_outputs_and_coarse_outputs_equal_kernels_run_alone() {
    check_all(&SIZES, &SHAPES, &Device::cpu(), &Device::cpu());
}

#[test]
fn serial_and_parallel_strips_agree() {
    let cpu = Device::cpu();
    // Tall enough for many strips, and odd in both directions.
    let sizes = [(130, 257), (1500, 301)];
    check_all(&sizes, &SHAPES, &Device::cpu_serial_below(0), &cpu);
    check_all(
        &[(131, 257)],
        &SHAPES,
        &Device::cpu_serial_below(usize::MAX),
        &cpu,
    );
}

/// On OpenCL the outputs run as launches of their own, none folded into
/// the stage that reads it; on a CPU device (PoCL) without
/// [`hipacc::pipeline::PIPELINE_ENV`] the pipeline runs as the native
/// CPU's strips. Prints a skip line when no OpenCL platform is present.
#[test]
fn opencl_runs_read_outputs_as_launches_or_native_strips() {
    let sizes = [(3, 2), (17, 9), (67, 33)];
    on_opencl(|device, alone| check_all(&sizes, &SHAPES, device, alone));
}
