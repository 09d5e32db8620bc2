//! The interface a GPU driver implements: memory, building programs, binding
//! arguments and enqueueing, synchronising, and the facts of the device.
//!
//! Everything above it is written once: the program cache
//! ([`super::program`]), the launch path ([`super::launch`]), residency
//! ([`super::residency`]) and record/replay ([`super::replay`]). A backend
//! folder holds only the calls into its driver, so the copy of that logic
//! that runs on PoCL in the tests is the copy a CUDA device runs too.

use super::args::{Packed, Scalar};
use super::errors::launch;
use super::limits::Limits;
use super::masks::{MaskCopies, MaskGuard};
use crate::{BackendKind, Error, Result};
use hipacc_codegen::config::occupancy::ResourceUsage;
use hipacc_codegen::{
    uses_f64, Config, DeviceDescription, KernelInfo, Language, Launch, Program, Target,
};
use hipacc_core::image::ByteRect;
use hipacc_core::ir::{self, Type};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// What a device is, as the rest of the runtime sees it.
#[derive(Clone, Debug)]
pub(crate) struct Facts {
    /// Distinct per opened device; the images' buffers report it.
    pub(crate) key: u64,
    /// The device's name.
    pub(crate) name: String,
    /// Driver and compiler versions, for cache keys and messages.
    pub(crate) driver: String,
    /// A GPU (not a CPU driver such as PoCL).
    pub(crate) is_gpu: bool,
    /// The architecture model's target for the device.
    pub(crate) target: &'static Target,
    /// What one launch may use.
    pub(crate) limits: Limits,
}

impl Facts {
    /// The facts of a device just opened: a key no other device has (and
    /// not 0, the host's), and the target the architecture model finds
    /// nearest to `description`.
    pub(crate) fn new(description: &DeviceDescription, driver: String, limits: Limits) -> Facts {
        static NEXT_KEY: AtomicU64 = AtomicU64::new(0x6770_0000_0000_0001);
        Facts {
            key: NEXT_KEY.fetch_add(1, Ordering::Relaxed),
            name: description.name.clone(),
            driver,
            is_gpu: !description.is_cpu,
            target: Target::nearest(description),
            limits,
        }
    }

    /// `Ok` unless `kernel` computes in `f64` and the device cannot: then
    /// [`Error::UnsupportedType`] naming the device and the type.
    pub(crate) fn check_types(&self, backend: BackendKind, kernel: &ir::Kernel) -> Result<()> {
        if self.limits.fp64 || !uses_f64(kernel) {
            return Ok(());
        }
        Err(Error::UnsupportedType {
            backend,
            device: self.name.clone(),
            kernel: kernel.name.clone(),
            ty: ir::Type::scalar(ir::ScalarType::F64),
        })
    }

    /// `Ok` when `config` with `shared_bytes` of tiles fits the device's
    /// own limits.
    pub(crate) fn check_limits(&self, config: &Config, shared_bytes: u32) -> Result<()> {
        self.limits.check(&self.name, config, shared_bytes)
    }
}

/// One kernel argument bound for a launch, in codegen's parameter order.
pub(crate) enum Arg<B: Backend> {
    /// A value passed by value.
    Scalar(Scalar),
    /// An image's buffer.
    Buffer(Arc<B::Mem>),
    /// An image's buffer read as an image / texture object of `pixel`s.
    Image {
        /// The buffer.
        mem: Arc<B::Mem>,
        /// The image's width in pixels.
        width: usize,
        /// The image's height in pixels.
        height: usize,
        /// The pixel type the kernel reads.
        pixel: Type,
    },
    /// Mask slot `i`'s coefficients as a constant buffer.
    Mask(usize),
}

impl<B: Backend> Clone for Arg<B> {
    fn clone(&self) -> Self {
        match self {
            Arg::Scalar(s) => Arg::Scalar(*s),
            Arg::Buffer(m) => Arg::Buffer(Arc::clone(m)),
            Arg::Image {
                mem,
                width,
                height,
                pixel,
            } => Arg::Image {
                mem: Arc::clone(mem),
                width: *width,
                height: *height,
                pixel: *pixel,
            },
            Arg::Mask(i) => Arg::Mask(*i),
        }
    }
}

