//! Reads at offsets computed from the coordinates (how kernels read an
//! image of another size) get a check-free interior on the CPU backend; it
//! must compute the evaluator's values on every boundary mode, odd sizes
//! and spaces that do not start at the origin.

use hipacc::core::ir::evaluate_kernel;
use hipacc::prelude::*;

/// A 2:1 reduction: positions `2x - 1 ..= 2x + 2`.
#[derive(Kernel)]
#[kernel(output = f32)]
struct Down {
    fine: Accessor<f32>,
}

#[kernel_body]
impl Down {
    fn kernel(&self) -> f32 {
        let mut s = 0.0f32;
        for j in -1..3 {
            for i in -1..3 {
                s += (1 + i + 4 * j) as f32 * self.fine.at(x() + i, y() + j);
            }
        }
        s
    }
}

/// A 1:2 expansion: positions `x / 2 ± 1` chosen by parity.
#[derive(Kernel)]
#[kernel(output = f32)]
struct Up {
    coarse: Accessor<f32>,
}

#[kernel_body]
impl Up {
    fn kernel(&self) -> f32 {
        let nx = if x() % 2 == 0 {
            x() / 2 - 1
        } else {
            x() / 2 + 1
        };
        let ny = if y() % 2 == 0 {
            y() / 2 - 1
        } else {
            y() / 2 + 1
        };
        self.coarse.at(x() / 2 - x(), y() / 2 - y()) * 9.0
            + self.coarse.at(nx - x(), y() / 2 - y()) * 3.0
            + self.coarse.at(x() / 2 - x(), ny - y()) * 2.0
            + self.coarse.at(nx - x(), ny - y())
    }
}

/// A mirror: position `7 - x` (coefficient -2 in the offset).
#[derive(Kernel)]
#[kernel(output = f32)]
struct Flip {
    input: Accessor<f32>,
}

#[kernel_body]
impl Flip {
    fn kernel(&self) -> f32 {
        self.input.at(7 - 2 * x(), 1 - y()) + self.input.at(8 - 2 * x(), 0)
    }
}

fn boundaries() -> Vec<Boundary<f32>> {
    vec![
        Boundary::Clamp,
        Boundary::Repeat,
        Boundary::Mirror,
        Boundary::MirrorInterior,
        Boundary::Constant(-3.5),
    ]
}

fn source(w: usize, h: usize) -> Image<f32> {
    Image::from_fn(w, h, |x, y| ((x * 7 + y * 13) % 17) as f32 - 4.0).expect("image")
}

/// Runs `make(accessor)` on the CPU and in the evaluator over `space` of an
/// `ow x oh` output and compares.
fn check<K: Kernel<Output = f32>>(
    what: &str,
    input: (usize, usize),
    out: (usize, usize),
    space: Rect,
    make: impl Fn(Accessor<f32>) -> K,
) {
    let src = source(input.0, input.1);
    for b in boundaries() {
        let k = make(Accessor::new(&src).with_boundary(b));
        let cpu = Image::<f32>::new(out.0, out.1).expect("out");
        let reference = Image::<f32>::new(out.0, out.1).expect("out");
        k.execute(
            &Device::cpu(),
            &IterationSpace::region(&cpu, space).expect("space"),
        )
        .expect("cpu");
        evaluate_kernel(
            &k,
            &IterationSpace::region(&reference, space).expect("space"),
        )
        .expect("evaluator");
        assert_eq!(
            cpu.to_vec().expect("cpu"),
            reference.to_vec().expect("reference"),
            "{what} {input:?} -> {out:?} {space:?} {b:?}"
        );
    }
}

#[test]
fn reductions_expansions_and_mirrors_match_the_evaluator() {
    for (w, h) in [(1usize, 1usize), (2, 3), (17, 5), (64, 64), (127, 33)] {
        let (cw, ch) = (w.div_ceil(2), h.div_ceil(2));
        check("down", (w, h), (cw, ch), Rect::full(cw, ch), |a| Down {
            fine: a,
        });
        check("up", (cw, ch), (w, h), Rect::full(w, h), |a| Up {
            coarse: a,
        });
        check("flip", (w, h), (w, h), Rect::full(w, h), |a| Flip {
            input: a,
        });
        if w > 4 && h > 4 {
            let inner = Rect::new(2, 1, w - 3, h - 2);
            check("down/roi", (2 * w, 2 * h), (w, h), inner, |a| Down {
                fine: a,
            });
            check("up/roi", (cw, ch), (w, h), inner, |a| Up { coarse: a });
        }
    }
}
