//! Recording a sequence of launches and replaying it.
//!
//! A schedule that repeats (the launches of a multigrid cycle) pays, per
//! launch, for host work: the IR, the config choice, the program cache,
//! the residency of every image, the arguments. On coarse levels a kernel
//! runs for microseconds, less than that work. A recording keeps each
//! launch as [`super::launch`] prepared it; a replay enqueues the prepared
//! launches again.
//!
//! What a replay must redo is the bookkeeping: before it, each image's
//! first use in the sequence is made resident again (an image the host
//! wrote since is uploaded, as its launch would have done), and the device
//! memory found must be the memory recorded, else the prepared arguments
//! would name stale buffers and the replay is refused (`Ok(false)`,
//! nothing launched); after each launch, what it wrote is marked written.
//!
//! A backend with launch graphs (CUDA) captures the prepared launches into
//! one at the first replay and launches the graph from then on, a single
//! driver call per sequence; where the capture fails the launches are
//! enqueued one by one as on every other backend.
//!
//! A recording belongs to the thread that began it: launches other threads
//! make meanwhile are not part of it, and each thread may record its own.

use super::backend::{Backend, Graph};
use super::launch::{written, Bound, Prepared};
use super::residency::make_resident;
use crate::{Error, Result};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::thread::ThreadId;

/// A recorded launch sequence, ready to run again.
pub(crate) trait Replay: Send {
    /// Runs the sequence again; `Ok(false)`, launching nothing, when an
    /// image is no longer in the memory recorded (it moved to another
    /// device, or was reallocated).
    fn replay(&mut self) -> Result<bool>;
}

/// The recordings in progress on one device, one per thread.
pub(crate) struct Recordings<B: Backend> {
    active: AtomicUsize,
    open: Mutex<Vec<(ThreadId, Vec<Prepared<B>>)>>,
}

impl<B: Backend> Default for Recordings<B> {
    fn default() -> Self {
        Recordings {
            active: AtomicUsize::new(0),
            open: Mutex::new(Vec::new()),
        }
    }
}

/// Recordings are begun and ended by the runtime itself: a mismatch is a
/// bug.
fn recording_err(message: &str) -> Error {
    Error::Internal(format!("launch recording: {message}"))
}

impl<B: Backend> Recordings<B> {
    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<(ThreadId, Vec<Prepared<B>>)>> {
        self.open.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Starts recording the launches of this thread.
    pub(crate) fn begin(&self) -> Result<()> {
        let here = std::thread::current().id();
        let mut open = self.lock();
        if open.iter().any(|(t, _)| *t == here) {
            return Err(recording_err(
                "this thread is already recording on this device",
            ));
        }
        open.push((here, Vec::new()));
        self.active.fetch_add(1, Ordering::Relaxed);
        Ok(())
    }

    /// Keeps `launch` when this thread is recording.
    pub(crate) fn keep(&self, launch: Prepared<B>) {
        if self.active.load(Ordering::Relaxed) == 0 {
            return;
        }
        let here = std::thread::current().id();
        if let Some((_, launches)) = self.lock().iter_mut().find(|(t, _)| *t == here) {
            launches.push(launch);
        }
    }

    fn take(&self) -> Option<Vec<Prepared<B>>> {
        let here = std::thread::current().id();
        let mut open = self.lock();
        let i = open.iter().position(|(t, _)| *t == here)?;
        self.active.fetch_sub(1, Ordering::Relaxed);
        Some(open.swap_remove(i).1)
    }

    /// Drops this thread's recording, if any (after an error).
    pub(crate) fn abort(&self) {
        self.take();
    }

    /// Ends this thread's recording: `None` when nothing was launched.
    pub(crate) fn end(&self, backend: &Arc<B>) -> Result<Option<Box<dyn Replay>>> {
        let Some(launches) = self.take() else {
            return Err(recording_err("this thread is not recording on this device"));
        };
        if launches.is_empty() {
            return Ok(None);
        }
        let mut first: Vec<Bound<B>> = Vec::new();
        for p in &launches {
            for (image, usage, mem) in &p.images {
                if !first.iter().any(|(i, _, _)| i.id() == image.id()) {
                    first.push((Arc::clone(image), *usage, Arc::clone(mem)));
                }
            }
        }
        Ok(Some(Box::new(Sequence {
            backend: Arc::clone(backend),
            launches,
            first,
            graph: None,
            captured: false,
        })))
    }
}

/// Recorded launches with the images and memory they were bound to.
struct Sequence<B: Backend> {
    backend: Arc<B>,
    launches: Vec<Prepared<B>>,
    /// Each image at its first use in the sequence.
    first: Vec<Bound<B>>,
    /// The launches captured by the backend, if it can.
    graph: Option<Box<dyn Graph>>,
    /// Whether a capture was tried (once).
    captured: bool,
}

impl<B: Backend> Replay for Sequence<B> {
    fn replay(&mut self) -> Result<bool> {
        for (image, usage, mem) in &self.first {
            let found = make_resident(&self.backend, &**image, *usage)?;
            if !Arc::ptr_eq(&found, mem) {
                return Ok(false);
            }
        }
        let (backend, launches) = (&self.backend, &self.launches);
        if !self.captured {
            self.captured = true;
            self.graph =
                backend.capture(&mut || launches.iter().try_for_each(|p| p.enqueue(backend)));
        }
        match &self.graph {
            Some(graph) => graph.launch()?,
            None => launches.iter().try_for_each(|p| p.enqueue(backend))?,
        }
        for p in launches {
            written(&**backend, p)?;
        }
        Ok(true)
    }
}
