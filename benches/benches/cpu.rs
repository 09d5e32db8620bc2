//! Criterion benches of the CPU backend on PERF.md's workloads, each beside
//! its hand-written baseline, plus the STREAM triad, all in one run so the
//! GB/s figures compare: `cargo bench -p hipacc-benches --bench cpu`.

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use hipacc::Device;
use hipacc_benches::stream::{Triad, TRIAD_DEFAULT_LEN};
use hipacc_benches::workload::{Gauss5Run, JacobiRun, SIZE};
use std::hint::black_box;

fn triad(c: &mut Criterion) {
    let mut t = Triad::new(TRIAD_DEFAULT_LEN);
    let mut g = c.benchmark_group("stream");
    g.throughput(Throughput::Bytes(t.bytes()));
    g.bench_function("triad", |b| b.iter(|| t.run(black_box(3.0))));
    g.finish();
}

fn jacobi(c: &mut Criterion) {
    let run = match JacobiRun::new(SIZE, SIZE, Device::cpu()) {
        Ok(r) => r,
        Err(e) => panic!("jacobi setup failed: {e:#}"),
    };
    let mut g = c.benchmark_group("jacobi");
    g.throughput(Throughput::Bytes(run.bytes()));
    g.bench_function("baseline", |b| {
        b.iter(|| {
            if let Err(e) = run.baseline() {
                panic!("baseline failed: {e}");
            }
        })
    });
    g.bench_function("hipacc", |b| {
        b.iter(|| {
            if let Err(e) = run.hipacc() {
                panic!("jacobi failed: {e}");
            }
        })
    });
    g.finish();
}

fn gauss5(c: &mut Criterion) {
    let run = match Gauss5Run::new(SIZE, SIZE, Device::cpu()) {
        Ok(r) => r,
        Err(e) => panic!("gauss5 setup failed: {e:#}"),
    };
    let mut g = c.benchmark_group("gauss5");
    g.throughput(Throughput::Bytes(run.bytes()));
    g.bench_function("baseline", |b| {
        b.iter(|| {
            if let Err(e) = run.baseline() {
                panic!("baseline failed: {e}");
            }
        })
    });
    g.bench_function("hipacc", |b| {
        b.iter(|| {
            if let Err(e) = run.hipacc() {
                panic!("gauss5 failed: {e}");
            }
        })
    });
    g.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(30);
    targets = triad, jacobi, gauss5
}
criterion_main!(benches);
