//! Pipelines: kernels that read each other's outputs, run as one.
//!
//! A program of image kernels is a graph: a blur writes an image that a
//! sharpen reads, a gradient feeds a structure tensor. Run kernel by
//! kernel, every intermediate image makes a round trip through memory.
//! A [`Pipeline`] knows the graph, and on the CPU runs it per row strip of
//! its last stage (and of its further outputs, [`Pipeline::output`]): each
//! earlier stage computes only the rows the strip needs into a cache-sized
//! scratch buffer (recomputing the few halo rows
//! that neighbouring strips share), and its consumers read them there
//! (Halide's `compute_at`). The result is the same, bit for bit, as running
//! the stages one after another with [`crate::Execute::execute`], including reads
//! of an intermediate outside its extent, which follow the reading
//! accessor's boundary condition at any distance.
//!
//! A CPU-type OpenCL device (PoCL) runs pipelines as the native CPU does,
//! unless [`PIPELINE_ENV`] asks for device launches.
//!
//! On GPU devices a stage that only one later stage reads, over the same
//! space, is folded into that stage: one launch, and the intermediate never
//! goes through memory. Read at the reader's own pixel it always folds;
//! read through a window, it is recomputed at each position read where the
//! architecture model says that costs less than the intermediate's round
//! trip. Other stages run one by one.
//!
//! The intermediates are the pipeline's business: their images may or may
//! not be written (on the CPU only the outputs are; on a GPU a
//! folded stage's is not), so give each its own image and read only the
//! outputs afterwards.

use crate::cpu::fused::{self, KernelStage, Stage};
use crate::{Device, Result};
use hipacc_core::{IterationSpace, Kernel};

/// The environment variable that makes pipelines on OpenCL CPU devices
/// (PoCL) run as device launches, folded where they can be, instead of the
/// native CPU's strips: `HIPACC_PIPELINE=launches`.
pub const PIPELINE_ENV: &str = "HIPACC_PIPELINE";

fn launches_requested() -> bool {
    std::env::var(PIPELINE_ENV).is_ok_and(|v| v == "launches")
}

/// Kernels run as one program, each stage reading images that earlier
/// stages write. Stages are listed producers first; the last one writes
/// the pipeline's result.
///
/// ```
/// use hipacc::pipeline::Pipeline;
/// use hipacc::prelude::*;
///
/// /// A 3x3 box blur.
/// #[derive(Kernel)]
/// #[kernel(output = f32)]
/// struct Blur {
///     input: Accessor<f32>,
///     window: Domain,
/// }
///
/// #[kernel_body]
/// impl Blur {
///     fn kernel(&self) -> f32 {
///         reduce(&self.window, Sum, |dx, dy| self.input.at(dx, dy)) / 9.0
///     }
/// }
///
/// /// The input plus `amount` times its difference from the blur.
/// #[derive(Kernel)]
/// #[kernel(output = f32)]
/// struct Sharpen {
///     input: Accessor<f32>,
///     blurred: Accessor<f32>,
///     amount: f32,
/// }
///
/// #[kernel_body]
/// impl Sharpen {
///     fn kernel(&self) -> f32 {
///         self.input() + self.amount * (self.input() - self.blurred())
///     }
/// }
///
/// fn main() -> Result<(), hipacc::Error> {
///     let (w, h) = (67, 45);
///     let input = Image::from_fn(w, h, |x, y| ((x * 7 + y * 3) % 11) as f32)?;
///     let (blurred, out) = (Image::<f32>::new(w, h)?, Image::<f32>::new(w, h)?);
///     let blur = Blur {
///         input: Accessor::new(&input).with_boundary(Boundary::Mirror),
///         window: Domain::new(3, 3)?,
///     };
///     let sharpen = Sharpen {
///         input: Accessor::new(&input),
///         blurred: Accessor::new(&blurred),
///         amount: 0.5,
///     };
///     let (blur_space, out_space) = (IterationSpace::full(&blurred), IterationSpace::full(&out));
///     Pipeline::new()
///         .stage(&blur, &blur_space)
///         .stage(&sharpen, &out_space)
///         .execute(&Device::cpu())?;
///
///     // The same as running the kernels one after the other.
///     let fused = out.to_vec()?;
///     blur.execute(&Device::cpu(), &blur_space)?;
///     sharpen.execute(&Device::cpu(), &out_space)?;
///     assert_eq!(fused, out.to_vec()?);
///     Ok(())
/// }
/// ```
#[derive(Default)]
pub struct Pipeline<'a> {
    stages: Vec<Box<dyn Stage + 'a>>,
    /// Per stage: added with [`Pipeline::output`].
    outputs: Vec<bool>,
}

