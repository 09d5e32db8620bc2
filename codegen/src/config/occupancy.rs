//! The occupancy check: how many blocks of a config fit on one
//! multiprocessor given the registers and shared memory a compiled kernel
//! uses (as `ptxas -v` or NVRTC report them), and a block-size refinement
//! that maximises resident warps.

use super::variant::Config;
use crate::arch::Target;
use crate::vocab::BlockShape;

/// Resources one compiled kernel uses, as the compiler reports them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct ResourceUsage {
    /// Registers per thread.
    pub registers_per_thread: u32,
    /// Static shared memory per block, in bytes.
    pub shared_bytes_per_block: u32,
}

/// What limits a block's residency, and how many warps stay resident.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Occupancy {
    /// Resident blocks per multiprocessor (0: the block cannot run at all).
    pub blocks_per_multiprocessor: u32,
    /// Resident warps per multiprocessor.
    pub warps_per_multiprocessor: u32,
    /// Resident threads over the multiprocessor's maximum, in `[0, 1]`.
    pub ratio: f64,
}

/// The occupancy of `block` on `target` for a kernel using `usage`.
///
/// The smallest of four limits: threads, blocks, registers (allocated per warp
/// in units of [`Target::register_allocation_unit`]) and shared memory.
pub fn occupancy(target: &Target, block: BlockShape, usage: ResourceUsage) -> Occupancy {
    let threads = block.threads();
    let warp = target.warp_width.max(1);
    let warps_per_block = threads.div_ceil(warp);
    let zero = Occupancy {
        blocks_per_multiprocessor: 0,
        warps_per_multiprocessor: 0,
        ratio: 0.0,
    };
    if threads == 0
        || threads > target.max_threads_per_block
        || usage.registers_per_thread > target.max_registers_per_thread
        || usage.shared_bytes_per_block > target.shared_memory_per_block
    {
        return zero;
    }
    let by_threads = target.max_threads_per_multiprocessor / (warps_per_block * warp);
    let by_blocks = target.max_blocks_per_multiprocessor;
    let by_registers = if usage.registers_per_thread == 0 {
        u32::MAX
    } else {
        let unit = target.register_allocation_unit.max(1) as u64;
        let per_warp = (usage.registers_per_thread as u64 * warp as u64).div_ceil(unit) * unit;
        let per_block = per_warp * warps_per_block as u64;
        (target.registers_per_multiprocessor as u64 / per_block).min(u32::MAX as u64) as u32
    };
    let by_shared = target
        .shared_memory_per_multiprocessor
        .checked_div(usage.shared_bytes_per_block)
        .unwrap_or(u32::MAX);
    let blocks = by_threads.min(by_blocks).min(by_registers).min(by_shared);
    let warps = blocks.saturating_mul(warps_per_block);
    let max_warps = (target.max_threads_per_multiprocessor / warp).max(1);
    Occupancy {
        blocks_per_multiprocessor: blocks,
        warps_per_multiprocessor: warps,
        ratio: (warps as f64 / max_warps as f64).min(1.0),
    }
}

/// Refines the block shape of `config` with the compiler's resource report:
/// keeps the block when its occupancy is within 10% of the best candidate,
/// else takes the candidate (same pixels per thread, valid on the target)
/// with the highest occupancy, preferring wider blocks. Shared memory of a
/// tile scales with the block, so `usage` is taken per thread of the current
/// block for the candidates.
pub fn refine_block(target: &Target, config: &Config, usage: ResourceUsage) -> Config {
    let current = occupancy(target, config.block, usage);
    let per_thread_shared = usage.shared_bytes_per_block / config.block.threads().max(1);
    let mut best = (current.ratio, config.block);
    for &cand in BlockShape::CANDIDATES {
        if cand.validate(target).is_err() {
            continue;
        }
        let u = ResourceUsage {
            registers_per_thread: usage.registers_per_thread,
            shared_bytes_per_block: per_thread_shared * cand.threads(),
        };
        let occ = occupancy(target, cand, u);
        if occ.ratio > best.0 + 1e-9 {
            best = (occ.ratio, cand);
        }
    }
    let mut out = config.clone();
    if best.0 > current.ratio * 1.1 || current.blocks_per_multiprocessor == 0 {
        out.block = best.1;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn h100() -> &'static Target {
        Target::by_name("h100").unwrap()
    }

    #[test]
    fn full_occupancy_with_few_registers() {
        let occ = occupancy(
            h100(),
            BlockShape { x: 32, y: 8 },
            ResourceUsage {
                registers_per_thread: 32,
                shared_bytes_per_block: 0,
            },
        );
        assert_eq!(occ.blocks_per_multiprocessor, 8);
        assert_eq!(occ.warps_per_multiprocessor, 64);
        assert!((occ.ratio - 1.0).abs() < 1e-12);
    }

    #[test]
    fn registers_limit_residency() {
        // 128 registers x 32 threads = 4096 per warp; 65536 / (4096 * 8) = 2 blocks.
        let occ = occupancy(
            h100(),
            BlockShape { x: 32, y: 8 },
            ResourceUsage {
                registers_per_thread: 128,
                shared_bytes_per_block: 0,
            },
        );
        assert_eq!(occ.blocks_per_multiprocessor, 2);
        assert!((occ.ratio - 0.25).abs() < 1e-12);
    }

    #[test]
    fn shared_memory_limits_residency() {
        let occ = occupancy(
            h100(),
            BlockShape { x: 32, y: 4 },
            ResourceUsage {
                registers_per_thread: 16,
                shared_bytes_per_block: 40 * 1024,
            },
        );
        assert_eq!(occ.blocks_per_multiprocessor, 5);
    }

    #[test]
    fn too_many_registers_cannot_run() {
        let fermi = Target::by_name("fermi").unwrap();
        let occ = occupancy(
            fermi,
            BlockShape { x: 32, y: 4 },
            ResourceUsage {
                registers_per_thread: 100,
                shared_bytes_per_block: 0,
            },
        );
        assert_eq!(occ.blocks_per_multiprocessor, 0);
    }

    #[test]
    fn refine_moves_off_a_block_that_fits_badly() {
        // fermi: 1024-thread blocks fit once in 1536 threads (2/3 occupancy);
        // smaller blocks reach 1.
        let fermi = Target::by_name("fermi").unwrap();
        let mut c = Config::uniform(0, BlockShape { x: 32, y: 32 });
        c.block = BlockShape { x: 32, y: 32 };
        let r = refine_block(
            fermi,
            &c,
            ResourceUsage {
                registers_per_thread: 20,
                shared_bytes_per_block: 0,
            },
        );
        assert_ne!(r.block, c.block);
        let occ = occupancy(
            fermi,
            r.block,
            ResourceUsage {
                registers_per_thread: 20,
                shared_bytes_per_block: 0,
            },
        );
        assert!((occ.ratio - 1.0).abs() < 1e-12, "{r:?}");
    }
}