/// A launch ready for the driver: everything the host worked out.
pub(crate) struct Enqueue<'a, B: Backend> {
    /// The kernel.
    pub(crate) entry: &'a B::Entry,
    /// What codegen said about it (arguments, constant symbols).
    pub(crate) info: &'a KernelInfo,
    /// Grid and block.
    pub(crate) launch: &'a Launch,
    /// The arguments in order.
    pub(crate) args: &'a [Arg<B>],
    /// Every mask slot's coefficients as bytes of its C type.
    pub(crate) masks: &'a [Vec<u8>],
    /// The kernel's device copies of its masks.
    pub(crate) copies: &'a MaskCopies<B::MaskCopy>,
}

impl<'a, B: Backend> Enqueue<'a, B> {
    /// The arguments as a driver taking each by pointer wants them: scalars
    /// by value, memory by the 64-bit handle `handle` gives (an image's
    /// buffer or view, or a mask's copy in the kernel's copies), with the
    /// copies locked until the launch is queued.
    pub(crate) fn pack(
        &self,
        mut handle: impl FnMut(&Arg<B>, &mut MaskGuard<'a, B::MaskCopy>) -> Result<u64>,
    ) -> Result<(Vec<Packed>, MaskGuard<'a, B::MaskCopy>)> {
        let mut copies = self.copies.lock();
        let mut params = Vec::with_capacity(self.args.len());
        for arg in self.args {
            params.push(match arg {
                Arg::Scalar(s) => s.packed(),
                memory => Packed::handle(handle(memory, &mut copies)?),
            });
        }
        Ok((params, copies))
    }

    /// The coefficients of mask slot `i`.
    pub(crate) fn mask(&self, i: usize) -> Result<&[u8]> {
        match self.masks.get(i) {
            Some(bytes) => Ok(bytes),
            None => Err(launch::<B>(&self.info.entry, "no coefficients for mask", i)),
        }
    }
}

/// One GPU driver.
pub(crate) trait Backend: Send + Sync + Sized + 'static {
    /// Device memory holding one image.
    type Mem: Send + Sync + 'static;
    /// A built program (module).
    type Program: Send + Sync + 'static;
    /// One kernel of a built program, ready to launch.
    type Entry: Send + Sync + 'static;
    /// A kernel's device copy of one mask's coefficients.
    type MaskCopy: Send + 'static;

    /// Which backend this is.
    const KIND: BackendKind;
    /// The dialect codegen prints for it.
    const LANGUAGE: Language;
    #[cfg(feature = "conformance")]
    /// Whether building kernels many to a program costs less than one
    /// program each: so where a program is one compiler run (OpenCL,
    /// CUDA). Where each kernel's pipeline is compiled on its own from the
    /// whole module (wgpu), a larger module only adds work.
    const BATCHED_BUILDS_PAY: bool = true;

    /// The device's facts.
    fn facts(&self) -> &Facts;

    /// New, uninitialised memory of `bytes` (> 0) bytes.
    fn allocate(&self, bytes: usize) -> Result<Self::Mem>;
    /// Copies `data`, exactly the memory's size, to the device.
    fn upload(&self, mem: &Self::Mem, data: &[u8]) -> Result<()>;
    /// Copies the memory to `dst`, exactly its size, after every queued
    /// launch that writes it.
    fn download(&self, mem: &Self::Mem, dst: &mut [u8]) -> Result<()>;
    /// Copies the bytes `rect` of the memory into the same bytes of `dst`
    /// (the memory's size), after every queued launch that writes it. The
    /// default downloads the whole memory; drivers with strided copies
    /// move the rectangle alone.
    fn download_rect(&self, mem: &Self::Mem, rect: ByteRect, dst: &mut [u8]) -> Result<()> {
        let mut whole = vec![0u8; dst.len()];
        self.download(mem, &mut whole)?;
        rect.copy(&whole, dst);
        Ok(())
    }
    /// Copies the bytes `rect` of `src` (the memory's size) into the same
    /// bytes of the memory, leaving the rest alone. The default downloads
    /// the whole memory, patches it and uploads it again.
    fn upload_rect(&self, mem: &Self::Mem, rect: ByteRect, src: &[u8]) -> Result<()> {
        let mut whole = vec![0u8; src.len()];
        self.download(mem, &mut whole)?;
        rect.copy(src, &mut whole);
        self.upload(mem, &whole)
    }
    /// Called after a launch wrote `mem` (a backend keeping derived copies,
    /// such as OpenCL images, marks them stale).
    fn written(&self, _mem: &Self::Mem) {}

