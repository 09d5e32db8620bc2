//! Snapshot-like checks of the printed C on small kernels.

use super::*;
use crate::arch::Target;
use crate::config::Config;
use crate::config::{BoundaryScheme, MaskHandling, MemoryKind, PixelsPerThread};
use crate::test_kernels as tk;
use crate::BlockShape;
use hipacc_core::ir::Kernel;
use hipacc_core::ir::Type;

fn target(name: &str) -> &'static Target {
    Target::by_name(name).unwrap()
}

fn gen(k: &Kernel, c: &Config, t: &str, l: Language) -> Program {
    generate(k, c, target(t), l).unwrap()
}

/// Every family of every test kernel generates on every target and language.
/// With `HIPACC_CODEGEN_CHECK_DIR` set, the sources are also written there
/// for compiling with external tools.
#[test]
fn every_family_generates_everywhere() {
    let dir = std::env::var_os("HIPACC_CODEGEN_CHECK_DIR");
    for t in Target::all() {
        for &l in t.languages {
            for k in tk::all() {
                let fams = Config::families(&k, t);
                assert!(!fams.is_empty(), "{} on {}", k.name, t.name);
                let items: Vec<(&Kernel, &Config)> = fams.iter().map(|c| (&k, c)).collect();
                let p = generate_batch(&items, t, l).unwrap();
                assert_eq!(p.kernels.len(), fams.len());
                for info in &p.kernels {
                    assert_eq!(p.source.matches(&format!(" {}(\n", info.entry)).count(), 1);
                }
                if let Some(dir) = &dir {
                    crate::dump::dump(
                        std::path::Path::new(dir),
                        &format!("{}_{}", k.name, t.name),
                        "families",
                        l,
                        &p.source,
                    )
                    .unwrap();
                }
            }
        }
    }
}

#[test]
fn literals_follow_c_spelling() {
    use super::c_common::literal;
    use hipacc_core::ir::{Literal, ScalarType};
    let d = generate::for_language(Language::OpenCl);
    let c = generate::for_language(Language::Cuda);
    let f = |v: f64| literal(d, Literal::float(v), Type::F32);
    assert_eq!(f(0.25), "0.25f");
    assert_eq!(f(-1.0), "(-1.0f)");
    assert_eq!(f(1e20), "1e20f");
    assert_eq!(f(f64::NAN), "as_float(0x7fc00000u)");
    assert_eq!(
        literal(c, Literal::float(f64::INFINITY), Type::F32),
        "__int_as_float(0x7f800000)"
    );
    assert_eq!(
        literal(d, Literal::Int(i32::MIN as i64), Type::I32),
        "(-2147483647 - 1)"
    );
    assert_eq!(
        literal(d, Literal::Int(7), Type::scalar(ScalarType::U32)),
        "7u"
    );
    assert_eq!(
        literal(d, Literal::Int(200), Type::scalar(ScalarType::U8)),
        "((uchar)200)"
    );
    assert_eq!(literal(d, Literal::float(0.5), Type::F64), "0.5");
    assert_eq!(
        literal(c, Literal::float(1.0), Type::vec4(ScalarType::F32)),
        "make_float4(1.0f, 1.0f, 1.0f, 1.0f)"
    );
}

