//! The STREAM triad `a[i] = b[i] + s * c[i]` over `f64` arrays far larger
//! than the last-level cache: the machine's sustainable memory bandwidth,
//! against which the bandwidth-bound kernels are judged.
//!
//! Bytes per element are counted as STREAM does: 24 (read `b` and `c`,
//! write `a`; the write-allocate read of `a` is not counted).

use rayon::prelude::*;

/// Bytes the triad moves per element.
pub const TRIAD_BYTES_PER_ELEMENT: u64 = 24;

/// Elements per array by default: 8 Mi `f64` = 64 MiB per array, 192 MiB in
/// all, six times a 32 MiB L3.
pub const TRIAD_DEFAULT_LEN: usize = 8 << 20;

/// Elements per parallel chunk (256 KiB of each array).
const CHUNK: usize = 32 << 10;

/// The three arrays of the triad.
pub struct Triad {
    a: Vec<f64>,
    b: Vec<f64>,
    c: Vec<f64>,
}

impl Triad {
    /// Arrays of `len` elements, written once in parallel so their pages
    /// are mapped before timing.
    pub fn new(len: usize) -> Triad {
        let fill = |v: f64| {
            let mut x = Vec::with_capacity(len);
            x.par_extend((0..len).into_par_iter().map(|_| v));
            x
        };
        Triad {
            a: fill(0.0),
            b: fill(1.0),
            c: fill(2.0),
        }
    }

    /// Elements per array.
    pub fn len(&self) -> usize {
        self.a.len()
    }

    /// True when the arrays are empty.
    pub fn is_empty(&self) -> bool {
        self.a.is_empty()
    }

    /// Bytes one [`Triad::run`] moves.
    pub fn bytes(&self) -> u64 {
        self.len() as u64 * TRIAD_BYTES_PER_ELEMENT
    }

    /// One pass: `a = b + s * c`.
    pub fn run(&mut self, s: f64) {
        self.a
            .par_chunks_mut(CHUNK)
            .zip(self.b.par_chunks(CHUNK))
            .zip(self.c.par_chunks(CHUNK))
            .for_each(|((a, b), c)| {
                for ((a, b), c) in a.iter_mut().zip(b).zip(c) {
                    *a = b + s * c;
                }
            });
    }

    /// `a[i]`, to check the result and keep the work observable.
    pub fn a(&self, i: usize) -> f64 {
        self.a[i]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn triad_computes_b_plus_s_c() {
        let mut t = Triad::new(100_003);
        t.run(3.0);
        assert_eq!((t.a(0), t.a(100_002)), (7.0, 7.0));
        assert_eq!(t.bytes(), 100_003 * 24);
    }
}
