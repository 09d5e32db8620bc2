//! Every CUDA variant family of the test kernels (boundary scheme x memory
//! kind x pixels per thread x mask handling, at the target's block), and
//! every block shape of the chosen config, compiles with NVRTC for
//! `compute_90` and assembles with `ptxas -arch=sm_90`; the registers,
//! shared memory and spills that ptxas reports are printed per variant.
//! (The full product with every block shape is the explore mode's job: it
//! takes NVRTC minutes per kernel.)
//! Needs no GPU: NVRTC and ptxas come from the pip wheels
//! (`HIPACC_NVCUDA_DIR`, default `/opt/nvcuda`). Prints a skip line when
//! either is absent.

mod gpu_support;

use gpu_support::cases;
use hipacc::cuda::{assemble_program, nvrtc_available, ptxas_path};
use hipacc::prelude::*;
use hipacc_codegen::{generate_batch, Config, Language, Target};
use hipacc_core::ir;
use hipacc_core::KernelFields;

fn toolchain() -> bool {
    if let Err(e) = nvrtc_available() {
        println!("[SKIP] cuda: {e}");
        return false;
    }
    if ptxas_path().is_none() {
        println!("[SKIP] cuda: ptxas not found (pip install nvidia-cuda-nvcc-cu12, set HIPACC_NVCUDA_DIR)");
        return false;
    }
    true
}

/// Compiles and assembles every variant family of `kernel` for `target`,
/// and the chosen config with every block shape the target allows.
fn check_every_variant(kernel: &ir::Kernel, target: &Target) -> usize {
    let mut configs = Config::families(kernel, target);
    let chosen = Config::choose(kernel, target, Language::Cuda, None).unwrap();
    for &block in hipacc_codegen::BlockShape::CANDIDATES {
        let c = Config {
            block,
            ..chosen.clone()
        };
        if c.validate_for(kernel, target).is_ok() && !configs.contains(&c) {
            configs.push(c);
        }
    }
    assert!(!configs.is_empty(), "no valid config for `{}`", kernel.name);
    let items: Vec<(&ir::Kernel, &Config)> = configs.iter().map(|c| (kernel, c)).collect();
    let program = generate_batch(&items, target, Language::Cuda).unwrap();
    let report = match assemble_program(&program, 90) {
        Ok(r) => r,
        Err(e) => panic!("NVRTC or ptxas rejected `{}`: {e}", kernel.name),
    };
    println!(
        "{:<60} {:>5} {:>7} {:>6} {:>6}",
        "variant", "regs", "smem", "stack", "spill"
    );
    for (info, r) in program.kernels.iter().zip(&report) {
        assert!(r.registers > 0, "`{}` uses no registers?", info.entry);
        assert!(
            r.shared_bytes >= info.shared_bytes,
            "`{}`: ptxas reports {} bytes of shared memory, codegen planned {}",
            info.entry,
            r.shared_bytes,
            info.shared_bytes
        );
        println!(
            "{:<60} {:>5} {:>7} {:>6} {:>6}",
            info.entry,
            r.registers,
            r.shared_bytes,
            r.stack_bytes,
            r.spill_store_bytes + r.spill_load_bytes
        );
    }
    program.kernels.len()
}

/// Compiles and assembles the chosen variant of each of `kernels` for
/// `target`, in one program.
fn assemble_chosen(kernels: &[ir::Kernel], target: &Target) {
    let configs: Vec<Config> = kernels
        .iter()
        .map(|k| Config::choose(k, target, Language::Cuda, None).unwrap())
        .collect();
    let items: Vec<(&ir::Kernel, &Config)> = kernels.iter().zip(&configs).collect();
    let program = generate_batch(&items, target, Language::Cuda).unwrap();
    let report = assemble_program(&program, 90).expect("NVRTC and ptxas");
    for (info, r) in program.kernels.iter().zip(&report) {
        assert!(r.registers > 0, "`{}` uses no registers?", info.entry);
        println!("{:<60} {:>3} registers", info.entry, r.registers);
    }
}