#[test]
fn integer_arithmetic_wraps_and_casts_saturate() {
    let k = tk::kitchen_sink();
    let c = Config::families(&k, target("pocl"))[0].clone();
    let src = gen(&k, &c, "pocl", Language::OpenCl).source;
    // i32 multiply through uint; division by the helper that avoids UB.
    assert!(src.contains("(int)((uint)gx * (uint)7)"), "{src}");
    assert!(src.contains("hipacc_div_int("));
    assert!(src.contains("b == 0 ? 0 : (a == (-2147483647 - 1) && b == -1) ? a : a / b"));
    // f32 -> u8 saturates with NaN -> 0.
    assert!(src.contains("if (isnan(v)) return 0;\n    if (v <= (float)0.0) return 0;\n    if (v >= (float)255.0) return 255;"));
    // NaN-ignoring max, Rust clamp, powi helper.
    assert!(src.contains("hipacc_clamp_float(fmax(s_2, as_float(0x7fc00000u)), 0.0f, 1.0f)"));
    assert!(src.contains("hipacc_powi_float("));
    // Lane-wise vector helpers with a broadcast scalar.
    assert!(src.contains("float4 hipacc_mul_float4_float(float4 a, float b) {\n    return ((float4)((a.x * b), (a.y * b), (a.z * b), (a.w * b)));"));
}

/// The condition of every printed `if`, between its parentheses.
fn if_conditions(src: &str) -> Vec<&str> {
    let mut found = Vec::new();
    for (start, _) in src.match_indices("if (") {
        let rest = &src[start + 4..];
        let mut depth = 1;
        for (i, c) in rest.char_indices() {
            depth += match c {
                '(' => 1,
                ')' => -1,
                _ => 0,
            };
            if depth == 0 {
                found.push(&rest[..i]);
                break;
            }
        }
    }
    found
}

/// Whether one pair of parentheses encloses all of `cond`.
fn wrapped(cond: &str) -> bool {
    let mut depth = 0;
    for (i, c) in cond.char_indices() {
        match c {
            '(' => depth += 1,
            ')' => depth -= 1,
            _ => {}
        }
        if depth == 0 {
            return i == cond.len() - 1 && cond.starts_with('(');
        }
    }
    false
}

/// `if ((a == 0))` makes clang warn (-Wparentheses-equality), so the OpenCL
/// build log of every program would carry warnings: no `if` condition is
/// wrapped in a second pair of parentheses, on any target or language.
#[test]
fn if_conditions_have_no_doubled_parentheses() {
    let mut kernels = tk::all();
    kernels.push(tk::branches());
    let mut seen = 0;
    for t in Target::all() {
        for &l in t.languages {
            for k in &kernels {
                for c in Config::families(k, t) {
                    let src = gen(k, &c, t.name, l).source;
                    for cond in if_conditions(&src) {
                        seen += 1;
                        assert!(
                            !wrapped(cond),
                            "`if ({cond})` in {} on {} ({l:?}):\n{src}",
                            k.name,
                            t.name
                        );
                    }
                }
            }
        }
    }
    assert!(seen > 0);
    let k = tk::branches();
    let c = Config::families(&k, target("h100"))[0].clone();
    let src = gen(&k, &c, "h100", Language::Cuda).source;
    assert!(src.contains("if (a_0 == 0.0f) {"), "{src}");
    assert!(src.contains("if (a_0 < 0.5f) {"), "{src}");
}

#[test]
fn short_circuit_and_if_expression_hoist_in_order() {
    let k = tk::kitchen_sink();
    let c = Config::families(&k, target("h100"))[0].clone();
    let src = gen(&k, &c, "h100", Language::Cuda).source;
    // `a > 0 && s > 0.5` needs no statements: stays an expression.
    assert!(
        src.contains("bool ok_3 = ((a_0 > 0) && (s_2 > 0.5f));"),
        "{src}"
    );
    // The `if` expression becomes a temporary assigned in both branches.
    assert!(src.contains("if (ok_3) {"));
    assert!(src.contains("} else {\n"));
    assert!(src.contains("float m_1 = t"));
}

