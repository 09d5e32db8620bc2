//! Recording launches and replaying them as one CUDA graph.
//!
//! A schedule that repeats (the launches of a multigrid cycle) pays, per
//! launch, for the host-side work of [`super::execute`]: the IR, the
//! config choice, the residency of every image, the arguments. On coarse
//! levels a kernel runs for a few microseconds, less than that work, so
//! the GPU waits for the host. A recording takes the launches as they run
//! and keeps each one's exact arguments; [`end`] turns them into a graph
//! of kernel nodes, one after the other (every launch depends on the one
//! before, as on the stream), which [`Segment::replay`] then launches with
//! one driver call.
//!
//! What a replay must also redo is the host-side bookkeeping: before it,
//! each image's first use in the segment is made resident again (an image
//! the host wrote since is uploaded, as its launch would have done), and
//! the device memory found must be the memory recorded, else the graph
//! would read stale buffers and the replay is refused; after it, every
//! image the segment wrote is marked written.
//!
//! A recording belongs to the thread that began it: launches other threads
//! make meanwhile are not part of it, and each thread may record its own. A launch that fills
//! constant memory (a mask) cannot be recorded: the copy would not be in
//! the graph, so such a recording ends refused.

use super::buffer::{CuMem, CuResidency};
use super::device::CudaDevice;
use super::program::CuKernel;
use crate::gpu::residency::{make_resident, mark_written, Use};
use crate::gpu::Scalar;
use crate::{Error, Result};
use cudarc::driver::{result, sys};
use hipacc_core::image::DynImage;
use hipacc_core::ir::Type;
use std::ffi::c_void;
use std::sync::{Arc, PoisonError};
use std::thread::ThreadId;

/// One kernel parameter's value, kept for the graph's kernel node.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Param {
    /// A scalar of its C type.
    Scalar(Scalar),
    /// A device pointer or texture object.
    Handle(u64),
}

impl Param {
    /// A pointer to the value, as `cuLaunchKernel` and kernel nodes take it.
    pub(crate) fn ptr(&mut self) -> *mut c_void {
        match self {
            Param::Scalar(Scalar::U8(v)) => (v as *mut u8).cast(),
            Param::Scalar(Scalar::U16(v)) => (v as *mut u16).cast(),
            Param::Scalar(Scalar::I32(v)) => (v as *mut i32).cast(),
            Param::Scalar(Scalar::U32(v)) => (v as *mut u32).cast(),
            Param::Scalar(Scalar::F32(v)) => (v as *mut f32).cast(),
            Param::Scalar(Scalar::F64(v)) => (v as *mut f64).cast(),
            Param::Handle(v) => (v as *mut u64).cast(),
        }
    }
}

/// One recorded launch.
struct Node {
    kernel: Arc<CuKernel>,
    grid: [u32; 2],
    block: [u32; 2],
    params: Vec<Param>,
}

/// An image as a segment first uses it, and the memory it was bound to.
struct Bound {
    image: Arc<dyn DynImage>,
    usage: Use,
    mem: Arc<CuMem>,
    /// The texture object a launch read it through, if any.
    texture: Option<Texture>,
}

/// The launches one thread recorded so far on one device.
pub(crate) struct Recording {
    thread: ThreadId,
    nodes: Vec<Node>,
    bound: Vec<Bound>,
    written: Vec<Arc<dyn DynImage>>,
    /// A launch could not be recorded.
    refused: bool,
}

/// One launch as [`super::launch::run`] made it, for [`record`].
pub(crate) struct Launched<'a> {
    pub(crate) kernel: &'a Arc<CuKernel>,
    pub(crate) grid: [u32; 2],
    pub(crate) block: [u32; 2],
    pub(crate) params: &'a [Param],
    /// The accessor images read.
    pub(crate) inputs: Vec<Input>,
    /// The output image, its memory and how it was written.
    pub(crate) output: (Arc<dyn DynImage>, Arc<CuMem>, Use),
}

/// A texture object and the pixel type it reads.
pub(crate) type Texture = (Type, sys::CUtexObject);

/// An accessor image a launch read.
pub(crate) struct Input {
    pub(crate) image: Arc<dyn DynImage>,
    pub(crate) mem: Arc<CuMem>,
    /// The texture object it was read through, if any.
    pub(crate) texture: Option<Texture>,
}

