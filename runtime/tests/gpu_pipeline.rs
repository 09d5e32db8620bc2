//! Pipelines on OpenCL, wgpu and CUDA: a stage read by one later stage at its own pixel is
//! folded into it (one launch); read through a window or at offsets, it is
//! recomputed at each read where the architecture model says that pays;
//! everything else runs stage by stage. The
//! result must equal running the stages one after the other on the same
//! device, bit for bit, on every boundary mode but `Undefined` and odd
//! sizes, for chains of two to four kernels with mixed footprints (window
//! reads, offset reads, point-wise reads, an intermediate read twice); and
//! it must be right (the evaluator, within 4 ulp-ish relative error: the
//! device contracts multiply-adds, the evaluator does not). A folded
//! intermediate is never written, which shows that folding happened.
//! (PoCL and lavapipe are CPU devices, where pipelines run as the native
//! CPU's strips unless `HIPACC_PIPELINE=launches`, which these tests set.)
//! Prints a skip line when no OpenCL platform, wgpu adapter or CUDA device
//! is present.

use hipacc::core::ir::evaluate_kernel;
use hipacc::pipeline::Pipeline;
use hipacc::prelude::*;

mod gpu_support;

/// The OpenCL device, asked for device launches as a GPU runs them, or
/// `None` after a skip line.
fn opencl() -> Option<Device> {
    std::env::set_var(hipacc::pipeline::PIPELINE_ENV, "launches");
    Device::opencl()
        .map_err(|e| println!("[SKIP] opencl: {e}"))
        .ok()
}

/// The wgpu device, asked for device launches, or `None` after a skip line.
#[cfg(feature = "wgpu")]
fn wgpu() -> Option<Device> {
    std::env::set_var(hipacc::pipeline::PIPELINE_ENV, "launches");
    gpu_support::wgpu()
}

/// The CUDA device (a GPU: pipelines run as device launches there), or
/// `None` after a skip line.
fn cuda() -> Option<Device> {
    gpu_support::cuda()
}

/// A 3x3 box mean.
#[derive(Kernel)]
#[kernel(output = f32)]
struct Blur {
    input: Accessor<f32>,
    window: Domain,
}

#[kernel_body]
impl Blur {
    fn kernel(&self) -> f32 {
        reduce(&self.window, Sum, |dx, dy| self.input.at(dx, dy)) * (1.0 / 9.0)
    }
}

/// The input pushed away from its blur, clamped below.
#[derive(Kernel)]
#[kernel(output = f32)]
struct Sharpen {
    input: Accessor<f32>,
    blurred: Accessor<f32>,
    amount: f32,
}

#[kernel_body]
impl Sharpen {
    fn kernel(&self) -> f32 {
        let d = self.input() - self.blurred();
        (self.input() + self.amount * d).max(0.0)
    }
}

/// A point-wise polynomial.
#[derive(Kernel)]
#[kernel(output = f32)]
struct Poly {
    input: Accessor<f32>,
    a: f32,
}

#[kernel_body]
impl Poly {
    fn kernel(&self) -> f32 {
        let v = self.input();
        v * v * self.a + v - 0.25
    }
}

/// A central difference in x.
#[derive(Kernel)]
#[kernel(output = f32)]
struct Gradient {
    input: Accessor<f32>,
}

#[kernel_body]
impl Gradient {
    fn kernel(&self) -> f32 {
        (self.input.at(1, 0) - self.input.at(-1, 0)) * 0.5
    }
}

const SIZES: [(usize, usize); 4] = [(1, 1), (3, 2), (17, 9), (67, 33)];
const UNTOUCHED: f32 = -1234.5;

fn modes() -> [Boundary<f32>; 5] {
    [
        Boundary::Clamp,
        Boundary::Repeat,
        Boundary::Mirror,
        Boundary::MirrorInterior,
        Boundary::Constant(0.75),
    ]
}

fn fresh(w: usize, h: usize) -> Image<f32> {
    Image::from_vec(w, h, vec![UNTOUCHED; w * h]).unwrap()
}

fn bits(img: &Image<f32>) -> Vec<u32> {
    img.to_vec().unwrap().iter().map(|v| v.to_bits()).collect()
}

/// `folded` equals the stage-by-stage output `out`: bit for bit on OpenCL,
/// whose C contracts multiply-adds only within one expression (the fold
/// keeps the producer's value in a statement of its own), and within
/// `close`'s tolerance on wgpu, where WGSL has no say over contraction and
/// Mesa fuses a product into a sum when the product has one use, which
/// recomputation and common-subexpression elimination change.
fn same(device: &Device, folded: &[u32], out: &Image<f32>, what: &str) {
    if device.kind() == hipacc::BackendKind::OpenCl {
        assert_eq!(folded, bits(out).as_slice(), "{what}");
    } else {
        let folded: Vec<f32> = folded.iter().map(|&b| f32::from_bits(b)).collect();
        let (w, h) = (out.width(), out.height());
        close(&Image::from_vec(w, h, folded).unwrap(), out, what);
    }
}