    /// Builds a generated program; `Err` holds the driver's log.
    fn build(&self, program: &Program) -> std::result::Result<Self::Program, String>;
    /// The kernel `info.entry` of a built program; `Err` holds the reason.
    fn entry(
        &self,
        program: &Arc<Self::Program>,
        info: &KernelInfo,
    ) -> std::result::Result<Self::Entry, String>;
    /// The registers and shared memory the driver's compiler gave `entry`,
    /// when the backend refines the block size by occupancy.
    fn resources(&self, _entry: &Self::Entry) -> Option<ResourceUsage> {
        None
    }

    /// Binds the arguments and queues the launch.
    fn enqueue(&self, launch: Enqueue<'_, Self>) -> Result<()>;
    /// Waits for every queued launch and transfer.
    fn synchronize(&self) -> Result<()>;
    /// The device time of the last launch (waits for it).
    fn last_launch_time(&self) -> Option<Duration>;

    /// Captures the launches `enqueue_all` queues into one graph the
    /// driver launches again as a unit (CUDA graphs), without running them.
    /// `None`, the default, where the driver has no graphs or the capture
    /// failed: nothing ran, and the caller enqueues the launches itself.
    fn capture(&self, _enqueue_all: &mut dyn FnMut() -> Result<()>) -> Option<Box<dyn Graph>> {
        None
    }
}

/// A captured launch sequence ([`Backend::capture`]).
pub(crate) trait Graph: Send {
    /// Queues the whole sequence, ordered after earlier work and before
    /// later work like the launches it holds.
    fn launch(&self) -> Result<()>;
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::multigrid::kernels::{k32, k64};
    use hipacc_core::Kernel;

    /// The facts of a device without `f64` arithmetic.
    fn no_fp64() -> Facts {
        let description = DeviceDescription {
            vendor: "Example".into(),
            name: "Example GPU without fp64".into(),
            compute_capability: None,
            is_cpu: false,
        };
        let limits = Limits {
            max_threads: 256,
            max_block: [256, 256],
            max_shared: 32 << 10,
            images: false,
            fp64: false,
        };
        Facts::new(&description, "test driver".into(), limits)
    }

    #[test]
    fn a_device_without_fp64_refuses_f64_kernels_naming_itself_and_the_type() {
        let facts = no_fp64();
        let f64_kernel = k64::Fill { value: 0.5 }.ir().unwrap();
        let err = facts
            .check_types(BackendKind::OpenCl, &f64_kernel)
            .unwrap_err();
        match &err {
            Error::UnsupportedType { device, ty, .. } => {
                assert_eq!(device, "Example GPU without fp64");
                assert_eq!(*ty, ir::Type::scalar(ir::ScalarType::F64));
            }
            other => panic!("not a typed refusal: {other}"),
        }
        let message = err.to_string();
        assert!(message.contains("Example GPU without fp64") && message.contains("f64"));
        let f32_kernel = k32::Fill { value: 0.5 }.ir().unwrap();
        assert!(facts.check_types(BackendKind::Wgpu, &f32_kernel).is_ok());
        let with_fp64 = Facts {
            limits: Limits {
                fp64: true,
                ..facts.limits.clone()
            },
            ..facts
        };
        assert!(with_fp64
            .check_types(BackendKind::OpenCl, &f64_kernel)
            .is_ok());
    }
}
