//! The native CPU backend.

use crate::Result;
use hipacc_core::{IterationSpace, Kernel};

/// Runs `kernel` over `space` on the CPU.
pub(crate) fn execute<K: Kernel>(kernel: &K, space: &IterationSpace<K::Output>) -> Result<()> {
    let _ = (kernel, space);
    Err(crate::Error::Config(
        "the CPU backend is not built yet".into(),
    ))
}
