//! Heuristics that pick a config, and the enumeration of all valid configs.

use super::axes::{BoundaryScheme, MaskHandling, MemoryKind};
use super::parse::ConfigOverride;
use super::variant::{texture_capable, Config};
use crate::arch::Target;
use crate::passes::{analysis, reach};
use crate::vocab::{BlockShape, PixelsPerThread};
use crate::vocab::{Language, OperatorClass};
use crate::Result;
use hipacc_core::ir::Kernel;

/// Bytes of workgroup storage every WebGPU adapter offers
/// (`maxComputeWorkgroupStorageSize`'s required minimum).
const WGSL_WORKGROUP_STORAGE: u32 = 16 * 1024;

impl Config {
    /// The config the heuristics pick for `kernel` on `target`, with
    /// `overrides` applied (pass [`ConfigOverride::from_env`] to honour
    /// `HIPACC_CONFIG`), validated.
    ///
    /// Heuristics: block and pixels per thread from the target's defaults for
    /// the kernel's operator class; `Regions` when some accessor needs
    /// boundary checks and has a bounded footprint and the target's
    /// `boundary_regions` says they pay, else `Generic`; per
    /// accessor a shared-memory tile when its footprint extent reaches the
    /// target's local-memory threshold (and the tiles fit), else the
    /// read-only path where the target has `__ldg` (CUDA), else global; masks
    /// as literals when all are known at IR-build time.
    pub fn choose(
        kernel: &Kernel,
        target: &Target,
        language: Language,
        overrides: Option<&ConfigOverride>,
    ) -> Result<Config> {
        let class = analysis::operator_class(kernel);
        let defaults = target.defaults(class);
        let fps = reach::footprints(kernel);
        let regions = target.boundary_regions && any_bounded_checks(kernel);
        let mut config = Config {
            boundary: if regions {
                BoundaryScheme::Regions
            } else {
                BoundaryScheme::Generic
            },
            memory: Vec::with_capacity(kernel.accessors.len()),
            pixels_per_thread: defaults.pixels_per_thread,
            block: defaults.block,
            masks: if kernel.masks.iter().all(|m| m.coefficients.is_some()) {
                MaskHandling::Literal
            } else {
                MaskHandling::ConstantMemory
            },
        };
        let fallback = if language == Language::Cuda && target.has_ldg {
            MemoryKind::ReadOnly
        } else {
            MemoryKind::Global
        };
        let mut shared = 0u64;
        // WGSL tiles must fit the workgroup storage every WebGPU adapter
        // offers, and hold narrow lanes widened to words.
        let budget = match language {
            Language::Wgsl => target.shared_memory_per_block.min(WGSL_WORKGROUP_STORAGE),
            _ => target.shared_memory_per_block,
        } as u64
            / 2;
        for (acc, fp) in kernel.accessors.iter().zip(&fps) {
            let kind = match fp {
                Some(fp)
                    if class == OperatorClass::Local
                        && acc.interpolation == hipacc_core::Interpolation::None
                        && fp.width().max(fp.height()) >= target.local_memory_threshold =>
                {
                    let bytes = match language {
                        Language::Wgsl => {
                            crate::emit::wgsl_tile_bytes(&config, target, acc.pixel, *fp)
                        }
                        _ => config.tile_bytes(target, acc.pixel, *fp),
                    } as u64;
                    if shared + bytes <= budget {
                        shared += bytes;
                        MemoryKind::LocalTile
                    } else {
                        fallback
                    }
                }
                _ => fallback,
            };
            config.memory.push(kind);
        }
        if let Some(o) = overrides {
            config = o.apply(&config)?;
        }
        config.validate_for(kernel, target)?;
        Ok(config)
    }

    /// Every valid config of `kernel` on `target`: the product of both
    /// boundary schemes (only `Generic` when no accessor needs checks), the
    /// block candidates the target allows, 1/4/8 pixels per thread, each
    /// memory kind the target allows applied to every accessor that can use
    /// it (the others stay global), and each valid mask handling.
    pub fn enumerate(kernel: &Kernel, target: &Target) -> Vec<Config> {
        let mut out = Vec::new();
        for &block in BlockShape::CANDIDATES {
            if block.validate(target).is_err() {
                continue;
            }
            for c in Self::families_with_block(kernel, target, block) {
                out.push(c);
            }
        }
        out
    }

    /// One config per variant family (boundary scheme x memory kind x pixels
    /// per thread x mask handling) with the target's default block for the
    /// kernel's class: what conformance tests run.
    pub fn families(kernel: &Kernel, target: &Target) -> Vec<Config> {
        let block = target.defaults(analysis::operator_class(kernel)).block;
        Self::families_with_block(kernel, target, block)
    }

    fn families_with_block(kernel: &Kernel, target: &Target, block: BlockShape) -> Vec<Config> {
        let fps = reach::footprints(kernel);
        let any_checks = any_bounded_checks(kernel);
        let schemes: &[BoundaryScheme] = if any_checks {
            &BoundaryScheme::ALL
        } else {
            &[BoundaryScheme::Generic]
        };
        let masks: &[MaskHandling] = if kernel.masks.is_empty() {
            &[MaskHandling::Literal]
        } else if kernel.masks.iter().all(|m| m.coefficients.is_some()) {
            &[MaskHandling::Literal, MaskHandling::ConstantMemory]
        } else {
            &[MaskHandling::ConstantMemory]
        };
        let mut out = Vec::new();
        for &boundary in schemes {
            for kind in MemoryKind::ALL {
                let memory: Vec<MemoryKind> = kernel
                    .accessors
                    .iter()
                    .zip(&fps)
                    .map(|(a, fp)| match kind {
                        MemoryKind::Texture if !texture_capable(a.pixel) => MemoryKind::Global,
                        MemoryKind::LocalTile
                            if fp.is_none()
                                || a.interpolation != hipacc_core::Interpolation::None =>
                        {
                            MemoryKind::Global
                        }
                        k => k,
                    })
                    .collect();
                if kind != MemoryKind::Global && !memory.contains(&kind) {
                    continue;
                }
                for ppt in PixelsPerThread::ALL {
                    for &m in masks {
                        let c = Config {
                            boundary,
                            memory: memory.clone(),
                            pixels_per_thread: ppt,
                            block,
                            masks: m,
                        };
                        if c.validate_for(kernel, target).is_ok() && !out.contains(&c) {
                            out.push(c);
                        }
                    }
                }
            }
        }
        out
    }
}

/// Whether some accessor needs boundary checks and is read within bounds
/// known at compile time (constant or affine in the coordinates): then
/// region variants can leave the interior blocks unchecked.
fn any_bounded_checks(kernel: &Kernel) -> bool {
    kernel
        .accessors
        .iter()
        .zip(reach::reaches(kernel))
        .any(|(a, r)| analysis::needs_checks(a) && r.is_some())
}
