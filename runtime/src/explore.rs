//! The explore mode: time every valid variant of a kernel on a GPU device and
//! remember the fastest.
//!
//! [`explore`] enumerates every valid [`Config`] of the kernel for the
//! device's target ([`Config::enumerate`], minus those over the device's own
//! limits), builds them all in one program, runs each once to warm up and
//! then a few times, timed with device events, and reports the median of
//! each in an [`ExploreReport`]. The winner is stored in a JSON tuning cache
//! keyed by (IR stable hash, device, image-size class); later
//! [`execute`](crate::Execute::execute) calls on a matching device and size
//! class start from the cached config instead of the heuristics
//! (`HIPACC_CONFIG` and a device override still win over it).
//!
//! The cache file is `HIPACC_TUNE_CACHE` when set, else
//! `hipacc/tune.json` under the user cache directory (`$XDG_CACHE_HOME`, or
//! `~/.cache`).

use crate::{BackendKind, Device, Error, Execute, Result};
use hipacc_codegen::{BlockShape, Config, ConfigOverride};
use hipacc_core::{ir, IterationSpace, Kernel, Rect};
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, PoisonError};
use std::time::{Duration, SystemTime};

/// The environment variable naming the tuning cache file.
pub const TUNE_CACHE_ENV: &str = "HIPACC_TUNE_CACHE";

/// How [`explore_with`] measures.
#[derive(Clone, Debug)]
pub struct ExploreOptions {
    /// Untimed launches before the timed ones, per config.
    pub warmup: usize,
    /// Timed launches per config; the median is reported.
    pub runs: usize,
    /// Print the table to standard output.
    pub print: bool,
    /// Store the winner in the tuning cache.
    pub remember: bool,
    /// Only these block shapes (empty: every candidate the target allows).
    /// Every config on a CPU OpenCL device builds slowly; a few shapes keep
    /// a search short.
    pub blocks: Vec<BlockShape>,
}

impl Default for ExploreOptions {
    fn default() -> Self {
        ExploreOptions {
            warmup: 1,
            runs: 5,
            print: true,
            remember: true,
            blocks: Vec::new(),
        }
    }
}

/// One measured config.
#[derive(Clone, Debug)]
pub struct ExploreRow {
    /// The variant.
    pub config: Config,
    /// The median device time of the timed launches.
    pub median: Duration,
}

/// The result of [`explore`]: every config with its time, fastest marked.
#[derive(Clone, Debug)]
pub struct ExploreReport {
    /// The kernel's name.
    pub kernel: String,
    /// The device's name.
    pub device: String,
    /// The image-size class the result is remembered for.
    pub size_class: String,
    /// Every config, in enumeration order.
    pub rows: Vec<ExploreRow>,
    /// The index of the fastest row.
    pub best: usize,
    /// The tuning cache file written, when the winner was remembered.
    pub cache_file: Option<PathBuf>,
}

impl ExploreReport {
    /// The fastest row.
    pub fn best(&self) -> &ExploreRow {
        &self.rows[self.best]
    }
}

impl std::fmt::Display for ExploreReport {
    /// A table: one line per config, sorted by time, the winner first.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        writeln!(
            f,
            "explore {} on {} (size class {}): {} configs",
            self.kernel,
            self.device,
            self.size_class,
            self.rows.len()
        )?;
        let mut order: Vec<usize> = (0..self.rows.len()).collect();
        order.sort_by_key(|&i| self.rows[i].median);
        let best = self.best().median.as_secs_f64();
        writeln!(
            f,
            "{:>4}  {:>12}  {:>7}  config",
            "rank", "median us", "vs best"
        )?;
        for (rank, &i) in order.iter().enumerate() {
            let r = &self.rows[i];
            let t = r.median.as_secs_f64();
            let ratio = if best > 0.0 { t / best } else { 1.0 };
            writeln!(
                f,
                "{:>4}  {:>12.1}  {:>6.2}x  {}",
                rank + 1,
                t * 1e6,
                ratio,
                r.config
            )?;
        }
        Ok(())
    }
}

/// [`explore_with`] with the default options: one warm-up and five timed
/// launches per config, the table printed, the winner remembered.
///
/// ```no_run
/// use hipacc::prelude::*;
///
/// #[derive(Kernel)]
/// #[kernel(output = f32)]
/// struct Blur { input: Accessor<f32> }
///
/// #[kernel_body]
/// impl Blur {
///     fn kernel(&self) -> f32 {
///         (self.input.at(-1, 0) + self.input() + self.input.at(1, 0)) / 3.0
///     }
/// }
///
/// # fn main() -> hipacc::Result<()> {
/// let device = Device::opencl()?;
/// let input = Image::<f32>::new(256, 256)?;
/// let output = Image::<f32>::new(256, 256)?;
/// let blur = Blur { input: Accessor::new(&input).with_boundary(Boundary::Clamp) };
/// let space = IterationSpace::full(&output);
/// let report = hipacc::explore(&blur, &device, &space)?;
/// println!("fastest: {}", report.best().config);
/// // Later launches of this kernel at this size use the winner.
/// blur.execute(&device, &space)?;
/// # Ok(())
/// # }
/// ```
pub fn explore<K: Kernel>(
    kernel: &K,
    device: &Device,
    space: &IterationSpace<K::Output>,
) -> Result<ExploreReport> {
    explore_with(kernel, device, space, &ExploreOptions::default())
}

