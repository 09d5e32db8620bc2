//! Histograms of 8- and 16-bit pixels, counted by value.
//!
//! Such a pixel has at most 65,536 values, so the pass over the image
//! counts how often each value occurs (one table increment per pixel, no
//! conversion or division), and the few value counts are then binned with
//! the formula of [`super::histogram`]: the same counts as binning every
//! pixel, because every pixel of one value falls into one bin. 8-bit
//! pixels go to four interleaved tables, so that runs of equal bytes do
//! not wait on one counter's previous increment.

use super::{with_rows, Grouping};
use crate::Result;
use hipacc_core::image::as_bytes;
use hipacc_core::ir::{ScalarType, Type};
use hipacc_core::{Image, Pixel, Rect};
use std::ops::Range;

/// How often each value of `image`'s pixels occurs in `region`; `None`
/// unless the pixels are one-lane `u8` or `u16`.
fn value_counts<T: Pixel>(image: &Image<T>, region: Option<Rect>) -> Result<Option<Vec<u64>>> {
    let add = |mut a: Vec<u64>, b: Vec<u64>| {
        a.iter_mut().zip(&b).for_each(|(x, y)| *x += y);
        a
    };
    let counts = match T::TYPE {
        t if t == Type::scalar(ScalarType::U8) => {
            let ways = with_rows(
                image,
                region,
                Grouping::PerTask,
                || Box::new([[0u64; 256]; 4]),
                |mut acc, row| {
                    let [a, b, c, d] = &mut *acc;
                    let mut quads = as_bytes(row).chunks_exact(4);
                    for q in &mut quads {
                        a[usize::from(q[0])] += 1;
                        b[usize::from(q[1])] += 1;
                        c[usize::from(q[2])] += 1;
                        d[usize::from(q[3])] += 1;
                    }
                    quads
                        .remainder()
                        .iter()
                        .for_each(|&v| a[usize::from(v)] += 1);
                    acc
                },
                |mut x, y| {
                    x.iter_mut()
                        .flatten()
                        .zip(y.iter().flatten())
                        .for_each(|(x, y)| *x += y);
                    x
                },
            )?;
            ways.iter().map(|w| w.to_vec()).reduce(add)
        }
        t if t == Type::scalar(ScalarType::U16) => Some(with_rows(
            image,
            region,
            Grouping::PerTask,
            || vec![0u64; 1 << 16],
            |mut acc, row| {
                for v in as_bytes(row).chunks_exact(2) {
                    acc[usize::from(u16::from_ne_bytes([v[0], v[1]]))] += 1;
                }
                acc
            },
            add,
        )?),
        _ => None,
    };
    Ok(counts)
}

/// The histogram window of `image` as [`super::histogram_window`] defines
/// it, counted by value; `None` unless the pixels are one-lane `u8` or
/// `u16`.
pub(super) fn histogram<T: Pixel>(
    image: &Image<T>,
    region: Option<Rect>,
    bin_of: impl Fn(f64) -> Option<usize>,
    window: &Range<usize>,
) -> Result<Option<Vec<u64>>> {
    let Some(by_value) = value_counts(image, region)? else {
        return Ok(None);
    };
    let mut counts = vec![0u64; window.len()];
    for (value, &n) in by_value.iter().enumerate() {
        if let Some(b) = bin_of(value as f64).filter(|b| n > 0 && window.contains(b)) {
            counts[b - window.start] += n;
        }
    }
    Ok(Some(counts))
}
