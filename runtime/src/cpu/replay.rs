//! Recording CPU launches and replaying them, as [`crate::gpu::replay`]
//! does on a GPU device.
//!
//! A CPU launch pays for host work before any pixel: the bindings of the
//! kernel, the aliasing check, the plan lookup, the interior, the set-up
//! of the separable and two-pass paths ([`super::Ready`]). On the coarse
//! levels of a multigrid cycle that is much of the launch. A recording
//! keeps each launch ready; a replay runs the ready launches again.
//!
//! Nothing needs redoing between runs: the kernel keeps its images, whose
//! contents the replay reads as they are then, and the host copies are the
//! ones a CPU launch uses. To be kept, a launch must own its kernel, so
//! only launches made through [`Record::launch`] can be recorded; a launch
//! of a borrowed kernel during a recording makes ending it an error.
//!
//! Recordings belong to the thread that began them, one at a time.

use super::Ready;
use crate::gpu::Replay;
use crate::{Device, Error, Execute, Result};
use hipacc_core::{IterationSpace, Kernel};
use std::cell::RefCell;

/// A CPU launch kept ready.
trait Kept: Send {
    fn run(&self) -> Result<()>;
}

/// A kernel, the space it runs over, and its launch made ready.
struct Launch<K: Kernel> {
    kernel: K,
    space: IterationSpace<K::Output>,
    ready: Ready,
}

impl<K: Kernel + Send> Kept for Launch<K> {
    fn run(&self) -> Result<()> {
        self.ready.run(&self.kernel, &self.space)
    }
}

/// This thread's recording: the launches kept, or why it cannot replay.
enum Recording {
    Kept(Vec<Box<dyn Kept>>),
    Unrecordable(&'static str),
}

thread_local! {
    static RECORDING: RefCell<Option<Recording>> = const { RefCell::new(None) };
}

/// Recordings are begun and ended by the runtime itself: a mismatch is a
/// bug.
fn recording_err(message: &str) -> Error {
    Error::Internal(format!("CPU launch recording: {message}"))
}

/// Starts recording this thread's CPU launches.
pub(crate) fn begin() -> Result<()> {
    RECORDING.with_borrow_mut(|r| match r {
        Some(_) => Err(recording_err("this thread is already recording")),
        None => {
            *r = Some(Recording::Kept(Vec::new()));
            Ok(())
        }
    })
}

/// Ends this thread's recording: `None` when it kept no launch.
pub(crate) fn end() -> Result<Option<Box<dyn Replay>>> {
    match RECORDING.with_borrow_mut(Option::take) {
        None => Err(recording_err("this thread is not recording")),
        Some(Recording::Unrecordable(kernel)) => Err(recording_err(&format!(
            "`{kernel}` ran from a borrowed kernel during the recording"
        ))),
        Some(Recording::Kept(launches)) if launches.is_empty() => Ok(None),
        Some(Recording::Kept(launches)) => Ok(Some(Box::new(Sequence(launches)))),
    }
}

/// Drops this thread's recording, if any (after an error).
pub(crate) fn abort() {
    RECORDING.with_borrow_mut(Option::take);
}

/// Notes that `kernel` ran from a borrowed kernel: a recording in progress
/// cannot keep it, so it cannot be replayed.
pub(crate) fn borrowed(kernel: &'static str) {
    RECORDING.with_borrow_mut(|r| {
        if let Some(r @ Recording::Kept(_)) = r {
            *r = Recording::Unrecordable(kernel);
        }
    });
}

/// Launches that hand their kernel over, so a CPU recording can keep them.
pub(crate) trait Record: Kernel + Send + Sized + 'static {
    /// Runs the kernel over `space` on `device` as [`Execute::execute`]
    /// does; on a CPU device that records, the launch is kept ready.
    fn launch(self, device: &Device, space: IterationSpace<Self::Output>) -> Result<()> {
        let recording = device.gpu().is_none()
            && RECORDING.with_borrow(|r| matches!(r, Some(Recording::Kept(_))));
        if !recording {
            return self.execute(device, &space);
        }
        let ready = crate::trace::launch(Self::NAME, device.kind().name(), || {
            let ready = Ready::new(&self, &space, device.serial_pixels())?;
            ready.run(&self, &space)?;
            Ok::<_, Error>(ready)
        })?;
        let kept = Launch {
            kernel: self,
            space,
            ready,
        };
        RECORDING.with_borrow_mut(|r| {
            if let Some(Recording::Kept(launches)) = r {
                launches.push(Box::new(kept));
            }
        });
        Ok(())
    }
}

impl<K: Kernel + Send + 'static> Record for K {}

/// Recorded CPU launches.
struct Sequence(Vec<Box<dyn Kept>>);

impl Replay for Sequence {
    fn replay(&mut self) -> Result<bool> {
        for launch in &self.0 {
            launch.run()?;
        }
        Ok(true)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::multigrid::kernels::k32::Fill;
    use hipacc_core::Image;

    #[test]
    fn a_replay_runs_the_kept_launches_again() {
        let (dev, out) = (Device::cpu(), Image::<f32>::new(5, 3).unwrap());
        begin().unwrap();
        Fill { value: 2.5 }
            .launch(&dev, IterationSpace::full(&out))
            .unwrap();
        let mut replay = end().unwrap().expect("a launch was kept");
        out.write().unwrap().fill(0.0);
        assert!(replay.replay().unwrap());
        assert!(out.to_vec().unwrap().iter().all(|&v| v == 2.5));
    }

    #[test]
    fn a_borrowed_kernel_during_a_recording_makes_it_fail() {
        let (dev, out) = (Device::cpu(), Image::<f32>::new(4, 4).unwrap());
        begin().unwrap();
        assert!(begin().is_err(), "a second recording on this thread");
        Fill { value: 1.0 }
            .execute(&dev, &IterationSpace::full(&out))
            .unwrap();
        assert!(matches!(end(), Err(Error::Internal(_))));
        assert!(end().is_err(), "the recording ended");
        begin().unwrap();
        assert!(end().unwrap().is_none(), "nothing launched");
    }
}
