//! The schedule trace: what a traversal ran, where and for how long.
//!
//! While [`crate::traverse`] runs, every kernel launched on its thread
//! (through [`crate::Execute::execute`]) is recorded with the traversal's
//! current level, the backend variant and the elapsed host time of the
//! launch call (on GPU backends that is the time to enqueue it, unless the
//! backend waits). The traversal records a synchronisation point each time
//! control arrives at a level: entering the body at a level and returning
//! to a level from a recursion. A nested traversal records into its own
//! trace and into every enclosing one (there with the enclosing level).
//!
//! A [`Trace`] prints as a per-kernel, per-level timing table (like Table 4
//! of the HIPAcc multigrid paper) and exports its control flow as Graphviz
//! DOT (like the paper's V- and W-cycle figures): nodes are the
//! synchronisation points, ranked by level, and edges are the kernel
//! executions between two of them (a dashed edge when none ran).

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::rc::Rc;
use std::time::{Duration, Instant};

/// One recorded event.
#[derive(Clone, Debug, PartialEq)]
pub enum Event {
    /// Control arrived at `level`.
    Sync {
        /// The level.
        level: usize,
    },
    /// A kernel launch.
    Launch(Launch),
}

/// A recorded kernel launch.
#[derive(Clone, Debug, PartialEq)]
pub struct Launch {
    /// The kernel's name.
    pub kernel: String,
    /// The traversal level it ran at.
    pub level: usize,
    /// The variant: the backend's name and, on GPU backends, its config.
    pub variant: String,
    /// Host time of the launch call.
    pub elapsed: Duration,
}

/// Everything one traversal ran, in order.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Trace {
    events: Vec<Event>,
}

impl Trace {
    /// The events in the order they happened.
    pub fn events(&self) -> &[Event] {
        &self.events
    }

    /// The launches in order.
    pub fn launches(&self) -> impl Iterator<Item = &Launch> {
        self.events.iter().filter_map(|e| match e {
            Event::Launch(l) => Some(l),
            Event::Sync { .. } => None,
        })
    }

    /// The same schedule replayed: every launch's variant ends in
    /// `graph replay` and its host time is zero (the replay enqueued the
    /// prepared launch without the host work of a plain one).
    pub(crate) fn replayed(&self) -> Trace {
        let events = self
            .events
            .iter()
            .map(|e| match e {
                Event::Launch(l) => Event::Launch(Launch {
                    variant: format!("{}, graph replay", l.variant),
                    elapsed: Duration::ZERO,
                    ..l.clone()
                }),
                Event::Sync { .. } => e.clone(),
            })
            .collect();
        Trace { events }
    }

    /// Number of kernel launches.
    pub fn kernel_launches(&self) -> usize {
        self.launches().count()
    }

    /// The level of each synchronisation point, in order: the shape of the
    /// cycle (`[0, 1, 2, 1, 0]` for a V over 3 levels).
    pub fn sync_levels(&self) -> Vec<usize> {
        self.events
            .iter()
            .filter_map(|e| match e {
                Event::Sync { level } => Some(*level),
                Event::Launch(_) => None,
            })
            .collect()
    }

    /// Total host time of all launches.
    pub fn total(&self) -> Duration {
        self.launches().map(|l| l.elapsed).sum()
    }

    /// A table with one row per kernel and level: launches, total and mean
    /// milliseconds; rows sorted by kernel then level, a total line last.
    pub fn timing_table(&self) -> String {
        let mut rows: BTreeMap<(&str, usize), (usize, Duration)> = BTreeMap::new();
        for l in self.launches() {
            let row = rows.entry((&l.kernel, l.level)).or_default();
            row.0 += 1;
            row.1 += l.elapsed;
        }
        let width = rows.keys().map(|(k, _)| k.len()).max().unwrap_or(0).max(6);
        let mut out = String::new();
        let _ = writeln!(
            out,
            "{:<width$}  {:>5}  {:>8}  {:>10}  {:>10}",
            "kernel", "level", "launches", "total ms", "mean ms"
        );
        for ((kernel, level), (n, total)) in &rows {
            let ms = total.as_secs_f64() * 1e3;
            let _ = writeln!(
                out,
                "{kernel:<width$}  {level:>5}  {n:>8}  {ms:>10.3}  {:>10.3}",
                ms / *n as f64
            );
        }
        let _ = writeln!(
            out,
            "{:<width$}  {:>5}  {:>8}  {:>10.3}",
            "total",
            "",
            self.kernel_launches(),
            self.total().as_secs_f64() * 1e3
        );
        out
    }

    /// The control flow as a Graphviz digraph: one node per synchronisation
    /// point (labelled with its level, same-level nodes on one rank, the
    /// finest at the top), one edge per kernel launch between consecutive
    /// points (labelled with the kernel's name and milliseconds), and a
    /// dashed edge where control moved without a launch.
    pub fn to_dot(&self) -> String {
        let mut out = String::from("digraph schedule {\n  rankdir=TB;\n  node [shape=circle];\n");
        let mut node = None::<usize>;
        let mut pending: Vec<&Launch> = Vec::new();
        let mut ranks: BTreeMap<usize, Vec<usize>> = BTreeMap::new();
        let mut count = 0;
        for e in &self.events {
            match e {
                Event::Launch(l) => pending.push(l),
                Event::Sync { level } => {
                    let id = count;
                    count += 1;
                    let _ = writeln!(out, "  s{id} [label=\"{level}\"];");
                    ranks.entry(*level).or_default().push(id);
                    if let Some(prev) = node {
                        edges(&mut out, prev, id, &pending);
                    }
                    pending.clear();
                    node = Some(id);
                }
            }
        }
        if let (Some(prev), false) = (node, pending.is_empty()) {
            let _ = writeln!(out, "  end [shape=point];");
            edges(&mut out, prev, usize::MAX, &pending);
        }
        for ids in ranks.values() {
            let names: Vec<String> = ids.iter().map(|i| format!("s{i}")).collect();
            let _ = writeln!(out, "  {{ rank=same; {}; }}", names.join("; "));
        }
        out.push_str("}\n");
        out
    }