#[test]
fn reductions_unroll_row_major_from_the_first_position() {
    let k = tk::domain_max();
    let c = Config::uniform(1, BlockShape { x: 32, y: 4 });
    let src = gen(&k, &c, "pocl", Language::OpenCl).source;
    let order: Vec<usize> = [
        "dx = 0, dy = -1",
        "dx = -1, dy = 0",
        "dx = 0, dy = 0",
        "dx = 1, dy = 0",
        "dx = 0, dy = 1",
    ]
    .iter()
    .map(|p| src.find(p).unwrap_or_else(|| panic!("{p} missing")))
    .collect();
    assert!(order.windows(2).all(|w| w[0] < w[1]));
    assert!(
        !src.contains("dx = -1, dy = -1"),
        "disabled domain positions are skipped"
    );
    // First position assigns, later ones combine with fmax.
    assert!(src.contains("t1 = hipacc_read_"));
    assert!(src.contains("t1 = fmax(t1, t"));
}

#[test]
fn windows_above_eight_by_eight_print_one_loop() {
    let c = Config::uniform(1, BlockShape { x: 32, y: 4 });
    let unrolled = gen(&tk::convolve(8, 8), &c, "pocl", Language::OpenCl).source;
    assert!(unrolled.contains("dx = 3, dy = 3"));
    assert!(!unrolled.contains("% 8 - 4"));
    for language in [Language::OpenCl, Language::Cuda] {
        let src = gen(&tk::convolve(9, 9), &c, "h100", language).source;
        // The first position starts the sum; one loop covers the other 80.
        assert!(src.contains("dx = -4, dy = -4"), "{src}");
        assert!(!src.contains("dx = -3, dy = -4"), "{src}");
        assert!(src.contains("; t2 < 81; ++t2) {"), "{src}");
        assert!(src.contains("= t2 % 9 - 4, dy_1 = t2 / 9 - 4;"), "{src}");
        // Literal coefficients at run-time offsets come from a table.
        assert!(src.contains("hipacc_coef_"), "{src}");
    }
}

#[test]
fn literal_masks_fold_and_constant_masks_index() {
    let k = tk::convolve(3, 3);
    let mut c = Config::uniform(1, BlockShape { x: 32, y: 4 });
    let src = gen(&k, &c, "pocl", Language::OpenCl).source;
    assert!(
        src.contains("(0.5f * (hipacc_read_"),
        "coefficient 2 of 1/(i+1) is a literal"
    );
    assert!(!src.contains("msk_mask"));
    c.masks = MaskHandling::ConstantMemory;
    let p = gen(&k, &c, "pocl", Language::OpenCl);
    assert!(p.source.contains("__constant float* restrict msk_mask"));
    assert!(p.source.contains("msk_mask[1]"));
    assert!(p.kernels[0]
        .args
        .iter()
        .any(|a| a.kind == ArgKind::MaskBuffer(0)));
    let p = gen(&k, &c, "h100", Language::Cuda);
    let sym = &p.kernels[0].constant_symbols[0];
    assert_eq!((sym.mask, sym.bytes), (0, 36));
    assert!(p
        .source
        .contains(&format!("__constant__ float {}[9];", sym.name)));
}

#[test]
fn boundary_helpers_print_each_mode() {
    let mut k = tk::convolve(3, 3);
    let c = Config::uniform(1, BlockShape { x: 32, y: 4 });
    for (mode, needle) in [
        (hipacc_core::BoundaryMode::Clamp, "if (cl && p < 0) p = 0;"),
        (
            hipacc_core::BoundaryMode::Repeat,
            "p = hipacc_repeat(p, w);",
        ),
        (
            hipacc_core::BoundaryMode::Mirror,
            "p = hipacc_mirror(p, w);",
        ),
        (
            hipacc_core::BoundaryMode::MirrorInterior,
            "q = hipacc_mirror_interior(q, h);",
        ),
        (hipacc_core::BoundaryMode::Constant, "return 0.0f;"),
    ] {
        k.accessors[0] = tk::accessor("input", Type::F32, mode);
        let src = gen(&k, &c, "pocl", Language::OpenCl).source;
        assert!(src.contains(needle), "{mode:?}");
    }
    k.accessors[0] = tk::accessor("input", Type::F32, hipacc_core::BoundaryMode::Undefined);
    let src = gen(&k, &c, "pocl", Language::OpenCl).source;
    assert!(src.contains("int cb) {\n    return buf[(y + q) * stride + x + p];"));
}

