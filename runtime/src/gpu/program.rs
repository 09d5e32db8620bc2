//! The program cache: one driver build per kernel, holding every variant a
//! launch of it may pick.
//!
//! A launch asks for `(kernel, config)`. On a miss the cache builds one
//! program with that variant and its *companion*: for a config with region
//! specialisation or several pixels per thread, the same config with the
//! generic boundary scheme and one pixel per thread. The launch path runs
//! the companion on small launches and when no block of the launch lies in
//! the interior region (windows wider than the image), where specialised
//! regions and unrolled rows cannot pay: every block would run the fallback
//! with all checks, through a body many times larger, and on a driver that
//! compiles at first launch the larger body costs seconds to a minute of
//! compile time (a 5x5 Mirror window with regions and four pixels per
//! thread: about 90 s on PoCL, its companion about 1.5 s). Drivers that
//! compile each kernel at its first launch (PoCL) pay only the front end for
//! the companion that never runs, and a kernel seen on a small image and a
//! large one is built once, not twice.
//!
//! Each kernel of a build enters the in-memory cache under its own
//! [`CacheKey`]; the driver's build log reaches the user only in the error
//! of a failed build (with the path of the saved source).

use super::backend::Backend;
use super::device::GpuDevice;
use super::dump;
use super::masks::MaskCopies;
use crate::cache::CacheKey;
use crate::{Error, Result};
use hipacc_codegen::{generate_batch, BoundaryScheme, Config, KernelInfo, PixelsPerThread};
use hipacc_core::ir;
use std::sync::Arc;

/// A built kernel: what codegen says about it and the driver's object.
pub(crate) struct Compiled<B: Backend> {
    /// Entry point, arguments, launch geometry.
    pub(crate) info: KernelInfo,
    /// The driver's kernel.
    pub(crate) entry: B::Entry,
    /// Its device copies of mask coefficients.
    pub(crate) masks: MaskCopies<B::MaskCopy>,
}

impl<B: Backend> Compiled<B> {
    /// A kernel just built, with no mask copies yet.
    pub(crate) fn new(info: KernelInfo, entry: B::Entry) -> Compiled<B> {
        Compiled {
            info,
            entry,
            masks: MaskCopies::default(),
        }
    }
}

/// The cache key of `config` of the IR with hash `ir_hash` on `dev`.
pub(crate) fn key<B: Backend>(dev: &GpuDevice<B>, ir_hash: u64, config: &Config) -> CacheKey {
    let f = dev.backend.facts();
    CacheKey::new(ir_hash, config, f.target.name, &f.name, &f.driver)
}

/// The small companion of `config` (generic boundary scheme, one pixel per
/// thread), if it differs from `config`.
pub(crate) fn generic_companion(config: &Config) -> Option<Config> {
    let small = Config {
        boundary: BoundaryScheme::Generic,
        pixels_per_thread: PixelsPerThread::One,
        ..config.clone()
    };
    (small != *config).then_some(small)
}

/// The kernel for `config` of `kernel` (whose [`ir::Kernel::stable_hash`]
/// is `ir_hash`, computed once per launch by the caller), from the cache or
/// built.
pub(crate) fn kernel<B: Backend>(
    dev: &GpuDevice<B>,
    kernel: &ir::Kernel,
    ir_hash: u64,
    config: &Config,
) -> Result<Arc<Compiled<B>>> {
    if let Some(k) = dev.kernels.get(&key(dev, ir_hash, config)) {
        return Ok(k);
    }
    match build(dev, &[(kernel, config)])?.pop() {
        Some(k) => Ok(k),
        None => unreachable!("bug: build returns one kernel per item"),
    }
}

/// Builds every `(kernel, config)` not yet cached, with its companions, as
/// one program and caches each kernel; returns them in item order.
pub(crate) fn build<B: Backend>(
    dev: &GpuDevice<B>,
    items: &[(&ir::Kernel, &Config)],
) -> Result<Vec<Arc<Compiled<B>>>> {
    for (k, _) in items {
        dev.backend.facts().check_types(B::KIND, k)?;
    }
    let hashes: Vec<u64> = items.iter().map(|(k, _)| k.stable_hash()).collect();
    let cached = |h: u64, c: &Config| dev.kernels.contains(&key(dev, h, c));
    let mut wanted: Vec<(&ir::Kernel, Config)> = Vec::new();
    for ((k, c), h) in items.iter().zip(&hashes) {
        if cached(*h, c) {
            continue;
        }
        let companion = generic_companion(c)
            .filter(|g| !cached(*h, g) && g.validate_for(k, dev.backend.facts().target).is_ok());
        for config in std::iter::once((*c).clone()).chain(companion) {
            if !wanted
                .iter()
                .any(|(wk, wc)| wk.stable_hash() == *h && *wc == config)
            {
                wanted.push((k, config));
            }
        }
    }
    if !wanted.is_empty() {
        let refs: Vec<(&ir::Kernel, &Config)> = wanted.iter().map(|(k, c)| (*k, c)).collect();
        build_program(dev, &refs)?;
    }
    items
        .iter()
        .zip(&hashes)
        .map(|((k, c), h)| {
            dev.kernels.get(&key(dev, *h, c)).ok_or_else(|| {
                Error::Internal(format!(
                    "kernel `{}` ({}) missing after its program was built",
                    k.name,
                    c.key()
                ))
            })
        })
        .collect()
}

fn build_program<B: Backend>(dev: &GpuDevice<B>, items: &[(&ir::Kernel, &Config)]) -> Result<()> {
    let facts = dev.backend.facts();
    let generated = generate_batch(items, facts.target, B::LANGUAGE).map_err(Error::from)?;
    for info in &generated.kernels {
        dev.backend
            .facts()
            .check_limits(&info.config, info.shared_bytes)?;
    }
    dump::dump_if_requested(&generated);
    let fail = |log: String| Error::Compile {
        kernel: dump::kernel_names(&generated),
        device: facts.name.clone(),
        source_path: dump::save_failed(&generated),
        log,
    };
    let program = Arc::new(dev.backend.build(&generated).map_err(fail)?);
    for info in generated.kernels.clone() {
        let entry = dev.backend.entry(&program, &info).map_err(fail)?;
        let k = key(dev, info.ir_hash, &info.config);
        dev.kernels.insert(k, Arc::new(Compiled::new(info, entry)));
    }
    Ok(())
}
