//! Every variant family on the OpenCL device (PoCL in CI) against the
//! evaluator. Prints a skip line when no OpenCL device is present.

mod gpu_support;

use hipacc::Device;
use hipacc_codegen::{BoundaryScheme, Config, MemoryKind};

fn device() -> Option<Device> {
    match Device::opencl() {
        Ok(d) => Some(d),
        Err(e) => {
            println!("[SKIP] opencl: {e}");
            None
        }
    }
}

/// Local tiles under region dispatch put a barrier behind each region's
/// call site: those configs are checked in a test of their own.
fn regions_with_tiles(c: &Config) -> bool {
    c.boundary == BoundaryScheme::Regions && c.memory.contains(&MemoryKind::LocalTile)
}

fn supported(c: &Config) -> bool {
    !regions_with_tiles(c)
}

#[test]
fn variant_families_match_the_evaluator() {
    if let Some(d) = device() {
        gpu_support::check_all(&d, false, supported);
    }
}

#[test]
fn constant_memory_masks_match_the_evaluator() {
    if let Some(d) = device() {
        gpu_support::check_all(&d, true, supported);
    }
}

#[test]
fn regions_with_local_tiles_match_the_evaluator() {
    if let Some(d) = device() {
        gpu_support::check_all(&d, false, regions_with_tiles);
    }
}