fn graph_err(what: &str, e: impl std::fmt::Debug) -> Error {
    Error::Launch {
        backend: "cuda".into(),
        kernel: "graph".into(),
        message: format!("{what}: {e:?}"),
    }
}

/// Starts recording the launches this thread makes on `dev`.
pub(crate) fn begin(dev: &CudaDevice) -> Result<()> {
    let here = std::thread::current().id();
    let mut all = dev.recording.lock().unwrap_or_else(PoisonError::into_inner);
    if all.iter().any(|r| r.thread == here) {
        return Err(graph_err(
            "begin",
            "this thread is already recording on this device",
        ));
    }
    all.push(Recording {
        thread: here,
        nodes: Vec::new(),
        bound: Vec::new(),
        written: Vec::new(),
        refused: false,
    });
    Ok(())
}

/// Takes this thread's recording on `dev`, if any.
fn take(dev: &CudaDevice) -> Option<Recording> {
    let here = std::thread::current().id();
    let mut all = dev.recording.lock().unwrap_or_else(PoisonError::into_inner);
    let i = all.iter().position(|r| r.thread == here)?;
    Some(all.swap_remove(i))
}

/// Drops this thread's recording, if any (after an error).
pub(crate) fn abort(dev: &CudaDevice) {
    take(dev);
}

/// True when this thread is recording launches on `dev`.
pub(crate) fn recording_here(dev: &CudaDevice) -> bool {
    let here = std::thread::current().id();
    dev.recording
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .iter()
        .any(|r| r.thread == here)
}

/// Adds a launch that just ran to this thread's recording on `dev`.
pub(crate) fn record(dev: &CudaDevice, launch: Launched<'_>) {
    let here = std::thread::current().id();
    let mut all = dev.recording.lock().unwrap_or_else(PoisonError::into_inner);
    let Some(rec) = all.iter_mut().find(|r| r.thread == here) else {
        return;
    };
    if rec.refused {
        return;
    }
    if !launch.kernel.info.constant_symbols.is_empty() {
        // The copy into constant memory would not be part of the graph.
        rec.refused = true;
        return;
    }
    let uses = launch
        .inputs
        .into_iter()
        .map(|i| (i.image, i.mem, Use::Read, i.texture))
        .chain(std::iter::once({
            let (image, mem, usage) = launch.output;
            (image, mem, usage, None)
        }));
    for (image, mem, usage, texture) in uses {
        match rec.bound.iter_mut().find(|b| b.image.id() == image.id()) {
            Some(b) => match (b.texture, texture) {
                (_, None) => {}
                (None, t) => b.texture = t,
                (Some(old), Some(new)) if old == new => {}
                (Some(_), Some(_)) => {
                    // The first texture object was destroyed for the second.
                    rec.refused = true;
                    return;
                }
            },
            None => rec.bound.push(Bound {
                image: image.clone(),
                usage,
                mem,
                texture,
            }),
        }
        if matches!(usage, Use::Write { .. }) && !rec.written.iter().any(|w| w.id() == image.id()) {
            rec.written.push(image);
        }
    }
    rec.nodes.push(Node {
        kernel: launch.kernel.clone(),
        grid: launch.grid,
        block: launch.block,
        params: launch.params.to_vec(),
    });
}

/// How a recording ended.
pub(crate) enum Ended {
    /// Nothing was launched.
    Empty,
    /// A launch could not be recorded: it filled constant memory, or read
    /// an image through a second texture type.
    Refused,
    /// The launches as one graph.
    Graph(Segment),
}

