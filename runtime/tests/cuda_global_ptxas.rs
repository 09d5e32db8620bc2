//! The CUDA global operator kernels (sum, min, max, histogram, argmin,
//! argmax) of every
//! pixel type compile with NVRTC and assemble with ptxas for sm_90, sm_80
//! and sm_70; ptxas's registers and shared memory are printed per kernel.
//! Needs no GPU: NVRTC and ptxas come from the pip wheels
//! (`HIPACC_NVCUDA_DIR`). Prints a skip line when either is absent.

use hipacc::cuda::{assemble_program, nvrtc_available, ptxas_path};
use hipacc_codegen::emit::{global_program, GlobalOp};
use hipacc_codegen::{Language, Target};
use hipacc_core::ir::{ScalarType, Type};

#[test]
fn global_operator_kernels_assemble_for_sm_90_80_70() {
    if let Err(e) = nvrtc_available() {
        println!("[SKIP] cuda: {e}");
        return;
    }
    if ptxas_path().is_none() {
        println!("[SKIP] cuda: ptxas not found (set HIPACC_NVCUDA_DIR)");
        return;
    }
    let scalars = [
        ScalarType::U8,
        ScalarType::U16,
        ScalarType::I32,
        ScalarType::U32,
        ScalarType::F32,
        ScalarType::F64,
    ];
    let pixels = scalars
        .iter()
        .flat_map(|&s| [Type::scalar(s), Type::vec4(s)]);
    let target = Target::lookup("h200").unwrap();
    let mut assembled = 0;
    for pixel in pixels {
        let program = global_program(pixel, target, Language::Cuda).unwrap();
        assert_eq!(program.kernels.len(), GlobalOp::for_pixel(pixel).len());
        for sm in [90, 80, 70] {
            let report = assemble_program(&program, sm)
                .unwrap_or_else(|e| panic!("{pixel:?} for sm_{sm}: {e}"));
            for (info, r) in program.kernels.iter().zip(&report) {
                assert!(r.registers > 0, "`{}` uses no registers?", info.entry);
                assert!(r.shared_bytes >= info.shared_bytes, "{}", info.entry);
                assert_eq!(
                    r.spill_store_bytes + r.spill_load_bytes,
                    0,
                    "{}",
                    info.entry
                );
                println!(
                    "sm_{sm} {:<40} {:>3} registers {:>6} bytes shared",
                    info.entry, r.registers, r.shared_bytes
                );
                assembled += 1;
            }
        }
    }
    println!("{assembled} global operator kernels assembled");
}
