//! Enumeration, validation and heuristics of configs.

use super::*;
use crate::arch::Target;
use crate::emit::Language;
use crate::test_kernels as tk;

fn t(name: &str) -> &'static Target {
    Target::by_name(name).unwrap()
}

#[test]
fn block_larger_than_the_maximum_is_rejected_with_a_message() {
    let k = tk::jacobi();
    let o = ConfigOverride::parse("block=1024x2").unwrap();
    let e = Config::choose(&k, t("h100"), Language::Cuda, Some(&o))
        .unwrap_err()
        .to_string();
    assert!(e.contains("2048 threads") && e.contains("1024"), "{e}");
    let o = ConfigOverride::parse("block=1024x1").unwrap();
    let e = Config::choose(&k, t("fx5800"), Language::Cuda, Some(&o))
        .unwrap_err()
        .to_string();
    assert!(e.contains("maximum block dimensions 512x512"), "{e}");
    let o = ConfigOverride::parse("block=0x4").unwrap();
    assert!(Config::choose(&k, t("pocl"), Language::OpenCl, Some(&o)).is_err());
}

#[test]
fn kernel_specific_validation() {
    let k = tk::read_at_x();
    let mut c = Config::uniform(1, BlockShape { x: 32, y: 4 });
    c.memory = vec![MemoryKind::LocalTile];
    let e = c.validate_for(&k, t("h100")).unwrap_err().to_string();
    assert!(e.contains("bounded footprint"), "{e}");
    let k = tk::kitchen_sink();
    let c = Config::uniform(2, BlockShape { x: 32, y: 4 });
    let e = c.validate_for(&k, t("h100")).unwrap_err().to_string();
    assert!(e.contains("mask=constant"), "{e}");
    let mut big = tk::convolve(3, 3);
    big.masks[0].width = 301;
    big.masks[0].height = 301;
    big.masks[0].coefficients = Some(vec![hipacc_core::ir::Literal::float(1.0); 301 * 301]);
    let mut c = Config::uniform(1, BlockShape { x: 32, y: 4 });
    c.memory = vec![MemoryKind::LocalTile];
    let e = c.validate_for(&big, t("h100")).unwrap_err().to_string();
    assert!(e.contains("shared memory"), "{e}");
    let mut f64k = tk::jacobi();
    f64k.output = hipacc_core::ir::Type::F64;
    let c = Config::uniform(2, BlockShape { x: 32, y: 4 });
    assert!(c.validate_for(&f64k, t("intel-gpu")).is_err());
    assert!(c.validate_for(&f64k, t("h100")).is_ok());
}

#[test]
fn heuristics_follow_the_target() {
    let k = tk::convolve(5, 5);
    let h = Config::choose(&k, t("fermi"), Language::Cuda, None).unwrap();
    assert_eq!(
        h.memory,
        vec![MemoryKind::LocalTile],
        "5x5 reaches fermi's threshold"
    );
    assert_eq!(h.boundary, BoundaryScheme::Regions);
    assert_eq!(h.masks, MaskHandling::Literal);
    let a = Config::choose(&k, t("h100"), Language::Cuda, None).unwrap();
    assert_eq!(a.memory, vec![MemoryKind::ReadOnly]);
    assert_eq!(a.block, t("h100").local.block);
    let p = Config::choose(&k, t("pocl"), Language::OpenCl, None).unwrap();
    assert_eq!(p.memory, vec![MemoryKind::Global]);
    assert_eq!(
        p.boundary,
        BoundaryScheme::Generic,
        "regions do not pay on PoCL"
    );
    let k = tk::kitchen_sink();
    let c = Config::choose(&k, t("amd-gcn"), Language::OpenCl, None).unwrap();
    assert_eq!(c.masks, MaskHandling::ConstantMemory, "dynamic mask");
    let o = ConfigOverride::parse("boundary=generic,ppt=8,memory=global").unwrap();
    let c = Config::choose(&k, t("amd-gcn"), Language::OpenCl, Some(&o)).unwrap();
    assert_eq!(
        (c.boundary, c.pixels_per_thread),
        (BoundaryScheme::Generic, PixelsPerThread::Eight)
    );
}

#[test]
fn enumeration_is_valid_and_covers_every_family() {
    for target in Target::all() {
        for k in tk::all() {
            let all = Config::enumerate(&k, target);
            assert!(all.iter().all(|c| c.validate_for(&k, target).is_ok()));
            let fams = Config::families(&k, target);
            for ppt in PixelsPerThread::ALL {
                assert!(fams.iter().any(|c| c.pixels_per_thread == ppt));
            }
            let keys: std::collections::HashSet<String> = all.iter().map(|c| c.key()).collect();
            assert_eq!(keys.len(), all.len(), "keys are unique");
        }
    }
    let k = tk::jacobi();
    let fams = Config::families(&k, t("pocl"));
    for kind in MemoryKind::ALL {
        assert!(fams.iter().any(|c| c.memory.contains(&kind)), "{kind:?}");
    }
    assert!(fams.iter().any(|c| c.boundary == BoundaryScheme::Regions));
    assert!(fams.iter().any(|c| c.boundary == BoundaryScheme::Generic));
    // An accessor that cannot be tiled stays global in the tiled family.
    let k = tk::read_at_x();
    assert!(Config::families(&k, t("pocl"))
        .iter()
        .all(|c| c.memory[0] != MemoryKind::LocalTile));
}

#[test]
fn key_and_display_round_trip() {
    let mut c = Config::uniform(2, BlockShape { x: 32, y: 8 });
    c.memory = vec![MemoryKind::LocalTile, MemoryKind::ReadOnly];
    c.boundary = BoundaryScheme::Regions;
    c.pixels_per_thread = PixelsPerThread::Four;
    assert_eq!(c.key(), "reg_b32x8_p4_mlr_kl");
    let text = c.to_string();
    assert_eq!(
        text,
        "boundary=regions,memory=local/readonly,ppt=4,block=32x8,mask=literal"
    );
    let back = ConfigOverride::parse(&text)
        .unwrap()
        .apply(&Config::uniform(2, BlockShape { x: 1, y: 1 }))
        .unwrap();
    assert_eq!(back, c);
}
