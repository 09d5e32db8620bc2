//! Building generated OpenCL C with the driver.
//!
//! The options are the device's (`-w`, correctly rounded division where the
//! device supports it); the build log is returned only for a failed build.

use super::device::ClDevice;
use opencl3::kernel::Kernel;
use opencl3::program::Program;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

/// A kernel of a built program.
pub(crate) struct ClEntry {
    /// Arguments are state of the `cl_kernel`: one launch sets them at a time.
    kernel: Mutex<Kernel>,
    _program: Arc<Program>,
}

impl ClEntry {
    /// The kernel object, locked for setting arguments and enqueueing.
    pub(crate) fn lock(&self) -> MutexGuard<'_, Kernel> {
        self.kernel.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl ClDevice {
    /// Builds `source`; `Err` holds the driver's message and build log.
    pub(crate) fn build_source(&self, source: &str) -> Result<Program, String> {
        let mut program = Program::create_from_source(&self.context, source)
            .map_err(|e| format!("clCreateProgramWithSource: {e}"))?;
        if let Err(e) = program.build(&[self.device.id()], &self.build_options) {
            let log = program.get_build_log(self.device.id()).unwrap_or_default();
            return Err(format!("clBuildProgram: {e}\n{log}"));
        }
        Ok(program)
    }
}

/// The kernel `entry` of a built program.
pub(crate) fn entry(program: &Arc<Program>, entry: &str) -> Result<ClEntry, String> {
    let kernel =
        Kernel::create(program, entry).map_err(|e| format!("clCreateKernel `{entry}`: {e}"))?;
    Ok(ClEntry {
        kernel: Mutex::new(kernel),
        _program: Arc::clone(program),
    })
}
