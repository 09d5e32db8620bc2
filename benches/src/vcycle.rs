//! The `vcycle` workload: one V(2,2) weighted-Jacobi cycle of the Poisson
//! equation, Dirichlet 0, on 2048x2048 f32 with 6 levels, and the bytes it
//! must move.
//!
//! The bandwidth bound counts, per launch, the pixels each kernel must read
//! and write once (4 bytes each, f32): a sweep or the residual reads the
//! solution and the right-hand side and writes one image (12 B per output
//! pixel); the fused residual-restriction reads both fine images under a
//! coarse pixel and writes it (36 B per coarse pixel); the restriction 20 B
//! per coarse pixel; the prolongation reads the fine solution, a quarter
//! of a coarse pixel and writes (9 B per fine pixel); a fill writes (4 B).

use hipacc::multigrid::{manufactured, Bc, CycleKind, CycleOptions, Poisson, Smoother};
use hipacc::{Device, Result, Trace};

/// The finest size.
pub const SIZE: usize = 2048;
/// Levels.
pub const LEVELS: usize = 6;

/// A problem ready for V-cycles.
pub struct VcycleRun {
    problem: Poisson<f32>,
    opts: CycleOptions,
    device: Device,
}

impl VcycleRun {
    /// The problem on `device`, fused or not.
    pub fn new(device: Device, fused: bool) -> Result<VcycleRun> {
        let problem = Poisson::<f32>::new(SIZE, SIZE, LEVELS, Bc::Dirichlet, 1.0 / SIZE as f64)?;
        manufactured::fill_rhs(Bc::Dirichlet, &problem.rhs())?;
        let opts =
            CycleOptions::new(CycleKind::V, Smoother::Jacobi { omega: 0.8 }, 2, 2).fused(fused);
        Ok(VcycleRun {
            problem,
            opts,
            device,
        })
    }

    /// With cycles recorded once and replayed on a GPU device (see
    /// [`CycleOptions::graph`]).
    pub fn with_graph(mut self, graph: bool) -> VcycleRun {
        self.opts = self.opts.graph(graph);
        self
    }

    /// With the smoothing sweeps blocked in time on the CPU (see
    /// [`CycleOptions::blocked`]). Its launches move fewer bytes than
    /// [`trace_bytes`] counts for the unblocked cycle: that count stays
    /// the bound it is measured against (one pass per kernel).
    pub fn with_blocked(mut self, blocked: bool) -> VcycleRun {
        self.opts = self.opts.blocked(blocked);
        self
    }

    /// One cycle; its trace.
    pub fn cycle(&self) -> Result<Trace> {
        self.problem.cycle(&self.device, &self.opts)
    }
}

/// Bytes a launch of `kernel` at `level` must move (see the module docs).
pub fn launch_bytes(kernel: &str, level: usize) -> u64 {
    let (w, h) = hipacc::level_size(SIZE, SIZE, level);
    let fine = (w * h) as u64;
    let (cw, ch) = hipacc::level_size(SIZE, SIZE, level + 1);
    let coarse = (cw * ch) as u64;
    match kernel {
        "Smooth" | "Residual" => 12 * fine,
        "ResidualRestrict" => 36 * coarse,
        "Restrict" => 20 * coarse,
        "ProlongAdd" => 9 * fine,
        "Fill" => 4 * fine,
        _ => 12 * fine,
    }
}

/// Bytes all launches of `trace` must move.
pub fn trace_bytes(trace: &Trace) -> u64 {
    trace
        .launches()
        .map(|l| launch_bytes(&l.kernel, l.level))
        .sum()
}
