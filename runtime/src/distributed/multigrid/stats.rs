//! What a distributed cycle spent its time on.

use crate::distributed::LaunchStats;

/// What one cycle (or full multigrid) did on this rank.
///
/// ```
/// use hipacc::distributed::multigrid::CycleStats;
/// let s = CycleStats::default();
/// assert_eq!(s.exchange_seconds(), 0.0);
/// ```
#[derive(Clone, Debug, Default, PartialEq)]
pub struct CycleStats {
    /// The launches of each distributed level (index: level of the
    /// hierarchy), their halo exchanges and kernel time summed.
    pub levels: Vec<LaunchStats>,
    /// Gathering the coarse levels onto rank 0, solving there and
    /// scattering the solution back, in seconds.
    pub coarse_seconds: f64,
}

impl CycleStats {
    pub(super) fn add(&mut self, level: usize, s: LaunchStats) {
        if self.levels.len() <= level {
            self.levels.resize(level + 1, LaunchStats::default());
        }
        let l = &mut self.levels[level];
        l.exchange += s.exchange;
        l.compute_seconds += s.compute_seconds;
    }

    /// The halo exchanges of every level, in seconds.
    pub fn exchange_seconds(&self) -> f64 {
        self.levels.iter().map(|l| l.exchange.seconds).sum()
    }
}
