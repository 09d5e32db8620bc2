//! What code generation hands the runtime: a [`Program`] (one source) and,
//! per kernel, a [`KernelInfo`] that lists its parameters and computes the
//! geometry of a launch.

use crate::config::{BoundaryScheme, Config};
use crate::regions::{region_starts, CheckedAccessor, RegionStarts};
use crate::vocab::Language;
use crate::{Error, Result};
use hipacc_core::ir::footprint::{AffineFootprint, Footprint};
use hipacc_core::ir::ScalarType;
use hipacc_core::Rect;

/// What one kernel parameter carries.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ArgKind {
    /// The output image's buffer.
    OutputBuffer,
    /// Pixels per row of the output image.
    OutputStride,
    /// Iteration space origin x (in the output image).
    SpaceX,
    /// Iteration space origin y.
    SpaceY,
    /// Iteration space width.
    SpaceWidth,
    /// Iteration space height.
    SpaceHeight,
    /// Accessor `i`'s image as a buffer (memory kinds global, read-only,
    /// local tile).
    AccessorBuffer(usize),
    /// Accessor `i`'s image as an OpenCL `image2d_t` (whole image; channel
    /// order `CL_R`, or `CL_RGBA` for 4 lanes; channel type of the pixel's
    /// lane: `CL_UNSIGNED_INT8/16/32`, `CL_SIGNED_INT32`, `CL_FLOAT`; read
    /// with a non-normalised, nearest, no-addressing sampler) or a CUDA
    /// `cudaTextureObject_t` over the linear buffer (1D, element format of the
    /// lane, 1 or 4 channels, point filtering, element read mode), read with
    /// `tex1Dfetch` at `y * stride + x`.
    AccessorImage(usize),
    /// Pixels per row of accessor `i`'s image.
    AccessorStride(usize),
    /// Accessor `i`'s region origin x in its image.
    AccessorX(usize),
    /// Accessor `i`'s region origin y.
    AccessorY(usize),
    /// Accessor `i`'s region width.
    AccessorWidth(usize),
    /// Accessor `i`'s region height.
    AccessorHeight(usize),
    /// Scalar parameter slot `i`, passed by value with its own C type.
    Param(usize),
    /// Mask slot `i`'s coefficients, row-major, as a `__constant` buffer
    /// (OpenCL only).
    MaskBuffer(usize),
    /// [`RegionStarts::left`].
    RegionLeft,
    /// [`RegionStarts::right`].
    RegionRight,
    /// [`RegionStarts::top`].
    RegionTop,
    /// [`RegionStarts::bottom`].
    RegionBottom,
}

/// One kernel parameter, in declaration order.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct KernelArg {
    /// The parameter's name in the source.
    pub name: String,
    /// What to bind.
    pub kind: ArgKind,
    /// The C type as printed (`int`, `float`, `__global float*`, …).
    pub c_type: String,
    /// For values passed by value: the scalar type (`I32` for every
    /// geometry integer); `None` for buffers, images and textures.
    pub scalar: Option<ScalarType>,
}

/// A CUDA `__constant__` array the runtime fills before a launch (masks in
/// constant memory), e.g. with `cuModuleGetGlobal` + a host-to-device copy.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct ConstantSymbol {
    /// The symbol's name in the module.
    pub name: String,
    /// Mask slot whose coefficients (row-major) it holds.
    pub mask: usize,
    /// Size in bytes.
    pub bytes: usize,
}

/// Launch geometry for one launch of a kernel.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Launch {
    /// Threads per block (CUDA `blockDim`, OpenCL local size), x and y.
    pub block: [u32; 2],
    /// Blocks (CUDA `gridDim`), x and y.
    pub grid: [u32; 2],
    /// OpenCL global size: `grid * block`.
    pub global: [usize; 2],
    /// Region starts; bind them when the kernel has region arguments.
    pub region_starts: RegionStarts,
}

/// A generated kernel: its entry point, parameters and how to launch it.
#[derive(Clone, Debug, PartialEq)]
pub struct KernelInfo {
    /// The kernel's function name in the program.
    pub entry: String,
    /// The IR's kernel name.
    pub kernel_name: String,
    /// [`Kernel::stable_hash`](hipacc_core::ir::Kernel::stable_hash) of the IR.
    pub ir_hash: u64,
    /// The variant.
    pub config: Config,
    /// Parameters in order.
    pub args: Vec<KernelArg>,
    /// CUDA constant-memory arrays to fill before launching (empty for OpenCL).
    pub constant_symbols: Vec<ConstantSymbol>,
    /// Each accessor's footprint (`None`: unbounded).
    pub footprints: Vec<Option<Footprint>>,
    /// Static shared (local) memory of the tiles, in bytes.
    pub shared_bytes: u32,
    /// Each accessor's footprint, affine in the output coordinates (`None`:
    /// unbounded): what the region starts of a launch are computed from.
    pub(super) reaches: Vec<Option<AffineFootprint>>,
    /// Per accessor: whether its reads are boundary-checked.
    pub(super) checked: Vec<bool>,
}

impl KernelInfo {
    /// The geometry of a launch over the iteration space `space` (in the
    /// output image) with accessor regions `accessors` (in slot order).
    pub fn launch(&self, space: Rect, accessors: &[Rect]) -> Result<Launch> {
        let err = |reason: String| Error::Launch {
            kernel: self.entry.clone(),
            reason,
        };
        if accessors.len() != self.footprints.len() {
            return Err(err(format!(
                "{} accessor regions given for {} accessors",
                accessors.len(),
                self.footprints.len()
            )));
        }
        if space.width == 0 || space.height == 0 {
            return Err(err("empty iteration space".into()));
        }
        if space.width > i32::MAX as usize || space.height > i32::MAX as usize {
            return Err(err(
                "iteration space larger than 2^31 pixels along an axis".into()
            ));
        }
        let block = self.config.block;
        let rows = self.config.rows_per_block();
        let grid = [
            space.width.div_ceil(block.x as usize),
            space.height.div_ceil(rows as usize),
        ];
        let grid = [
            u32::try_from(grid[0]).map_err(|_| err("grid too large".into()))?,
            u32::try_from(grid[1]).map_err(|_| err("grid too large".into()))?,
        ];
        let checked: Vec<CheckedAccessor> = accessors
            .iter()
            .zip(&self.reaches)
            .zip(&self.checked)
            .filter(|(_, &c)| c)
            .filter_map(|((r, reach), _)| {
                reach.map(|reach| CheckedAccessor {
                    size: (r.width, r.height),
                    reach,
                })
            })
            .collect();
        let region_starts = match self.config.boundary {
            BoundaryScheme::Regions => {
                let origin = (space.x, space.y);
                region_starts(origin, (space.width, space.height), block.x, rows, &checked)
            }
            BoundaryScheme::Generic => RegionStarts::default(),
        };
        Ok(Launch {
            block: [block.x, block.y],
            grid,
            global: [
                grid[0] as usize * block.x as usize,
                grid[1] as usize * block.y as usize,
            ],
            region_starts,
        })
    }
}

/// A generated program: one source with one or more kernels.
#[derive(Clone, Debug, PartialEq)]
pub struct Program {
    /// The dialect.
    pub language: Language,
    /// The target it was generated for.
    pub target: &'static str,
    /// The complete source.
    pub source: String,
    /// Its kernels, in source order.
    pub kernels: Vec<KernelInfo>,
}
