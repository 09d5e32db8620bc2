//! The conformance suite on the OpenCL backend (PoCL in CI).
//!
//! Masks are passed in constant memory and each work-item computes one
//! pixel; `opencl_variants` checks the other variant families against the
//! evaluator. The suite builds over a thousand kernels (every region
//! variant of every case); each suite function builds its kernels a few
//! dozen per program, but that is still minutes of PoCL compilation when
//! cold on two cores, so it runs only when `HIPACC_SLOW_OPENCL=1`; the
//! test command (`.ci/test`) sets it.

fn opencl_device() -> hipacc::Result<hipacc::Device> {
    if std::env::var_os("HIPACC_SLOW_OPENCL").is_none() {
        return Err(hipacc::Error::Config(
            "full OpenCL conformance suite; set HIPACC_SLOW_OPENCL=1 to run it".into(),
        ));
    }
    let overrides = hipacc::codegen::ConfigOverride::parse("mask=constant,ppt=1")
        .map_err(|e| hipacc::Error::Config(e.to_string()))?;
    Ok(hipacc::Device::opencl()?.with_override(overrides))
}

hipacc::conformance_suite!(opencl, opencl_device());
