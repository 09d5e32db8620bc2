//! One target of the architecture model: a device's limits and tuning
//! defaults, and the checks made against them.

use super::vendor::Vendor;
use crate::vocab::{BlockShape, Language, OperatorClass, PixelsPerThread};

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
    /// Whether the heuristics choose boundary-region variants (one copy of
    /// the body per region of blocks, the interior's without edge tests)
    /// where a kernel's reads are bounded. They pay on GPUs, where interior
    /// blocks then run without the tests; on PoCL the generic variant
    /// measured 4 to 16 times faster with global memory (`gpu-variants` on
    /// the Jacobi sweep, `gpu-pipelines` on a 3x3 blur).
    pub boundary_regions: bool,
    /// `__ldg` (read-only data cache) is available (CUDA, compute 3.5+).
    pub has_ldg: bool,
    /// Images / texture objects can back an accessor.
    pub has_images: bool,
    /// `double` is supported.
    pub has_fp64: bool,
    /// Peak memory bandwidth in GB/s (for reports).
    pub memory_bandwidth_gbs: u32,
    /// Reads from cache that recomputing a producer may add for each
    /// device-memory access it saves: about the ratio of the first-level
    /// cache's (or read-only path's) throughput to device memory's. A
    /// pipeline folds a stage into a consumer that reads it through a
    /// window when the reads recomputation adds stay within this many per
    /// access of the intermediate saved (its write and its read back).
    pub recompute_reads_per_access: u32,
    /// Defaults for point operators.
    pub point: ClassDefaults,
    /// Defaults for local operators.
    pub local: ClassDefaults,
    /// Defaults for global operators.
    pub global: ClassDefaults,
}

impl Target {
    /// The defaults of an operator class.
    pub fn defaults(&self, class: OperatorClass) -> ClassDefaults {
        match class {
            OperatorClass::Point => self.point,
            OperatorClass::Local => self.local,
            OperatorClass::Global => self.global,
        }
    }

    /// True when the target's drivers compile `language`. WGSL runs
    /// wherever wgpu has a Vulkan, Metal or DirectX 12 driver: on every
    /// target.
    pub fn supports(&self, language: Language) -> bool {
        language == Language::Wgsl || self.languages.contains(&language)
    }
}

impl BlockShape {
    /// Checks the block against the target's limits.
    pub fn validate(self, target: &Target) -> std::result::Result<(), String> {
        if self.x == 0 || self.y == 0 {
            return Err(format!("block {}x{} is empty", self.x, self.y));
        }
        if self.x > target.max_block_dims[0] || self.y > target.max_block_dims[1] {
            return Err(format!(
                "block {}x{} exceeds the maximum block dimensions {}x{}",
                self.x, self.y, target.max_block_dims[0], target.max_block_dims[1]
            ));
        }
        if self.x.saturating_mul(self.y) > target.max_threads_per_block {
            return Err(format!(
                "block {}x{} has {} threads, more than the maximum of {} per block",
                self.x,
                self.y,
                self.x.saturating_mul(self.y),
                target.max_threads_per_block
            ));
        }
        Ok(())
    }
}
