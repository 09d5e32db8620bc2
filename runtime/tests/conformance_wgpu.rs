//! The conformance suite on the wgpu backend (Mesa's lavapipe in CI).
//!
//! Needs the crate's `wgpu` feature and a Vulkan, Metal or DirectX 12
//! adapter; `.ci/test` runs it with the feature on.

#![cfg(feature = "wgpu")]

fn wgpu_device() -> hipacc::Result<hipacc::Device> {
    hipacc::Device::wgpu()
}

hipacc::conformance_suite!(wgpu, wgpu_device());
