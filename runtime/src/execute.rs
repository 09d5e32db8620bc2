//! `execute`: running a kernel on a device.

use crate::gpu::KernelLaunch;
use crate::{Device, Result};
use hipacc_core::{IterationSpace, Kernel};

/// Runs kernels. Implemented for every [`Kernel`]; in the prelude.
pub trait Execute: Kernel {
    /// Computes every pixel of `space` on `device`.
    ///
    /// On GPU devices the launch is queued: the output's host copy becomes
    /// stale and is downloaded when the host reads it.
    fn execute(&self, device: &Device, space: &IterationSpace<Self::Output>) -> Result<()>;
}

impl<K: Kernel> Execute for K {
    fn execute(&self, device: &Device, space: &IterationSpace<K::Output>) -> Result<()> {
        // Recorded in the schedule trace when a traversal runs on this thread.
        crate::trace::launch(K::NAME, device.kind().name(), || match device.gpu() {
            None => crate::cpu::execute(self, space, device.serial_pixels()),
            Some(gpu) => {
                let launch = KernelLaunch {
                    name: K::NAME,
                    ir: self.ir()?,
                    bindings: self.bindings(),
                    output: space.image().to_dyn(),
                    rect: space.rect(),
                };
                gpu.execute(launch, device.overrides())
            }
        })
    }
}
