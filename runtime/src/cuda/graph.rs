//! CUDA graphs for replayed launch sequences ([`crate::gpu::replay`]).
//! The legacy default stream cannot be captured, so a capture forks a
//! stream and points the capturing thread's launches at it; the graph is
//! launched there, fenced by events against the legacy stream on both
//! sides.

use super::device::CudaDevice;
use crate::gpu::backend::Graph;
use crate::gpu::errors::launch;
use crate::Result;
use cudarc::driver::sys::{CUgraphInstantiate_flags as Flags, CUstreamCaptureMode as Mode};
use cudarc::driver::{CudaGraph, CudaStream};
use std::sync::{Arc, PoisonError};

/// A captured sequence and the streams it is ordered between.
struct Captured(CudaGraph, Arc<CudaStream>, Arc<CudaStream>);

// SAFETY: a graph may be used from any thread, one at a time; its one
// owner, a recorded sequence, is only replayed through `&mut`.
unsafe impl Send for Captured {}

impl Graph for Captured {
    fn launch(&self) -> Result<()> {
        let Captured(graph, stream, legacy) = self;
        let err = |e| launch::<CudaDevice>("graph", "cuGraphLaunch", e);
        stream.join(legacy).map_err(err)?;
        graph.launch().map_err(err)?;
        legacy.join(stream).map_err(err)
    }
}

/// Captures the launches `enqueue_all` queues; `None` (nothing ran) when
/// the driver refuses or a launch cannot be captured.
pub(crate) fn capture(
    dev: &CudaDevice,
    enqueue_all: &mut dyn FnMut() -> Result<()>,
) -> Option<Box<dyn Graph>> {
    let stream = dev.stream.fork().ok()?;
    stream
        .begin_capture(Mode::CU_STREAM_CAPTURE_MODE_THREAD_LOCAL)
        .ok()?;
    let slots = || dev.capturing.lock().unwrap_or_else(PoisonError::into_inner);
    let me = std::thread::current().id();
    slots().push((me, Arc::clone(&stream)));
    let queued = enqueue_all();
    slots().retain(|(thread, _)| *thread != me);
    let graph = stream.end_capture(Flags(0));
    let legacy = Arc::clone(&dev.stream);
    match (queued, graph) {
        (Ok(()), Ok(Some(graph))) => Some(Box::new(Captured(graph, stream, legacy))),
        _ => None,
    }
}

impl CudaDevice {
    /// The stream a launch goes to: the capture's while this thread has one
    /// open, else the legacy stream. (The capture's stream does not block,
    /// so another thread's launches meanwhile neither join the graph nor
    /// wait for it.)
    pub(crate) fn launch_stream(&self) -> Arc<CudaStream> {
        let capturing = self
            .capturing
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        let me = std::thread::current().id();
        capturing
            .iter()
            .find(|(thread, _)| *thread == me)
            .map_or_else(
                || Arc::clone(&self.stream),
                |(_, stream)| Arc::clone(stream),
            )
    }
}