/// Times every valid config of `kernel` over `space` on the GPU `device`.
/// An error on the CPU backend (it has no variants).
pub fn explore_with<K: Kernel>(
    kernel: &K,
    device: &Device,
    space: &IterationSpace<K::Output>,
    options: &ExploreOptions,
) -> Result<ExploreReport> {
    let target = device.target().ok_or_else(|| {
        Error::Config(
            "explore needs a GPU device (opencl, cuda or wgpu); the CPU backend has no variants"
                .into(),
        )
    })?;
    let ir = kernel.ir()?;
    let configs: Vec<Config> = Config::enumerate(&ir, target)
        .into_iter()
        .filter(|c| options.blocks.is_empty() || options.blocks.contains(&c.block))
        .filter(|c| device.fits(c))
        .collect();
    if configs.is_empty() {
        return Err(Error::Config(format!(
            "no valid config of kernel `{}` fits the device {}",
            K::NAME,
            device.name()
        )));
    }
    let items: Vec<(&ir::Kernel, &Config)> = configs.iter().map(|c| (&ir, c)).collect();
    device.precompile(&items)?;
    let runs = options.runs.max(1);
    let mut rows = Vec::with_capacity(configs.len());
    for config in configs {
        let pinned = device.with_config(&config);
        for _ in 0..options.warmup {
            kernel.execute(&pinned, space)?;
        }
        device.synchronize()?;
        let mut times = Vec::with_capacity(runs);
        for _ in 0..runs {
            kernel.execute(&pinned, space)?;
            times.push(
                device
                    .last_launch_time()
                    .ok_or_else(|| Error::Config(format!("no launch time for config {config}")))?,
            );
        }
        times.sort();
        rows.push(ExploreRow {
            config,
            median: times[times.len() / 2],
        });
    }
    let best = (0..rows.len())
        .min_by_key(|&i| rows[i].median)
        .unwrap_or_else(|| unreachable!("bug: rows are not empty"));
    let key = TuneKey::new(&ir, device, space.rect())?;
    let mut report = ExploreReport {
        kernel: K::NAME.to_string(),
        device: device.name(),
        size_class: key.size_class.clone(),
        rows,
        best,
        cache_file: None,
    };
    if options.remember {
        let path = cache_path();
        let r = report.best();
        remember(&path, &key, K::NAME, &r.config, r.median)?;
        report.cache_file = Some(path);
    }
    if options.print {
        print!("{report}");
    }
    Ok(report)
}

/// The image-size class of an iteration space: the power of two at or above
/// its larger side (`s256` holds spaces up to 256 pixels on a side).
pub fn size_class(rect: Rect) -> String {
    let side = rect.width.max(rect.height).max(1);
    format!("s{}", side.next_power_of_two())
}

/// The tuning cache file: `HIPACC_TUNE_CACHE`, else `hipacc/tune.json` under
/// the user cache directory.
pub fn cache_path() -> PathBuf {
    if let Some(p) = std::env::var_os(TUNE_CACHE_ENV).filter(|p| !p.is_empty()) {
        return PathBuf::from(p);
    }
    let base = std::env::var_os("XDG_CACHE_HOME")
        .filter(|p| !p.is_empty())
        .map(PathBuf::from)
        .or_else(|| {
            std::env::var_os("HOME")
                .filter(|p| !p.is_empty())
                .map(|h| PathBuf::from(h).join(".cache"))
        })
        .unwrap_or_else(std::env::temp_dir);
    base.join("hipacc").join("tune.json")
}

/// What a remembered winner is keyed by.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
struct TuneKey {
    ir_hash: String,
    device: String,
    size_class: String,
}

impl TuneKey {
    fn new(ir: &ir::Kernel, device: &Device, space: Rect) -> Result<TuneKey> {
        let name = device
            .tune_name()
            .ok_or_else(|| Error::Config("the native CPU backend has no tuning cache".into()))?;
        Ok(TuneKey::from_parts(ir.stable_hash(), &name, space))
    }

    fn from_parts(ir_hash: u64, device: &str, space: Rect) -> TuneKey {
        TuneKey {
            ir_hash: format!("{ir_hash:016x}"),
            device: device.to_string(),
            size_class: size_class(space),
        }
    }
}

/// The device part of a tuning key: backend and device name.
pub(crate) fn device_key(kind: BackendKind, name: &str) -> String {
    format!("{}:{name}", kind.name())
}

