//! Batch mode: `hdr-compress IN... --out-dir DIR` tone-maps many files.
//!
//! A directory among the inputs stands for its HDR files (by extension:
//! [`HDR_EXTENSIONS`], any case), sorted by name, not recursing. Each
//! output is `DIR/` + the input's stem + the format's extension ([`plan`]);
//! two inputs that would write the same output, or an output that is one of
//! the inputs, stop the batch before anything is read or written.
//!
//! A bad file does not stop the others: [`run`] records its error and goes
//! on. Outputs are written atomically, so a failed file leaves nothing.
//!
//! Two ways to use the cores ([`Parallelism`]): overlap the stages of
//! consecutive files (the default: the next file is read and the previous
//! one encoded and written, each on its own thread, while the current one is
//! tone-mapped by the CPU backend's thread pool), or run whole files on
//! several workers at once (`--parallel files --jobs N`). Reading,
//! repairing and encoding are serial; overlapping them with the parallel
//! kernels keeps both cores busy with at most three images in memory.
//!
//! Measured on a shared two-core machine, twenty ~1 Mpx photographs
//! (1111x900 and similar: resized PFM and Radiance copies of the project's
//! sample images), release build, ten alternating runs each, wall seconds
//! minimum / median: stages 2.68 / 3.22, two files at a time 3.28 / 3.51;
//! one file after another was slowest (3.86 / 4.86 in a run where stages
//! took 3.10 / 3.87).

use super::fattal::Params;
use super::guard::{self, Source};
use super::job::{self, Destination, Job, Outcome};
use super::output::OutputKind;
use anyhow::{anyhow, bail, Result};
use hipacc::Device;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc::sync_channel;
use std::sync::Mutex;

/// The extensions of HDR files taken from a directory.
pub const HDR_EXTENSIONS: [&str; 5] = ["hdr", "pic", "rgbe", "exr", "pfm"];

/// The inputs: files as given, directories replaced by their HDR files.
pub fn expand_inputs(inputs: &[PathBuf]) -> Result<Vec<Source>> {
    let mut sources = Vec::new();
    for input in inputs {
        if !input.is_dir() {
            sources.push(Source::Path(input.clone()));
            continue;
        }
        let entries = std::fs::read_dir(input)
            .map_err(|e| anyhow!("{}: cannot list the directory: {e}", input.display()))?;
        let mut files = Vec::new();
        for entry in entries {
            let path = entry
                .map_err(|e| anyhow!("{}: cannot list the directory: {e}", input.display()))?
                .path();
            let ext = path
                .extension()
                .and_then(|e| e.to_str())
                .map(str::to_ascii_lowercase);
            if path.is_file() && ext.is_some_and(|e| HDR_EXTENSIONS.contains(&e.as_str())) {
                files.push(path);
            }
        }
        if files.is_empty() {
            bail!(
                "{}: the directory holds no HDR file (.{})",
                input.display(),
                HDR_EXTENSIONS.join(", .")
            );
        }
        files.sort();
        sources.extend(files.into_iter().map(Source::Path));
    }
    if sources.is_empty() {
        bail!("batch mode needs at least one input");
    }
    Ok(sources)
}

/// The jobs of a batch: one output in `out_dir` per source. Fails when two
/// sources map to one output name or an output is one of the inputs.
pub fn plan(sources: Vec<Source>, out_dir: &Path, kind: OutputKind) -> Result<Vec<Job>> {
    let mut jobs: Vec<Job> = Vec::with_capacity(sources.len());
    let mut by_name: HashMap<String, usize> = HashMap::new();
    for source in sources {
        let path = job::default_output(&source, out_dir, kind)?;
        let key = path.file_name().map(|n| n.to_string_lossy().to_lowercase());
        if let Some(&first) = key.as_ref().and_then(|k| by_name.get(k)) {
            bail!(
                "{} and {} would both be written to {}",
                jobs[first].source.name(),
                source.name(),
                path.display()
            );
        }
        if let Some(k) = key {
            by_name.insert(k, jobs.len());
        }
        jobs.push(Job {
            source,
            output: Destination::File(path),
            kind,
            before: None,
        });
    }
    for j in &jobs {
        if let Destination::File(path) = &j.output {
            for other in &jobs {
                guard::refuse_overwriting_input(&other.source, path, "--out-dir")?;
            }
        }
    }
    Ok(jobs)
}

/// How many files run at once with [`Parallelism::Files`] when `--jobs` is
/// not given: the machine's cores, at most the number of files; one for
/// GPU backends (whose kernels queue on one device anyway).
pub fn default_jobs(files: usize, dev: &Device) -> usize {
    if dev.kind().name() != "cpu" {
        return 1;
    }
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    cores.clamp(1, files.max(1))
}

/// One file's result.
#[derive(Debug)]
pub struct FileResult {
    pub job: Job,
    pub outcome: Result<Outcome>,
}

/// What the caller shows while a batch runs.
pub trait Observer: Sync {
    /// A file begins.
    fn started(&self, job: &Job);
    /// A warning about a file that goes on.
    fn warn(&self, message: String);
    /// A file is done or refused.
    fn finished(&self, result: &FileResult);
}

/// How a batch uses the cores.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Parallelism {
    /// This many files at a time, each read, tone-mapped and written by
    /// one worker (1: one file after another).
    Files(usize),
    /// One file per stage at a time: the next file is read and the previous
    /// one written while the current one is tone-mapped.
    Stages,
}

