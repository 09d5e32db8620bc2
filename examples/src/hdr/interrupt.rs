//! Stopping cleanly on SIGINT, SIGTERM and SIGHUP.
//!
//! Outputs are written to a hidden temporary file and renamed when
//! complete; a process killed in between would leave the temporary file
//! behind. [`install`] starts a thread that waits for those signals, removes
//! the temporary files of writes in progress
//! ([`hipacc::core::io::remove_temporary_files_and_exit`]) and exits with
//! 128 plus the signal's number, as a shell reports a process killed by it.

use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
use signal_hook::iterator::Signals;

/// Handles SIGINT, SIGTERM and SIGHUP for the rest of the process (see the
/// module docs).
pub fn install() -> std::io::Result<()> {
    let mut signals = Signals::new([SIGINT, SIGTERM, SIGHUP])?;
    std::thread::Builder::new()
        .name("signals".into())
        .spawn(move || {
            if let Some(signal) = signals.forever().next() {
                // Under `mpirun` only rank 0 speaks: the others are
                // stopped by `mpirun` itself when the job ends early.
                if crate::ranks::speaks() {
                    eprintln!("hdr-compress: stopped by signal {signal}; unfinished files removed");
                }
                hipacc::core::io::remove_temporary_files_and_exit(128 + signal)
            }
        })?;
    Ok(())
}