/// Ends this thread's recording on `dev` and builds its graph.
pub(crate) fn end(dev: &Arc<CudaDevice>) -> Result<Ended> {
    let Some(mut rec) = take(dev) else {
        return Err(graph_err(
            "end",
            "this thread is not recording on this device",
        ));
    };
    if rec.refused {
        return Ok(Ended::Refused);
    }
    if rec.nodes.is_empty() {
        return Ok(Ended::Empty);
    }
    dev.ctx
        .bind_to_thread()
        .map_err(|e| graph_err("binding the context", e))?;
    let mut graph: sys::CUgraph = std::ptr::null_mut();
    // SAFETY: `graph` receives a new, empty graph.
    unsafe { sys::cuGraphCreate(&mut graph, 0) }
        .result()
        .map_err(|e| graph_err("cuGraphCreate", e))?;
    // From here on `segment` owns the graph and destroys it on every exit.
    let mut segment = Segment {
        dev: dev.clone(),
        graph,
        exec: std::ptr::null_mut(),
        _kernels: rec.nodes.iter().map(|n| n.kernel.clone()).collect(),
        bound: std::mem::take(&mut rec.bound),
        written: std::mem::take(&mut rec.written),
    };
    let mut prev: Option<sys::CUgraphNode> = None;
    for n in &mut rec.nodes {
        let mut pointers: Vec<*mut c_void> = n.params.iter_mut().map(Param::ptr).collect();
        let params = sys::CUDA_KERNEL_NODE_PARAMS {
            func: n.kernel.function.cu_function(),
            gridDimX: n.grid[0],
            gridDimY: n.grid[1],
            gridDimZ: 1,
            blockDimX: n.block[0],
            blockDimY: n.block[1],
            blockDimZ: 1,
            sharedMemBytes: 0,
            kernelParams: pointers.as_mut_ptr(),
            extra: std::ptr::null_mut(),
            kern: std::ptr::null_mut(),
            ctx: std::ptr::null_mut(),
        };
        let deps: &[sys::CUgraphNode] = prev.as_slice();
        let mut node: sys::CUgraphNode = std::ptr::null_mut();
        // SAFETY: the graph is valid; `params` names a loaded function (its
        // module is held by `segment`) and points to one value per kernel
        // parameter, in order, which the driver copies before returning;
        // `deps` holds the previous node of this graph.
        unsafe {
            sys::cuGraphAddKernelNode_v2(
                &mut node,
                segment.graph,
                deps.as_ptr(),
                deps.len(),
                &params,
            )
        }
        .result()
        .map_err(|e| graph_err("cuGraphAddKernelNode", e))?;
        prev = Some(node);
    }
    // SAFETY: the graph is valid and complete.
    segment.exec =
        unsafe { result::graph::instantiate(segment.graph, sys::CUgraphInstantiate_flags(0)) }
            .map_err(|e| graph_err("cuGraphInstantiate", e))?;
    Ok(Ended::Graph(segment))
}

/// Recorded launches as an instantiated graph, with the images and memory
/// they were bound to.
pub(crate) struct Segment {
    dev: Arc<CudaDevice>,
    graph: sys::CUgraph,
    exec: sys::CUgraphExec,
    /// The kernels' modules must outlive the graph.
    _kernels: Vec<Arc<CuKernel>>,
    /// Holds the memory the graph's arguments point to.
    bound: Vec<Bound>,
    written: Vec<Arc<dyn DynImage>>,
}

// SAFETY: the graph handles are used only through `&mut self` or behind the
// caller's lock, with the device's context bound; the driver allows graph
// objects on any thread when calls on one graph are serialised.
unsafe impl Send for Segment {}

impl Segment {
    /// Makes the segment's images resident as its launches would and
    /// launches the graph. `Ok(false)`, launching nothing, when an image is
    /// no longer in the memory recorded (it moved to another device, or was
    /// reallocated).
    pub(crate) fn replay(&mut self) -> Result<bool> {
        let res = CuResidency(&self.dev);
        for b in &self.bound {
            let mem = make_resident(&res, &*b.image, b.usage)?;
            if mem.ptr != b.mem.ptr {
                return Ok(false);
            }
            if let Some((pixel, tex)) = b.texture {
                if mem.texture(pixel)? != tex {
                    return Ok(false);
                }
            }
        }
        self.dev
            .ctx
            .bind_to_thread()
            .map_err(|e| graph_err("binding the context", e))?;
        // SAFETY: the instantiated graph is valid, and every pointer its
        // nodes hold is memory `self.bound` keeps alive and was just found to
        // be where each image lives.
        unsafe { result::graph::launch(self.exec, self.dev.stream.cu_stream()) }
            .map_err(|e| graph_err("cuGraphLaunch", e))?;
        for image in &self.written {
            mark_written(&**image)?;
        }
        Ok(true)
    }
}

impl Drop for Segment {
    fn drop(&mut self) {
        // Errors here cannot be reported; the handles are gone either way.
        let _ = self.dev.ctx.bind_to_thread();
        // SAFETY: the handles were made by this segment and are destroyed
        // once; a launched graph may be destroyed while it runs (the driver
        // defers the release).
        unsafe {
            if !self.exec.is_null() {
                let _ = result::graph::exec_destroy(self.exec);
            }
            if !self.graph.is_null() {
                let _ = result::graph::destroy(self.graph);
            }
        }
    }
}
