//! The loops of `reduce`, `convolve` and `iterate` over a full window, with
//! the usual sizes written out position by position.
//!
//! A window loop sits inside the CPU backend's pixel loop. Left as a loop,
//! it keeps the pixel loop from vectorising across x; LLVM's full unroller
//! gives up on a 5x5 window once the body of a position is more than a few
//! instructions, and then every pixel runs 25 iterations of scalar code.
//! Written out, each position is straight-line code with constant offsets:
//! the reads fold to constant displacements, a mask's coefficient to a load
//! that does not depend on the pixel (hoisted out of the pixel loop), and
//! the copies of the body for neighbouring pixels pack into vectors.
//!
//! The sizes written out are 1, 3, 5, 7 and 9 on each axis (every
//! combination), which covers the usual stencils; other sizes run the same
//! row-major loop. Only a size known when the kernel is compiled (a mask's
//! type) reaches 9: a launch writes out run-time windows of 3, 5 and 7
//! only, as every kernel with such windows gets a copy of its body per
//! size. Measured (`window-sizes`, 2048² f32, 2 threads): a weighted mean
//! over a 9x9 mask of the type's size went from 122 ms to about 19 ms
//! written out (and run by the CPU backend's plain pixel loop), the same
//! time per tap as at 5x5.
//! The order is row-major either way: a reduction combines the positions
//! in the order the IR evaluator does, so the results are the same bits.

/// Calls `$f(dx, dy)` for each `dy` of the list, and within a row for each
/// `dx`, in row-major order.
macro_rules! rows {
    ($f:ident; [$($dy:literal),+]; $dxs:tt) => {{
        $( rows!(@row $f; $dy; $dxs); )+
    }};
    (@row $f:ident; $dy:literal; [$($dx:literal),+]) => {{
        $( $f($dx, $dy); )+
    }};
}

/// The offsets of an axis of `n` positions centred on 0, as a literal list.
macro_rules! by_size {
    ($n:expr, $then:ident!($($args:tt)*)) => {
        match $n {
            1 => $then!($($args)* [0]),
            3 => $then!($($args)* [-1, 0, 1]),
            5 => $then!($($args)* [-2, -1, 0, 1, 2]),
            7 => $then!($($args)* [-3, -2, -1, 0, 1, 2, 3]),
            9 => $then!($($args)* [-4, -3, -2, -1, 0, 1, 2, 3, 4]),
            _ => unreachable!("bug: unrolled axis of {} positions", $n),
        }
    };
}

/// True when a `w x h` window is written out.
#[inline(always)]
const fn unrolled(w: usize, h: usize) -> bool {
    matches!(w, 1 | 3 | 5 | 7 | 9) && matches!(h, 1 | 3 | 5 | 7 | 9)
}

/// Calls `f(dx, dy)` at every position of the full `w x h` window centred
/// on 0, row-major. `w` and `h` are constants where the window's size is
/// known (in a mask's type, or a launch's window shape): the match then
/// folds to one written-out sequence.
#[inline(always)]
pub(crate) fn each(w: usize, h: usize, mut f: impl FnMut(i32, i32)) {
    if !unrolled(w, h) {
        let (cx, cy) = ((w / 2) as i32, (h / 2) as i32);
        for iy in 0..h {
            for ix in 0..w {
                f(ix as i32 - cx, iy as i32 - cy);
            }
        }
        return;
    }
    let mut g = |dx: i32, dy: i32| f(dx, dy);
    macro_rules! with_rows {
        ($dys:tt) => {
            by_size!(w, with_cols!($dys))
        };
    }
    macro_rules! with_cols {
        ($dys:tt $dxs:tt) => {
            rows!(g; $dys; $dxs)
        };
    }
    by_size!(h, with_rows!())
}

/// Combines `f(dx, dy)` over the full `w x h` window with `op`, row-major,
/// starting from the value at the first position (no identity element:
/// the result is the evaluator's, bit for bit).
#[inline(always)]
pub(crate) fn fold<R>(w: usize, h: usize, f: impl Fn(i32, i32) -> R, op: impl Fn(R, R) -> R) -> R {
    let mut acc: Option<R> = None;
    each(w, h, |dx, dy| {
        let v = f(dx, dy);
        acc = Some(match acc.take() {
            None => v,
            Some(a) => op(a, v),
        });
    });
    match acc {
        Some(a) => a,
        None => unreachable!("bug: empty window reached the CPU backend"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_size_visits_the_window_row_major() {
        for h in 1..=9 {
            for w in 1..=9 {
                let mut seen = Vec::new();
                each(w, h, |dx, dy| seen.push((dx, dy)));
                let (cx, cy) = ((w / 2) as i32, (h / 2) as i32);
                let want: Vec<(i32, i32)> = (0..h as i32)
                    .flat_map(|iy| (0..w as i32).map(move |ix| (ix - cx, iy - cy)))
                    .collect();
                assert_eq!(seen, want, "{w}x{h}");
            }
        }
    }

    #[test]
    fn fold_starts_from_the_first_position() {
        // Subtraction is not associative: the order shows.
        let r = fold(3, 3, |dx, dy| (dx * 10 + dy) as f64, |a, b| a - b);
        let mut want = -11.0;
        for (dx, dy) in [
            (0, -1),
            (1, -1),
            (-1, 0),
            (0, 0),
            (1, 0),
            (-1, 1),
            (0, 1),
            (1, 1),
        ] {
            want -= (dx * 10 + dy) as f64;
        }
        assert_eq!(r, want);
    }
}
