//! What the GPU benches share: their command line, the devices they run
//! on, and the host time of a call.

use anyhow::{bail, ensure, Context, Result};
use hipacc::Device;

/// `--size N` and `--runs N` from the command line, with these defaults.
pub fn size_and_runs(size: usize, runs: usize) -> Result<(usize, usize)> {
    let (mut size, mut runs) = (size, runs);
    let args: Vec<String> = std::env::args().skip(1).collect();
    for pair in args.chunks(2) {
        let value = |v: Option<&String>| -> Result<usize> {
            let v = v.with_context(|| format!("{} needs a value", pair[0]))?;
            v.parse().with_context(|| format!("{} {v}", pair[0]))
        };
        match pair[0].as_str() {
            "--size" => size = value(pair.get(1))?,
            "--runs" => runs = value(pair.get(1))?,
            other => bail!("unknown argument `{other}` (expected --size N, --runs N)"),
        }
    }
    ensure!(size > 0 && runs > 0, "--size and --runs must be positive");
    Ok((size, runs))
}

/// Every GPU-style backend, named, with the device or why it is absent:
/// OpenCL, CUDA, and wgpu with the `wgpu` feature.
pub fn devices() -> Vec<(&'static str, hipacc::Result<Device>)> {
    vec![
        ("opencl", Device::opencl()),
        ("cuda", Device::cuda()),
        #[cfg(feature = "wgpu")]
        ("wgpu", Device::wgpu()),
    ]
}

/// The CPU time the calling thread has used, in milliseconds.
///
/// A launch's host cost: building and hashing the IR, choosing the
/// variant, binding the arguments and the driver's enqueue. A device
/// that runs kernels on worker threads (PoCL, lavapipe) or on a GPU does
/// not count here, and neither does waiting for it, so the difference
/// of two readings around a call is what the call costs the host even
/// where the device's own time dominates its wall time.
pub fn thread_cpu_ms() -> f64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable timespec for the call.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    assert_eq!(rc, 0, "CLOCK_THREAD_CPUTIME_ID is always available");
    ts.tv_sec as f64 * 1e3 + ts.tv_nsec as f64 * 1e-6
}
