//! Running one kernel on the device and on the evaluator, and comparing.

use super::pixel::{matches, TestPixel};
use crate::{Device, Execute};
use hipacc_core::ir::eval::evaluate_kernel;
use hipacc_core::{ir, Image, IterationSpace, Kernel, Rect};

/// Mismatching pixels reported per check (the count is always given).
const REPORTED_PIXELS: usize = 4;
/// Failed checks reported in full by [`Run::finish`].
const REPORTED_CHECKS: usize = 12;

/// The checks of one suite function on one device; panics in
/// [`Run::finish`] listing every failure.
pub(crate) struct Run<'a> {
    device: &'a Device,
    suite: &'static str,
    checks: usize,
    failures: Vec<String>,
    /// In the planning pass of [`Run::suite`]: the launches the checks
    /// would make, instead of making them.
    planned: Option<Vec<(ir::Kernel, Rect)>>,
}

impl<'a> Run<'a> {
    /// Runs `checks`, suite function `suite`'s checks, on `device`, and
    /// panics listing every failure.
    ///
    /// On OpenCL and CUDA ([`Device::batched_builds_pay`]) the checks run
    /// twice: first only to list their launches, whose kernels are then
    /// built a few programs in all ([`Device::precompile_launches`]), then
    /// for real, compiling nothing. A suite function builds hundreds of
    /// small kernels, and one driver build per kernel (PoCL's front end,
    /// NVRTC) would cost most of its time. The checks are deterministic, so both passes make the same
    /// launches; what the first cannot build, the second builds and reports
    /// kernel by kernel as before.
    pub(crate) fn suite(device: &'a Device, suite: &'static str, checks: impl Fn(&mut Run<'a>)) {
        if device.batched_builds_pay() {
            let mut plan = Run {
                planned: Some(Vec::new()),
                ..Run::new(device, suite)
            };
            checks(&mut plan);
            let launches = plan.planned.take().unwrap_or_default();
            let refs: Vec<(&ir::Kernel, Rect)> = launches.iter().map(|(k, r)| (k, *r)).collect();
            device.precompile_launches(&refs);
        }
        let mut run = Run::new(device, suite);
        checks(&mut run);
        run.finish();
    }

    fn new(device: &'a Device, suite: &'static str) -> Run<'a> {
        Run {
            device,
            suite,
            checks: 0,
            failures: Vec::new(),
            planned: None,
        }
    }

    /// Runs `kernel` over `rect` of a `width x height` output on the device
    /// and on the evaluator, both outputs starting as the sentinel, and
    /// compares every pixel of the two outputs. `terms` is the number of
    /// values combined per pixel (for the float bound); `what` names the
    /// case (mode, size, footprint) in reports.
    pub(crate) fn check<K>(
        &mut self,
        what: &str,
        kernel: &K,
        size: (usize, usize),
        rect: Rect,
        terms: usize,
    ) where
        K: Kernel,
        K::Output: TestPixel,
    {
        if let Some(planned) = &mut self.planned {
            // A kernel whose IR does not lower fails its check in the
            // second pass.
            if let Ok(ir) = kernel.ir() {
                planned.push((ir, rect));
            }
            return;
        }
        self.checks += 1;
        let label = format!(
            "{} {what}, {}x{} output, space {},{} {}x{}, {}",
            K::NAME,
            size.0,
            size.1,
            rect.x,
            rect.y,
            rect.width,
            rect.height,
            <K::Output as TestPixel>::NAME
        );
        if let Err(message) = self.compare(kernel, size, rect, terms) {
            self.failures.push(format!("{label}: {message}"));
        }
    }

    fn compare<K>(
        &self,
        kernel: &K,
        (w, h): (usize, usize),
        rect: Rect,
        terms: usize,
    ) -> Result<(), String>
    where
        K: Kernel,
        K::Output: TestPixel,
    {
        let fresh = || Image::from_vec(w, h, vec![K::Output::sentinel(); w * h]);
        let (actual, expected) = (fresh().map_err(str_err)?, fresh().map_err(str_err)?);
        let space = IterationSpace::region(&actual, rect).map_err(str_err)?;
        let reference = IterationSpace::region(&expected, rect).map_err(str_err)?;
        evaluate_kernel(kernel, &reference).map_err(|e| format!("evaluator failed: {e}"))?;
        kernel
            .execute(self.device, &space)
            .map_err(|e| format!("{} failed: {e}", self.device.name()))?;
        let (actual, expected) = (
            actual.to_vec().map_err(str_err)?,
            expected.to_vec().map_err(str_err)?,
        );
        let bad: Vec<usize> = (0..w * h)
            .filter(|&i| !matches(expected[i], actual[i], terms))
            .collect();
        if bad.is_empty() {
            return Ok(());
        }
        let shown: Vec<String> = bad
            .iter()
            .take(REPORTED_PIXELS)
            .map(|&i| {
                format!(
                    "({}, {}) expected {:?} actual {:?}",
                    i % w,
                    i / w,
                    expected[i],
                    actual[i]
                )
            })
            .collect();
        Err(format!(
            "{} of {} pixels differ: {}",
            bad.len(),
            w * h,
            shown.join("; ")
        ))
    }

    /// Panics with every failure, if any.
    fn finish(self) {
        if self.failures.is_empty() {
            return;
        }
        let mut report = format!(
            "conformance `{}` on {}: {} of {} checks failed\n",
            self.suite,
            self.device.name(),
            self.failures.len(),
            self.checks
        );
        for f in self.failures.iter().take(REPORTED_CHECKS) {
            report.push_str("  ");
            report.push_str(f);
            report.push('\n');
        }
        if self.failures.len() > REPORTED_CHECKS {
            report.push_str(&format!(
                "  ... and {} more\n",
                self.failures.len() - REPORTED_CHECKS
            ));
        }
        panic!("{report}");
    }
}

fn str_err(e: impl std::fmt::Display) -> String {
    e.to_string()
}

/// A `width x height` image of samples, distinct per `salt`.
pub(crate) fn input<T: TestPixel>(width: usize, height: usize, salt: u32) -> Image<T> {
    let data = (0..height)
        .flat_map(|y| (0..width).map(move |x| T::sample(super::pixel::pixel_hash(x, y, salt))))
        .collect();
    match Image::from_vec(width, height, data) {
        Ok(img) => img,
        Err(e) => unreachable!("bug: the suite made an invalid {width}x{height} image: {e}"),
    }
}

/// For an `Undefined` boundary: the largest iteration space with the origin
/// of `space` and inside it whose reads at offsets `min..=max` (per axis)
/// all stay inside a region of size `region`, or `None` if there is none.
///
/// The space's first column reads region column `min_dx`, so a negative
/// offset (any centred window) leaves no such space.
pub(crate) fn inside(
    space: Rect,
    region: (usize, usize),
    (min_dx, max_dx): (i32, i32),
    (min_dy, max_dy): (i32, i32),
) -> Option<Rect> {
    let axis = |len: usize, rlen: usize, min: i32, max: i32| {
        let end = (rlen as i64 - i64::from(max)).min(len as i64);
        (min >= 0 && end > 0).then_some(end as usize)
    };
    let w = axis(space.width, region.0, min_dx, max_dx)?;
    let h = axis(space.height, region.1, min_dy, max_dy)?;
    Some(Rect::new(space.x, space.y, w, h))
}
