//! [`Config`]: one point of the variant space, its key, and its validation
//! against a target and a kernel.

use super::axes::{BoundaryScheme, MaskHandling, MemoryKind};
use crate::arch::Target;
use crate::vocab::{BlockShape, PixelsPerThread};
use crate::{Error, Result};
use hipacc_core::ir::footprint::Footprint;
use hipacc_core::ir::{Kernel, Type};

/// One point of the variant space. `memory` has one entry per accessor slot
/// of the kernel, in slot order.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Config {
    /// Boundary handling.
    pub boundary: BoundaryScheme,
    /// Memory kind per accessor.
    pub memory: Vec<MemoryKind>,
    /// Rows per thread.
    pub pixels_per_thread: PixelsPerThread,
    /// Threads per block.
    pub block: BlockShape,
    /// Mask coefficients.
    pub masks: MaskHandling,
}

impl Config {
    /// A config with `accessors` accessors on global memory, generic boundary
    /// checks, one pixel per thread and literal masks.
    pub fn uniform(accessors: usize, block: BlockShape) -> Config {
        Config {
            boundary: BoundaryScheme::Generic,
            memory: vec![MemoryKind::Global; accessors],
            pixels_per_thread: PixelsPerThread::One,
            block,
            masks: MaskHandling::Literal,
        }
    }

    /// A short, stable key of the variant, usable in C identifiers and file
    /// names: `reg_b32x4_p4_mgl_kl` is regions, a 32x4 block, 4 rows per
    /// thread, accessor 0 global and accessor 1 tiled, literal masks.
    pub fn key(&self) -> String {
        let b = match self.boundary {
            BoundaryScheme::Regions => "reg",
            BoundaryScheme::Generic => "gen",
        };
        let m: String = self.memory.iter().map(|m| m.letter()).collect();
        let k = match self.masks {
            MaskHandling::Literal => "kl",
            MaskHandling::ConstantMemory => "kc",
        };
        format!(
            "{b}_b{}x{}_p{}_m{m}_{k}",
            self.block.x,
            self.block.y,
            self.pixels_per_thread.get()
        )
    }

    /// Rows of output one block covers.
    pub fn rows_per_block(&self) -> u32 {
        self.block.y * self.pixels_per_thread.get()
    }

    /// Checks the limits of the target that do not depend on the kernel:
    /// block dimensions and threads, texture support.
    pub fn validate(&self, target: &Target) -> Result<()> {
        let fail = |reason: String| {
            Err(Error::InvalidConfig {
                config: self.to_string(),
                target: target.name.to_string(),
                reason,
            })
        };
        if let Err(reason) = self.block.validate(target) {
            return fail(reason);
        }
        if !target.has_images && self.memory.contains(&MemoryKind::Texture) {
            return fail("the target has no images/textures".into());
        }
        Ok(())
    }

    /// [`Config::validate`], plus the checks that need the kernel: one memory
    /// kind per accessor; tiles only for bounded footprints without
    /// interpolation, fitting in shared memory together; textures not for
    /// `f64` pixels; literal masks only for masks known at IR-build time;
    /// `f64` only where the target has it.
    pub fn validate_for(&self, kernel: &Kernel, target: &Target) -> Result<()> {
        self.validate(target)?;
        let fail = |reason: String| {
            Err(Error::InvalidConfig {
                config: self.to_string(),
                target: target.name.to_string(),
                reason,
            })
        };
        if self.memory.len() != kernel.accessors.len() {
            return fail(format!(
                "{} memory kinds given for {} accessors",
                self.memory.len(),
                kernel.accessors.len()
            ));
        }
        let fps = crate::passes::reach::footprints(kernel);
        let mut shared = 0u64;
        for (i, (acc, &mem)) in kernel.accessors.iter().zip(&self.memory).enumerate() {
            if mem == MemoryKind::Texture && !texture_capable(acc.pixel) {
                return fail(format!(
                    "accessor `{}` has {} pixels, which textures/images cannot hold",
                    acc.name, acc.pixel
                ));
            }
            if mem == MemoryKind::LocalTile {
                match fps[i] {
                    None => {
                        return fail(format!(
                            "accessor `{}` is read at offsets not known at compile time; a tile needs a bounded footprint",
                            acc.name
                        ))
                    }
                    Some(fp) => shared += self.tile_bytes(target, acc.pixel, fp) as u64,
                }
            }
        }
        if shared > target.shared_memory_per_block as u64 {
            return fail(format!(
                "tiles need {shared} bytes of shared memory, more than the {} per block",
                target.shared_memory_per_block
            ));
        }
        if self.masks == MaskHandling::Literal {
            if let Some(m) = kernel.masks.iter().find(|m| m.coefficients.is_none()) {
                return fail(format!(
                    "mask `{}` is dynamic (coefficients given at launch); use mask=constant",
                    m.name
                ));
            }
        }
        if !target.has_fp64 && crate::passes::analysis::uses_f64(kernel) {
            return fail("the kernel computes in f64, which the target lacks".into());
        }
        Ok(())
    }

    /// The tile of one accessor: `(width, height, pitch)` in pixels, where the
    /// pitch pads rows so that consecutive rows start in different banks.
    pub fn tile_shape(&self, target: &Target, pixel: Type, fp: Footprint) -> (u32, u32, u32) {
        let w = self.block.x + (fp.max_dx - fp.min_dx) as u32;
        let h = self.rows_per_block() + (fp.max_dy - fp.min_dy) as u32;
        let word = 4u32;
        let size = pixel.size() as u32;
        let banks = target.shared_memory_banks;
        let mut pitch = w;
        if banks > 1 && (pitch * size / word).is_multiple_of(banks) {
            // One word (or one pixel, when pixels are wider than a word).
            pitch += (word / size).max(1);
        }
        (w, h, pitch)
    }

    /// Bytes of shared memory the tile of one accessor takes.
    pub fn tile_bytes(&self, target: &Target, pixel: Type, fp: Footprint) -> u32 {
        let (_, h, pitch) = self.tile_shape(target, pixel, fp);
        pitch * h * pixel.size() as u32
    }
}

/// Images and textures hold 8/16/32-bit lanes, not `f64`.
pub(crate) fn texture_capable(t: Type) -> bool {
    t.scalar != hipacc_core::ir::ScalarType::F64
}

impl std::fmt::Display for Config {
    /// The override syntax: `boundary=regions,memory=global/local,ppt=4,block=32x4,mask=literal`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mem: Vec<&str> = self.memory.iter().map(|m| m.name()).collect();
        write!(
            f,
            "boundary={},memory={},ppt={},block={}x{},mask={}",
            self.boundary.name(),
            if mem.is_empty() {
                "global".to_string()
            } else {
                mem.join("/")
            },
            self.pixels_per_thread.get(),
            self.block.x,
            self.block.y,
            self.masks.name()
        )
    }
}
