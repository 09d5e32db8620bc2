//! Which source rows of a launch hold neither NaN nor negative zero, found
//! as the rows are reached.
//!
//! A launch whose body's `min`/`max` may be the plain compare-and-select
//! ([`super::plain_extremes`]) runs an interior row in
//! [`InteriorPlain`](hipacc_core::cpu::InteriorPlain) when every row its
//! scanned accessors read there holds neither. Each source row is scanned
//! once per launch (whole, across its region), by the first band that
//! needs it and just before that band reads it, so the scan costs a
//! fraction of a pass over data already on its way into cache (each band
//! asks for the rows its next output row scans while it computes this
//! one); a flag per row remembers the answer for the bands that share it.

use super::interior::{AxisReach, Reach};
use super::simd;
use hipacc_core::image::{read_as, ReadGuard};
use hipacc_core::{Bindings, Rect, Rgba};
use std::ops::RangeInclusive;
use std::sync::atomic::{AtomicU8, Ordering};

/// A row not scanned yet.
const UNKNOWN: u8 = 0;
/// A row with neither NaN nor negative zero.
const CLEAN: u8 = 1;
/// A row with a NaN or a negative zero.
const DIRTY: u8 = 2;

/// The scanned accessors of one launch, their pixels held for reading.
pub(crate) struct RowScan<'a> {
    sources: Vec<Source<'a>>,
    /// The iteration space's first row.
    space_y: usize,
}

/// One scanned accessor.
struct Source<'a> {
    pixels: Pixels<'a>,
    region: Rect,
    /// Row stride of the image, in pixels.
    stride: usize,
    reach: AxisReach,
    /// Per row of the region: [`UNKNOWN`], [`CLEAN`] or [`DIRTY`].
    rows: Vec<AtomicU8>,
}

