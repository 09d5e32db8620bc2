//! Device copies of mask coefficients, written only when the values change.
//!
//! A kernel reads each mask from a device copy of its own (a constant
//! symbol in CUDA, a constant buffer in OpenCL). A copy from host memory
//! waits for the queue's earlier work on some drivers (CUDA's pageable
//! copies), and allocating a buffer per launch costs a driver call, so a
//! kernel keeps its copies and refreshes one only when a launch brings other
//! values: the launches of a pipeline with fixed masks then queue without
//! stalling the host.

use crate::Result;
use std::sync::{Mutex, MutexGuard, PoisonError};

/// Per mask slot: the bytes its copy holds and the copy, once made.
type Slots<T> = Vec<Option<(Vec<u8>, T)>>;

/// One device copy per mask slot of a kernel, with the bytes it holds.
pub(crate) struct MaskCopies<T> {
    slots: Mutex<Slots<T>>,
}

impl<T> Default for MaskCopies<T> {
    fn default() -> Self {
        MaskCopies {
            slots: Mutex::new(Vec::new()),
        }
    }
}

impl<T> MaskCopies<T> {
    /// The copies, locked for one launch: the guard is held until the launch
    /// is queued, so no other launch of the kernel rewrites them in between.
    pub(crate) fn lock(&self) -> MaskGuard<'_, T> {
        MaskGuard(self.slots.lock().unwrap_or_else(PoisonError::into_inner))
    }
}

/// The locked copies of one launch.
pub(crate) struct MaskGuard<'a, T>(MutexGuard<'a, Slots<T>>);

impl<T> MaskGuard<'_, T> {
    /// The copy of slot `slot` holding `bytes`: the one it has when it
    /// already holds them, else what `write` makes of the old copy (`None`
    /// for the first launch) after writing `bytes` to it.
    pub(crate) fn refresh(
        &mut self,
        slot: usize,
        bytes: &[u8],
        write: impl FnOnce(Option<T>) -> Result<T>,
    ) -> Result<&T> {
        if self.0.len() <= slot {
            self.0.resize_with(slot + 1, || None);
        }
        let entry = &mut self.0[slot];
        if !matches!(entry, Some((held, _)) if held.as_slice() == bytes) {
            let copy = write(entry.take().map(|(_, c)| c))?;
            *entry = Some((bytes.to_vec(), copy));
        }
        match entry {
            Some((_, copy)) => Ok(copy),
            None => unreachable!("bug: the slot was just filled"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn copies_are_written_only_when_the_values_change() {
        let copies = MaskCopies::<u32>::default();
        let mut writes = 0;
        let mut launch = |slot: usize, bytes: &[u8]| {
            let mut guard = copies.lock();
            *guard
                .refresh(slot, bytes, |old| {
                    writes += 1;
                    Ok(old.map_or(0, |n| n + 1))
                })
                .unwrap()
        };
        assert_eq!(launch(1, &[1, 2]), 0);
        assert_eq!(launch(1, &[1, 2]), 0);
        assert_eq!(launch(1, &[3, 2]), 1);
        assert_eq!(launch(0, &[3, 2]), 0);
        assert_eq!(writes, 3);
    }
}
