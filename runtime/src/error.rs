//! The error type of the runtime.

use crate::BackendKind;
use thiserror::Error;

/// Errors of devices, compilation and launches.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum Error {
    /// An error of the DSL types, the IR or the evaluator.
    #[error(transparent)]
    Core(#[from] hipacc_core::Error),
    /// Code generation refused a kernel or a variant (an override that
    /// violates the target's limits, a kernel outside the GPU subset).
    #[error(transparent)]
    Codegen(#[from] hipacc_codegen::Error),
    /// A backend that is not compiled in or whose runtime is missing.
    #[error("{backend} backend unavailable: {reason}")]
    BackendUnavailable {
        /// The backend.
        backend: BackendKind,
        /// What is missing and how to install it.
        reason: String,
    },
    /// An unknown backend name.
    #[error("unknown backend `{0}` (expected cpu, opencl, cuda, wgpu or auto)")]
    UnknownBackend(String),
    /// Generated code failed to build on the device.
    #[error("kernel `{kernel}` failed to build for {device}; source: {source_path}\n{log}")]
    Compile {
        /// Kernel name.
        kernel: String,
        /// Device name.
        device: String,
        /// Where the generated source was written.
        source_path: String,
        /// The compiler's log.
        log: String,
    },
    /// A launch or transfer failed on the device.
    #[error("{backend} launch of `{kernel}` failed: {message}")]
    Launch {
        /// The backend.
        backend: BackendKind,
        /// Kernel name.
        kernel: String,
        /// The driver's message.
        message: String,
    },
    /// A kernel computes in a type the device has no arithmetic for (`f64`
    /// on an OpenCL device without `cl_khr_fp64`, a wgpu device without
    /// `SHADER_F64`): it is refused, never run in a narrower type.
    #[error(
        "kernel `{kernel}` computes in {ty}, which {backend} device {device} does not support \
         ({ty} is never demoted)"
    )]
    UnsupportedType {
        /// The backend.
        backend: BackendKind,
        /// The device's name.
        device: String,
        /// Kernel name.
        kernel: String,
        /// The type the device lacks.
        ty: hipacc_core::ir::Type,
    },
    /// Misuse of a pyramid or a traversal.
    #[error(transparent)]
    Pyramid(#[from] crate::pyramid::PyramidError),
    /// Misconfigured multigrid options.
    #[error(transparent)]
    Multigrid(#[from] crate::multigrid::MultigridError),
    /// A configuration that the device cannot run.
    #[error("invalid configuration: {0}")]
    Config(String),
    /// A broken invariant of the runtime itself: a bug to report, not a
    /// mistake of the caller.
    #[error("internal error (a bug in hipacc, please report it): {0}")]
    Internal(String),
}

/// `Result` with [`Error`](enum@Error).
pub type Result<T, E = Error> = std::result::Result<T, E>;
