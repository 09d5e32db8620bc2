//! Criterion benches of local operators written the way the README teaches
//! (a mask `convolve` with a body around it, a domain `reduce`), each beside
//! the same stencil written out tap by tap and, for the 5x5 convolution, a
//! hand-written Rust loop; all in one run, so their ratios compare:
//! `cargo bench -p hipacc-benches --bench local`.

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use hipacc::Device;
use hipacc_benches::local::LocalRun;
use hipacc_benches::workload::SIZE;

fn local(c: &mut Criterion) {
    let run = match LocalRun::new(SIZE, SIZE, Device::cpu()) {
        Ok(r) => r,
        Err(e) => panic!("local setup failed: {e:#}"),
    };
    let kernels = match run.kernels() {
        Ok(k) => k,
        Err(e) => panic!("local kernels failed: {e:#}"),
    };
    let mut g = c.benchmark_group("local");
    g.throughput(Throughput::Elements((SIZE * SIZE) as u64));
    for (name, k) in &kernels {
        g.bench_function(*name, |b| {
            b.iter(|| {
                if let Err(e) = run.run(k) {
                    panic!("{name} failed: {e}");
                }
            })
        });
    }
    g.bench_function("loop5_scaled", |b| {
        b.iter(|| {
            if let Err(e) = run.baseline_conv5_scaled() {
                panic!("loop5_scaled failed: {e}");
            }
        })
    });
    g.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(20);
    targets = local
}
criterion_main!(benches);
