//! The error type of `hipacc-core`.

use thiserror::Error;

/// Errors of the DSL types, the IR lowering and the evaluator. Each variant is
/// the caller's fault and says what to change.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum Error {
    /// An image with a zero dimension.
    #[error("empty image: {width}x{height} (both dimensions must be at least 1)")]
    EmptyImage {
        /// Requested width.
        width: usize,
        /// Requested height.
        height: usize,
    },
    /// Data whose length does not match the dimensions.
    #[error("image data has {len} pixels but {width}x{height} needs {}", width * height)]
    DataLength {
        /// Given length.
        len: usize,
        /// Width.
        width: usize,
        /// Height.
        height: usize,
    },
    /// Two images or regions that must agree in size do not.
    #[error("size mismatch: {what}")]
    SizeMismatch {
        /// What disagrees, with both sizes.
        what: String,
    },
    /// A region of interest that is empty or not inside its image.
    #[error("region {x},{y} {width}x{height} is not inside the {image_width}x{image_height} image{}", if *width == 0 || *height == 0 { " (it is empty)" } else { "" })]
    RegionOutside {
        /// Region x.
        x: usize,
        /// Region y.
        y: usize,
        /// Region width.
        width: usize,
        /// Region height.
        height: usize,
        /// Image width.
        image_width: usize,
        /// Image height.
        image_height: usize,
    },
    /// A kernel whose body or slots the IR cannot represent.
    #[error("kernel `{kernel}`: {message}")]
    InvalidKernel {
        /// Kernel name.
        kernel: String,
        /// What is wrong.
        message: String,
    },
    /// An output image that is also read by the kernel.
    #[error("kernel `{kernel}` writes image #{image} that its accessor `{accessor}` reads; use a separate output image")]
    Aliasing {
        /// Kernel name.
        kernel: String,
        /// Accessor field.
        accessor: String,
        /// Image id.
        image: u64,
    },
    /// A read outside an accessor's region whose boundary is `Undefined`.
    #[error("kernel `{kernel}`: output pixel ({x}, {y}) reads accessor `{accessor}` at ({ax}, {ay}), outside its {width}x{height} region, and its boundary is Undefined; give the accessor a boundary condition")]
    UndefinedRead {
        /// Kernel name.
        kernel: String,
        /// Accessor field.
        accessor: String,
        /// Output pixel x.
        x: i64,
        /// Output pixel y.
        y: i64,
        /// Position read, relative to the accessor's region.
        ax: i64,
        /// Position read, relative to the accessor's region.
        ay: i64,
        /// Region width.
        width: usize,
        /// Region height.
        height: usize,
    },
    /// A kernel failed at one pixel (integer division by zero, `clamp` with
    /// crossed bounds, ...).
    #[error("kernel `{kernel}` at output pixel ({x}, {y}): {message}")]
    Evaluation {
        /// Kernel name.
        kernel: String,
        /// Output pixel x.
        x: i64,
        /// Output pixel y.
        y: i64,
        /// What went wrong.
        message: String,
    },
    /// Moving data between host and a device failed.
    #[error("device transfer failed: {0}")]
    Transfer(String),
    /// Reading or writing an image file failed.
    #[error("{path}: {message}")]
    ImageFile {
        /// The file.
        path: String,
        /// What went wrong.
        message: String,
    },
}

/// `Result` with [`Error`](enum@Error).
pub type Result<T, E = Error> = std::result::Result<T, E>;
