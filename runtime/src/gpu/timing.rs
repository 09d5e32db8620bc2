//! The timing events of a device's last launch, kept until its duration is
//! asked for (profiling events in OpenCL, an event pair in CUDA).

use std::sync::{Mutex, PoisonError};
use std::time::Duration;

/// The events of the last launch queued.
pub(crate) struct LastLaunch<T>(Mutex<Option<T>>);

impl<T> Default for LastLaunch<T> {
    fn default() -> Self {
        LastLaunch(Mutex::new(None))
    }
}

impl<T> LastLaunch<T> {
    /// Replaces the events with those of a launch just queued.
    pub(crate) fn set(&self, events: T) {
        *self.0.lock().unwrap_or_else(PoisonError::into_inner) = Some(events);
    }

    /// The last launch's duration as `measure` reads it from its events
    /// (waiting for the launch); `None` before any launch.
    pub(crate) fn duration(
        &self,
        measure: impl FnOnce(&T) -> Option<Duration>,
    ) -> Option<Duration> {
        measure(
            self.0
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .as_ref()?,
        )
    }
}
