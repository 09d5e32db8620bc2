//! The conformance suite on the CUDA backend (runs where a GPU is present).

hipacc::conformance_suite!(cuda, hipacc::Device::cuda());