#[test]
fn every_cuda_variant_compiles_and_assembles_for_sm_90() {
    if !toolchain() {
        return;
    }
    let target = Target::lookup("h200").unwrap();
    let c = cases(64, 64, false);
    let d = cases(64, 64, true);
    let kernels = [
        c.jacobi[0].1.ir().unwrap(),
        c.gauss[0].1.ir().unwrap(),
        d.gauss[4].1.ir().unwrap(),
        c.row[2].1.ir().unwrap(),
        c.column[4].1.ir().unwrap(),
    ];
    let total: usize = kernels.iter().map(|k| check_every_variant(k, target)).sum();
    println!("{total} CUDA variants compiled and assembled for sm_90");
}

#[test]
fn windows_printed_as_loops_compile_and_assemble_for_sm_90() {
    if !toolchain() {
        return;
    }
    // 15x15 is above the unrolling limit: the window is one loop, with the
    // coefficients as a table (literal) or in constant memory (dynamic).
    let input = Image::<f32>::new(64, 64).unwrap();
    let coefficients: Vec<f32> = (0..225).map(|i| 1.0 / (i + 1) as f32).collect();
    let mask = Mask::from_vec(15, 15, coefficients).unwrap();
    let target = Target::lookup("h200").unwrap();
    let mut total = 0;
    for mask in [mask.clone(), mask.dynamic()] {
        let k = gpu_support::Gauss {
            input: Accessor::new(&input).with_boundary(Boundary::Mirror),
            mask,
        };
        total += check_every_variant(&k.ir().unwrap(), target);
    }
    println!("{total} CUDA variants with a 15x15 window compiled and assembled for sm_90");
}

#[test]
fn interpolating_reads_compile_and_assemble_for_sm_90() {
    if !toolchain() {
        return;
    }
    let target = Target::lookup("h200").unwrap();
    let c = cases(64, 64, false);
    let kernels: Vec<ir::Kernel> = [
        Interpolation::Nearest,
        Interpolation::Linear,
        Interpolation::Cubic,
        Interpolation::Lanczos3,
    ]
    .into_iter()
    .map(|mode| {
        let mut k = c.jacobi[0].1.ir().unwrap();
        k.accessors[0].interpolation = mode;
        k.name = format!("jacobi_{mode:?}");
        k
    })
    .collect();
    assemble_chosen(&kernels, target);
}

#[test]
fn recomputed_pipeline_stages_compile_and_assemble_for_sm_90() {
    if !toolchain() {
        return;
    }
    // A blur recomputed at every tap of a blur of it (what a pipeline
    // folds where the model allows; here past it, so every construct of
    // the fold is in one kernel): the reading accessor's remapping for
    // each boundary mode, a window inside a window, shifted reads. The
    // chosen variant of each, in one program.
    let target = Target::lookup("h200").unwrap();
    let (input, mid) = (
        Image::<f32>::new(64, 64).unwrap(),
        Image::<f32>::new(64, 64).unwrap(),
    );
    let mask = Mask::new([[1.0, 2.0, 1.0], [2.0, 4.0, 2.0], [1.0, 2.0, 1.0]]).unwrap();
    let producer = gpu_support::Gauss {
        input: Accessor::new(&input).with_boundary(Boundary::Clamp),
        mask: mask.clone(),
    };
    let (p, pb) = (producer.ir().unwrap(), producer.bindings());
    let kernels: Vec<ir::Kernel> = [
        Boundary::Clamp,
        Boundary::Repeat,
        Boundary::Mirror,
        Boundary::MirrorInterior,
        Boundary::Constant(0.5),
    ]
    .into_iter()
    .map(|mode| {
        let consumer = gpu_support::Gauss {
            input: Accessor::new(&mid).with_boundary(mode),
            mask: mask.clone(),
        };
        let (c, cb) = (consumer.ir().unwrap(), consumer.bindings());
        let (mut k, _) = ir::fold_window(&p, &pb, &c, &cb, 0, (64, 64)).expect("foldable");
        k.name = format!("recomputed_{:?}", mode.mode());
        k
    })
    .collect();
    assemble_chosen(&kernels, target);
}
