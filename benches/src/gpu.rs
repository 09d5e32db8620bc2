//! What the GPU benches share: their command line and the devices they
//! run on.

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
