//! Agreeing on local failures before a collective.
//!
//! A rank that fails on its own (its input file is missing, a local
//! allocation fails) and returns early leaves every other rank waiting in
//! the next collective operation forever. [`all_ok`] turns the local
//! outcome into a collective one: every rank learns whether any rank
//! failed, and all of them return the same error, with the message of the
//! lowest failing rank.

use super::{DistError, DistResult};
use mpi::collective::SystemOperation;
use mpi::traits::*;

/// `Ok(value)` on every rank if every rank of `comm` passes `Ok`; else
/// the same [`DistError::RankFailed`] on every rank, naming the lowest
/// failing rank and carrying its message. Collective: call it where every
/// rank arrives, before the first collective that a failed rank would not
/// reach.
///
/// ```no_run
/// use hipacc::distributed::{self, Grid};
///
/// let universe = distributed::initialize()?;
/// let world = universe.world();
/// let size = std::fs::read_to_string("size.txt").map(|s| s.len());
/// // Every rank stops here with rank r's message if rank r's read failed.
/// let width = distributed::all_ok(&world, size)?;
/// let grid = Grid::new(&world, width.max(1), 1)?;
/// # Ok::<(), distributed::DistError>(())
/// ```
pub fn all_ok<T, E: std::fmt::Display, C: Communicator>(
    comm: &C,
    local: Result<T, E>,
) -> DistResult<T> {
    let mine = match &local {
        Ok(_) => u64::MAX,
        Err(_) => comm.rank() as u64,
    };
    let mut first = u64::MAX;
    comm.all_reduce_into(&mine, &mut first, SystemOperation::min());
    let mut message = match local {
        Ok(value) if first == u64::MAX => return Ok(value),
        Err(e) if mine == first => e.to_string().into_bytes(),
        _ => Vec::new(),
    };
    let root = comm.process_at_rank(first as i32);
    let mut len = message.len() as u64;
    root.broadcast_into(&mut len);
    message.resize(len as usize, 0);
    root.broadcast_into(&mut message[..]);
    Err(DistError::RankFailed {
        rank: first as usize,
        message: String::from_utf8_lossy(&message).into_owned(),
    })
}
