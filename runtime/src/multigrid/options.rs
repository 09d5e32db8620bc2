//! What a multigrid cycle does: its shape, smoother, sweep counts and
//! whether residual and restriction are fused.

use thiserror::Error as ThisError;

/// The boundary condition of the Poisson problem.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Bc {
    /// Given values on the boundary (zero unless folded into the
    /// right-hand side with [`super::Poisson::add_dirichlet_values`]).
    Dirichlet,
    /// Zero normal derivative on the whole boundary (pure Neumann).
    Neumann,
}

impl Bc {
    /// `+1` for Dirichlet (ghost `-u`), `-1` for Neumann (ghost `u`): the
    /// diagonal is `4 + sign · (sides on the boundary)`.
    pub(crate) fn sign(self) -> f64 {
        match self {
            Bc::Dirichlet => 1.0,
            Bc::Neumann => -1.0,
        }
    }
}

/// The recursion pattern of one cycle.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CycleKind {
    /// One coarse-grid correction per level.
    V,
    /// Two coarse-grid corrections per level.
    W,
    /// An F-cycle: an F-cycle then a V-cycle on the next coarser level.
    F,
}

/// The smoother.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Smoother {
    /// Weighted Jacobi with weight `omega` in `(0, 2)` (0.8 is optimal for
    /// the 5-point Laplacian as a smoother).
    Jacobi {
        /// The weight.
        omega: f64,
    },
    /// Red-black Gauss-Seidel: the red cells (`x + y` even) then the black.
    RedBlack,
}

/// Misconfigured multigrid options; each message says what to change.
#[derive(Debug, ThisError, PartialEq)]
#[non_exhaustive]
pub enum MultigridError {
    /// A Jacobi weight outside `(0, 2)`.
    #[error("the Jacobi weight omega must be in (0, 2), got {0}")]
    Omega(f64),
    /// No smoothing at all.
    #[error("a cycle needs at least one smoothing sweep (pre + post) on every level; level {level} has none")]
    NoSmoothing {
        /// The level.
        level: usize,
    },
    /// Zero cycles requested.
    #[error("the number of cycles must be at least 1")]
    ZeroCycles,
    /// A grid spacing that is not positive and finite.
    #[error("the grid spacing must be positive and finite, got {0}")]
    Spacing(f64),
    /// A tolerance that is not positive.
    #[error("the tolerance must be positive and finite, got {0}")]
    Tolerance(f64),
    /// A Dirichlet grid that does not halve evenly down to its coarsest level.
    #[error("a {width}x{height} Dirichlet grid allows at most {max} levels: every level but the coarsest must have even sizes (choose a size divisible by 2^(levels-1), or fewer levels)")]
    NotDivisible {
        /// Finest width.
        width: usize,
        /// Finest height.
        height: usize,
        /// The most levels allowed.
        max: usize,
    },
    /// An unknown name on the command line.
    #[error("unknown {what} `{name}` (use {expected})")]
    UnknownName {
        /// What was named.
        what: &'static str,
        /// The name given.
        name: String,
        /// The names accepted.
        expected: &'static str,
    },
}

/// One cycle's configuration.
///
/// ```
/// use hipacc::multigrid::{CycleKind, CycleOptions, Smoother};
/// let opts = CycleOptions::new(CycleKind::V, Smoother::RedBlack, 2, 2).fused(true);
/// assert!(opts.validate(6).is_ok());
/// // The same cycle, its sweeps blocked in time on the CPU: the same result.
/// let blocked = opts.clone().blocked(true);
/// assert!(blocked.blocked && blocked.validate(6).is_ok());
/// let bad = CycleOptions::new(CycleKind::V, Smoother::Jacobi { omega: 2.5 }, 2, 2);
/// assert!(bad.validate(6).is_err());
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct CycleOptions {
    /// V, W or F.
    pub kind: CycleKind,
    /// The smoother.
    pub smoother: Smoother,
    /// Pre-smoothing sweeps on every level without an entry in `per_level`.
    pub pre: usize,
    /// Post-smoothing sweeps likewise.
    pub post: usize,
    /// `(pre, post)` for individual levels (index = level, 0 finest);
    /// levels past its end use `pre` and `post`.
    pub per_level: Vec<(usize, usize)>,
    /// Residual and restriction in one kernel (fewer passes over the fine
    /// grid) instead of two.
    pub fused: bool,
    /// Sweeps on the coarsest level when it is too large to solve exactly
    /// (see [`super`]'s coarse solve).
    pub coarse_sweeps: usize,
    /// Record the first cycle from each state and replay later ones: the
    /// prepared launches of each run between host steps run again, without
    /// the host-side work of every launch, which on coarse levels takes
    /// longer than the kernels. On every backend, the CPU's included; no
    /// effect on full multigrid.
    pub graph: bool,
    /// Run the smoothing sweeps of a level blocked in time on the CPU: the
    /// pre-smoothing sweeps as one [`crate::pipeline::Pipeline`], and the
    /// coarse-grid correction with the post-smoothing sweeps as another,
    /// each computed per row strip in cache. The
    /// same result, bit for bit; fewer passes over memory on the large
    /// levels. Other devices, and cycles recorded for replay
    /// ([`Self::graph`]), run the sweeps one launch each.
    pub blocked: bool,
}

