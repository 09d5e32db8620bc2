//! One `hdr-compress` run split across MPI ranks (the `distributed`
//! feature; `mpirun -np N hdr-compress IN -o OUT`).
//!
//! Rank 0 reads and repairs the input ([`job::load`]) and scatters it;
//! every rank tone-maps its block ([`fattal::distributed::tone_map`]);
//! rank 0 gathers the result and writes it once, atomically, through the
//! single-process path ([`job::store`]). A failure on any rank (an
//! unreadable input, an image too small for the ranks, a failed write)
//! reaches every rank through [`distributed::all_ok`] before the next
//! collective, so all stop with the one message of the failing rank, and
//! nothing is written unless everything before the write succeeded.

use super::fattal;
use super::job::{self, Job, Outcome};
use anyhow::{anyhow, Result};
use hipacc::distributed::mpi::topology::SimpleCommunicator;
use hipacc::distributed::mpi::traits::*;
use hipacc::distributed::{self, DistError, DistImage, Grid};
use hipacc::Device;
use std::rc::Rc;

/// Whether this process was started by `mpirun` (Open MPI's launcher
/// sets `OMPI_COMM_WORLD_SIZE`), and so runs as one rank of a
/// distributed run.
pub fn launched_by_mpirun() -> bool {
    std::env::var_os("OMPI_COMM_WORLD_SIZE").is_some()
}

/// This process's rank as the launcher numbered it, before MPI is
/// initialised (0 when not started by `mpirun`): only rank 0 prints.
pub fn launcher_rank() -> usize {
    std::env::var("OMPI_COMM_WORLD_RANK")
        .ok()
        .and_then(|r| r.parse().ok())
        .unwrap_or(0)
}

/// `local` on every rank if every rank has `Ok`, else the failing rank's
/// error on every rank (see [`all_ok`](distributed::all_ok)), its
/// message as the failing rank wrote it.
pub fn agree<T>(world: &SimpleCommunicator, local: Result<T>) -> Result<T> {
    distributed::all_ok(world, local.map_err(|e| format!("{e:#}")))
        .map_err(|e| rank_error(world, e))
}

/// A distributed error as `hdr-compress` reports it: another rank's
/// failure names that rank.
fn rank_error(world: &SimpleCommunicator, e: DistError) -> anyhow::Error {
    match e {
        DistError::RankFailed { rank, message } if rank == 0 || world.size() == 1 => {
            anyhow!(message)
        }
        DistError::RankFailed { rank, message } => anyhow!("rank {rank}: {message}"),
        e => anyhow!(e),
    }
}

/// Runs `job` on the ranks of `world`, as [`job::run`] runs it on one
/// process, with the same output bytes. `warn` and `tick` are called on
/// rank 0 only. Collective; rank 0 gets the outcome, the others `None`.
pub fn run(
    world: &SimpleCommunicator,
    dev: &Device,
    job: &Job,
    params: &fattal::Params,
    srgb: bool,
    warn: &dyn Fn(String),
    tick: &dyn Fn(&str),
) -> Result<Option<Outcome>> {
    let root = world.rank() == 0;
    let loaded = if root {
        job::load(job, warn).map(Some)
    } else {
        Ok(None)
    };
    let loaded = agree(world, loaded)?;
    let mut size = loaded.as_ref().map_or([0u64; 2], |l| {
        [l.image().width(), l.image().height()].map(|v| v as u64)
    });
    world.process_at_rank(0).broadcast_into(&mut size[..]);
    let name = job.source.name();
    let dist = |e: DistError| rank_error(world, e).context(name.clone());
    let grid = Rc::new(Grid::new(world, size[0] as usize, size[1] as usize).map_err(dist)?);
    let input = DistImage::scatter(&grid, 0, loaded.as_ref().map(|l| l.image())).map_err(dist)?;
    let encoding = job::encoding_for(job.kind, srgb);
    let quiet = |_: &str| {};
    let (out, report) = fattal::distributed::tone_map(
        dev,
        &input,
        params,
        encoding,
        if root { tick } else { &quiet },
    )
    .map_err(dist)?;
    let gathered = out.gather(0).map_err(dist)?;
    let stored = match (loaded, gathered) {
        (Some(loaded), Some(result)) => {
            let mapped = job::mapped(job, loaded, result, report, params, warn);
            job::store(job, mapped).map(Some)
        }
        _ => Ok(None),
    };
    agree(world, stored)
}
