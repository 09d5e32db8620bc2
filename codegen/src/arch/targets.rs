//! The table of targets. Figures: CUDA C Programming Guide (compute
//! capability tables), AMD GCN and Intel Xe OpenCL optimisation guides, PoCL
//! documentation. Defaults per operator class follow HIPAcc's choices for the
//! NVIDIA parts (point: 128x1; local: 32x4 with 4 rows per thread) and the
//! wavefront/SIMD width elsewhere.

use super::target::{ClassDefaults, Target};
use super::vendor::Vendor;
use crate::vocab::{BlockShape, Language, PixelsPerThread};
use crate::{Error, Result};

const CUDA_AND_OPENCL: &[Language] = &[Language::Cuda, Language::OpenCl];
const OPENCL: &[Language] = &[Language::OpenCl];

const fn d(x: u32, y: u32, ppt: PixelsPerThread) -> ClassDefaults {
    ClassDefaults {
        block: BlockShape { x, y },
        pixels_per_thread: ppt,
    }
}

use PixelsPerThread::{Four, One};

static TARGETS: &[Target] = &[
    Target {
        name: "fermi",
        description: "NVIDIA Fermi, Tesla C2050 (compute 2.0)",
        vendor: Vendor::Nvidia,
        languages: CUDA_AND_OPENCL,
        compute_capability: Some((2, 0)),
        warp_width: 32,
        max_threads_per_block: 1024,
        max_block_dims: [1024, 1024, 64],
        multiprocessors: 14,
        max_threads_per_multiprocessor: 1536,
        max_blocks_per_multiprocessor: 8,
        registers_per_multiprocessor: 32768,
        max_registers_per_thread: 63,
        register_allocation_unit: 64,
        shared_memory_per_block: 48 * 1024,
        shared_memory_per_multiprocessor: 48 * 1024,
        shared_memory_banks: 32,
        local_memory_threshold: 5,
        boundary_regions: true,
        has_ldg: false,
        has_images: true,
        has_fp64: true,
        memory_bandwidth_gbs: 144,
        recompute_reads_per_access: 8,
        point: d(128, 1, One),
        local: d(32, 4, Four),
        global: d(256, 1, One),
    },
    Target {
        name: "k20",
        description: "NVIDIA Kepler, Tesla K20 (compute 3.5)",
        vendor: Vendor::Nvidia,
        languages: CUDA_AND_OPENCL,
        compute_capability: Some((3, 5)),
        warp_width: 32,
        max_threads_per_block: 1024,
        max_block_dims: [1024, 1024, 64],
        multiprocessors: 13,
        max_threads_per_multiprocessor: 2048,
        max_blocks_per_multiprocessor: 16,
        registers_per_multiprocessor: 65536,
        max_registers_per_thread: 255,
        register_allocation_unit: 256,
        shared_memory_per_block: 48 * 1024,
        shared_memory_per_multiprocessor: 48 * 1024,
        shared_memory_banks: 32,
        local_memory_threshold: 7,
        boundary_regions: true,
        has_ldg: true,
        has_images: true,
        has_fp64: true,
        memory_bandwidth_gbs: 208,
        recompute_reads_per_access: 8,
        point: d(128, 1, One),
        local: d(32, 4, Four),
        global: d(256, 1, One),
    },
    Target {
        name: "fx5800",
        description: "NVIDIA Quadro FX 5800, GT200 (compute 1.3)",
        vendor: Vendor::Nvidia,
        languages: CUDA_AND_OPENCL,
        compute_capability: Some((1, 3)),
        warp_width: 32,
        max_threads_per_block: 512,
        max_block_dims: [512, 512, 64],
        multiprocessors: 30,
        max_threads_per_multiprocessor: 1024,
        max_blocks_per_multiprocessor: 8,
        registers_per_multiprocessor: 16384,
        max_registers_per_thread: 124,
        register_allocation_unit: 512,
        shared_memory_per_block: 16 * 1024,
        shared_memory_per_multiprocessor: 16 * 1024,
        shared_memory_banks: 16,
        local_memory_threshold: 3,
        boundary_regions: true,
        has_ldg: false,
        has_images: true,
        has_fp64: true,
        memory_bandwidth_gbs: 102,
        recompute_reads_per_access: 1,
        point: d(128, 1, One),
        local: d(32, 4, Four),
        global: d(256, 1, One),
    },
    Target {
        name: "a100",
        description: "NVIDIA Ampere, A100 (compute 8.0)",
        vendor: Vendor::Nvidia,
        languages: CUDA_AND_OPENCL,
        compute_capability: Some((8, 0)),
        warp_width: 32,
        max_threads_per_block: 1024,
        max_block_dims: [1024, 1024, 64],
        multiprocessors: 108,
        max_threads_per_multiprocessor: 2048,
        max_blocks_per_multiprocessor: 32,
        registers_per_multiprocessor: 65536,
        max_registers_per_thread: 255,
        register_allocation_unit: 256,
        shared_memory_per_block: 48 * 1024,
        shared_memory_per_multiprocessor: 164 * 1024,
        shared_memory_banks: 32,
        local_memory_threshold: 9,
        boundary_regions: true,
        has_ldg: true,
        has_images: true,
        has_fp64: true,
        memory_bandwidth_gbs: 1555,
        recompute_reads_per_access: 12,
        point: d(128, 1, One),
        local: d(32, 8, Four),
        global: d(256, 1, One),
    },
    Target {
        name: "h100",
        description: "NVIDIA Hopper, H100 SXM (compute 9.0)",
        vendor: Vendor::Nvidia,
        languages: CUDA_AND_OPENCL,
        compute_capability: Some((9, 0)),
        warp_width: 32,
        max_threads_per_block: 1024,
        max_block_dims: [1024, 1024, 64],
        multiprocessors: 132,
        max_threads_per_multiprocessor: 2048,
        max_blocks_per_multiprocessor: 32,
        registers_per_multiprocessor: 65536,
        max_registers_per_thread: 255,
        register_allocation_unit: 256,
        shared_memory_per_block: 48 * 1024,
        shared_memory_per_multiprocessor: 228 * 1024,
        shared_memory_banks: 32,
        local_memory_threshold: 9,
        boundary_regions: true,
        has_ldg: true,
        has_images: true,
        has_fp64: true,
        memory_bandwidth_gbs: 3350,
        recompute_reads_per_access: 10,
        point: d(128, 1, One),
        local: d(32, 8, Four),
        global: d(256, 1, One),
    },
    Target {
        name: "h200",
        description: "NVIDIA Hopper, H200 SXM with HBM3e (compute 9.0)",
        vendor: Vendor::Nvidia,
        languages: CUDA_AND_OPENCL,
        compute_capability: Some((9, 0)),
        warp_width: 32,
        max_threads_per_block: 1024,
        max_block_dims: [1024, 1024, 64],
        multiprocessors: 132,
        max_threads_per_multiprocessor: 2048,
        max_blocks_per_multiprocessor: 32,
        registers_per_multiprocessor: 65536,
        max_registers_per_thread: 255,
        register_allocation_unit: 256,
        shared_memory_per_block: 48 * 1024,
        shared_memory_per_multiprocessor: 228 * 1024,
        shared_memory_banks: 32,
        local_memory_threshold: 9,
        boundary_regions: true,
        has_ldg: true,
        has_images: true,
        has_fp64: true,
        memory_bandwidth_gbs: 4800,
        recompute_reads_per_access: 7,
        point: d(128, 1, One),
        local: d(32, 8, Four),
        global: d(256, 1, One),
    },
    Target {
        name: "amd-gcn",
        description: "AMD GCN GPU, wave64 (e.g. Radeon Vega 64)",
        vendor: Vendor::Amd,
        languages: OPENCL,
        compute_capability: None,
        warp_width: 64,
        max_threads_per_block: 256,
        max_block_dims: [256, 256, 256],
        multiprocessors: 64,
        max_threads_per_multiprocessor: 2560,
        max_blocks_per_multiprocessor: 40,
        registers_per_multiprocessor: 65536,
        max_registers_per_thread: 256,
        register_allocation_unit: 256,
        shared_memory_per_block: 32 * 1024,
        shared_memory_per_multiprocessor: 64 * 1024,
        shared_memory_banks: 32,
        local_memory_threshold: 5,
        boundary_regions: true,
        has_ldg: false,
        has_images: true,
        has_fp64: true,
        memory_bandwidth_gbs: 484,
        recompute_reads_per_access: 8,
        point: d(64, 4, One),
        local: d(64, 4, Four),
        global: d(256, 1, One),
    },
    Target {
        name: "pocl",
        description: "CPU OpenCL device (PoCL); work-groups run as vectorised loops",
        vendor: Vendor::Cpu,
        languages: OPENCL,
        compute_capability: None,
        warp_width: 1,
        max_threads_per_block: 4096,
        max_block_dims: [4096, 4096, 4096],
        multiprocessors: 2,
        max_threads_per_multiprocessor: 4096,
        max_blocks_per_multiprocessor: 1,
        registers_per_multiprocessor: u32::MAX,
        max_registers_per_thread: u32::MAX,
        register_allocation_unit: 1,
        shared_memory_per_block: 1024 * 1024,
        shared_memory_per_multiprocessor: 1024 * 1024,
        shared_memory_banks: 1,
        local_memory_threshold: u32::MAX,
        boundary_regions: false,
        has_ldg: false,
        has_images: true,
        has_fp64: true,
        memory_bandwidth_gbs: 20,
        recompute_reads_per_access: 8,
        point: d(128, 1, One),
        local: d(64, 4, Four),
        global: d(256, 1, One),
    },
    Target {
        name: "intel-gpu",
        description: "Intel integrated / Xe GPU, SIMD16",
        vendor: Vendor::Intel,
        languages: OPENCL,
        compute_capability: None,
        warp_width: 16,
        max_threads_per_block: 512,
        max_block_dims: [512, 512, 512],
        multiprocessors: 12,
        max_threads_per_multiprocessor: 896,
        max_blocks_per_multiprocessor: 16,
        registers_per_multiprocessor: 114688,
        max_registers_per_thread: 128,
        register_allocation_unit: 128,
        shared_memory_per_block: 64 * 1024,
        shared_memory_per_multiprocessor: 64 * 1024,
        shared_memory_banks: 16,
        local_memory_threshold: 7,
        boundary_regions: true,
        has_ldg: false,
        has_images: true,
        has_fp64: false,
        memory_bandwidth_gbs: 68,
        recompute_reads_per_access: 4,
        point: d(64, 2, One),
        local: d(32, 4, Four),
        global: d(256, 1, One),
    },
];

/// Lookups over the table.
impl Target {
    /// Every target of the model, in a fixed order.
    pub fn all() -> &'static [Target] {
        TARGETS
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
        Self::by_name(name).ok_or_else(|| Error::UnknownTarget {
            name: name.to_string(),
            known: Self::names().join(", "),
        })
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
    use crate::vocab::{Language, OperatorClass};

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
