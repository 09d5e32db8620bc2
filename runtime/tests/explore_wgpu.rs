//! Launch timing and the explore mode on the wgpu backend (Mesa's lavapipe
//! in CI): a launch reports its duration, and explore times every variant
//! that fits the device, picks one of them and leaves results the
//! evaluator agrees with. Nothing is remembered in the tuning cache. No
//! time is compared with a threshold: lavapipe runs on the CPU.
//!
//! Needs the crate's `wgpu` feature; prints a skip line when no adapter is
//! present, unless `HIPACC_REQUIRE_WGPU` is set (as `.ci/test` does), which
//! makes a missing adapter a failure.

#![cfg(feature = "wgpu")]

mod gpu_support;

use hipacc::explore::ExploreOptions;
use hipacc::prelude::*;
use hipacc_codegen::Config;
use hipacc_core::ir::eval::evaluate_kernel;
use std::time::Duration;

#[derive(Kernel)]
#[kernel(output = f32)]
struct Blur3 {
    input: Accessor<f32>,
}

#[kernel_body]
impl Blur3 {
    fn kernel(&self) -> f32 {
        (self.input.at(-1, 0) + self.input() + self.input.at(1, 0) + self.input.at(0, 1)) * 0.25
    }
}

fn input() -> Image<f32> {
    Image::from_fn(40, 24, |x, y| (x * 3 + y * 7) as f32).unwrap()
}

#[test]
fn a_launch_reports_a_positive_duration() {
    let Some(device) = gpu_support::wgpu() else {
        return;
    };
    let input = input();
    let output = Image::<f32>::new(40, 24).unwrap();
    let k = Blur3 {
        input: Accessor::new(&input).with_boundary(Boundary::Clamp),
    };
    for _ in 0..2 {
        k.execute(&device, &IterationSpace::full(&output)).unwrap();
        let t = device.last_launch_time().expect("a launch time");
        assert!(t > Duration::ZERO, "{t:?}");
    }
}

#[test]
fn explore_times_every_fitting_variant_and_picks_one_of_them() {
    let Some(device) = gpu_support::wgpu() else {
        return;
    };
    let input = input();
    let output = Image::<f32>::new(40, 24).unwrap();
    let k = Blur3 {
        input: Accessor::new(&input).with_boundary(Boundary::Mirror),
    };
    let space = IterationSpace::full(&output);
    let ir = k.ir().unwrap();
    let block = device.config_for(&ir).unwrap().block;
    let options = ExploreOptions {
        warmup: 1,
        runs: 3,
        print: true,
        remember: false,
        blocks: vec![block],
    };
    let report = hipacc::explore_with(&k, &device, &space, &options).unwrap();
    assert!(report.cache_file.is_none());

    // The table holds each variant of the block shape once, at least one
    // with tiles in workgroup memory and one plain.
    let mut keys: Vec<String> = report.rows.iter().map(|r| r.config.key()).collect();
    keys.sort();
    keys.dedup();
    assert_eq!(keys.len(), report.rows.len());
    let all: Vec<Config> = Config::enumerate(&ir, device.target().unwrap())
        .into_iter()
        .filter(|c| c.block == block)
        .collect();
    assert!(report.rows.len() > 1 && report.rows.len() <= all.len());
    for r in &report.rows {
        assert!(all.contains(&r.config), "{} is not a variant", r.config);
        assert!(r.median > Duration::ZERO, "{}: {:?}", r.config, r.median);
    }
    let memory = |m: hipacc_codegen::MemoryKind| {
        report
            .rows
            .iter()
            .any(|r| r.config.memory.iter().all(|&k| k == m))
    };
    assert!(memory(hipacc_codegen::MemoryKind::LocalTile));
    assert!(memory(hipacc_codegen::MemoryKind::Global));

    // The winner is one of the rows, and no other row is faster.
    let best = report.best();
    assert!(report.rows.iter().any(|r| r.config == best.config));
    assert!(report.rows.iter().all(|r| r.median >= best.median));
    let table = report.to_string();
    assert_eq!(table.lines().count(), report.rows.len() + 2, "{table}");

    // The winner computes what the evaluator does.
    k.execute(&device.with_config(&best.config), &space)
        .unwrap();
    assert_eq!(device.last_launch_config(), Some(best.config.clone()));
    let want = Image::<f32>::new(40, 24).unwrap();
    evaluate_kernel(&k, &IterationSpace::full(&want)).unwrap();
    assert_eq!(output.to_vec().unwrap(), want.to_vec().unwrap());
}
