//! Choosing the variant of a launch: the architecture model's heuristics
//! for the device's target, a config remembered by the explore mode,
//! `HIPACC_CONFIG`, and the device's API override, in that order (each
//! layer fixes the axes it names).

use crate::{Error, Result};
use hipacc_codegen::{Config, ConfigOverride, Language, Target};
use hipacc_core::ir;
use hipacc_core::Rect;

/// The config for `kernel` on `target`: the heuristics, then `HIPACC_CONFIG`,
/// then `api` (the device's override, which wins), validated for the target.
pub(crate) fn choose_config(
    kernel: &ir::Kernel,
    target: &Target,
    language: Language,
    api: Option<&ConfigOverride>,
) -> Result<Config> {
    let env = ConfigOverride::from_env().map_err(Error::from)?;
    let merged = layer(env, api);
    Config::choose(kernel, target, language, merged.as_ref()).map_err(Error::from)
}

/// [`choose_config`] for a launch over `space` on the device whose tuning
/// key is `device` (see [`crate::explore`]): a winner remembered by the
/// explore mode replaces the heuristics (under `HIPACC_CONFIG` and `api`);
/// a remembered config that no longer validates is ignored. The flag is true
/// when the remembered config was used.
pub(crate) fn choose_launch_config(
    kernel: &ir::Kernel,
    target: &Target,
    language: Language,
    api: Option<&ConfigOverride>,
    device: &str,
    space: Rect,
) -> Result<(Config, bool)> {
    if !api.is_some_and(pins_everything) {
        if let Some(tuned) = crate::explore::tuned(kernel, device, space) {
            let env = ConfigOverride::from_env().map_err(Error::from)?;
            let base = layer(Some(tuned), env.as_ref());
            let merged = layer(base, api);
            if let Ok(c) = Config::choose(kernel, target, language, merged.as_ref()) {
                return Ok((c, true));
            }
        }
    }
    choose_config(kernel, target, language, api).map(|c| (c, false))
}

/// True when `o` fixes every axis, so nothing remembered can apply.
fn pins_everything(o: &ConfigOverride) -> bool {
    o.boundary.is_some()
        && o.memory.is_some()
        && o.pixels_per_thread.is_some()
        && o.block.is_some()
        && o.masks.is_some()
}

/// `base` with the axes `top` fixes replaced.
fn layer(base: Option<ConfigOverride>, top: Option<&ConfigOverride>) -> Option<ConfigOverride> {
    match (base, top) {
        (Some(b), Some(t)) => Some(merge(b, t)),
        (Some(b), None) => Some(b),
        (None, Some(t)) => Some(t.clone()),
        (None, None) => None,
    }
}

/// True when the block shape is fixed by `HIPACC_CONFIG` or `api`, so no
/// occupancy refinement may change it (a tuned block is measured, not
/// refined: see the CUDA launch).
pub(crate) fn block_fixed(api: Option<&ConfigOverride>) -> Result<bool> {
    let env = ConfigOverride::from_env().map_err(Error::from)?;
    Ok(api.is_some_and(|o| o.block.is_some()) || env.is_some_and(|o| o.block.is_some()))
}

/// Which axes of the small companion (see [`super::program`]) the user
/// fixed through `HIPACC_CONFIG` or `api`: the launch path may not trade a
/// fixed axis for the companion's.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Fixed {
    /// The boundary scheme is fixed.
    pub(crate) boundary: bool,
    /// The pixels per thread are fixed.
    pub(crate) pixels_per_thread: bool,
}

/// The axes of the small companion fixed by `HIPACC_CONFIG` or `api`.
pub(crate) fn fixed_axes(api: Option<&ConfigOverride>) -> Result<Fixed> {
    let env = ConfigOverride::from_env().map_err(Error::from)?;
    let any = |f: fn(&ConfigOverride) -> bool| api.is_some_and(f) || env.as_ref().is_some_and(f);
    Ok(Fixed {
        boundary: any(|o| o.boundary.is_some()),
        pixels_per_thread: any(|o| o.pixels_per_thread.is_some()),
    })
}

/// `base` with every axis that `top` fixes replaced.
fn merge(base: ConfigOverride, top: &ConfigOverride) -> ConfigOverride {
    ConfigOverride {
        boundary: top.boundary.or(base.boundary),
        memory: top.memory.clone().or(base.memory),
        pixels_per_thread: top.pixels_per_thread.or(base.pixels_per_thread),
        block: top.block.or(base.block),
        masks: top.masks.or(base.masks),
    }
}

/// The override that pins every axis of `config`: what
/// [`Device::with_config`](crate::Device::with_config) stores.
pub(crate) fn pin(config: &Config) -> ConfigOverride {
    ConfigOverride {
        boundary: Some(config.boundary),
        memory: Some(config.memory.clone()),
        pixels_per_thread: Some(config.pixels_per_thread),
        block: Some(config.block),
        masks: Some(config.masks),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use hipacc_codegen::{BlockShape, BoundaryScheme, MemoryKind, PixelsPerThread};

    #[test]
    fn api_override_wins_over_env_axes() {
        let env = ConfigOverride::parse("block=32x4,ppt=4").unwrap();
        let api = ConfigOverride::parse("ppt=8,boundary=generic").unwrap();
        let m = merge(env, &api);
        assert_eq!(m.block, Some(BlockShape { x: 32, y: 4 }));
        assert_eq!(m.pixels_per_thread, Some(PixelsPerThread::Eight));
        assert_eq!(m.boundary, Some(BoundaryScheme::Generic));
        assert_eq!(m.memory, None);
    }

    #[test]
    fn pinned_config_round_trips() {
        let c = Config {
            boundary: BoundaryScheme::Regions,
            memory: vec![MemoryKind::LocalTile, MemoryKind::Global],
            pixels_per_thread: PixelsPerThread::Four,
            block: BlockShape { x: 16, y: 8 },
            masks: hipacc_codegen::MaskHandling::ConstantMemory,
        };
        let back = pin(&c)
            .apply(&Config::uniform(2, BlockShape { x: 1, y: 1 }))
            .unwrap();
        assert_eq!(back, c);
    }
}
