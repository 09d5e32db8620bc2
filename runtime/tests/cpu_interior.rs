//! The CPU backend runs the unchecked `Interior` body exactly on the pixels
//! whose reads stay inside every accessor's region, checks columns exactly
//! where some read leaves horizontally and rows exactly where some read
//! leaves vertically, and every mode computes the evaluator's values.
//!
//! The probe kernels are written by hand (as `#[derive(Kernel)]` and
//! `#[kernel_body]` would write them) so that their CPU body can add flags
//! for the axes its read mode checks, which the captured body, run by the
//! evaluator, lacks: `cpu - evaluator` is then `FLAG_X` where only columns
//! are checked, `FLAG_Y` where only rows are, both in corners and 0 on
//! interior pixels.

use hipacc::core::cpu::{AccessorView, CpuRead, ReadMode};
use hipacc::core::ir::surface::{SBlock, SExpr};
use hipacc::core::ir::{evaluate_kernel, BinaryOp, UnaryOp};
use hipacc::core::kernel::{Bindings, KernelBody, KernelField, KernelFields};
use hipacc::core::{Accessor, Boundary, Error as CoreError, Image, IterationSpace, Rect};
use hipacc::{Device, Error, Execute};
use std::sync::OnceLock;

const FLAG_X: f32 = 1000.0;
const FLAG_Y: f32 = 2000.0;

/// The flags of the axes `M` checks.
fn flags<M: ReadMode>() -> f32 {
    (if M::CHECK_X { FLAG_X } else { 0.0 }) + if M::CHECK_Y { FLAG_Y } else { 0.0 }
}

/// Reads `input` at `(-1, 0)` and `(2, 1)` and `other` at `(0, -2)`:
/// footprints x `-1..=2`, y `0..=1` and x `0..=0`, y `-2..=-2`.
struct Probe {
    input: Accessor<f32>,
    other: Accessor<f32>,
}

struct ProbeViews<'a> {
    input: AccessorView<'a, f32>,
    other: AccessorView<'a, f32>,
}

impl KernelFields for Probe {
    type Output = f32;
    type CpuViews<'a> = ProbeViews<'a>;
    const NAME: &'static str = "Probe";
    fn bindings(&self) -> Bindings {
        let mut b = Bindings::default();
        self.input.bind("input", &mut b);
        self.other.bind("other", &mut b);
        b
    }
    fn cpu_views(&self, origin: (usize, usize)) -> hipacc::core::Result<ProbeViews<'_>> {
        Ok(ProbeViews {
            input: self.input.cpu_view(origin)?,
            other: self.other.cpu_view(origin)?,
        })
    }
}

fn at(field: &'static str, dx: i64, dy: i64) -> SExpr {
    // As the macro captures them: `-1` is the negation of the literal `1`.
    let int = |value: i64| {
        let lit = SExpr::Int {
            value: value.abs(),
            suffix: None,
        };
        Box::new(if value < 0 {
            SExpr::Unary(UnaryOp::Neg, Box::new(lit))
        } else {
            lit
        })
    };
    SExpr::At {
        field,
        dx: int(dx),
        dy: int(dy),
    }
}

fn add(a: SExpr, b: SExpr) -> SExpr {
    SExpr::Binary(BinaryOp::Add, Box::new(a), Box::new(b))
}

impl KernelBody for Probe {
    fn surface() -> &'static SBlock {
        static SURFACE: OnceLock<SBlock> = OnceLock::new();
        SURFACE.get_or_init(|| SBlock {
            stmts: Vec::new(),
            result: Some(Box::new(add(
                add(at("input", -1, 0), at("input", 2, 1)),
                at("other", 0, -2),
            ))),
        })
    }

    unsafe fn cpu_pixel<M: ReadMode>(v: &ProbeViews<'_>, x: isize, y: isize) -> f32 {
        // SAFETY: the caller's contract is this function's own.
        let sum = unsafe {
            v.input.read::<M>(x, y, -1, 0)
                + v.input.read::<M>(x, y, 2, 1)
                + v.other.read::<M>(x, y, 0, -2)
        };
        sum + flags::<M>()
    }
}

/// Reads `input` at `(self.dx, 0)`: an offset from a parameter, so the
/// footprint is unbounded and no pixel is interior.
struct ParamProbe {
    input: Accessor<f32>,
    dx: i32,
}

struct ParamViews<'a> {
    input: AccessorView<'a, f32>,
    dx: i32,
}

impl KernelFields for ParamProbe {
    type Output = f32;
    type CpuViews<'a> = ParamViews<'a>;
    const NAME: &'static str = "ParamProbe";
    fn bindings(&self) -> Bindings {
        let mut b = Bindings::default();
        self.input.bind("input", &mut b);
        self.dx.bind("dx", &mut b);
        b
    }
    fn cpu_views(&self, origin: (usize, usize)) -> hipacc::core::Result<ParamViews<'_>> {
        Ok(ParamViews {
            input: self.input.cpu_view(origin)?,
            dx: self.dx,
        })
    }
}

impl KernelBody for ParamProbe {
    fn surface() -> &'static SBlock {
        static SURFACE: OnceLock<SBlock> = OnceLock::new();
        SURFACE.get_or_init(|| SBlock {
            stmts: Vec::new(),
            result: Some(Box::new(SExpr::At {
                field: "input",
                dx: Box::new(SExpr::Field("dx")),
                dy: Box::new(SExpr::Int {
                    value: 0,
                    suffix: None,
                }),
            })),
        })
    }

    unsafe fn cpu_pixel<M: ReadMode>(v: &ParamViews<'_>, x: isize, y: isize) -> f32 {
        // SAFETY: the caller's contract is this function's own.
        let value = unsafe { v.input.read::<M>(x, y, v.dx, 0) };
        value + flags::<M>()
    }
}

