//! Cycles recorded once and replayed ([`CycleOptions::graph`]).
//!
//! On coarse levels a kernel runs for microseconds, less than the host
//! needs to prepare its launch, so a cycle of plain launches keeps the
//! device waiting on the host. With replay, the first cycle from a given
//! state runs as usual and is recorded (the device's launch recording,
//! whatever its backend): its launches between two host steps become one
//! segment each, and the host steps are noted in order between them. They are the exact solve of the
//! coarsest level (it reads the coarse right-hand side back and uploads the
//! solution) and the exchange of a level's solution and scratch images
//! (host bookkeeping only). A later cycle from the same state replays:
//! the prepared launches of each segment, the host steps redone in between.
//!
//! The state is which image each level of the solution, right-hand side
//! and scratch pyramids holds: a cycle can end with some levels exchanged,
//! so two states may alternate, and each gets its own recording. Options
//! or a device other than those recorded start a new recording.

use super::cycle::{self, Start};
use super::options::CycleOptions;
use super::real::Real;
use super::Poisson;
use crate::gpu::Replay;
use crate::{Device, Error, Pyramid, Result, Trace};
use std::cell::RefCell;
use std::sync::{Mutex, PoisonError};

/// Recordings kept per problem: the two alternating states of one set of
/// options, and a few more.
const KEPT: usize = 4;

/// The recorded cycles of one problem.
#[derive(Default)]
pub(crate) struct Replays {
    entries: Mutex<Vec<Entry>>,
}

struct Entry {
    key: Key,
    plan: Plan,
}

/// What a recording depends on.
#[derive(PartialEq)]
struct Key {
    device: String,
    opts: CycleOptions,
    images: Vec<u64>,
}

enum Plan {
    /// Replay these steps; the trace of the recorded cycle.
    Replay { steps: Vec<Step>, trace: Trace },
    /// The cycle cannot be replayed (the reason); it runs plain launches.
    Plain,
}

/// One step of a recorded cycle.
enum Step {
    /// Launches, recorded.
    Graph(Box<dyn Replay>),
    /// The exact solve of the coarsest level on the host.
    CoarseSolve,
    /// The solution and scratch images of a level exchanged.
    Swap(usize),
}

/// What a recording cycle notes besides its launches.
pub(crate) struct Recorder {
    dev: Device,
    steps: RefCell<Vec<Step>>,
}

impl Recorder {
    /// Ends the current segment: its launches become a replay step.
    fn cut(&self) -> Result<()> {
        if let Some(s) = self.dev.end_recording()? {
            self.steps.borrow_mut().push(Step::Graph(s));
        }
        Ok(())
    }

    /// Runs the coarse solve as a host step between two segments.
    pub(crate) fn coarse_solve(&self, solve: impl FnOnce() -> Result<()>) -> Result<()> {
        self.cut()?;
        self.steps.borrow_mut().push(Step::CoarseSolve);
        solve()?;
        self.dev.begin_recording().map(|_| ())
    }

    /// Notes that the images of `level` were exchanged. No cut is needed:
    /// a swap only changes which pyramid slot holds which image, and the
    /// graphs hold the images themselves. Only its order relative to
    /// coarse solves (which read slots) matters, and those cut.
    pub(crate) fn swapped(&self, level: usize) {
        self.steps.borrow_mut().push(Step::Swap(level));
    }
}

/// One cycle of `opts` on a device that records launches: a replay when
/// this state was recorded, else a recorded run.
pub(crate) fn cycle<T: Real>(p: &Poisson<T>, dev: &Device, opts: &CycleOptions) -> Result<Trace> {
    let key = Key {
        device: dev.name(),
        opts: opts.clone(),
        images: image_ids(p)?,
    };
    let mut entries = p
        .replays
        .entries
        .lock()
        .unwrap_or_else(PoisonError::into_inner);
    if let Some(i) = entries.iter().position(|e| e.key == key) {
        match &mut entries[i].plan {
            Plan::Plain => return cycle::run(p, dev, opts, Start::Cycle, None),
            Plan::Replay { steps, trace } => {
                if replay(p, dev, steps)? {
                    return Ok(trace.replayed());
                }
                // An image moved to other memory: record again.
                entries.remove(i);
            }
        }
    }
    let (trace, plan) = record(p, dev, opts)?;
    if entries.len() == KEPT {
        entries.remove(0);
    }
    entries.push(Entry { key, plan });
    Ok(trace)
}

/// Runs one cycle while recording it.
fn record<T: Real>(p: &Poisson<T>, dev: &Device, opts: &CycleOptions) -> Result<(Trace, Plan)> {
    if !dev.begin_recording()? {
        let trace = cycle::run(p, dev, opts, Start::Cycle, None)?;
        return Ok((trace, Plan::Plain));
    }
    let rec = Recorder {
        dev: dev.clone(),
        steps: RefCell::new(Vec::new()),
    };
    let ran = cycle::run(p, dev, opts, Start::Cycle, Some(&rec)).and_then(|trace| {
        rec.cut()?;
        Ok(trace)
    });
    let trace = match ran {
        Ok(trace) => trace,
        Err(e) => {
            dev.abort_recording();
            return Err(e);
        }
    };
    let steps = rec.steps.into_inner();
    // A replay starts with launches: a refusal there leaves nothing done.
    let replayable = matches!(steps.first(), Some(Step::Graph(_)));
    let plan = if replayable {
        Plan::Replay {
            steps,
            trace: trace.clone(),
        }
    } else {
        Plan::Plain
    };
    Ok((trace, plan))
}

/// Replays `steps`; `Ok(false)`, having done nothing, when the first
/// segment's images are no longer where they were recorded.
fn replay<T: Real>(p: &Poisson<T>, dev: &Device, steps: &mut [Step]) -> Result<bool> {
    for (i, step) in steps.iter_mut().enumerate() {
        match step {
            Step::Graph(segment) => {
                if !segment.replay()? {
                    if i == 0 {
                        return Ok(false);
                    }
                    return Err(Error::Launch {
                        backend: dev.kind(),
                        kernel: "replay".into(),
                        message: "an image of a recorded cycle moved to other memory \
                                  during its replay"
                            .into(),
                    });
                }
            }
            Step::CoarseSolve => cycle::coarse_solve(p)?,
            Step::Swap(level) => p.u.swap_level(&p.t, *level)?,
        }
    }
    Ok(true)
}

/// The image of every level of the three pyramids, by id.
fn image_ids<T: Real>(p: &Poisson<T>) -> Result<Vec<u64>> {
    let mut ids = Vec::with_capacity(3 * p.levels());
    for pyramid in [&p.u, &p.f, &p.t] {
        ids.extend(level_ids(pyramid)?);
    }
    Ok(ids)
}

fn level_ids<T: Real>(pyramid: &Pyramid<T>) -> Result<Vec<u64>> {
    (0..pyramid.depth())
        .map(|level| Ok(pyramid.level(level)?.id()))
        .collect()
}
