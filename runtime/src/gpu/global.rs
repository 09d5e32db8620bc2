//! Global operators (reductions, histograms) on the device: the generated
//! kernels of [`hipacc_codegen::emit::global_program`], built once per
//! pixel type and device through the program cache and enqueued through
//! the backend like any launch.
//!
//! Stage one runs on the device (per-block partials in local memory, or
//! histogram counts merged with global atomics); the caller combines the
//! few partials on the host (at most [`MAX_BLOCKS`] per lane).

use super::args::Scalar;
use super::backend::{Arg, Backend, Enqueue};
use super::device::GpuDevice;
use super::dump;
use super::program::{key, Compiled};
use super::residency::current_on;
use crate::{Error, Result};
use hipacc_codegen::emit::{global_entry, global_program, GlobalOp, GLOBAL_BLOCK};
use hipacc_codegen::{Launch, RegionStarts};
use hipacc_core::image::DynImage;
use hipacc_core::ir::Type;
use hipacc_core::Rect;
use std::sync::Arc;

/// The most blocks of one global operator launch (partials per lane).
pub(crate) const MAX_BLOCKS: usize = 1024;

/// What a global operator is asked to compute.
#[derive(Clone, Copy, Debug)]
pub(crate) struct GlobalRequest {
    /// The operator.
    pub(crate) op: GlobalOp,
    /// The image's pixel type.
    pub(crate) pixel: Type,
    /// The region (checked against the image by the caller).
    pub(crate) rect: Rect,
    /// For histograms: which bins.
    pub(crate) bins: Option<Bins>,
}

/// The bins of a histogram launch: `bins` equal bins over `[lo, hi)`
/// (`scale = bins / (hi - lo)`), of which the window `first .. first +
/// count` is counted.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Bins {
    pub(crate) bins: usize,
    pub(crate) lo: f64,
    pub(crate) hi: f64,
    pub(crate) scale: f64,
    pub(crate) first: usize,
    pub(crate) count: usize,
}

/// Runs `req` on `image` when the image's current copy lives on `dev` and
/// the device can run it; returns the output buffer's bytes (per-block
/// partials, or `u32` counts; for argmin and argmax the partial values,
/// then their `i32` indices). `None`: the caller computes on the host.
pub(crate) fn run<B: Backend>(
    dev: &GpuDevice<B>,
    image: &dyn DynImage,
    req: GlobalRequest,
) -> Result<Option<Vec<u8>>> {
    let r = req.rect;
    let elements = image.width() * image.height() * usize::from(req.pixel.lanes);
    let too_big = elements > i32::MAX as usize;
    let bins_fit = !matches!(req.bins, Some(b) if b.bins > i32::MAX as usize);
    // The kernels sum and bin in `double`: a device without `f64`
    // arithmetic leaves every operator to the host.
    let fp64 = dev.backend.facts().limits.fp64;
    if too_big || !bins_fit || !fp64 || !GlobalOp::for_pixel(req.pixel).contains(&req.op) {
        return Ok(None);
    }
    let Some(input) = current_on(&*dev.backend, image)? else {
        return Ok(None);
    };
    let Some(kernel) = kernel(dev, req.op, req.pixel)? else {
        return Ok(None);
    };
    let pixels = r.width * r.height;
    let blocks = pixels.div_ceil(GLOBAL_BLOCK as usize).clamp(1, MAX_BLOCKS);
    let threads = blocks * GLOBAL_BLOCK as usize;
    let lanes = usize::from(req.pixel.lanes);
    let out_bytes = match req.op {
        GlobalOp::Sum => blocks * lanes * 8,
        GlobalOp::Min | GlobalOp::Max | GlobalOp::ArgMin | GlobalOp::ArgMax => {
            blocks * lanes * req.pixel.scalar.size()
        }
        GlobalOp::Histogram => req.bins.map_or(0, |b| b.count) * 4,
    };
    let out = Arc::new(dev.backend.allocate(out_bytes)?);
    let int = |v: usize| Arg::Scalar(Scalar::I32(v as i32));
    let mut args: Vec<Arg<B>> = vec![
        Arg::Buffer(input),
        int(image.width()),
        int(r.x),
        int(r.y),
        int(r.width),
        int(r.height),
        int(threads),
    ];
    if let Some(b) = req.bins {
        dev.backend.upload(&out, &vec![0u8; out_bytes])?;
        args.extend([b.lo, b.hi, b.scale].map(|v| Arg::Scalar(Scalar::F64(v))));
        args.extend([b.bins, b.first, b.count].map(int));
    }
    args.push(Arg::Buffer(Arc::clone(&out)));
    let indices = match req.op {
        GlobalOp::ArgMin | GlobalOp::ArgMax => Some(Arc::new(dev.backend.allocate(blocks * 4)?)),
        _ => None,
    };
    if let Some(indices) = &indices {
        args.push(Arg::Buffer(Arc::clone(indices)));
    }
    let launch = Launch {
        block: [GLOBAL_BLOCK, 1],
        grid: [blocks as u32, 1],
        global: [threads, 1],
        region_starts: RegionStarts::default(),
    };
    dev.backend.enqueue(Enqueue {
        entry: &kernel.entry,
        info: &kernel.info,
        launch: &launch,
        args: &args,
        masks: &[],
        copies: &kernel.masks,
    })?;
    let mut bytes = vec![0u8; out_bytes];
    dev.backend.download(&out, &mut bytes)?;
    if let Some(indices) = &indices {
        let mut index_bytes = vec![0u8; blocks * 4];
        dev.backend.download(indices, &mut index_bytes)?;
        bytes.extend(index_bytes);
    }
    Ok(Some(bytes))
}

/// The kernel of `op` on `pixel`s, from the cache or built with the other
/// operators of that pixel type in one program; `None` when the backend's
/// dialect cannot print it.
fn kernel<B: Backend>(
    dev: &GpuDevice<B>,
    op: GlobalOp,
    pixel: Type,
) -> Result<Option<Arc<Compiled<B>>>> {
    let facts = dev.backend.facts();
    let Ok(program) = global_program(pixel, facts.target, B::LANGUAGE) else {
        return Ok(None);
    };
    let entry = global_entry(op, pixel);
    let Some(info) = program.kernels.iter().find(|k| k.entry == entry) else {
        return Ok(None);
    };
    let wanted = key(dev, info.ir_hash, &info.config);
    if let Some(k) = dev.kernels.get(&wanted) {
        return Ok(Some(k));
    }
    let generated = program;
    dump::dump_if_requested(&generated);
    let fail = |log: String| Error::Compile {
        kernel: dump::kernel_names(&generated),
        device: facts.name.clone(),
        source_path: dump::save_failed(&generated),
        log,
    };
    let built = Arc::new(dev.backend.build(&generated).map_err(fail)?);
    for info in generated.kernels.clone() {
        let entry = dev.backend.entry(&built, &info).map_err(fail)?;
        let k = key(dev, info.ir_hash, &info.config);
        dev.kernels.insert(k, Arc::new(Compiled::new(info, entry)));
    }
    Ok(dev.kernels.get(&wanted))
}