/// One entry of the cache file.
#[derive(Clone, Debug, Serialize, Deserialize)]
struct Entry {
    ir_hash: String,
    kernel: String,
    device: String,
    size_class: String,
    /// The winner in the override syntax of `HIPACC_CONFIG`.
    config: String,
    median_us: f64,
}

/// The cache file's contents.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
struct CacheFile {
    version: u32,
    entries: Vec<Entry>,
}

const VERSION: u32 = 1;

fn read_file(path: &Path) -> Result<CacheFile> {
    let text = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Ok(CacheFile {
                version: VERSION,
                entries: Vec::new(),
            })
        }
        Err(e) => return Err(tune_err(path, &e)),
    };
    let file: CacheFile = serde_json::from_str(&text).map_err(|e| tune_err(path, &e))?;
    if file.version != VERSION {
        return Err(tune_err(
            path,
            &format!("version {} (expected {VERSION})", file.version),
        ));
    }
    Ok(file)
}

fn tune_err(path: &Path, e: &dyn std::fmt::Display) -> Error {
    Error::Config(format!(
        "tuning cache {} ({TUNE_CACHE_ENV}): {e}",
        path.display()
    ))
}

/// Stores `config` as the winner for `key`, replacing an older entry.
fn remember(path: &Path, key: &TuneKey, kernel: &str, config: &Config, t: Duration) -> Result<()> {
    let mut file = read_file(path)?;
    file.entries.retain(|e| {
        !(e.ir_hash == key.ir_hash && e.device == key.device && e.size_class == key.size_class)
    });
    file.entries.push(Entry {
        ir_hash: key.ir_hash.clone(),
        kernel: kernel.to_string(),
        device: key.device.clone(),
        size_class: key.size_class.clone(),
        config: config.to_string(),
        median_us: t.as_secs_f64() * 1e6,
    });
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).map_err(|e| tune_err(path, &e))?;
    }
    let text = serde_json::to_string_pretty(&file).map_err(|e| tune_err(path, &e))?;
    let tmp = path.with_extension(format!("tmp{}", std::process::id()));
    std::fs::write(&tmp, text).map_err(|e| tune_err(&tmp, &e))?;
    std::fs::rename(&tmp, path).map_err(|e| tune_err(path, &e))
}

/// The cache file as last read, reloaded when its modification time changes.
struct Loaded {
    path: PathBuf,
    modified: Option<SystemTime>,
    map: HashMap<TuneKey, String>,
}

static LOADED: Mutex<Option<Loaded>> = Mutex::new(None);

/// The remembered winner for `kernel` on the device named
/// `device` (see [`device_key`]) over `space`, as an override pinning every
/// axis; `None` when the cache has no entry, is missing or unreadable.
pub(crate) fn tuned(kernel: &ir::Kernel, device: &str, space: Rect) -> Option<ConfigOverride> {
    let path = cache_path();
    let modified = std::fs::metadata(&path).ok()?.modified().ok();
    let key = TuneKey::from_parts(kernel.stable_hash(), device, space);
    let mut guard = LOADED.lock().unwrap_or_else(PoisonError::into_inner);
    let stale = match &*guard {
        Some(l) => l.path != path || l.modified != modified,
        None => true,
    };
    if stale {
        let file = read_file(&path).ok()?;
        let map = file
            .entries
            .into_iter()
            .map(|e| {
                let k = TuneKey {
                    ir_hash: e.ir_hash,
                    device: e.device,
                    size_class: e.size_class,
                };
                (k, e.config)
            })
            .collect();
        *guard = Some(Loaded {
            path,
            modified,
            map,
        });
    }
    let text = guard.as_ref()?.map.get(&key)?.clone();
    ConfigOverride::parse(&text).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn size_classes_round_up_to_powers_of_two() {
        assert_eq!(size_class(Rect::full(100, 30)), "s128");
        assert_eq!(size_class(Rect::full(128, 128)), "s128");
        assert_eq!(size_class(Rect::full(129, 1)), "s256");
        assert_eq!(size_class(Rect::full(0, 0)), "s1");
    }

    #[test]
    fn remembered_winners_replace_older_entries() {
        let dir = std::env::temp_dir().join(format!("hipacc-tune-unit-{}", std::process::id()));
        let path = dir.join("t.json");
        let key = TuneKey::from_parts(7, "opencl:x", Rect::full(64, 64));
        let a = Config::uniform(1, hipacc_codegen::BlockShape { x: 32, y: 4 });
        let b = Config::uniform(1, hipacc_codegen::BlockShape { x: 16, y: 8 });
        remember(&path, &key, "K", &a, Duration::from_micros(5)).unwrap();
        remember(&path, &key, "K", &b, Duration::from_micros(3)).unwrap();
        let file = read_file(&path).unwrap();
        assert_eq!(file.entries.len(), 1);
        assert_eq!(file.entries[0].config, b.to_string());
        std::fs::write(&path, "not json").unwrap();
        let e = read_file(&path).unwrap_err().to_string();
        assert!(e.contains("t.json"), "{e}");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
