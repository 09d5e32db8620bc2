//! The device's own launch limits, which may be tighter than its target's,
//! and the one check of a variant against them.

use crate::{Error, Result};
use hipacc_codegen::{Config, MemoryKind};

/// What a device allows one launch.
#[derive(Clone, Debug)]
pub(crate) struct Limits {
    /// Threads per block (work-items per work-group).
    pub(crate) max_threads: u64,
    /// Threads per block along x and y.
    pub(crate) max_block: [u64; 2],
    /// Shared (local) memory per block, in bytes.
    pub(crate) max_shared: u64,
    /// Accessors may be read as images / textures.
    pub(crate) images: bool,
    /// The device computes in `f64` (OpenCL `cl_khr_fp64`, wgpu
    /// `SHADER_F64`; every CUDA device).
    pub(crate) fp64: bool,
}

impl Limits {
    /// `Ok` when `config`, with `shared_bytes` of tiles, fits on `device`.
    pub(crate) fn check(&self, device: &str, config: &Config, shared_bytes: u32) -> Result<()> {
        let (bx, by) = (u64::from(config.block.x), u64::from(config.block.y));
        if bx * by > self.max_threads || bx > self.max_block[0] || by > self.max_block[1] {
            return Err(Error::Config(format!(
                "block {bx}x{by} exceeds the limits of {device}: at most {} threads per block, \
                 {}x{} per dimension",
                self.max_threads, self.max_block[0], self.max_block[1]
            )));
        }
        if u64::from(shared_bytes) > self.max_shared {
            return Err(Error::Config(format!(
                "config `{config}` needs {shared_bytes} bytes of shared memory; {device} has {}",
                self.max_shared
            )));
        }
        if !self.images && config.memory.contains(&MemoryKind::Texture) {
            return Err(Error::Config(format!(
                "config `{config}` reads through images, which {device} does not support"
            )));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use hipacc_codegen::BlockShape;

    #[test]
    fn blocks_shared_memory_and_images_are_checked() {
        let l = Limits {
            max_threads: 256,
            max_block: [128, 64],
            max_shared: 1024,
            images: false,
            fp64: true,
        };
        let ok = Config::uniform(1, BlockShape { x: 128, y: 2 });
        assert!(l.check("dev", &ok, 1024).is_ok());
        assert!(l.check("dev", &ok, 1025).is_err());
        let wide = Config::uniform(1, BlockShape { x: 256, y: 1 });
        assert!(l.check("dev", &wide, 0).is_err());
        let many = Config::uniform(1, BlockShape { x: 64, y: 8 });
        assert!(l.check("dev", &many, 0).is_err());
        let texture = Config {
            memory: vec![MemoryKind::Texture],
            ..ok
        };
        assert!(l.check("dev", &texture, 0).is_err());
    }
}