fn close(got: &Image<f32>, want: &Image<f32>, what: &str) {
    for (i, (a, b)) in got
        .to_vec()
        .unwrap()
        .iter()
        .zip(want.to_vec().unwrap())
        .enumerate()
    {
        assert!(
            (a - b).abs() <= 5e-6 * b.abs().max(1.0),
            "{what}: pixel {i}: {a} vs the evaluator's {b}"
        );
    }
}

#[test]
fn folded_pipelines_equal_stage_by_stage_runs_on_opencl() {
    if let Some(d) = opencl() {
        folded_pipelines_equal_stage_by_stage_runs(&d);
    }
}

#[cfg(feature = "wgpu")]
#[test]
fn folded_pipelines_equal_stage_by_stage_runs_on_wgpu() {
    if let Some(d) = wgpu() {
        folded_pipelines_equal_stage_by_stage_runs(&d);
    }
}

#[test]
fn folded_pipelines_equal_stage_by_stage_runs_on_cuda() {
    if let Some(d) = cuda() {
        folded_pipelines_equal_stage_by_stage_runs(&d);
    }
}

fn folded_pipelines_equal_stage_by_stage_runs(device: &Device) {
    for (w, h) in SIZES {
        let input = Image::from_fn(w, h, |x, y| ((x * 7 + y * 13) % 23) as f32 * 0.125).unwrap();
        for mode in modes() {
            let what = format!("{w}x{h} {:?}", mode.mode());

            // Blur -> Sharpen: folded into one launch.
            let (blurred, out) = (fresh(w, h), fresh(w, h));
            let blur = Blur {
                input: Accessor::new(&input).with_boundary(mode),
                window: Domain::new(3, 3).unwrap(),
            };
            let sharpen = Sharpen {
                input: Accessor::new(&input),
                blurred: Accessor::new(&blurred),
                amount: 0.625,
            };
            let (sb, so) = (IterationSpace::full(&blurred), IterationSpace::full(&out));
            Pipeline::new()
                .stage(&blur, &sb)
                .stage(&sharpen, &so)
                .execute(device)
                .unwrap();
            let folded = bits(&out);
            assert!(
                blurred.to_vec().unwrap().iter().all(|&v| v == UNTOUCHED),
                "{what}: the blur was folded, its image never written"
            );
            blur.execute(device, &sb).unwrap();
            sharpen.execute(device, &so).unwrap();
            same(device, &folded, &out, &format!("blur+sharpen {what}"));
            let want = fresh(w, h);
            evaluate_kernel(&sharpen, &IterationSpace::full(&want)).unwrap();
            close(&out, &want, &format!("blur+sharpen {what}"));

            // Blur -> Poly -> Gradient -> Poly: the first pair folds, the
            // gradient recomputes that pair at its two reads (nine reads
            // more per pixel, within PoCL's model), the last pair folds:
            // one launch.
            let (b1, p1, g1, out) = (fresh(w, h), fresh(w, h), fresh(w, h), fresh(w, h));
            let blur = Blur {
                input: Accessor::new(&input).with_boundary(mode),
                window: Domain::new(3, 3).unwrap(),
            };
            let poly1 = Poly {
                input: Accessor::new(&b1),
                a: 0.375,
            };
            let gradient = Gradient {
                input: Accessor::new(&p1).with_boundary(mode),
            };
            let poly2 = Poly {
                input: Accessor::new(&g1),
                a: -1.5,
            };
            let sp: Vec<IterationSpace<f32>> = [&b1, &p1, &g1, &out]
                .into_iter()
                .map(IterationSpace::full)
                .collect();
            Pipeline::new()
                .stage(&blur, &sp[0])
                .stage(&poly1, &sp[1])
                .stage(&gradient, &sp[2])
                .stage(&poly2, &sp[3])
                .execute(device)
                .unwrap();
            let folded = bits(&out);
            assert!(b1.to_vec().unwrap().iter().all(|&v| v == UNTOUCHED));
            assert!(g1.to_vec().unwrap().iter().all(|&v| v == UNTOUCHED));
            assert!(
                p1.to_vec().unwrap().iter().all(|&v| v == UNTOUCHED),
                "{what}: the gradient's input was recomputed, never written"
            );
            blur.execute(device, &sp[0]).unwrap();
            poly1.execute(device, &sp[1]).unwrap();
            gradient.execute(device, &sp[2]).unwrap();
            poly2.execute(device, &sp[3]).unwrap();
            same(device, &folded, &out, &format!("four-kernel chain {what}"));
            let want = fresh(w, h);
            evaluate_kernel(&poly2, &IterationSpace::full(&want)).unwrap();
            close(&out, &want, &format!("four-kernel chain {what}"));

            // An intermediate read by two stages is not folded.
            let (b2, p2, out) = (fresh(w, h), fresh(w, h), fresh(w, h));
            let blur = Blur {
                input: Accessor::new(&input).with_boundary(mode),
                window: Domain::new(3, 3).unwrap(),
            };
            let poly = Poly {
                input: Accessor::new(&b2),
                a: 0.5,
            };
            let sharpen = Sharpen {
                input: Accessor::new(&p2),
                blurred: Accessor::new(&b2),
                amount: 0.25,
            };
            let sp: Vec<IterationSpace<f32>> = [&b2, &p2, &out]
                .into_iter()
                .map(IterationSpace::full)
                .collect();
            Pipeline::new()
                .stage(&blur, &sp[0])
                .stage(&poly, &sp[1])
                .stage(&sharpen, &sp[2])
                .execute(device)
                .unwrap();
            let folded = bits(&out);
            assert!(b2.to_vec().unwrap().iter().all(|&v| v != UNTOUCHED));
            blur.execute(device, &sp[0]).unwrap();
            poly.execute(device, &sp[1]).unwrap();
            sharpen.execute(device, &sp[2]).unwrap();
            same(
                device,
                &folded,
                &out,
                &format!("shared intermediate {what}"),
            );
        }
    }
}