impl<'a> Pipeline<'a> {
    /// A pipeline without stages.
    pub fn new() -> Pipeline<'a> {
        Pipeline::default()
    }

    /// Adds `kernel` over `space` as the next stage: it may read the
    /// outputs of the stages before it.
    pub fn stage<K: Kernel>(
        mut self,
        kernel: &'a K,
        space: &'a IterationSpace<K::Output>,
    ) -> Pipeline<'a> {
        self.stages.push(Box::new(KernelStage { kernel, space }));
        self.outputs.push(false);
        self
    }

    /// Adds `kernel` over `space` as a further output of the pipeline,
    /// beside its last stage: its image is written as running the kernel
    /// alone would write it. It may read the outputs of the stages before
    /// it, and later stages may read its own.
    ///
    /// On the CPU every output is computed in the same row strips, one
    /// after the other, after the earlier stages have computed the rows the
    /// strip needs (once for all outputs). Sibling kernels that read the
    /// same images, such as the two components of an optical-flow update,
    /// so read each strip of those images once, while it is in cache,
    /// where running them one by one makes a pass over memory each. An
    /// output over a space of another height takes its rows of each strip
    /// in proportion: a restriction to a grid of half the height computes
    /// its rows from the strip's rows of the fine grid while they are in
    /// cache. An output that later stages read is computed into scratch
    /// with the rows its readers need beyond the strip, and its strip's
    /// rows copied into its image. Each output equals running its kernel
    /// alone, bit for bit. Other devices run the outputs as their own
    /// launches, in the pipeline's order.
    ///
    /// ```
    /// use hipacc::pipeline::Pipeline;
    /// use hipacc::prelude::*;
    ///
    /// /// `a`'s 4-neighbour mean pulled towards `b`.
    /// #[derive(Kernel)]
    /// #[kernel(output = f32)]
    /// struct Update {
    ///     a: Accessor<f32>,
    ///     b: Accessor<f32>,
    ///     weight: f32,
    /// }
    ///
    /// #[kernel_body]
    /// impl Update {
    ///     fn kernel(&self) -> f32 {
    ///         let mean = (self.a.at(-1, 0) + self.a.at(1, 0) + self.a.at(0, -1) + self.a.at(0, 1)) * 0.25;
    ///         mean + self.weight * (self.b() - mean)
    ///     }
    /// }
    ///
    /// fn main() -> Result<(), hipacc::Error> {
    ///     let (w, h) = (61, 37);
    ///     let u = Image::from_fn(w, h, |x, y| ((x * 5 + y) % 9) as f32)?;
    ///     let v = Image::from_fn(w, h, |x, y| ((x + y * 3) % 7) as f32)?;
    ///     let (u2, v2) = (Image::<f32>::new(w, h)?, Image::<f32>::new(w, h)?);
    ///     let clamp = |img| Accessor::new(img).with_boundary(Boundary::Clamp);
    ///     let update_u = Update { a: clamp(&u), b: clamp(&v), weight: 0.25 };
    ///     let update_v = Update { a: clamp(&v), b: clamp(&u), weight: 0.5 };
    ///     let (su, sv) = (IterationSpace::full(&u2), IterationSpace::full(&v2));
    ///     // One pass over `u` and `v` writes both updates.
    ///     Pipeline::new()
    ///         .output(&update_u, &su)
    ///         .output(&update_v, &sv)
    ///         .execute(&Device::cpu())?;
    ///
    ///     // The same as running the kernels one after the other.
    ///     let (fused_u, fused_v) = (u2.to_vec()?, v2.to_vec()?);
    ///     update_u.execute(&Device::cpu(), &su)?;
    ///     update_v.execute(&Device::cpu(), &sv)?;
    ///     assert_eq!((fused_u, fused_v), (u2.to_vec()?, v2.to_vec()?));
    ///     Ok(())
    /// }
    /// ```
    pub fn output<K: Kernel>(
        mut self,
        kernel: &'a K,
        space: &'a IterationSpace<K::Output>,
    ) -> Pipeline<'a> {
        self.stages.push(Box::new(KernelStage { kernel, space }));
        self.outputs.push(true);
        self
    }

    /// Runs the stages on `device`. An error when two stages write one
    /// image or a stage reads the output of itself or of a later stage.
    pub fn execute(&self, device: &Device) -> Result<()> {
        if self.stages.is_empty() {
            return Ok(());
        }
        let stages: Vec<&dyn Stage> = self.stages.iter().map(|s| s.as_ref()).collect();
        if device.is_gpu() || (device.gpu().is_some() && launches_requested()) {
            let names: Vec<&str> = stages.iter().map(|s| s.name()).collect();
            let launches = stages.iter().map(|s| s.launch()).collect::<Result<_>>()?;
            crate::folded::run(&names, launches, &self.outputs, device)
        } else {
            fused::run(&stages, &self.outputs, device.serial_pixels())
        }
    }
}
