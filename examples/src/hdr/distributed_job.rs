//! One `hdr-compress` run split across MPI ranks (the `distributed`
//! feature; `mpirun -np N hdr-compress IN -o OUT`).
//!
//! Rank 0 reads and repairs the input ([`job::load`]) and scatters it;
//! every rank tone-maps its block ([`fattal::distributed::tone_map`]);
//! rank 0 gathers the result and writes it once, atomically, through the
//! single-process path ([`job::store`]). A failure on any rank (an
//! unreadable input, an image too small for the ranks, a failed write)
//! reaches every rank through [`agree`] before the next collective, so
//! all stop with the one message of the failing rank, and
//! nothing is written unless everything before the write succeeded.

use super::fattal;
use super::job::{self, Job, Outcome};
use crate::ranks::mpi::{agree, rank_error};
use anyhow::Result;
use hipacc::distributed::mpi::topology::SimpleCommunicator;
use hipacc::distributed::mpi::traits::*;
use hipacc::distributed::{DistError, DistImage, Grid};
use hipacc::Device;
use std::rc::Rc;

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
