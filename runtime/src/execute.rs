//! `execute`: running a kernel on a device.

use crate::device::DeviceInner;
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
        crate::trace::launch(K::NAME, device.kind().name(), || match device.inner() {
            DeviceInner::Cpu { serial_pixels } => crate::cpu::execute(self, space, *serial_pixels),
            DeviceInner::OpenCl(d) => crate::opencl::execute(d, device.overrides(), self, space),
            DeviceInner::Cuda(d) => crate::cuda::execute(d, device.overrides(), self, space),
        })
    }
}
