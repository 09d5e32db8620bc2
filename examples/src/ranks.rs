//! The processes of one run of an example binary: this one alone, or,
//! built with the `distributed` feature and started by `mpirun`, the
//! ranks of the MPI job (Open MPI's launcher sets `OMPI_COMM_WORLD_SIZE`,
//! so a run under `mpirun -np 1` is a one-rank job too). A command line is
//! written once against [`Ranks`] either way.
//!
//! Under `mpirun` every rank parses the same arguments and only rank 0
//! prints ([`speaks`]). A failure on any rank reaches every rank through
//! [`Ranks::agree`] before the next collective, so all stop with the one
//! message of the failing rank; the job's status is rank 0's.

use anyhow::Result;

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
            let universe = if mpi::launched_by_mpirun() {
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
        if let Some(world) = self.world() {
            use hipacc::distributed::mpi::traits::*;
            return world.size() > 1;
        }
        false
    }

    /// Whether this process reads, writes and reports (rank 0).
    pub fn is_root(&self) -> bool {
        #[cfg(feature = "distributed")]
        if let Some(world) = self.world() {
            use hipacc::distributed::mpi::traits::*;
            return world.rank() == 0;
        }
        true
    }

    /// `local` if every process has `Ok`, else the first failing one's
    /// error on all of them. Collective.
    pub fn agree<T>(&self, local: Result<T>) -> Result<T> {
        #[cfg(feature = "distributed")]
        if let Some(world) = self.world() {
            return mpi::agree(&world, local);
        }
        local
    }

    /// The MPI job's communicator when started by `mpirun`, whatever its
    /// rank count; `None` for a process alone.
    #[cfg(feature = "distributed")]
    pub fn world(&self) -> Option<hipacc::distributed::mpi::topology::SimpleCommunicator> {
        self.universe.as_ref().map(|u| u.world())
    }
}

/// Whether this process reports errors: not a rank other than 0 of an
/// `mpirun` job (known before MPI is initialised, from the launcher).
pub fn speaks() -> bool {
    #[cfg(feature = "distributed")]
    if mpi::launched_by_mpirun() {
        return mpi::launcher_rank() == 0;
    }
    true
}

/// The MPI side of [`Ranks`] (the `distributed` feature).
#[cfg(feature = "distributed")]
pub mod mpi {
    use anyhow::{anyhow, Result};
    use hipacc::distributed::mpi::topology::SimpleCommunicator;
    use hipacc::distributed::mpi::traits::*;
    use hipacc::distributed::{self, DistError};

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

    /// `local` on every rank if every rank has `Ok`, else the failing
    /// rank's error on every rank (see
    /// [`all_ok`](distributed::all_ok)), its message as the failing rank
    /// wrote it.
    pub fn agree<T>(world: &SimpleCommunicator, local: Result<T>) -> Result<T> {
        distributed::all_ok(world, local.map_err(|e| format!("{e:#}")))
            .map_err(|e| rank_error(world, e))
    }

    /// A distributed error as the example binaries report it: another
    /// rank's failure names that rank.
    pub fn rank_error(world: &SimpleCommunicator, e: DistError) -> anyhow::Error {
        match e {
            DistError::RankFailed { rank, message } if rank == 0 || world.size() == 1 => {
                anyhow!(message)
            }
            DistError::RankFailed { rank, message } => anyhow!("rank {rank}: {message}"),
            e => anyhow!(e),
        }
    }
}
