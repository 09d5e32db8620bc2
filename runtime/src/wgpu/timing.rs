//! The duration of the last launch on wgpu, for
//! [`Device::last_launch_time`](crate::Device::last_launch_time) and the
//! explore mode.
//!
//! Where the adapter offers `TIMESTAMP_QUERY`, each compute pass writes a
//! timestamp at its start and end into one two-entry query set, reused by
//! every launch, and the launch's command buffer resolves them into a small
//! buffer. Nothing is read back on the launch path: only when the duration
//! is asked is the resolved pair copied to a mappable buffer and read (the
//! queue's order makes it the last launch's pair).
//!
//! Where the adapter lacks timestamp queries, the duration is wall-clock
//! time from the launch's submission to the completion of its work, as the
//! queue's work-done callback observes it. That callback runs when the
//! device is polled (a synchronize, a read-back, or the question itself,
//! which waits), so the figure is exact only when asked soon after the
//! launch, as the explore mode does, and it includes the driver's
//! submission overhead. It is never a made-up value: without a launch it is
//! `None`.

use crate::gpu::timing::LastLaunch;
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

/// Bytes of the two resolved timestamps.
const PAIR_BYTES: u64 = 2 * wgpu::QUERY_SIZE as u64;

/// How launches on one device are timed.
pub(crate) struct LaunchClock {
    timestamps: Option<Timestamps>,
    last: LastLaunch<Record>,
}

/// The query set and buffers of timestamp timing.
struct Timestamps {
    queries: wgpu::QuerySet,
    /// Where each launch resolves its pair.
    resolved: wgpu::Buffer,
    /// Where the pair is copied when its duration is asked.
    readback: wgpu::Buffer,
    /// Nanoseconds per timestamp tick.
    period_ns: f64,
}

/// What the last launch left to measure.
enum Record {
    /// Its pass wrote the timestamp pair.
    Timestamps,
    /// Wall-clock time: submitted at `submitted`; `done` is set by the
    /// queue's work-done callback.
    Wall {
        submitted: Instant,
        index: wgpu::SubmissionIndex,
        done: Arc<OnceLock<Instant>>,
    },
}

impl LaunchClock {
    /// Timestamp timing when `device` has `TIMESTAMP_QUERY`, else wall-clock
    /// timing.
    pub(crate) fn new(device: &wgpu::Device, queue: &wgpu::Queue) -> LaunchClock {
        let timestamps = device
            .features()
            .contains(wgpu::Features::TIMESTAMP_QUERY)
            .then(|| Timestamps::new(device, queue));
        LaunchClock {
            timestamps,
            last: LastLaunch::default(),
        }
    }

    /// The timestamp writes for a launch's compute pass.
    pub(crate) fn pass_writes(&self) -> Option<wgpu::ComputePassTimestampWrites<'_>> {
        self.timestamps
            .as_ref()
            .map(|t| wgpu::ComputePassTimestampWrites {
                query_set: &t.queries,
                beginning_of_pass_write_index: Some(0),
                end_of_pass_write_index: Some(1),
            })
    }

    /// Encodes what follows a timed pass: the resolve of its timestamps.
    pub(crate) fn after_pass(&self, encoder: &mut wgpu::CommandEncoder) {
        if let Some(t) = &self.timestamps {
            encoder.resolve_query_set(&t.queries, 0..2, &t.resolved, 0);
        }
    }

    /// Records a launch whose command buffer `submit` submits.
    pub(crate) fn submit(
        &self,
        queue: &wgpu::Queue,
        submit: impl FnOnce() -> wgpu::SubmissionIndex,
    ) {
        if self.timestamps.is_some() {
            submit();
            self.last.set(Record::Timestamps);
            return;
        }
        let submitted = Instant::now();
        let index = submit();
        let done = Arc::new(OnceLock::new());
        let set = Arc::clone(&done);
        queue.on_submitted_work_done(move || {
            let _ = set.set(Instant::now());
        });
        self.last.set(Record::Wall {
            submitted,
            index,
            done,
        });
    }

    /// The last launch's duration (waiting for it); `None` before any
    /// launch or when the device fails to report it.
    pub(crate) fn last_duration(
        &self,
        device: &wgpu::Device,
        queue: &wgpu::Queue,
    ) -> Option<Duration> {
        self.last.duration(|record| match record {
            Record::Timestamps => self.timestamps.as_ref()?.read(device, queue),
            Record::Wall {
                submitted,
                index,
                done,
            } => {
                device
                    .poll(wgpu::PollType::Wait {
                        submission_index: Some(index.clone()),
                        timeout: None,
                    })
                    .ok()?;
                // The wait has run the callback; `now` bounds it otherwise.
                let end = done.get().copied().unwrap_or_else(Instant::now);
                Some(end.saturating_duration_since(*submitted))
            }
        })
    }
}