fn image(w: usize, h: usize, salt: usize) -> Image<f32> {
    Image::from_fn(w, h, |x, y| ((x * 7 + y * 13 + salt) % 16) as f32 / 16.0).expect("valid size")
}

/// Whether every read of `Probe` at space-relative column `px` is inside
/// horizontally, and at row `py` vertically.
fn probe_inside(px: i64, py: i64, input: Rect, other: Rect) -> (bool, bool) {
    let within = |len: usize, c: i64| (0..len as i64).contains(&c);
    (
        within(input.width, px - 1) && within(input.width, px + 2) && within(other.width, px),
        within(input.height, py) && within(input.height, py + 1) && within(other.height, py - 2),
    )
}

/// Runs `kernel` on the CPU and the evaluator; returns (x, y, cpu - eval)
/// for every pixel of `space`.
fn differences<K>(kernel: &K, out_size: (usize, usize), space: Rect) -> Vec<(usize, usize, f32)>
where
    K: Execute + hipacc::core::Kernel<Output = f32>,
{
    let cpu = Image::<f32>::new(out_size.0, out_size.1).expect("valid size");
    let reference = Image::<f32>::new(out_size.0, out_size.1).expect("valid size");
    kernel
        .execute(
            &Device::cpu(),
            &IterationSpace::region(&cpu, space).expect("space inside"),
        )
        .expect("cpu launch");
    evaluate_kernel(
        kernel,
        &IterationSpace::region(&reference, space).expect("space inside"),
    )
    .expect("evaluator");
    let (cpu, reference) = (
        cpu.to_vec().expect("host"),
        reference.to_vec().expect("host"),
    );
    let mut out = Vec::new();
    for y in space.y..space.y + space.height {
        for x in space.x..space.x + space.width {
            let i = y * out_size.0 + x;
            out.push((x, y, cpu[i] - reference[i]));
        }
    }
    out
}

#[test]
fn interior_pixels_run_unchecked_and_border_pixels_checked() {
    // (output size, space, input image size, input region, other region)
    let cases = [
        (
            (64, 64),
            Rect::full(64, 64),
            (64, 64),
            Rect::full(64, 64),
            Rect::full(64, 64),
        ),
        (
            (1, 1),
            Rect::full(1, 1),
            (1, 1),
            Rect::full(1, 1),
            Rect::full(1, 1),
        ),
        (
            (5, 17),
            Rect::full(5, 17),
            (5, 17),
            Rect::full(5, 17),
            Rect::full(5, 17),
        ),
        (
            (40, 30),
            Rect::new(3, 4, 30, 20),
            (50, 50),
            Rect::new(10, 5, 25, 22),
            Rect::new(0, 0, 40, 30),
        ),
        (
            (40, 30),
            Rect::new(0, 0, 40, 30),
            (40, 30),
            Rect::new(2, 2, 20, 10),
            Rect::full(40, 30),
        ),
        // Large enough for the parallel bands.
        (
            (512, 300),
            Rect::new(7, 3, 500, 290),
            (600, 400),
            Rect::new(1, 9, 520, 280),
            Rect::full(512, 300),
        ),
    ];
    for (n, (out, space, in_size, in_region, other_region)) in cases.into_iter().enumerate() {
        let input = image(in_size.0, in_size.1, n);
        let other_img = image(
            other_region.x + other_region.width,
            other_region.y + other_region.height,
            n + 5,
        );
        let kernel = Probe {
            input: Accessor::new(&input)
                .with_region(in_region)
                .with_boundary(Boundary::Clamp),
            other: Accessor::new(&other_img)
                .with_region(other_region)
                .with_boundary(Boundary::Constant(0.5)),
        };
        let mut interior = 0;
        for (x, y, d) in differences(&kernel, out, space) {
            let (px, py) = ((x - space.x) as i64, (y - space.y) as i64);
            let (cols_inside, rows_inside) = probe_inside(px, py, in_region, other_region);
            if cols_inside && rows_inside {
                interior += 1;
            }
            let expected =
                (if cols_inside { 0.0 } else { FLAG_X }) + if rows_inside { 0.0 } else { FLAG_Y };
            assert_eq!(d, expected, "case {n}: pixel ({x}, {y})");
        }
        if n == 0 {
            // 64x64 reading x -1..=2, y -2..=1: 61 columns, 61 rows.
            assert_eq!(interior, 61 * 61);
        }
    }
}

#[test]
fn unbounded_footprint_runs_every_pixel_checked() {
    for (w, h) in [(3, 2), (64, 64), (300, 200)] {
        let input = image(w, h, 3);
        for dx in [0, 1, -5] {
            let kernel = ParamProbe {
                input: Accessor::new(&input).with_boundary(Boundary::Mirror),
                dx,
            };
            for (x, y, d) in differences(&kernel, (w, h), Rect::full(w, h)) {
                assert_eq!(d, FLAG_X + FLAG_Y, "{w}x{h} dx {dx}: pixel ({x}, {y})");
            }
        }
    }
}

#[test]
fn output_read_by_an_accessor_is_refused() {
    let img = image(8, 8, 0);
    let kernel = ParamProbe {
        input: Accessor::new(&img),
        dx: 0,
    };
    let err = kernel
        .execute(&Device::cpu(), &IterationSpace::full(&img))
        .expect_err("aliasing must be refused");
    assert!(
        matches!(err, Error::Core(CoreError::Aliasing { ref accessor, .. }) if accessor == "input"),
        "{err}"
    );
}
