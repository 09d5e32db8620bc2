//! The architecture model: the targets code generation tunes for, as data.
//!
//! Each [`Target`] records what the heuristics and validation need: warp
//! (wavefront, SIMD) width, block limits, registers, shared (local) memory,
//! the footprint size from which a shared-memory tile pays off, and a default
//! block shape and pixels per thread per [`OperatorClass`]. The device found at
//! run time maps to the nearest target ([`Target::nearest`]); the figures come
//! from the vendors' programming guides (CUDA C Programming Guide, compute
//! capability tables; AMD GCN and Intel Xe OpenCL optimisation guides; PoCL).

mod device;
pub mod occupancy;
mod targets;

pub use device::{DeviceDescription, Vendor};

use crate::config::{BlockShape, PixelsPerThread};
use crate::emit::Language;
use crate::{Error, Result};

/// What a kernel does per output pixel, for choosing defaults.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum OperatorClass {
    /// Reads only the pixel itself (`at(0, 0)`) of every accessor.
    Point,
    /// Reads a neighbourhood (a stencil, a mask, a domain).
    Local,
    /// Combines a whole image (global reductions).
    Global,
}

/// The default block shape and pixels per thread of one operator class.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ClassDefaults {
    /// Threads per block.
    pub block: BlockShape,
    /// Output rows per thread.
    pub pixels_per_thread: PixelsPerThread,
}

/// A device model: limits and tuning defaults of one GPU (or CPU OpenCL)
/// architecture. All sizes are bytes; all counts per block unless named
/// per multiprocessor (SM / compute unit).
#[derive(Clone, Debug, PartialEq)]
pub struct Target {
    /// Short name used on command lines (`h100`, `pocl`, …).
    pub name: &'static str,
    /// The device it models, in words.
    pub description: &'static str,
    /// Who makes it.
    pub vendor: Vendor,
    /// The languages its drivers compile.
    pub languages: &'static [Language],
    /// CUDA compute capability `(major, minor)`; `None` off NVIDIA.
    pub compute_capability: Option<(u32, u32)>,
    /// Threads executed in lock-step (warp, wavefront, SIMD width).
    pub warp_width: u32,
    /// Most threads in one block.
    pub max_threads_per_block: u32,
    /// Most threads along x, y, z of a block.
    pub max_block_dims: [u32; 3],
    /// Multiprocessors (SMs, compute units, cores).
    pub multiprocessors: u32,
    /// Most resident threads per multiprocessor.
    pub max_threads_per_multiprocessor: u32,
    /// Most resident blocks per multiprocessor.
    pub max_blocks_per_multiprocessor: u32,
    /// 32-bit registers per multiprocessor.
    pub registers_per_multiprocessor: u32,
    /// Most registers one thread may use.
    pub max_registers_per_thread: u32,
    /// Registers are allocated per warp in multiples of this.
    pub register_allocation_unit: u32,
    /// Shared (OpenCL: local) memory one block may use without opt-in.
    pub shared_memory_per_block: u32,
    /// Shared memory per multiprocessor.
    pub shared_memory_per_multiprocessor: u32,
    /// Shared-memory banks (4-byte words); tiles pad rows against conflicts.
    pub shared_memory_banks: u32,
    /// The smallest footprint extent (max of width and height) from which the
    /// heuristics stage an accessor in a shared-memory tile; `u32::MAX`: never
    /// (caches make tiles pointless, or there is no fast local memory).
    pub local_memory_threshold: u32,
    /// `__ldg` (read-only data cache) is available (CUDA, compute 3.5+).
    pub has_ldg: bool,
    /// Images / texture objects can back an accessor.
    pub has_images: bool,
    /// `double` is supported.
    pub has_fp64: bool,
    /// Peak memory bandwidth in GB/s (for reports).
    pub memory_bandwidth_gbs: u32,
    /// Defaults for point operators.
    pub point: ClassDefaults,
    /// Defaults for local operators.
    pub local: ClassDefaults,
    /// Defaults for global operators.
    pub global: ClassDefaults,
}

impl Target {
    /// Every target of the model, in a fixed order.
    pub fn all() -> &'static [Target] {
        targets::TARGETS
    }

    /// The short names of every target.
    pub fn names() -> Vec<&'static str> {
        Self::all().iter().map(|t| t.name).collect()
    }

    /// A target by short name (case-insensitive).
    pub fn by_name(name: &str) -> Option<&'static Target> {
        Self::all()
            .iter()
            .find(|t| t.name.eq_ignore_ascii_case(name))
    }

    /// [`Target::by_name`], with the error that lists the known names.
    pub fn lookup(name: &str) -> Result<&'static Target> {
        Self::by_name(name).ok_or_else(|| Error::UnknownTarget(name.to_string()))
    }

    /// The target that best models a device found at run time.
    pub fn nearest(device: &DeviceDescription) -> &'static Target {
        device::nearest(device)
    }

    /// The defaults of an operator class.
    pub fn defaults(&self, class: OperatorClass) -> ClassDefaults {
        match class {
            OperatorClass::Point => self.point,
            OperatorClass::Local => self.local,
            OperatorClass::Global => self.global,
        }
    }

    /// True when the target's drivers compile `language`.
    pub fn supports(&self, language: Language) -> bool {
        self.languages.contains(&language)
    }

    /// The `--target list` text: one line per target, name and description.
    pub fn list_text() -> String {
        let mut s = String::from("targets of the architecture model:\n");
        for t in Self::all() {
            let langs: Vec<&str> = t.languages.iter().map(|l| l.name()).collect();
            s.push_str(&format!(
                "  {:<10} {} [{}]\n",
                t.name,
                t.description,
                langs.join(", ")
            ));
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_is_consistent() {
        let names = Target::names();
        assert_eq!(
            names,
            [
                "fermi",
                "k20",
                "fx5800",
                "a100",
                "h100",
                "h200",
                "amd-gcn",
                "pocl",
                "intel-gpu"
            ]
        );
        for t in Target::all() {
            for class in [
                OperatorClass::Point,
                OperatorClass::Local,
                OperatorClass::Global,
            ] {
                let d = t.defaults(class);
                assert!(d.block.validate(t).is_ok(), "{} {class:?}", t.name);
            }
            assert!(t.supports(Language::OpenCl));
            assert_eq!(t.supports(Language::Cuda), t.vendor == Vendor::Nvidia);
            assert!(
                t.warp_width >= 1
                    && t.shared_memory_per_block <= t.shared_memory_per_multiprocessor
            );
        }
        assert_eq!(Target::by_name("H200").map(|t| t.name), Some("h200"));
        assert!(Target::lookup("gtx")
            .unwrap_err()
            .to_string()
            .contains("amd-gcn"));
        let list = Target::list_text();
        assert!(list.contains("pocl") && list.contains("[cuda, opencl]"));
    }
}