/// Float pixels, lanes flattened.
enum Pixels<'a> {
    F32(ReadGuard<'a, f32>),
    F64(ReadGuard<'a, f64>),
    Rgba32(ReadGuard<'a, Rgba<f32>>),
    Rgba64(ReadGuard<'a, Rgba<f64>>),
}

impl<'a> RowScan<'a> {
    /// The scan of `accessors` (slots of `bindings`) for a launch over
    /// `space`; `None` where one has no bounded reach or is not a float
    /// image, or cannot be read now.
    pub(crate) fn new(
        bindings: &'a Bindings,
        accessors: &[usize],
        reaches: &[Option<Reach>],
        space: Rect,
    ) -> Option<RowScan<'a>> {
        let sources = accessors
            .iter()
            .map(|&a| {
                let binding = &bindings.accessors[a];
                let image = &*binding.image;
                let pixels = if let Some(g) = read_as::<f32>(image) {
                    Pixels::F32(g.ok()?)
                } else if let Some(g) = read_as::<f64>(image) {
                    Pixels::F64(g.ok()?)
                } else if let Some(g) = read_as::<Rgba<f32>>(image) {
                    Pixels::Rgba32(g.ok()?)
                } else {
                    Pixels::Rgba64(read_as::<Rgba<f64>>(image)?.ok()?)
                };
                Some(Source {
                    pixels,
                    region: binding.region,
                    stride: image.width(),
                    reach: reaches[a]?.y,
                    rows: (0..binding.region.height)
                        .map(|_| AtomicU8::new(UNKNOWN))
                        .collect(),
                })
            })
            .collect::<Option<Vec<_>>>()?;
        Some(RowScan {
            sources,
            space_y: space.y,
        })
    }

    /// Whether no row that output row `y` of the interior reads holds a
    /// NaN or a negative zero, scanning the rows not scanned yet.
    pub(crate) fn clean(&self, y: usize) -> bool {
        self.sources.iter().all(|s| s.clean(y, self.space_y))
    }

    /// Starts fetching the rows that output row `y` of the interior reads
    /// and that are not scanned yet, so that they arrive while the rows
    /// before it are computed (the launch asks `SCAN_AHEAD` rows
    /// ahead): a scan waits on memory, a row's body mostly
    /// does not, and the two then overlap.
    pub(crate) fn prefetch(&self, y: usize) {
        for s in &self.sources {
            s.prefetch(y, self.space_y);
        }
    }
}

impl Source<'_> {
    /// The region rows that output row `y` reads, where all are inside.
    fn rows_read(&self, y: usize, space_y: usize) -> Option<RangeInclusive<usize>> {
        // The rows read: `a p + coef · sy + [lo, hi]` of the region, with
        // `p = y - sy` and `a = 1 + coef` (see `interior`).
        let r = self.reach;
        let p = (y - space_y) as f64;
        let base = (1.0 + r.coef) * p + r.coef * space_y as f64;
        let (lo, hi) = ((base + r.lo).floor(), (base + r.hi).ceil());
        let last = self.region.height as f64 - 1.0;
        (lo >= 0.0 && hi <= last).then_some(lo as usize..=hi as usize)
    }

    fn clean(&self, y: usize, space_y: usize) -> bool {
        // Not an interior row: never run without the NaN rule.
        self.rows_read(y, space_y)
            .is_some_and(|mut rows| rows.all(|row| self.row_clean(row)))
    }

    fn prefetch(&self, y: usize, space_y: usize) {
        let Some(rows) = self.rows_read(y, space_y) else {
            return;
        };
        for row in rows.filter(|&r| self.rows[r].load(Ordering::Relaxed) == UNKNOWN) {
            let start = (self.region.y + row) * self.stride + self.region.x;
            let cols = start..start + self.region.width;
            match &self.pixels {
                Pixels::F32(p) => prefetch_lines(&p[cols]),
                Pixels::F64(p) => prefetch_lines(&p[cols]),
                Pixels::Rgba32(p) => prefetch_lines(&p[cols]),
                Pixels::Rgba64(p) => prefetch_lines(&p[cols]),
            }
        }
    }

    fn row_clean(&self, row: usize) -> bool {
        match self.rows[row].load(Ordering::Relaxed) {
            CLEAN => return true,
            DIRTY => return false,
            _ => {}
        }
        let start = (self.region.y + row) * self.stride + self.region.x;
        let cols = start..start + self.region.width;
        let clean = match &self.pixels {
            Pixels::F32(p) => plain(&p[cols]),
            Pixels::F64(p) => plain(&p[cols]),
            Pixels::Rgba32(p) => plain(flatten(&p[cols])),
            Pixels::Rgba64(p) => plain(flatten(&p[cols])),
        };
        // Threads racing on a row store the same answer.
        let flag = if clean { CLEAN } else { DIRTY };
        self.rows[row].store(flag, Ordering::Relaxed);
        clean
    }
}

/// Starts fetching every cache line of `values`.
fn prefetch_lines<T>(values: &[T]) {
    let bytes = std::mem::size_of_val(values);
    let at = values.as_ptr().cast::<u8>();
    for offset in (0..bytes).step_by(64) {
        simd::prefetch(at.wrapping_add(offset));
    }
}

/// The lanes of `pixels` as one slice.
fn flatten<T>(pixels: &[Rgba<T>]) -> &[T] {
    // SAFETY: `Rgba<T>` is `repr(C)` of four `T`s, without padding.
    unsafe { std::slice::from_raw_parts(pixels.as_ptr().cast::<T>(), pixels.len() * 4) }
}

/// Whether `values` holds neither NaN nor negative zero.
fn plain<T: Float>(values: &[T]) -> bool {
    let mut odd = false;
    T::scan(values, &mut odd);
    !odd
}

/// The float lanes a scan reads.
trait Float: Copy {
    /// Sets `odd` where `values` holds a NaN or a negative zero.
    fn scan(values: &[Self], odd: &mut bool);
}

impl Float for f32 {
    fn scan(values: &[f32], odd: &mut bool) {
        scan_f32(values, odd);
    }
}

impl Float for f64 {
    fn scan(values: &[f64], odd: &mut bool) {
        scan_f64(values, odd);
    }
}

// On the bits, as integer compares and an `or` reduction, which LLVM
// vectorises (a float `is_nan` fold it leaves scalar): NaN is a magnitude
// above infinity's, negative zero the sign bit alone.
simd::dispatch! {
    /// Sets `odd` where `values` holds a NaN or a negative zero.
    fn scan_f32<>(values: &[f32], odd: &mut bool) {
        for chunk in values.chunks(1024) {
            let any = chunk.iter().fold(0_u32, |any, v| {
                let u = v.to_bits();
                any | u32::from(u & 0x7fff_ffff > 0x7f80_0000) | u32::from(u == 0x8000_0000)
            });
            if any != 0 {
                *odd = true;
                return;
            }
        }
    }
}

simd::dispatch! {
    /// Sets `odd` where `values` holds a NaN or a negative zero.
    fn scan_f64<>(values: &[f64], odd: &mut bool) {
        for chunk in values.chunks(1024) {
            let any = chunk.iter().fold(0_u64, |any, v| {
                let u = v.to_bits();
                any | u64::from(u & 0x7fff_ffff_ffff_ffff > 0x7ff0_0000_0000_0000)
                    | u64::from(u == 0x8000_0000_0000_0000)
            });
            if any != 0 {
                *odd = true;
                return;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::plain;

    /// NaN of either sign and any payload, and negative zero, are found
    /// at every position of a chunk; nothing else is.
    #[test]
    fn the_scan_finds_nan_and_negative_zero_only() {
        let fine = [
            0.0_f32,
            1.0,
            -1.0,
            f32::INFINITY,
            f32::NEG_INFINITY,
            1e-40,
            -1e-40,
        ];
        let odd = [f32::NAN, -f32::NAN, f32::from_bits(0x7f80_0001), -0.0];
        for len in [1, 7, 8, 9, 1023, 1024, 1025, 3000] {
            let row: Vec<f32> = (0..len).map(|i| fine[i % fine.len()]).collect();
            assert!(plain(&row));
            let wide: Vec<f64> = row.iter().map(|&v| f64::from(v)).collect();
            assert!(plain(&wide));
            for at in [0, len / 2, len - 1] {
                for &o in &odd {
                    let mut r = row.clone();
                    r[at] = o;
                    assert!(!plain(&r), "{o} at {at} of {len}");
                    let mut r = wide.clone();
                    r[at] = f64::from(o);
                    assert!(!plain(&r), "{o} at {at} of {len} (f64)");
                }
            }
        }
    }
}
