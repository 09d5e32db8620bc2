//! The generated kernel shown in `docs/codegen.md` is what code generation
//! prints today. The page shortens the source by fixed rules ([`shorten`])
//! and leaves out some lines (a line `/* … */` or `} /* … */` says so);
//! every other line of the page must be a line of the shortened source, in
//! order. A change to the IR, its hash or the printer that moves them fails
//! here until the page is regenerated from the shortened source, which
//! `HIPACC_PRINT_SAMPLE=1 cargo test -p hipacc --test codegen_docs --
//! --nocapture` prints.

mod gpu_support;

// The README's weighted Jacobi step, field for field.
use gpu_support::Jacobi;
use hipacc::codegen::{generate, Config, Language, Target};
use hipacc::prelude::*;

const PAGE: &str = include_str!("../../docs/codegen.md");

#[test]
fn the_sample_kernel_on_the_codegen_page_is_current() {
    let (u, f) = (
        Image::<f32>::new(64, 48).unwrap(),
        Image::<f32>::new(64, 48).unwrap(),
    );
    let kernel = Jacobi {
        sol: Accessor::new(&u).with_boundary(Boundary::Constant(0.0)),
        rhs: Accessor::new(&f),
        omega: 0.8,
    };
    let ir = kernel.ir().unwrap();
    let target = Target::lookup("h100").unwrap();
    let config = Config::choose(&ir, target, Language::Cuda, None).unwrap();
    let program = generate(&ir, &config, target, Language::Cuda).unwrap();
    let entry = &program.kernels[0].entry;
    let short = shorten(&program.source, entry);
    if std::env::var_os("HIPACC_PRINT_SAMPLE").is_some() {
        println!("{short}");
    }
    let sample = PAGE
        .split("```c\n")
        .nth(1)
        .and_then(|s| s.split("```").next())
        .expect("docs/codegen.md has a ```c sample");
    assert!(
        sample.contains(&format!("__global__ void {entry}(")),
        "docs/codegen.md shows another kernel than `{entry}`: regenerate its sample"
    );
    let mut generated = short.lines().map(str::trim_end);
    for line in sample.lines().map(str::trim_end) {
        let left_out =
            line.trim_start().starts_with("/* …") || line.trim_start().starts_with("} /* …");
        if left_out {
            continue;
        }
        assert!(
            generated.any(|g| g == line),
            "docs/codegen.md's line is not generated (or out of order):\n{line}\n\nregenerate the sample"
        );
    }
}

/// The page's shortening: the read helpers as `read_<accessor>`, and the
/// image arguments of every call to a read helper or the body as `…`.
fn shorten(source: &str, entry: &str) -> String {
    let mut s = source.replace(&format!("hipacc_read_{entry}_acc_"), "read_");
    for acc in ["sol", "rhs"] {
        s = s.replace(
            &format!(
                "acc_{acc}, acc_{acc}_stride, acc_{acc}_x, acc_{acc}_y, acc_{acc}_w, acc_{acc}_h, "
            ),
            &format!("acc_{acc}, …, "),
        );
    }
    s.replace(&format!("hipacc_body_{entry}(out, out_stride, space_x, space_y, space_w, space_h, acc_sol, …, acc_rhs, …, "), "hipacc_body_…(out, …, ")
}
