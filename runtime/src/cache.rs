//! The compiled-kernel cache of the GPU backends.
//!
//! A compiled kernel is keyed by everything its code depends on: the IR's
//! [`stable_hash`](hipacc_core::ir::Kernel::stable_hash), the variant
//! ([`Config::key`]), the architecture-model target it was generated for, the
//! device and the driver (compiler) version. The in-memory map lives in each
//! device object; backends whose compiler output is portable text (PTX) also
//! keep it on disk, named after the program's source and the compiler
//! ([`on_disk`]), in `HIPACC_CACHE_DIR`, else `$XDG_CACHE_HOME/hipacc`,
//! else `$HOME/.cache/hipacc` (an empty `HIPACC_CACHE_DIR` turns it off).
//! Without it every process pays the compiler again: a tone-mapping run
//! on CUDA compiles sixteen programs, about ten seconds. (OpenCL drivers cache binaries
//! themselves, e.g. PoCL in `POCL_CACHE_DIR`.)

use hipacc_codegen::Config;
use std::collections::HashMap;
use std::hash::Hash;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, PoisonError};

/// The environment variable naming the on-disk cache directory.
pub(crate) const CACHE_DIR_ENV: &str = "HIPACC_CACHE_DIR";

/// What identifies one compiled kernel.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(crate) struct CacheKey {
    /// The IR's stable hash.
    pub(crate) ir_hash: u64,
    /// The variant key.
    pub(crate) config: String,
    /// The architecture-model target the source was generated for.
    pub(crate) target: &'static str,
    /// The device's name.
    pub(crate) device: String,
    /// The driver / compiler version.
    pub(crate) driver: String,
}

impl CacheKey {
    /// The key of `config` of the IR with hash `ir_hash`.
    pub(crate) fn new(
        ir_hash: u64,
        config: &Config,
        target: &'static str,
        device: &str,
        driver: &str,
    ) -> CacheKey {
        CacheKey {
            ir_hash,
            config: config.key(),
            target,
            device: device.to_string(),
            driver: driver.to_string(),
        }
    }
}

/// FNV-1a of `text`: stable across runs and platforms, for file names.
fn fnv1a(text: &str) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in text.bytes() {
        h ^= b as u64;
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    h
}

/// The file name under which the compiler output of `source` by
/// `compiler` (device, architecture and compiler version) is kept.
pub(crate) fn disk_name(source: &str, compiler: &str, ext: &str) -> String {
    format!("{:016x}-{:016x}.{ext}", fnv1a(source), fnv1a(compiler))
}

/// The on-disk cache directory, if any (see the module docs).
pub(crate) fn disk_dir() -> Option<PathBuf> {
    match std::env::var_os(CACHE_DIR_ENV) {
        Some(d) if d.is_empty() => None,
        Some(d) => Some(PathBuf::from(d)),
        None => std::env::var_os("XDG_CACHE_HOME")
            .filter(|d| !d.is_empty())
            .map(PathBuf::from)
            .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))
            .map(|d| d.join("hipacc")),
    }
}

/// The compiler output of `source`: read from the on-disk cache
/// ([`disk_dir`]) when it holds it, else made by `compile` and stored
/// there. A cache that cannot be written is skipped (it only saves time);
/// a file is written under a temporary name and renamed, so a process
/// never reads another's half-written output.
pub(crate) fn on_disk<E>(
    source: &str,
    compiler: &str,
    ext: &str,
    compile: impl FnOnce() -> Result<String, E>,
) -> Result<String, E> {
    on_disk_in(disk_dir().as_deref(), source, compiler, ext, compile)
}

/// [`on_disk`] with the cache in `dir` (none: always `compile`).
fn on_disk_in<E>(
    dir: Option<&std::path::Path>,
    source: &str,
    compiler: &str,
    ext: &str,
    compile: impl FnOnce() -> Result<String, E>,
) -> Result<String, E> {
    let path = dir.map(|d| d.join(disk_name(source, compiler, ext)));
    if let Some(text) = path.as_ref().and_then(|p| std::fs::read_to_string(p).ok()) {
        return Ok(text);
    }
    let text = compile()?;
    if let Some(path) = &path {
        if let Some(dir) = path.parent() {
            let _ = std::fs::create_dir_all(dir);
        }
        let tmp = path.with_extension(format!("{ext}.{}.tmp", std::process::id()));
        if std::fs::write(&tmp, &text).is_ok() && std::fs::rename(&tmp, path).is_err() {
            let _ = std::fs::remove_file(&tmp);
        }
    }
    Ok(text)
}

