//! The processes of one `hdr-compress` run: this one alone, or, built
//! with the `distributed` feature and started by `mpirun`, the ranks of
//! the MPI job (see [`distributed_job`](super::distributed_job)). The
//! command line is written once against [`Ranks`] either way.

use super::fattal::Params;
use super::job::{self, Job, Outcome};
use anyhow::Result;
use hipacc::Device;

/// The processes running this command (see the [module docs](self)).
pub struct Ranks {
    #[cfg(feature = "distributed")]
    universe: Option<hipacc::distributed::mpi::environment::Universe>,
}

impl Ranks {
    /// This process alone, or (with the `distributed` feature, under
    /// `mpirun`) the MPI job, initialised here.
    pub fn start() -> Result<Ranks> {
        #[cfg(feature = "distributed")]
        {
            let universe = if super::distributed_job::launched_by_mpirun() {
                Some(hipacc::distributed::initialize()?)
            } else {
                None
            };
            Ok(Ranks { universe })
        }
        #[cfg(not(feature = "distributed"))]
        Ok(Ranks {})
    }

    /// Whether more than one process runs the command.
    pub fn several(&self) -> bool {
        #[cfg(feature = "distributed")]
        if let Some(u) = &self.universe {
            use hipacc::distributed::mpi::traits::*;
            return u.world().size() > 1;
        }
        false
    }

    /// Whether this process reads, writes and reports (rank 0).
    pub fn is_root(&self) -> bool {
        #[cfg(feature = "distributed")]
        if let Some(u) = &self.universe {
            use hipacc::distributed::mpi::traits::*;
            return u.world().rank() == 0;
        }
        true
    }

    /// `local` if every process has `Ok`, else the first failing one's
    /// error on all of them. Collective.
    pub fn agree<T>(&self, local: Result<T>) -> Result<T> {
        #[cfg(feature = "distributed")]
        if let Some(u) = &self.universe {
            return super::distributed_job::agree(&u.world(), local);
        }
        local
    }

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
        if let Some(u) = &self.universe {
            let world = u.world();
            return super::distributed_job::run(&world, dev, job, params, srgb, warn, tick);
        }
        job::run(dev, job, params, srgb, warn, tick).map(Some)
    }
}

/// Whether this process reports errors: not a rank other than 0 of an
/// `mpirun` job (known before MPI is initialised, from the launcher).
pub fn speaks() -> bool {
    #[cfg(feature = "distributed")]
    if super::distributed_job::launched_by_mpirun() {
        return super::distributed_job::launcher_rank() == 0;
    }
    true
}