#[test]
fn window_reads_recompute_cheap_producers_on_opencl() {
    if let Some(d) = opencl() {
        window_reads_recompute_cheap_producers(&d);
    }
}

#[cfg(feature = "wgpu")]
#[test]
fn window_reads_recompute_cheap_producers_on_wgpu() {
    if let Some(d) = wgpu() {
        window_reads_recompute_cheap_producers(&d);
    }
}

#[test]
fn window_reads_recompute_cheap_producers_on_cuda() {
    if let Some(d) = cuda() {
        window_reads_recompute_cheap_producers(&d);
    }
}

/// A point-wise stage read through windows: recomputed at each read where
/// the model allows (reads added per pixel within twice the target's
/// `recompute_reads_per_access`: 16 on PoCL's and lavapipe's target, 14 on
/// an H200), launched on its own where it does not.
fn window_reads_recompute_cheap_producers(device: &Device) {
    let budget = 2 * device
        .target()
        .expect("a GPU-style device has a target")
        .recompute_reads_per_access;
    // Every target recomputes a one-read stage at nine positions (8 reads
    // added) and none a nine-read one (72).
    assert!((8..72).contains(&budget), "budget {budget}");
    for (w, h) in SIZES {
        let input = Image::from_fn(w, h, |x, y| ((x * 5 + y * 11) % 17) as f32 * 0.25).unwrap();
        for (i, mode) in modes().into_iter().enumerate() {
            let other = modes()[(i + 3) % 5];
            let what = format!("{w}x{h} {:?} {:?}", mode.mode(), other.mode());

            // Poly -> Blur: nine values of a one-read stage (8 reads more).
            let (p1, out) = (fresh(w, h), fresh(w, h));
            let poly = Poly {
                input: Accessor::new(&input).with_boundary(other),
                a: 0.375,
            };
            let blur = Blur {
                input: Accessor::new(&p1).with_boundary(mode),
                window: Domain::new(3, 3).unwrap(),
            };
            let (sp, so) = (IterationSpace::full(&p1), IterationSpace::full(&out));
            Pipeline::new()
                .stage(&poly, &sp)
                .stage(&blur, &so)
                .execute(device)
                .unwrap();
            let folded = bits(&out);
            assert!(
                p1.to_vec().unwrap().iter().all(|&v| v == UNTOUCHED),
                "{what}: the poly was recomputed, its image never written"
            );
            poly.execute(device, &sp).unwrap();
            blur.execute(device, &so).unwrap();
            same(device, &folded, &out, &format!("poly->blur {what}"));
            let want = fresh(w, h);
            evaluate_kernel(&blur, &IterationSpace::full(&want)).unwrap();
            close(&out, &want, &format!("poly->blur {what}"));

            // Poly -> Gradient -> Poly -> Blur: offsets, a point-wise fold,
            // then a window over the merged two-read kernel (16 reads
            // more): one launch.
            let (p1, g1, p2, out) = (fresh(w, h), fresh(w, h), fresh(w, h), fresh(w, h));
            let poly1 = Poly {
                input: Accessor::new(&input),
                a: -0.5,
            };
            let gradient = Gradient {
                input: Accessor::new(&p1).with_boundary(other),
            };
            let poly2 = Poly {
                input: Accessor::new(&g1),
                a: 0.25,
            };
            let blur = Blur {
                input: Accessor::new(&p2).with_boundary(mode),
                window: Domain::new(3, 3).unwrap(),
            };
            let sp: Vec<IterationSpace<f32>> = [&p1, &g1, &p2, &out]
                .into_iter()
                .map(IterationSpace::full)
                .collect();
            Pipeline::new()
                .stage(&poly1, &sp[0])
                .stage(&gradient, &sp[1])
                .stage(&poly2, &sp[2])
                .stage(&blur, &sp[3])
                .execute(device)
                .unwrap();
            let folded = bits(&out);
            // The first poly folds into the gradient at its two offsets and
            // the gradient into the second poly at its pixel; the merged
            // two-read stage at nine positions adds 16 reads.
            for (img, name) in [(&p1, "poly"), (&g1, "gradient")] {
                assert!(
                    img.to_vec().unwrap().iter().all(|&v| v == UNTOUCHED),
                    "{what}: the {name} was folded"
                );
            }
            assert_eq!(
                p2.to_vec().unwrap().iter().all(|&v| v == UNTOUCHED),
                16 <= budget,
                "{what}: the second poly is recomputed in the blur iff 16 reads are within {budget}"
            );
            poly1.execute(device, &sp[0]).unwrap();
            gradient.execute(device, &sp[1]).unwrap();
            poly2.execute(device, &sp[2]).unwrap();
            blur.execute(device, &sp[3]).unwrap();
            same(
                device,
                &folded,
                &out,
                &format!("four-kernel window chain {what}"),
            );
            let want = fresh(w, h);
            evaluate_kernel(&blur, &IterationSpace::full(&want)).unwrap();
            close(&out, &want, &format!("four-kernel window chain {what}"));

            // Blur -> Blur: eight more values of a nine-read stage (72
            // reads) is past the model: two launches.
            let (b1, out) = (fresh(w, h), fresh(w, h));
            let first = Blur {
                input: Accessor::new(&input).with_boundary(other),
                window: Domain::new(3, 3).unwrap(),
            };
            let second = Blur {
                input: Accessor::new(&b1).with_boundary(mode),
                window: Domain::new(3, 3).unwrap(),
            };
            let (sb, so) = (IterationSpace::full(&b1), IterationSpace::full(&out));
            Pipeline::new()
                .stage(&first, &sb)
                .stage(&second, &so)
                .execute(device)
                .unwrap();
            assert!(
                b1.to_vec().unwrap().iter().all(|&v| v != UNTOUCHED),
                "{what}: the first blur costs too much to recompute"
            );
            let want = fresh(w, h);
            evaluate_kernel(&second, &IterationSpace::full(&want)).unwrap();
            close(&out, &want, &format!("blur->blur {what}"));
        }
    }
}

