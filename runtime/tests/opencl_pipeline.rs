//! Pipelines on OpenCL: a stage read by one later stage at its own pixel is
//! folded into it (one launch), everything else runs stage by stage. The
//! result must equal running the stages one after the other on the same
//! device, bit for bit, on every boundary mode but `Undefined` and odd
//! sizes, for chains of two to four kernels with mixed footprints (window
//! reads, offset reads, point-wise reads, an intermediate read twice); and
//! it must be right (the evaluator, within 4 ulp-ish relative error: the
//! device contracts multiply-adds, the evaluator does not). A folded
//! intermediate is never written, which shows that folding happened.
//! (PoCL is a CPU device, where pipelines run as the native CPU's strips
//! unless `HIPACC_PIPELINE=launches`, which this test sets.)
//! Prints a skip line when no OpenCL platform is present.

use hipacc::core::ir::evaluate_kernel;
use hipacc::pipeline::Pipeline;
use hipacc::prelude::*;

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
fn folded_pipelines_equal_stage_by_stage_runs() {
    // PoCL is a CPU device: ask for device launches, as a GPU runs them.
    std::env::set_var(hipacc::pipeline::PIPELINE_ENV, "launches");
    let device = match Device::opencl() {
        Ok(d) => d,
        Err(e) => {
            println!("[SKIP] opencl: {e}");
            return;
        }
    };
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
                .execute(&device)
                .unwrap();
            let folded = bits(&out);
            assert!(
                blurred.to_vec().unwrap().iter().all(|&v| v == UNTOUCHED),
                "{what}: the blur was folded, its image never written"
            );
            blur.execute(&device, &sb).unwrap();
            sharpen.execute(&device, &so).unwrap();
            assert_eq!(folded, bits(&out), "blur+sharpen {what}");
            let want = fresh(w, h);
            evaluate_kernel(&sharpen, &IterationSpace::full(&want)).unwrap();
            close(&out, &want, &format!("blur+sharpen {what}"));

            // Blur -> Poly -> Gradient -> Poly: the first pair folds, the
            // gradient reads at offsets (own launch), the last pair folds.
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
                .execute(&device)
                .unwrap();
            let folded = bits(&out);
            assert!(b1.to_vec().unwrap().iter().all(|&v| v == UNTOUCHED));
            assert!(g1.to_vec().unwrap().iter().all(|&v| v == UNTOUCHED));
            assert!(
                p1.to_vec().unwrap().iter().all(|&v| v != UNTOUCHED),
                "{what}: the gradient's input is written"
            );
            blur.execute(&device, &sp[0]).unwrap();
            poly1.execute(&device, &sp[1]).unwrap();
            gradient.execute(&device, &sp[2]).unwrap();
            poly2.execute(&device, &sp[3]).unwrap();
            assert_eq!(folded, bits(&out), "four-kernel chain {what}");
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
                .execute(&device)
                .unwrap();
            let folded = bits(&out);
            assert!(b2.to_vec().unwrap().iter().all(|&v| v != UNTOUCHED));
            blur.execute(&device, &sp[0]).unwrap();
            poly.execute(&device, &sp[1]).unwrap();
            sharpen.execute(&device, &sp[2]).unwrap();
            assert_eq!(folded, bits(&out), "shared intermediate {what}");
        }
    }
}
