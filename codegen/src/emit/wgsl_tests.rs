//! The WGSL printer: every printable family of every test kernel parses and
//! validates with naga (the front end wgpu uses), with the capabilities of a
//! device that has `SHADER_F64`.

use super::*;
use crate::arch::Target;
use crate::config::{Config, MemoryKind};
use crate::test_kernels as tk;
use hipacc_core::ir::Kernel;
use hipacc_core::Interpolation;

fn validate(source: &str, what: &str) {
    let module = naga::front::wgsl::parse_str(source)
        .unwrap_or_else(|e| panic!("{what}: {}\n{source}", e.emit_to_string(source)));
    let mut v = naga::valid::Validator::new(
        naga::valid::ValidationFlags::all(),
        naga::valid::Capabilities::all(),
    );
    if let Err(e) = v.validate(&module) {
        panic!("{what}: {}\n{source}", e.emit_to_string(source));
    }
}

fn printable(c: &Config) -> bool {
    c.memory.iter().all(|m| {
        matches!(
            m,
            MemoryKind::Global | MemoryKind::ReadOnly | MemoryKind::LocalTile
        )
    })
}

#[test]
fn every_printable_family_validates() {
    let t = Target::by_name("pocl").unwrap();
    let mut printed = 0;
    for k in tk::all() {
        let fams: Vec<Config> = Config::families(&k, t)
            .into_iter()
            .filter(printable)
            .collect();
        let items: Vec<(&Kernel, &Config)> = fams.iter().map(|c| (&k, c)).collect();
        if items.is_empty() {
            continue;
        }
        let p = generate_batch(&items, t, Language::Wgsl).unwrap();
        assert_eq!(p.language, Language::Wgsl);
        assert_eq!(p.kernels.len(), fams.len());
        for info in &p.kernels {
            assert_eq!(
                p.source.matches(&format!("\nfn {}(", info.entry)).count(),
                1
            );
        }
        validate(&p.source, &k.name);
        printed += 1;
    }
    assert!(printed >= 5, "only {printed} test kernels printed");
}

#[test]
fn the_chosen_config_prints_for_every_kernel() {
    for t in Target::all() {
        for k in tk::all() {
            let c = Config::choose(&k, t, Language::Wgsl, None).unwrap();
            let p = generate(&k, &c, t, Language::Wgsl).unwrap();
            validate(&p.source, &format!("{} on {}", k.name, t.name));
        }
    }
}

#[test]
fn textures_are_refused_by_name() {
    let t = Target::by_name("pocl").unwrap();
    for k in tk::all() {
        for c in Config::families(&k, t) {
            if printable(&c) {
                continue;
            }
            let e = generate(&k, &c, t, Language::Wgsl).unwrap_err().to_string();
            assert!(e.contains("WGSL"), "{e}");
        }
    }
}

#[test]
fn the_layout_puts_scalars_in_one_uniform_and_buffers_after_it() {
    let t = Target::by_name("pocl").unwrap();
    let k = tk::all().into_iter().next().unwrap();
    let c = Config::choose(&k, t, Language::Wgsl, None).unwrap();
    let p = generate(&k, &c, t, Language::Wgsl).unwrap();
    let (slots, size) = wgsl_layout(&p.kernels[0].args);
    assert_eq!(size % 16, 0);
    assert_eq!(slots[0], WgslSlot::Binding(1));
    assert_eq!(slots[1], WgslSlot::Uniform { offset: 0, size: 4 });
    assert_eq!(slots[2], WgslSlot::Uniform { offset: 4, size: 4 });
    for (a, s) in p.kernels[0].args.iter().zip(&slots) {
        assert_eq!(a.scalar.is_some(), matches!(s, WgslSlot::Uniform { .. }));
    }
}

#[test]
fn tiled_variants_stage_into_workgroup_memory_behind_one_barrier() {
    let t = Target::by_name("pocl").unwrap();
    let mut tiled = 0;
    for k in tk::all() {
        for c in Config::families(&k, t) {
            if !printable(&c) || !c.memory.contains(&MemoryKind::LocalTile) {
                continue;
            }
            let p = generate(&k, &c, t, Language::Wgsl).unwrap();
            let tiles = c
                .memory
                .iter()
                .filter(|&&m| m == MemoryKind::LocalTile)
                .count();
            assert_eq!(p.source.matches("var<workgroup>").count(), tiles);
            assert_eq!(p.source.matches("workgroupBarrier();").count(), 1);
            assert!(p.kernels[0].shared_bytes > 0);
            tiled += 1;
        }
    }
    assert!(tiled >= 5, "only {tiled} tiled variants");
}