#[test]
fn stages_out_of_order_are_refused_on_opencl() {
    if let Some(d) = opencl() {
        stages_out_of_order_are_refused(&d);
    }
}

#[test]
fn stages_out_of_order_are_refused_on_cuda() {
    if let Some(d) = cuda() {
        stages_out_of_order_are_refused(&d);
    }
}

/// The device's pipelines refuse the listings the CPU's refuse, with the
/// same messages, and launch nothing: a stage reading a later stage's
/// output, two stages writing one image.
fn stages_out_of_order_are_refused(device: &Device) {
    let input = Image::from_fn(9, 7, |x, y| (x * 3 + y) as f32).unwrap();
    let (a, b) = (fresh(9, 7), fresh(9, 7));
    let first = Poly {
        input: Accessor::new(&a),
        a: 0.5,
    };
    let second = Poly {
        input: Accessor::new(&input),
        a: 0.5,
    };
    let (sa, sb) = (IterationSpace::full(&a), IterationSpace::full(&b));
    // `first` reads `a`, which `second` writes after it.
    let err = Pipeline::new()
        .stage(&first, &sb)
        .stage(&second, &sa)
        .execute(device)
        .expect_err("a stage reads a later stage's output");
    assert!(
        err.to_string().contains(
            "stage 0 (`Poly`) reads the output of stage 1 (`Poly`): list each producer before"
        ),
        "{err}"
    );
    let err = Pipeline::new()
        .stage(&second, &sa)
        .stage(&second, &sa)
        .execute(device)
        .expect_err("two stages write one image");
    assert!(
        err.to_string()
            .contains("stages 0 (`Poly`) and 1 (`Poly`) write the same image"),
        "{err}"
    );
    for img in [&a, &b] {
        assert!(
            img.to_vec().unwrap().iter().all(|&v| v == UNTOUCHED),
            "a refused pipeline launched a stage"
        );
    }
}