#[test]
fn regions_dispatch_drops_unneeded_axes() {
    let full = tk::jacobi();
    let mut c = Config::uniform(2, BlockShape { x: 32, y: 4 });
    c.boundary = BoundaryScheme::Regions;
    let src = gen(&full, &c, "pocl", Language::OpenCl).source;
    for arm in [
        "/* top left */",
        "/* bottom right */",
        "/* left */",
        "/* interior: no checks */",
    ] {
        assert!(src.contains(arm), "{arm}");
    }
    let row = tk::row_loop(-3, 4);
    let c1 = Config {
        boundary: BoundaryScheme::Regions,
        ..Config::uniform(1, BlockShape { x: 32, y: 4 })
    };
    let src = gen(&row, &c1, "pocl", Language::OpenCl).source;
    assert!(src.contains("if ((l && r) || (t && b) || t || b)"), "{src}");
    assert!(src.contains("/* left */") && !src.contains("/* top */"));
    let p = gen(&row, &c1, "pocl", Language::OpenCl);
    assert!(p.kernels[0]
        .args
        .iter()
        .any(|a| a.kind == ArgKind::RegionBottom));
}

#[test]
fn tiles_stage_with_barrier_and_pitch() {
    let k = tk::convolve(5, 5);
    let mut c = Config::uniform(1, BlockShape { x: 32, y: 4 });
    c.memory = vec![MemoryKind::LocalTile];
    c.pixels_per_thread = PixelsPerThread::Four;
    let t = target("h100");
    let p = gen(&k, &c, "h100", Language::Cuda);
    // 36 columns x (16 + 4) rows; 36 words is not a multiple of 32 banks: no padding.
    assert!(
        p.source.contains("__shared__ float tile_acc_input[720];"),
        "{}",
        p.source
    );
    assert!(p.source.contains("__syncthreads();"));
    assert!(p.source.contains("tile_acc_input[(ly + 2) * 36 + tx + 2]"));
    assert_eq!(p.kernels[0].shared_bytes, 720 * 4);
    // 32 + 0 columns: a multiple of the banks, padded by one word.
    let fp = crate::Footprint {
        min_dx: 0,
        max_dx: 0,
        min_dy: -1,
        max_dy: 1,
    };
    assert_eq!(c.tile_shape(t, Type::F32, fp), (32, 18, 33));
}

#[test]
fn textures_and_read_only_paths() {
    let k = tk::jacobi();
    let mut c = Config::uniform(2, BlockShape { x: 32, y: 4 });
    c.memory = vec![MemoryKind::Texture, MemoryKind::ReadOnly];
    let cu = gen(&k, &c, "h100", Language::Cuda);
    assert!(cu.source.contains("cudaTextureObject_t acc_sol"));
    assert!(cu
        .source
        .contains("tex1Dfetch<float>(buf, (y + q) * stride + x + p)"));
    assert!(cu.source.contains("__ldg(&buf[(y + q) * stride + x + p])"));
    assert_eq!(cu.kernels[0].args[6].kind, ArgKind::AccessorImage(0));
    let cl = gen(&k, &c, "pocl", Language::OpenCl);
    assert!(cl.source.contains("__read_only image2d_t acc_sol"));
    assert!(cl
        .source
        .contains("read_imagef(buf, hipacc_sampler, (int2)(x + p, y + q)).x"));
    assert!(cl.source.contains("__global const float* restrict acc_rhs"));
}