/// An in-memory map from keys to compiled kernels, counting hits and misses.
pub(crate) struct KernelCache<K, V> {
    map: Mutex<HashMap<K, V>>,
    hits: AtomicU64,
    misses: AtomicU64,
}

impl<K: Eq + Hash, V: Clone> KernelCache<K, V> {
    /// An empty cache.
    pub(crate) fn new() -> Self {
        KernelCache {
            map: Mutex::new(HashMap::new()),
            hits: AtomicU64::new(0),
            misses: AtomicU64::new(0),
        }
    }

    /// The cached value of `key`, counting a hit or a miss.
    pub(crate) fn get(&self, key: &K) -> Option<V> {
        let found = self.lock().get(key).cloned();
        let counter = if found.is_some() {
            &self.hits
        } else {
            &self.misses
        };
        counter.fetch_add(1, Ordering::Relaxed);
        found
    }

    /// True when `key` is cached (counts neither a hit nor a miss: the
    /// program cache asks this while deciding what to build).
    pub(crate) fn contains(&self, key: &K) -> bool {
        self.lock().contains_key(key)
    }

    /// Stores `value` unless another thread stored one first; returns the
    /// value now cached.
    pub(crate) fn insert(&self, key: K, value: V) -> V {
        self.lock().entry(key).or_insert(value).clone()
    }

    /// `(hits, misses)` so far.
    pub(crate) fn stats(&self) -> (u64, u64) {
        (
            self.hits.load(Ordering::Relaxed),
            self.misses.load(Ordering::Relaxed),
        )
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<K, V>> {
        self.map.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use hipacc_codegen::BlockShape;

    #[test]
    fn keys_differ_by_every_part() {
        let c = Config::uniform(1, BlockShape { x: 32, y: 4 });
        let base = CacheKey::new(1, &c, "pocl", "dev", "1.0");
        let others = [
            CacheKey::new(2, &c, "pocl", "dev", "1.0"),
            CacheKey::new(
                1,
                &Config::uniform(1, BlockShape { x: 32, y: 8 }),
                "pocl",
                "dev",
                "1.0",
            ),
            CacheKey::new(1, &c, "h100", "dev", "1.0"),
            CacheKey::new(1, &c, "pocl", "other", "1.0"),
            CacheKey::new(1, &c, "pocl", "dev", "2.0"),
        ];
        for o in &others {
            assert_ne!(&base, o);
        }
    }

    #[test]
    fn the_disk_cache_compiles_once_and_leaves_no_temporary_file() {
        let dir = std::env::temp_dir().join(format!("hipacc-cache-test-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let mut compiles = 0;
        for _ in 0..2 {
            let text = on_disk_in(Some(&dir), "src", "cc 1.0", "ptx", || {
                compiles += 1;
                Ok::<_, ()>("out".to_string())
            });
            assert_eq!(text, Ok("out".to_string()));
        }
        assert_eq!(compiles, 1, "the second call reads the file");
        let names: Vec<_> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        assert_eq!(names, vec![disk_name("src", "cc 1.0", "ptx")]);
        // Another compiler's output is not reused.
        let other = on_disk_in(Some(&dir), "src", "cc 2.0", "ptx", || {
            Ok::<_, ()>("new".into())
        });
        assert_eq!(other, Ok("new".to_string()));
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn disk_names_differ_by_source_and_compiler() {
        let a = disk_name("kernel a", "sm_90 nvrtc 12.9", "ptx");
        assert_ne!(a, disk_name("kernel b", "sm_90 nvrtc 12.9", "ptx"));
        assert_ne!(a, disk_name("kernel a", "sm_80 nvrtc 12.9", "ptx"));
        assert_eq!(a, disk_name("kernel a", "sm_90 nvrtc 12.9", "ptx"));
        assert!(a.ends_with(".ptx"));
    }

    #[test]
    fn cache_counts_hits_and_keeps_the_first_value() {
        let cache: KernelCache<u32, &str> = KernelCache::new();
        assert_eq!(cache.get(&1), None);
        assert_eq!(cache.insert(1, "a"), "a");
        assert_eq!(cache.insert(1, "b"), "a");
        assert_eq!(cache.get(&1), Some("a"));
        assert_eq!(cache.stats(), (1, 1));
    }
}
