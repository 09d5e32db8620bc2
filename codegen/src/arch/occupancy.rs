//! The occupancy check, under the path the CUDA launch code has imported it
//! from. It lives beside the configuration it refines,
//! [`crate::config::occupancy`]; this module only re-exports it.

pub use crate::config::occupancy::{occupancy, refine_block, Occupancy, ResourceUsage};
