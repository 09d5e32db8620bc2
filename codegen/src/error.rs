//! The error type of code generation.

use thiserror::Error;

/// Errors of code generation. Each is the caller's fault (a config that the
/// target cannot run, an override that does not parse, a kernel the
/// generators cannot express) and says what to change.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum Error {
    /// A config that violates a limit of the target.
    #[error("config `{config}` is not valid on target `{target}`: {reason}")]
    InvalidConfig {
        /// The config, in override syntax.
        config: String,
        /// The target's short name.
        target: String,
        /// Which limit is violated.
        reason: String,
    },
    /// A config override (API or `HIPACC_CONFIG`) that does not parse.
    #[error("cannot parse config override `{text}`: {reason} (expected e.g. `block=32x4,ppt=4,boundary=regions,memory=local,mask=literal`)")]
    Override {
        /// The text given.
        text: String,
        /// What is wrong.
        reason: String,
    },
    /// A target name not in the architecture model.
    #[error("unknown target `{name}`; known targets: {known}")]
    UnknownTarget {
        /// The name given.
        name: String,
        /// The known names, comma-separated.
        known: String,
    },
    /// A kernel that the code generators cannot express.
    #[error("kernel `{kernel}` cannot be generated: {reason}")]
    Unsupported {
        /// Kernel name.
        kernel: String,
        /// What is not supported.
        reason: String,
    },
    /// Launch arguments that do not fit the kernel.
    #[error("launch of `{kernel}`: {reason}")]
    Launch {
        /// Kernel entry name.
        kernel: String,
        /// What is wrong.
        reason: String,
    },
    /// Writing generated sources failed.
    #[error("{path}: {source}")]
    Io {
        /// The file or directory.
        path: String,
        /// The OS error.
        source: std::io::Error,
    },
}

/// `Result` with [`Error`](enum@Error).
pub type Result<T, E = Error> = std::result::Result<T, E>;
