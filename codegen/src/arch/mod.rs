//! The architecture model: the targets code generation tunes for, as data.
//!
//! Each [`Target`] records what the heuristics and validation need: warp
//! (wavefront, SIMD) width, block limits, registers, shared (local) memory,
//! the footprint size from which a shared-memory tile pays off, and a default
//! block shape and pixels per thread per [`OperatorClass`]. The device found at
//! run time maps to the nearest target ([`Target::nearest`]); the figures come
//! from the vendors' programming guides (CUDA C Programming Guide, compute
//! capability tables; AMD GCN and Intel Xe OpenCL optimisation guides; PoCL).

mod device;
mod target;
mod targets;
mod vendor;

pub use crate::vocab::OperatorClass;
pub use device::DeviceDescription;
pub use target::{ClassDefaults, Target};
pub use vendor::Vendor;