/// Runs every job and returns the results in the jobs' order. Errors of
/// one file do not stop the others.
pub fn run(
    dev: &Device,
    jobs: Vec<Job>,
    params: &Params,
    srgb: bool,
    parallelism: Parallelism,
    observer: &dyn Observer,
) -> Vec<FileResult> {
    let mut results: Vec<Option<Result<Outcome>>> = match parallelism {
        Parallelism::Files(n) => by_files(dev, &jobs, params, srgb, n, observer),
        Parallelism::Stages => by_stages(dev, &jobs, params, srgb, observer),
    };
    results.resize_with(jobs.len(), || None);
    jobs.into_iter()
        .zip(results)
        .map(|(job, outcome)| FileResult {
            job,
            outcome: outcome.unwrap_or_else(|| Err(anyhow!("the file was not processed"))),
        })
        .collect()
}

fn finish(job: &Job, outcome: Result<Outcome>, observer: &dyn Observer) -> Result<Outcome> {
    let result = FileResult {
        job: job.clone(),
        outcome,
    };
    observer.finished(&result);
    result.outcome
}

/// [`Parallelism::Files`]: workers take the next file until none is left.
fn by_files(
    dev: &Device,
    jobs: &[Job],
    params: &Params,
    srgb: bool,
    workers: usize,
    observer: &dyn Observer,
) -> Vec<Option<Result<Outcome>>> {
    let next = AtomicUsize::new(0);
    let slots: Vec<Mutex<Option<Result<Outcome>>>> =
        jobs.iter().map(|_| Mutex::new(None)).collect();
    let work = |dev: Device| loop {
        let i = next.fetch_add(1, Ordering::Relaxed);
        let Some(job) = jobs.get(i) else { break };
        observer.started(job);
        let outcome = job::run(&dev, job, params, srgb, &|w| observer.warn(w), &|_| {});
        let outcome = finish(job, outcome, observer);
        if let Ok(mut slot) = slots[i].lock() {
            *slot = Some(outcome);
        }
    };
    std::thread::scope(|s| {
        for _ in 1..workers.max(1) {
            let dev = dev.clone();
            s.spawn(|| work(dev));
        }
        work(dev.clone());
    });
    slots
        .into_iter()
        .map(|slot| slot.into_inner().ok().flatten())
        .collect()
}

/// [`Parallelism::Stages`]: a reading thread, the tone-mapping caller and
/// a writing thread, joined by queues of one file.
fn by_stages(
    dev: &Device,
    jobs: &[Job],
    params: &Params,
    srgb: bool,
    observer: &dyn Observer,
) -> Vec<Option<Result<Outcome>>> {
    let (loaded_tx, loaded_rx) = sync_channel::<(usize, Result<job::Loaded>)>(1);
    let (mapped_tx, mapped_rx) = sync_channel::<(usize, Result<job::Mapped>)>(1);
    std::thread::scope(|s| {
        s.spawn(move || {
            for (i, job) in jobs.iter().enumerate() {
                observer.started(job);
                let loaded = job::load(job, &|w| observer.warn(w));
                if loaded_tx.send((i, loaded)).is_err() {
                    break;
                }
            }
        });
        let writer = s.spawn(move || {
            let mut results: Vec<Option<Result<Outcome>>> = Vec::new();
            results.resize_with(jobs.len(), || None);
            for (i, mapped) in mapped_rx {
                let outcome = mapped.and_then(|m| job::store(&jobs[i], m));
                results[i] = Some(finish(&jobs[i], outcome, observer));
            }
            results
        });
        for (i, loaded) in loaded_rx {
            let mapped = loaded.and_then(|l| {
                job::tone_map(
                    dev,
                    &jobs[i],
                    l,
                    params,
                    srgb,
                    &|w| observer.warn(w),
                    &|_| {},
                )
            });
            if mapped_tx.send((i, mapped)).is_err() {
                break;
            }
        }
        drop(mapped_tx);
        writer.join().unwrap_or_default()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn directories_expand_to_their_hdr_files_sorted() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        for name in ["b.EXR", "a.hdr", "c.pfm", "notes.txt", "d.png"] {
            std::fs::write(d.join(name), b"x").unwrap();
        }
        std::fs::create_dir(d.join("sub.hdr")).unwrap();
        let got = expand_inputs(&[d.to_path_buf(), PathBuf::from("x.pfm")]).unwrap();
        let names: Vec<String> = got.iter().map(Source::name).collect();
        let want: Vec<String> = ["a.hdr", "b.EXR", "c.pfm"]
            .iter()
            .map(|n| d.join(n).display().to_string())
            .chain(["x.pfm".to_string()])
            .collect();
        assert_eq!(names, want);
        std::fs::create_dir(d.join("empty")).unwrap();
        let err = expand_inputs(&[d.join("empty")]).unwrap_err().to_string();
        assert!(err.contains("no HDR file"), "{err}");
    }

    #[test]
    fn outputs_take_the_stem_and_clashes_fail_up_front() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        let src = |p: &str| Source::Path(PathBuf::from(p));
        let jobs = plan(vec![src("x/a.hdr"), src("b.pfm")], d, OutputKind::Exr).unwrap();
        let outs: Vec<String> = jobs.iter().map(|j| j.output.name()).collect();
        assert_eq!(
            outs,
            [d.join("a.exr"), d.join("b.exr")].map(|p| p.display().to_string())
        );
        let err = plan(vec![src("x/a.hdr"), src("y/a.exr")], d, OutputKind::Png8)
            .unwrap_err()
            .to_string();
        assert!(err.contains("x/a.hdr and y/a.exr would both"), "{err}");

        std::fs::write(d.join("c.exr"), b"original").unwrap();
        let input = Source::Path(d.join("c.exr"));
        let err = plan(vec![input], d, OutputKind::Exr)
            .unwrap_err()
            .to_string();
        assert!(err.contains("refusing to overwrite"), "{err}");
    }
}