impl CycleOptions {
    /// `kind(pre, post)` with `smoother`, unfused, 64 coarse sweeps,
    /// plain launches, unblocked.
    pub fn new(kind: CycleKind, smoother: Smoother, pre: usize, post: usize) -> CycleOptions {
        CycleOptions {
            kind,
            smoother,
            pre,
            post,
            per_level: Vec::new(),
            fused: false,
            coarse_sweeps: 64,
            graph: false,
            blocked: false,
        }
    }

    /// With the sweeps blocked in time on the CPU (or not); see
    /// [`Self::blocked`].
    pub fn blocked(mut self, blocked: bool) -> CycleOptions {
        self.blocked = blocked;
        self
    }

    /// With cycles recorded and replayed (or not); see [`Self::graph`].
    pub fn graph(mut self, graph: bool) -> CycleOptions {
        self.graph = graph;
        self
    }

    /// With residual and restriction fused (or not).
    pub fn fused(mut self, fused: bool) -> CycleOptions {
        self.fused = fused;
        self
    }

    /// `(pre, post)` sweeps at `level`.
    pub fn sweeps(&self, level: usize) -> (usize, usize) {
        self.per_level
            .get(level)
            .copied()
            .unwrap_or((self.pre, self.post))
    }

    /// Checks the options for a hierarchy of `levels` levels.
    pub fn validate(&self, levels: usize) -> Result<(), MultigridError> {
        if let Smoother::Jacobi { omega } = self.smoother {
            if !(omega > 0.0 && omega < 2.0) {
                return Err(MultigridError::Omega(omega));
            }
        }
        for level in 0..levels.saturating_sub(1) {
            let (pre, post) = self.sweeps(level);
            if pre + post == 0 {
                return Err(MultigridError::NoSmoothing { level });
            }
        }
        Ok(())
    }
}

impl std::str::FromStr for CycleKind {
    type Err = MultigridError;
    fn from_str(s: &str) -> Result<CycleKind, MultigridError> {
        match s.to_ascii_lowercase().as_str() {
            "v" => Ok(CycleKind::V),
            "w" => Ok(CycleKind::W),
            "f" => Ok(CycleKind::F),
            _ => Err(MultigridError::UnknownName {
                what: "cycle",
                name: s.to_string(),
                expected: "v, w or f",
            }),
        }
    }
}

impl std::str::FromStr for Bc {
    type Err = MultigridError;
    fn from_str(s: &str) -> Result<Bc, MultigridError> {
        match s.to_ascii_lowercase().as_str() {
            "dirichlet" => Ok(Bc::Dirichlet),
            "neumann" => Ok(Bc::Neumann),
            _ => Err(MultigridError::UnknownName {
                what: "boundary condition",
                name: s.to_string(),
                expected: "dirichlet or neumann",
            }),
        }
    }
}

impl std::fmt::Display for CycleKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            CycleKind::V => "v",
            CycleKind::W => "w",
            CycleKind::F => "f",
        })
    }
}

impl std::fmt::Display for Bc {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Bc::Dirichlet => "dirichlet",
            Bc::Neumann => "neumann",
        })
    }
}
