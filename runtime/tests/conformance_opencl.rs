//! The conformance suite on the OpenCL backend (PoCL in CI).

hipacc::conformance_suite!(opencl, hipacc::Device::opencl());
