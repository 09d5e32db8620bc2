//! Criterion benchmark of one V(2,2) weighted-Jacobi cycle (2048x2048 f32,
//! 6 levels, Dirichlet) on the CPU backend, with and without residual +
//! restriction fused, in bytes per second of the bandwidth bound
//! (`vcycle-ratios` prints the ratio to the STREAM triad).

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use hipacc::Device;
use hipacc_benches::vcycle::{trace_bytes, VcycleRun};

fn vcycle(c: &mut Criterion) {
    let mut group = c.benchmark_group("vcycle");
    group.sample_size(20);
    for fused in [false, true] {
        let run = VcycleRun::new(Device::cpu(), fused).expect("problem");
        let bytes = trace_bytes(&run.cycle().expect("cycle"));
        group.throughput(Throughput::Bytes(bytes));
        let name = if fused { "fused" } else { "unfused" };
        group.bench_function(name, |b| b.iter(|| run.cycle().expect("cycle")));
    }
    group.finish();
}

criterion_group!(benches, vcycle);
criterion_main!(benches);