impl Timestamps {
    fn new(device: &wgpu::Device, queue: &wgpu::Queue) -> Timestamps {
        let buffer = |usage| {
            device.create_buffer(&wgpu::BufferDescriptor {
                label: Some("hipacc launch timestamps"),
                size: PAIR_BYTES,
                usage,
                mapped_at_creation: false,
            })
        };
        Timestamps {
            queries: device.create_query_set(&wgpu::QuerySetDescriptor {
                label: Some("hipacc launch timestamps"),
                ty: wgpu::QueryType::Timestamp,
                count: 2,
            }),
            resolved: buffer(wgpu::BufferUsages::QUERY_RESOLVE | wgpu::BufferUsages::COPY_SRC),
            readback: buffer(wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST),
            period_ns: f64::from(queue.get_timestamp_period()),
        }
    }

    /// The resolved pair as a duration: copied behind every launch queued,
    /// mapped and read. `None` when mapping fails or the end precedes the
    /// start.
    fn read(&self, device: &wgpu::Device, queue: &wgpu::Queue) -> Option<Duration> {
        let mut encoder =
            device.create_command_encoder(&wgpu::CommandEncoderDescriptor { label: None });
        encoder.copy_buffer_to_buffer(&self.resolved, 0, &self.readback, 0, PAIR_BYTES);
        queue.submit([encoder.finish()]);
        let slice = self.readback.slice(..);
        let (tx, rx) = std::sync::mpsc::channel();
        slice.map_async(wgpu::MapMode::Read, move |r| {
            let _ = tx.send(r);
        });
        let polled = device.poll(wgpu::PollType::Wait {
            submission_index: None,
            timeout: None,
        });
        let mapped = polled.is_ok() && matches!(rx.recv(), Ok(Ok(())));
        let ticks = mapped
            .then(|| {
                let view = slice.get_mapped_range().ok()?;
                let word = |i: usize| {
                    let bytes: [u8; 8] = view[i * 8..i * 8 + 8].try_into().ok()?;
                    Some(u64::from_le_bytes(bytes))
                };
                Some((word(0)?, word(1)?))
            })
            .flatten();
        if mapped {
            self.readback.unmap();
        }
        let (start, end) = ticks?;
        let ticks = end.checked_sub(start)?;
        Some(Duration::from_secs_f64(ticks as f64 * self.period_ns / 1e9))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wgpu::device::{adapter, request_device};

    /// The adapter, or `None` after a skip line; with `HIPACC_REQUIRE_WGPU`
    /// set a missing adapter is a failure.
    fn found() -> Option<wgpu::Adapter> {
        match adapter() {
            Ok(a) => Some(a),
            Err(e) if std::env::var_os("HIPACC_REQUIRE_WGPU").is_some() => {
                panic!("HIPACC_REQUIRE_WGPU is set and the wgpu backend is unavailable: {e}")
            }
            Err(e) => {
                println!("[SKIP] wgpu: {e}");
                None
            }
        }
    }

    /// Submits one compute pass (empty: it needs no shader) through `clock`.
    fn launch(clock: &LaunchClock, device: &wgpu::Device, queue: &wgpu::Queue) {
        let mut encoder =
            device.create_command_encoder(&wgpu::CommandEncoderDescriptor { label: None });
        encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
            label: None,
            timestamp_writes: clock.pass_writes(),
        });
        clock.after_pass(&mut encoder);
        clock.submit(queue, || queue.submit([encoder.finish()]));
    }

    #[test]
    fn without_timestamp_queries_a_launch_is_timed_by_the_wall_clock() {
        let Some(adapter) = found() else { return };
        let (device, queue) = request_device(&adapter, wgpu::Features::empty()).unwrap();
        let clock = LaunchClock::new(&device, &queue);
        assert!(clock.pass_writes().is_none());
        assert_eq!(clock.last_duration(&device, &queue), None);
        for _ in 0..2 {
            launch(&clock, &device, &queue);
            let t = clock.last_duration(&device, &queue).expect("a duration");
            assert!(t > Duration::ZERO, "{t:?}");
        }
    }

    #[test]
    fn with_timestamp_queries_a_launch_reads_its_pass_timestamps() {
        let Some(adapter) = found() else { return };
        if !adapter.features().contains(wgpu::Features::TIMESTAMP_QUERY) {
            println!("[SKIP] wgpu: the adapter has no timestamp queries");
            return;
        }
        let (device, queue) = request_device(&adapter, wgpu::Features::TIMESTAMP_QUERY).unwrap();
        let clock = LaunchClock::new(&device, &queue);
        assert!(clock.pass_writes().is_some());
        assert_eq!(clock.last_duration(&device, &queue), None);
        // An empty pass may take no tick; the pair is read, in order, twice.
        for _ in 0..2 {
            launch(&clock, &device, &queue);
            assert!(clock.last_duration(&device, &queue).is_some());
        }
    }
}
