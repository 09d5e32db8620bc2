//! High-dynamic-range images for the `hdr-compress` tone mapper: the parts
//! independent of the tone-mapping algorithm.
//!
//! - [`fattal`]: the tone-mapping algorithm, its kernels in `kernels`.
//! - [`input`]: loading Radiance RGBE, OpenEXR and PFM files (or standard
//!   input) as linear RGBA.
//! - [`exr`]: the OpenEXR reader behind it (luminance, luminance/chroma,
//!   chromaticities, data and display windows) and test-file writers.
//! - [`rgbe`]: the tolerant Radiance RGBE reader behind it.
//! - [`output`]: choosing and writing the output format (8/16-bit PNG, JPEG,
//!   linear OpenEXR) through a temporary file.
//! - [`scene`]: the procedurally generated demo scene.
//! - [`repair`]: replacing NaN, infinite and negative pixel values.
//! - [`guard`]: refusing an output that is the input file.
//! - [`job`]: one run of `hdr-compress` (read, tone-map, write, timings).
//! - `distributed_job` (the `distributed` feature): one run split across
//!   MPI ranks (`mpirun -np N hdr-compress IN -o OUT`).
//! - [`ranks`]: one run on the processes of the command
//!   ([`crate::ranks`]: one, or the ranks of `mpirun`).
//! - [`batch`]: many files into a directory, several at a time.
//! - [`interrupt`]: removing unfinished files when a signal stops a run.
//! - [`huge_alloc`]: the allocator of `hdr-compress`, large blocks on huge
//!   pages.

pub mod batch;
#[cfg(feature = "distributed")]
pub mod distributed_job;
pub mod exr;
pub mod fattal;
pub mod guard;
#[cfg(target_os = "linux")]
pub mod huge_alloc;
pub mod input;
pub mod interrupt;
pub mod job;
mod kernels;
pub mod output;
pub mod ranks;
pub mod repair;
pub mod rgbe;
pub mod scene;
