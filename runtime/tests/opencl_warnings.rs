//! Generated OpenCL C compiles without a single warning.
//!
//! The runtime builds programs with `-w`, because warnings about generated
//! code mean nothing to a user and some drivers print them to stderr. This
//! test is what keeps that option honest: every variant family of the test
//! kernels (boundary schemes, memory kinds, pixels per thread, literal and
//! constant masks, windows printed as loops, interpolating reads) is built
//! by the OpenCL driver with `-Werror` instead, for a GPU target (whose
//! families include tiles staged in local memory). A control
//! source with a known warning must fail the same build, so a driver that
//! ignored `-Werror` could not make this test pass.
//! Prints a skip line when no OpenCL platform is present.

mod gpu_support;

use gpu_support::{cases, Gauss};
use hipacc::prelude::*;
use hipacc_codegen::{generate_batch, Config, Language, Target};
use hipacc_core::ir;
use opencl3::context::Context;
use opencl3::device::{get_all_devices, Device as ClDevice, CL_DEVICE_TYPE_ALL};
use opencl3::program::Program;

const OPTIONS: &str = "-Werror";

fn context() -> Option<Context> {
    // The runtime's device search finds and loads the driver first.
    gpu_support::opencl()?;
    let ids = match get_all_devices(CL_DEVICE_TYPE_ALL) {
        Ok(ids) if !ids.is_empty() => ids,
        Ok(_) => {
            println!("[SKIP] opencl: no device");
            return None;
        }
        Err(e) => {
            println!("[SKIP] opencl: {e}");
            return None;
        }
    };
    Some(Context::from_device(&ClDevice::new(ids[0])).expect("an OpenCL context"))
}

/// Builds `source` with `-Werror`; `Err` holds the build log.
fn build(context: &Context, source: &str) -> Result<(), String> {
    let mut program = Program::create_from_source(context, source).map_err(|e| e.to_string())?;
    program.build(context.devices(), OPTIONS).map_err(|e| {
        let log = program
            .get_build_log(context.devices()[0])
            .unwrap_or_default();
        format!("{e}\n{log}")
    })
}

/// Every variant family of each kernel for `target`, in one program.
fn check(context: &Context, kernels: &[ir::Kernel], target: &Target) -> usize {
    let configs: Vec<Vec<Config>> = kernels
        .iter()
        .map(|k| Config::families(k, target))
        .collect();
    let items: Vec<(&ir::Kernel, &Config)> = kernels
        .iter()
        .zip(&configs)
        .flat_map(|(k, cs)| cs.iter().map(move |c| (k, c)))
        .collect();
    assert!(!items.is_empty());
    let program = generate_batch(&items, target, Language::OpenCl).unwrap();
    if let Err(log) = build(context, &program.source) {
        panic!(
            "generated OpenCL C for `{}` has warnings or errors:\n{log}",
            target.name
        );
    }
    program.kernels.len()
}

fn test_kernels() -> Vec<ir::Kernel> {
    let mut kernels = Vec::new();
    for dynamic in [false, true] {
        let c = cases(64, 64, dynamic);
        kernels.extend(c.jacobi.iter().map(|(_, k)| k.ir().unwrap()));
        kernels.extend(c.gauss.iter().map(|(_, k)| k.ir().unwrap()));
        if !dynamic {
            kernels.extend(c.row.iter().map(|(_, k)| k.ir().unwrap()));
            kernels.extend(c.column.iter().map(|(_, k)| k.ir().unwrap()));
        }
    }
    // A 15x15 window is above the unrolling limit: printed as a loop.
    let input = Image::<f32>::new(64, 64).unwrap();
    let coefficients: Vec<f32> = (0..225).map(|i| 1.0 / (i + 1) as f32).collect();
    let mask = Mask::from_vec(15, 15, coefficients).unwrap();
    for mask in [mask.clone(), mask.dynamic()] {
        let k = Gauss {
            input: Accessor::new(&input).with_boundary(Boundary::Mirror),
            mask,
        };
        kernels.push(k.ir().unwrap());
    }
    let base = cases(64, 64, false).jacobi[0].1.ir().unwrap();
    for mode in [
        Interpolation::Nearest,
        Interpolation::Linear,
        Interpolation::Cubic,
        Interpolation::Lanczos3,
    ] {
        let mut k = base.clone();
        k.accessors[0].interpolation = mode;
        k.name = format!("jacobi_{mode:?}");
        kernels.push(k);
    }
    kernels
}

#[test]
fn generated_opencl_builds_with_warnings_as_errors() {
    let Some(context) = context() else {
        return;
    };
    // The control: a warning (`-Wparentheses-equality`) must fail the build.
    let control = "__kernel void k(__global int* a) { if ((a[0] == 0)) a[0] = 1; }";
    assert!(
        build(&context, control).is_err(),
        "the driver accepted a warning under {OPTIONS}: this test could not fail"
    );
    let kernels = test_kernels();
    // A GPU target: its families include tiles staged in local memory.
    let total = check(&context, &kernels, Target::lookup("intel-gpu").unwrap());
    println!("{total} OpenCL variants built with {OPTIONS}");
}