#[test]
fn argument_order_and_names_are_stable() {
    let k = tk::jacobi();
    let c = Config {
        boundary: BoundaryScheme::Regions,
        ..Config::uniform(2, BlockShape { x: 32, y: 4 })
    };
    let p = gen(&k, &c, "pocl", Language::OpenCl);
    let info = &p.kernels[0];
    let names: Vec<&str> = info.args.iter().map(|a| a.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "out",
            "out_stride",
            "space_x",
            "space_y",
            "space_w",
            "space_h",
            "acc_sol",
            "acc_sol_stride",
            "acc_sol_x",
            "acc_sol_y",
            "acc_sol_w",
            "acc_sol_h",
            "acc_rhs",
            "acc_rhs_stride",
            "acc_rhs_x",
            "acc_rhs_y",
            "acc_rhs_w",
            "acc_rhs_h",
            "prm_omega",
            "rs_left",
            "rs_right",
            "rs_top",
            "rs_bottom"
        ]
    );
    assert_eq!(info.args[18].scalar, Some(hipacc_core::ir::ScalarType::F32));
    assert_eq!(
        info.entry,
        format!("jacobi_{:016x}_{}", k.stable_hash(), c.key())
    );
    assert!(p.source.contains(" * boundary: regions"));
    assert!(p
        .source
        .contains(" * block: 32x4 threads, 1 pixel(s) per thread"));
    // The same inputs give the same text.
    assert_eq!(gen(&k, &c, "pocl", Language::OpenCl).source, p.source);
}

#[test]
fn launch_geometry_and_region_starts() {
    let k = tk::jacobi();
    let mut c = Config {
        boundary: BoundaryScheme::Regions,
        ..Config::uniform(2, BlockShape { x: 32, y: 4 })
    };
    c.pixels_per_thread = PixelsPerThread::Four;
    let p = gen(&k, &c, "h100", Language::Cuda);
    let r = hipacc_core::Rect::full(100, 50);
    let l = p.kernels[0].launch(r, &[r, r]).unwrap();
    assert_eq!(l.block, [32, 4]);
    assert_eq!(l.grid, [4, 4]);
    assert_eq!(l.global, [128, 16]);
    assert_eq!(
        l.region_starts,
        crate::RegionStarts {
            left: 1,
            right: 3,
            top: 1,
            bottom: 3
        }
    );
    assert!(p.kernels[0].launch(r, &[r]).is_err());
}

#[test]
fn batches_share_helpers_and_skip_duplicates() {
    let k = tk::convolve(3, 3);
    let fams = Config::families(&k, target("pocl"));
    let mut items: Vec<(&Kernel, &Config)> = fams.iter().map(|c| (&k, c)).collect();
    items.push((&k, &fams[0]));
    let p = generate_batch(&items, target("pocl"), Language::OpenCl).unwrap();
    assert_eq!(p.kernels.len(), fams.len());
    assert_eq!(
        p.source.matches("int hipacc_repeat(int i, int n)").count(),
        1
    );
}

#[test]
fn an_unsupported_language_is_an_error() {
    let k = tk::jacobi();
    let c = Config::uniform(2, BlockShape { x: 32, y: 4 });
    let e = generate(&k, &c, target("pocl"), Language::Cuda)
        .unwrap_err()
        .to_string();
    assert!(e.contains("cuda"), "{e}");
}

#[test]
fn interpolating_reads_print_a_sample_helper_in_double() {
    let mut k = tk::jacobi();
    k.accessors[0].interpolation = hipacc_core::Interpolation::Lanczos3;
    let c = Config::uniform(2, BlockShape { x: 32, y: 4 });
    for lang in [Language::OpenCl, Language::Cuda] {
        let p = generate(&k, &c, target("h100"), lang).unwrap();
        assert!(
            p.source.contains("hipacc_taps_lanczos3(px, wx)"),
            "{}",
            p.source
        );
        assert!(p.source.contains("hipacc_lanczos3"), "{}", p.source);
        assert!(p.source.contains("space_w, space_h)"), "{}", p.source);
        if lang == Language::OpenCl {
            assert!(p.source.contains("cl_khr_fp64"), "{}", p.source);
        }
    }
}
