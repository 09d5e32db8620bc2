//! The wgpu backend: generated WGSL run as compute shaders through wgpu
//! (Vulkan, Metal, DirectX 12; Mesa's lavapipe on the CPU in CI).
//!
//! | file | concept |
//! |---|---|
//! | `device` | the adapter and device, limits, the target of the architecture model |
//! | `backend` | memory, shader modules and pipelines, binding and dispatch, as a [`crate::gpu::backend::Backend`] |
//! | `timing` | the last launch's duration: pass timestamps, or the wall clock without them |
//!
//! The program cache, launch path, residency and replay above the driver
//! are the generic ones of [`crate::gpu`]. The resource layout of a kernel
//! (a uniform struct of its scalars, then one storage buffer per image and
//! mask) is codegen's [`hipacc_codegen::wgsl_layout`].

mod backend;
mod device;
mod timing;

pub(crate) use device::shared;
