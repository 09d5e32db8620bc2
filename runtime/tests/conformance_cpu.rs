//! The conformance suite on the native CPU backend.

hipacc::conformance_suite!(cpu, Ok::<_, hipacc::Error>(hipacc::Device::cpu()));