#[test]
fn chooser_picks_tiles_for_wgsl_within_the_webgpu_storage_minimum() {
    // Fermi stages footprints from 5x5 and has 48 KiB per block; WGSL
    // tiles take half of 16 KiB at most.
    let t = Target::by_name("fermi").unwrap();
    let mut tiled = 0;
    for k in tk::all() {
        let c = Config::choose(&k, t, Language::Wgsl, None).unwrap();
        let p = generate(&k, &c, t, Language::Wgsl).unwrap();
        assert!(p.kernels[0].shared_bytes <= 8 * 1024, "{}", k.name);
        tiled += usize::from(p.kernels[0].shared_bytes > 0);
    }
    assert!(tiled > 0, "no kernel got a tile");
}

#[test]
fn interpolating_reads_of_every_mode_and_pixel_type_validate() {
    // Every accessor of every test kernel (f32, u8, RGBA f32 and RGBA u8
    // pixels among them) read with each mode, in every printable family.
    let t = Target::by_name("pocl").unwrap();
    for mode in [
        Interpolation::Nearest,
        Interpolation::Linear,
        Interpolation::Cubic,
        Interpolation::Lanczos3,
    ] {
        for mut k in tk::all() {
            for a in &mut k.accessors {
                a.interpolation = mode;
            }
            let fams: Vec<Config> = Config::families(&k, t)
                .into_iter()
                .filter(printable)
                .collect();
            assert!(!fams.is_empty(), "{}", k.name);
            let items: Vec<(&Kernel, &Config)> = fams.iter().map(|c| (&k, c)).collect();
            let p = generate_batch(&items, t, Language::Wgsl).unwrap();
            assert!(p.source.contains("fn hipacc_sample_"), "{}", k.name);
            assert!(
                p.source.contains(&format!("{mode:?}").to_lowercase()),
                "{}",
                k.name
            );
            // No `sin` of an `f64` (SPIR-V has none): Lanczos has its own.
            if mode == Interpolation::Lanczos3 {
                assert!(p.source.contains("fn hipacc_sin_pi(t: f64)"), "{}", k.name);
                assert!(!p.source.contains("sin(pt"), "{}", k.name);
            }
            validate(&p.source, &format!("{} {mode:?}", k.name));
        }
    }
}

#[test]
fn global_operators_validate_for_every_pixel_type_within_the_webgpu_storage_minimum() {
    use hipacc_core::ir::{ScalarType, Type};
    let t = Target::by_name("pocl").unwrap();
    let scalars = [
        ScalarType::U8,
        ScalarType::U16,
        ScalarType::I32,
        ScalarType::U32,
        ScalarType::F32,
        ScalarType::F64,
    ];
    for pixel in scalars
        .iter()
        .flat_map(|&s| [Type::scalar(s), Type::vec4(s)])
    {
        let p = global_program(pixel, t, Language::Wgsl).unwrap();
        assert_eq!(p.language, Language::Wgsl);
        assert_eq!(p.kernels.len(), GlobalOp::for_pixel(pixel).len());
        for info in &p.kernels {
            assert_eq!(
                p.source.matches(&format!("\nfn {}(", info.entry)).count(),
                1
            );
            // WebGPU guarantees 16 KiB of workgroup memory.
            assert!(info.shared_bytes <= 16 * 1024, "{}", info.entry);
            let (slots, _) = wgsl_layout(&info.args);
            let bindings = slots
                .iter()
                .filter(|s| matches!(s, WgslSlot::Binding(_)))
                .count();
            assert_eq!(
                p.source
                    .matches(&format!("var<storage, read_write> {}_", info.entry))
                    .count()
                    + p.source
                        .matches(&format!("var<storage, read> {}_", info.entry))
                        .count(),
                bindings,
                "{}",
                info.entry
            );
        }
        validate(&p.source, &format!("global operators on {pixel:?}"));
    }
}