    /// Appends the events of `other` (a later traversal) to this trace.
    pub fn append(&mut self, other: Trace) {
        self.events.extend(other.events);
    }

    fn push(&mut self, e: Event) {
        self.events.push(e);
    }
}

/// Writes the edges from node `from` to `to` (`usize::MAX`: the end node).
fn edges(out: &mut String, from: usize, to: usize, launches: &[&Launch]) {
    let to = if to == usize::MAX {
        "end".to_string()
    } else {
        format!("s{to}")
    };
    if launches.is_empty() {
        let _ = writeln!(out, "  s{from} -> {to} [style=dashed];");
    }
    for l in launches {
        let _ = writeln!(
            out,
            "  s{from} -> {to} [label=\"{} ({:.3} ms)\"];",
            l.kernel.replace('"', "'"),
            l.elapsed.as_secs_f64() * 1e3
        );
    }
}

/// A trace being recorded by a running traversal.
pub(crate) struct Recorder {
    trace: Trace,
    level: usize,
}

type Active = Rc<RefCell<Recorder>>;

thread_local! {
    static ACTIVE: RefCell<Vec<Active>> = const { RefCell::new(Vec::new()) };
}

/// Starts recording on this thread; the returned guard stops it.
pub(crate) fn start() -> RecordingGuard {
    let rec = Rc::new(RefCell::new(Recorder {
        trace: Trace::default(),
        level: 0,
    }));
    ACTIVE.with(|a| a.borrow_mut().push(Rc::clone(&rec)));
    RecordingGuard { rec }
}

/// Stops its recording when dropped (also on an early return or a panic).
pub(crate) struct RecordingGuard {
    rec: Active,
}

impl RecordingGuard {
    /// Records that control arrived at `level` (and makes it current).
    pub(crate) fn sync(&self, level: usize) {
        let mut r = self.rec.borrow_mut();
        r.level = level;
        r.trace.push(Event::Sync { level });
    }

    /// Stops recording and returns the trace.
    pub(crate) fn finish(self) -> Trace {
        let trace = std::mem::take(&mut self.rec.borrow_mut().trace);
        drop(self);
        trace
    }
}

impl Drop for RecordingGuard {
    fn drop(&mut self) {
        ACTIVE.with(|a| {
            let mut a = a.borrow_mut();
            if let Some(i) = a.iter().rposition(|r| Rc::ptr_eq(r, &self.rec)) {
                a.remove(i);
            }
        });
    }
}

/// Whether a traversal is recording on this thread.
pub(crate) fn active() -> bool {
    ACTIVE.with(|a| !a.borrow().is_empty())
}

/// Runs `launch` and, when a traversal is recording on this thread, records
/// it as kernel `kernel` of variant `variant`.
pub(crate) fn launch<R>(kernel: &str, variant: &str, launch: impl FnOnce() -> R) -> R {
    if !active() {
        return launch();
    }
    let start = Instant::now();
    let r = launch();
    record(kernel, variant, start.elapsed());
    r
}

/// Records a launch in every recording traversal of this thread.
pub(crate) fn record(kernel: &str, variant: &str, elapsed: Duration) {
    ACTIVE.with(|a| {
        for rec in a.borrow().iter() {
            let mut r = rec.borrow_mut();
            let level = r.level;
            r.trace.push(Event::Launch(Launch {
                kernel: kernel.to_string(),
                level,
                variant: variant.to_string(),
                elapsed,
            }));
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_only_while_active_and_into_every_enclosing_trace() {
        launch("outside", "cpu", || ());
        let outer = start();
        outer.sync(0);
        launch("a", "cpu", || ());
        let inner = start();
        inner.sync(2);
        launch("b", "cpu", || ());
        let inner = inner.finish();
        outer.sync(1);
        let outer = outer.finish();
        launch("after", "cpu", || ());
        let names = |t: &Trace| {
            t.launches()
                .map(|l| (l.kernel.clone(), l.level))
                .collect::<Vec<_>>()
        };
        assert_eq!(names(&inner), [("b".to_string(), 2)]);
        assert_eq!(names(&outer), [("a".to_string(), 0), ("b".to_string(), 0)]);
        assert_eq!(outer.sync_levels(), [0, 1]);
        assert!(!active());
    }

    #[test]
    fn dot_has_a_node_per_sync_and_an_edge_per_launch() {
        let rec = start();
        rec.sync(0);
        record("smooth", "cpu", Duration::from_millis(1));
        record("restrict", "cpu", Duration::from_millis(2));
        rec.sync(1);
        rec.sync(0);
        let t = rec.finish();
        let dot = t.to_dot();
        assert_eq!(dot.matches("[label=\"").count(), 3 + 2, "{dot}");
        assert!(dot.contains("s0 -> s1 [label=\"smooth"), "{dot}");
        assert!(dot.contains("s1 -> s2 [style=dashed]"), "{dot}");
        assert!(dot.contains("{ rank=same; s0; s2; }"), "{dot}");
        let table = t.timing_table();
        assert!(table.contains("restrict"), "{table}");
        assert!(table.lines().last().is_some_and(|l| l.contains(" 2 ")));
    }
}
