//! Analyses and rewrites of the kernel IR that code generation runs before
//! printing C. Each is one function in one file.

pub(crate) mod analysis;
pub(crate) mod reach;
pub(crate) mod window;
