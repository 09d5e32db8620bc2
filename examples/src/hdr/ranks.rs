//! One `hdr-compress` run on the [`Ranks`] of the command: [`job::run`]
//! on one process, or, built with the `distributed` feature and started
//! by `mpirun`, split across the ranks (see
//! [`distributed_job`](super::distributed_job)).

use super::fattal::Params;
use super::job::{self, Job, Outcome};
use crate::ranks::Ranks;
use anyhow::Result;
use hipacc::Device;

impl Ranks {
    /// Runs `job` ([`job::run`] on one process, split across the ranks
    /// under `mpirun`): the outcome on the process that wrote the output,
    /// `None` on the others. Collective.
    pub fn run(
        &self,
        dev: &Device,
        job: &Job,
        params: &Params,
        srgb: bool,
        warn: &dyn Fn(String),
        tick: &dyn Fn(&str),
    ) -> Result<Option<Outcome>> {
        #[cfg(feature = "distributed")]
        if let Some(world) = self.world() {
            return super::distributed_job::run(&world, dev, job, params, srgb, warn, tick);
        }
        job::run(dev, job, params, srgb, warn, tick).map(Some)
    }
}
