//! The weights of mirrored taps, computed once for both.
//!
//! In a body of [`super::accumulate`]'s form whose weight is a function
//! of `(v(p + t) op c(p))²` with `c` the same accessor read at the pixel
//! itself (a bilateral filter's range weight `k · exp(-(v - c)² · s)`),
//! and `op` a subtraction, addition or product, the weight of tap `-t` at
//! pixel `q` is the weight of tap `t` at pixel `q - t`:
//! `(v(q - t) - v(q))²` and `(v(q) - v(q - t))²` are the same f32 value
//! (a difference and its negation round alike; `+` and `·` commute), and
//! so is everything computed from it when the two taps' scalars (`s`,
//! the added term and `k`, mask coefficients included) are equal. Half of
//! a window's weights, and of its `exp`s, are then loads of weights a
//! row above computed: Halide's and OpenCV's bilateral loops compute all
//! of them.
//!
//! Going down the rows of a strip, the block loop stores the weights of
//! every tap below the centre row (as many rows below as [`BUDGET`] lets
//! the stored rows stay in the cache) for the row's pixels; a
//! tap above the centre row loads them where the row it needs was
//! stored complete. The block loop covers whole blocks of columns, so
//! the columns it does not compute that a later row loads (the last
//! partial block, and pixels left and right of the row, which the
//! mirrored tap at the row's edge reads) are computed here by the same
//! f32 operations as the passes ([`super::fuse::exp_square`]). The first
//! rows of a strip have no rows above them stored and compute every tap.
//! Every weight is thus the value the tap would compute itself, so the
//! result has the same bits (of a NaN, its payload may be the other
//! operand's).

use super::accumulate::{Accumulate, Share};
use super::fuse::exp_square;
use super::{Op, Tape};
use std::cell::Cell;
use std::ops::Range;

/// Bytes of stored weights a strip may keep, so that they stay in the
/// last-level cache while the rows below load them: a 13x13 window's
/// taps at 2048 columns keep 4.5 MiB (measured: 1.24x Halide's
/// bilateral13 with only two rows deep in 768 KiB, 1.02x with all six).
const BUDGET: usize = 8 << 20;

/// Which taps of a walk share their weights, fixed for a launch.
#[derive(Clone, Debug)]
pub(super) struct Plan {
    /// The window's half width and height.
    cx: usize,
    cy: usize,
    /// Per tap in the walk's order: its offset and, where its mirrored
    /// tap gives the same weight, that tap's index.
    taps: Vec<((i64, i64), Option<usize>)>,
    /// Per window row: its index among the gathered rows (rows without a
    /// tap are not gathered).
    gathered: Vec<Option<usize>>,
    /// Per tap: the weight's scalars `(s, t, k)`.
    scalars: Vec<(f32, f32, f32)>,
}

impl Plan {
    /// The plan of a walk whose body is `acc` in the tape around it
    /// `outer`, at the taps `offsets` (each `(i, j)`, column and row in a
    /// `width x height` window) with their scalars `(s, t, k)`; `None`
    /// where no two taps share.
    pub(super) fn new(
        acc: &Accumulate,
        outer: &Tape,
        (width, height): (usize, usize),
        offsets: &[(usize, usize)],
        scalars: &[(f32, f32, f32)],
    ) -> Option<Plan> {
        let centre = acc.mirrored_centre()?;
        // The centre operand is the same accessor read at offset 0 (the
        // variable's own row holds a copy of it).
        let at = match outer.ops.get(centre)? {
            Op::Copy(j) => *j,
            _ => centre,
        };
        (outer.ops.get(at)? == &Op::Read(acc.read_slot()?)).then_some(())?;
        (width % 2 == 1 && height % 2 == 1).then_some(())?;
        let (cx, cy) = (width / 2, height / 2);
        let mut gathered = vec![None; height];
        for &(_, j) in offsets {
            gathered[j] = Some(());
        }
        let mut k = 0;
        let gathered: Vec<Option<usize>> = gathered
            .into_iter()
            .map(|g| {
                g.map(|()| {
                    k += 1;
                    k - 1
                })
            })
            .collect();
        // The weights of the row's pixels left and right of the row are
        // computed from the centre row.
        gathered[cy]?;
        let bits = |(s, t, k): (f32, f32, f32)| (s.to_bits(), t.to_bits(), k.to_bits());
        let taps: Vec<((i64, i64), Option<usize>)> = offsets
            .iter()
            .zip(scalars)
            .map(|(&(i, j), &sc)| {
                let (dx, dy) = (i as i64 - cx as i64, j as i64 - cy as i64);
                let mirror = offsets.iter().zip(scalars).position(|(&(mi, mj), &msc)| {
                    (mi, mj) == (width - 1 - i, height - 1 - j) && bits(msc) == bits(sc)
                });
                ((dx, dy), mirror.filter(|_| (dx, dy) != (0, 0)))
            })
            .collect();
        taps.iter().any(|t| t.1.is_some()).then_some(Plan {
            cx,
            cy,
            taps,
            gathered,
            scalars: scalars.to_vec(),
        })
    }

    /// The stored weights of a strip of rows `w` wide, where they fit
    /// the cache: taps at most `depth` rows below the centre row store,
    /// as deep as [`BUDGET`] allows.
    pub(super) fn mirror(&self, w: usize, rows: Vec<f32>) -> Option<Mirror> {
        let len = w + 2 * self.cx;
        let stored = |depth: usize| {
            self.taps
                .iter()
                .filter(|((_, dy), m)| m.is_some() && (1..=depth as i64).contains(dy))
                .count()
        };
        let depth = (1..=self.cy)
            .rev()
            .find(|&d| stored(d) * (d + 1) * len * size_of::<f32>() <= BUDGET)?;
        let mut next = 0;
        let index = self
            .taps
            .iter()
            .map(|((_, dy), m)| {
                (m.is_some() && (1..=depth as i64).contains(dy)).then(|| {
                    next += 1;
                    next - 1
                })
            })
            .collect();
        let ring = next * (depth + 1) * len;
        let mut ahead = 0;
        let same = self
            .taps
            .iter()
            .map(|&((dx, dy), m)| {
                (m.is_some() && dy == 0 && dx > 0).then(|| {
                    ahead += 1;
                    ring + (ahead - 1) * len
                })
            })
            .collect();
        let mut rows = rows;
        rows.resize(ring + ahead * len, 0.0);
        Some(Mirror {
            depth,
            len,
            index,
            same,
            rows,
            tags: vec![None; depth + 1],
        })
    }
}

/// A strip's stored weights.
pub(super) struct Mirror {
    /// How many rows below the centre row the stored taps reach.
    depth: usize,
    /// Lanes per stored row: the strip's width and the window's halo.
    len: usize,
    /// Per tap: its index among the stored taps.
    index: Vec<Option<usize>>,
    /// Per tap of the centre row right of the centre that shares: where
    /// its row of weights for the current output row starts in `rows`.
    same: Vec<Option<usize>>,
    /// Per stored tap, a ring of `depth + 1` rows (by output row modulo
    /// `depth + 1`) of the tap's weights at columns `-cx..w + cx`; then
    /// the rows of `same`.
    rows: Vec<f32>,
    /// Per ring slot: the output row it holds complete.
    tags: Vec<Option<i64>>,
}

impl Mirror {
    /// The ring slot of output row `py`.
    fn slot(&self, py: i64) -> usize {
        py.rem_euclid(self.depth as i64 + 1) as usize
    }

    /// The stored row of tap `index` at slot `slot`.
    fn row(&self, index: usize, slot: usize) -> usize {
        (index * (self.depth + 1) + slot) * self.len
    }

    /// The weights' sources and destinations of output row `py` for the
    /// block loop: the taps it computes first, ahead of the taps in
    /// order (the centre row's right of the centre, whose weights the
    /// taps left of it load), and the shares of those and then of every
    /// tap of `plan`. Before the loop, computes the ahead taps' weights
    /// at the pixels left of the row (see [`Mirror::finish`] for `reads`).
    pub(super) fn shares<'m>(
        &'m mut self,
        plan: &Plan,
        acc: &Accumulate,
        reads: &[f32],
        w: usize,
        py: i64,
    ) -> (Vec<usize>, Vec<Share<'m>>) {
        let here = self.slot(py);
        // The row is overwritten: no longer complete.
        self.tags[here] = None;
        let cx = plan.cx as i64;
        for (q, &((dx, _), _)) in plan.taps.iter().enumerate() {
            if let Some(at) = self.same[q] {
                // The tap's pixels `-dx..0` left of the row.
                let from = (-dx).max(-cx);
                let row = &mut self.rows[at..at + self.len];
                weights(plan, acc, reads, w, q, from..0, row);
            }
        }
        let depth = self.depth as i64;
        let mut role = Vec::with_capacity(plan.taps.len());
        for (q, &((dx, dy), m)) in plan.taps.iter().enumerate() {
            role.push(match (self.index[q], self.same[q], m) {
                (Some(i), _, _) => Some((self.row(i, here) + cx as usize, Role::Store)),
                (_, Some(at), _) => Some((at + cx as usize, Role::Load)),
                (None, None, Some(m)) if dy == 0 => {
                    self.same[m].map(|at| (at + (cx + dx) as usize, Role::Load))
                }
                (None, None, Some(m)) if (-depth..0).contains(&dy) => {
                    let slot = self.slot(py + dy);
                    let i = self.index[m].filter(|_| self.tags[slot] == Some(py + dy));
                    i.map(|i| (self.row(i, slot) + (cx + dx) as usize, Role::Load))
                }
                _ => None,
            });
        }
        let ahead: Vec<usize> = (0..plan.taps.len())
            .filter(|&q| self.same[q].is_some())
            .collect();
        let first = ahead
            .iter()
            .map(|&q| Some((self.same[q]? + cx as usize, Role::Ahead)));
        let first: Vec<_> = first.collect();
        // A tap's row of the centre row is written ahead and read in
        // order: shared cells.
        let len = self.len;
        let cells = Cell::from_mut(&mut self.rows[..]).as_slice_of_cells();
        let shares = first
            .into_iter()
            .chain(role)
            .map(|r| match r {
                None => Share::Compute,
                Some((at, role)) => {
                    let row = &cells[at..at - at % len + len];
                    match role {
                        Role::Store => Share::Store(row),
                        Role::Load => Share::Load(row),
                        Role::Ahead => Share::Ahead(row),
                    }
                }
            })
            .collect();
        (ahead, shares)
    }

    /// Completes the stored rows of output row `py`, whose block loop
    /// computed columns `0..start` of a row `w` wide: the weights of the
    /// other pixels that later rows load, from the gathered window rows
    /// `reads` of the walk's accessor (row `k` at `k * n`, column `-cx`
    /// first), then marks the row complete.
    pub(super) fn finish(
        &mut self,
        plan: &Plan,
        acc: &Accumulate,
        reads: &[f32],
        start: usize,
        w: usize,
        py: i64,
    ) {
        let here = self.slot(py);
        let cx = plan.cx as i64;
        for (q, &((dx, _), _)) in plan.taps.iter().enumerate() {
            let Some(i) = self.index[q] else { continue };
            let at = self.row(i, here);
            let row = &mut self.rows[at..at + self.len];
            // Pixels `p` whose weight a later row loads: `p + dx` in
            // `0..w`, and `p` in `-cx..w + cx`.
            let (lo, hi) = ((-dx).max(-cx), (w as i64 - dx).min(w as i64 + cx));
            weights(plan, acc, reads, w, q, lo..0, row);
            weights(plan, acc, reads, w, q, start as i64..hi, row);
        }
        self.tags[here] = Some(py);
    }

    /// The buffer, for reuse.
    pub(super) fn into_rows(self) -> Vec<f32> {
        self.rows
    }
}

/// What a tap does with its row of stored weights.
enum Role {
    Store,
    Load,
    Ahead,
}

/// The weights of tap `q` of `plan` at the pixels `ps` of output row
/// (each `p` with `p + dx` in `0..w` and `p` in `-cx..w + cx`), into
/// `row` (the tap's weights at columns `-cx..w + cx`): from the gathered
/// window rows `reads` of the walk's accessor (row `k` at `k * n`,
/// column `-cx` first), by the same f32 operations as the passes.
fn weights(
    plan: &Plan,
    acc: &Accumulate,
    reads: &[f32],
    w: usize,
    q: usize,
    ps: Range<i64>,
    row: &mut [f32],
) {
    let ((dx, dy), _) = plan.taps[q];
    let (s, t, k) = plan.scalars[q];
    let (cx, n) = (plan.cx as i64, w as i64 + 2 * plan.cx as i64);
    let centre = plan.gathered[plan.cy].expect("bug: a plan without its centre row") as i64;
    let k_row = plan.gathered[(plan.cy as i64 + dy) as usize]
        .expect("bug: a shared tap's row not gathered") as i64;
    let op = acc.square_op();
    let mut lanes = [0.0f32; 64];
    let mut p = ps.start;
    while p < ps.end {
        let m = ((ps.end - p) as usize).min(lanes.len());
        let a = (k_row * n + cx + p + dx) as usize;
        let b = (centre * n + cx + p) as usize;
        exp_square(
            &reads[a..a + m],
            &reads[b..b + m],
            op,
            s,
            t,
            k,
            &mut lanes[..m],
        );
        let at = (cx + p) as usize;
        row[at..at + m].copy_from_slice(&lanes[..m]);
        p += m as i64;
    }
}

#[cfg(test)]
mod tests {
    use crate::cpu::{prepare, split};
    use crate::prelude::*;
    use hipacc_core::{Boundary, Rect};

    /// A bilateral filter: its range weight squares `v - c`.
    #[derive(Kernel)]
    #[kernel(output = f32)]
    struct Bilateral {
        input: Accessor<f32>,
        spatial: Mask<f32>,
        range: f32,
    }

    #[kernel_body]
    impl Bilateral {
        fn kernel(&self) -> f32 {
            let c = self.input();
            let mut num = 0.0f32;
            let mut den = 0.0f32;
            iterate(&self.spatial, |dx, dy| {
                let v = self.input.at(dx, dy);
                let d = v - c;
                let w = self.spatial.at(dx, dy) * (-(d * d) * self.range).exp();
                num += w * v;
                den += w;
            });
            num / den
        }
    }

    /// Weights of `(v + c)²` and `(v · c)²` summed: the other squares
    /// that are the same for the operands swapped.
    #[derive(Kernel)]
    #[kernel(output = f32)]
    struct Commuting {
        input: Accessor<f32>,
        spatial: Mask<f32>,
        range: f32,
    }

    #[kernel_body]
    impl Commuting {
        fn kernel(&self) -> f32 {
            let c = self.input();
            let mut sum = 0.0f32;
            let mut prod = 0.0f32;
            iterate(&self.spatial, |dx, dy| {
                let v = self.input.at(dx, dy);
                let e = v + c;
                sum += self.spatial.at(dx, dy) * (-(e * e) * self.range).exp();
            });
            iterate(&self.spatial, |dx, dy| {
                let v = self.input.at(dx, dy);
                let e = v * c;
                prod += (-(e * e) * self.range).exp() * v;
            });
            sum - prod
        }
    }

    /// The examples' bilateral filter: the spatial weight inside the
    /// `exp`, over a domain.
    #[derive(Kernel)]
    #[kernel(output = f32)]
    struct Inside {
        input: Accessor<f32>,
        window: Domain,
        spatial: f32,
        range: f32,
    }

    #[kernel_body]
    impl Inside {
        fn kernel(&self) -> f32 {
            let c = self.input();
            let mut num = 0.0f32;
            let mut den = 0.0f32;
            iterate(&self.window, |dx, dy| {
                let v = self.input.at(dx, dy);
                let d = v - c;
                let w = (-((dx * dx + dy * dy) as f32) * self.spatial - d * d * self.range).exp();
                num += w * v;
                den += w;
            });
            num / den
        }
    }

    /// Pixels of moderate range with NaN, infinities, zeros of both signs
    /// and subnormals among them.
    fn image(w: usize, h: usize, seed: u32) -> Image<f32> {
        let specials = [
            f32::NAN,
            f32::INFINITY,
            -0.0,
            1.0e-40,
            f32::NEG_INFINITY,
            0.0,
        ];
        let px = (0..w * h)
            .map(|i| {
                let v = (i as u32).wrapping_mul(2_654_435_761).wrapping_add(seed) >> 8;
                match v % 97 {
                    0 => specials[(v / 97) as usize % specials.len()],
                    _ => (v % 1000) as f32 / 400.0,
                }
            })
            .collect();
        Image::from_vec(w, h, px).unwrap()
    }

    /// A `w x h` mask, symmetric under the mirror where `symmetric`, else
    /// with a few weights that differ from their mirrored tap's.
    fn mask(w: usize, h: usize, symmetric: bool) -> Mask<f32> {
        let values = (0..w * h)
            .map(|k| {
                let (i, j) = (
                    (k % w) as f32 - (w / 2) as f32,
                    (k / w) as f32 - (h / 2) as f32,
                );
                let v = 1.0 / (1.0 + 0.3 * (i * i + j * j));
                match symmetric || k % 3 != 0 {
                    true => v,
                    false => v * 1.5,
                }
            })
            .collect();
        Mask::from_vec(w, h, values).unwrap()
    }

    /// Runs `k` over `space` in strips of `strip` rows with its walks'
    /// weights shared and computed tap by tap, and compares bit for bit.
    /// Returns whether any walk shared weights.
    fn same_bits<K: Kernel<Output = f32>>(
        what: &str,
        k: &K,
        space: &IterationSpace<f32>,
        strip: usize,
    ) -> bool {
        let prepared = prepare(k, space).unwrap();
        let (program, mut setup) = prepared.split(k).expect("a split program");
        let bindings = k.bindings();
        let rect = space.rect();
        let w = space.image().width();
        let shared = setup
            .mirrors
            .iter()
            .flatten()
            .any(|p| p.mirror(rect.width, Vec::new()).is_some());
        let mut out = Vec::new();
        for round in 0..2 {
            if round == 1 {
                setup.mirrors.iter_mut().for_each(|m| *m = None);
            }
            let mut rows = vec![f32::NAN; w * space.image().height()];
            let mut y = rect.y;
            while y < rect.y + rect.height {
                let ys = y..(y + strip).min(rect.y + rect.height);
                let chunk = &mut rows[ys.start * w..ys.end * w];
                split::run_rows(
                    &program,
                    &setup,
                    &bindings,
                    rect,
                    w,
                    ys.clone(),
                    chunk,
                    None,
                )
                .unwrap();
                y = ys.end;
            }
            out.push(rows);
        }
        for (i, (s, t)) in out[0].iter().zip(&out[1]).enumerate() {
            assert!(
                s.to_bits() == t.to_bits() || (s.is_nan() && t.is_nan()),
                "{what} at ({}, {}): shared {s}, tap by tap {t}",
                i % w,
                i / w
            );
        }
        shared
    }

    /// Weights shared between mirrored taps give the bits of every tap
    /// computing its own, on every boundary mode, widths below, at and
    /// above the block loop's, strips from one row (nothing stored
    /// before each) to the whole space, a space inside the image, masks
    /// whose mirrored weights differ, and every square that is the same
    /// for its operands swapped; and they are shared wherever the window
    /// has mirrored taps.
    #[test]
    fn shared_weights_give_the_bits_of_computed_ones() {
        let modes = [
            Boundary::Clamp,
            Boundary::Repeat,
            Boundary::Mirror,
            Boundary::MirrorInterior,
            Boundary::Constant(0.75),
        ];
        for (w, h) in [(1, 1), (5, 3), (17, 9), (40, 23), (67, 45)] {
            let input = image(w, h, 7);
            let out = Image::<f32>::new(w, h).unwrap();
            let inner = Rect::new(w / 3, h / 3, w - w / 3, h - h / 3);
            let spaces = [
                IterationSpace::full(&out),
                IterationSpace::region(&out, inner).unwrap(),
            ];
            for (m, &mode) in modes.iter().enumerate() {
                let input = || Accessor::new(&input).with_boundary(mode);
                for space in &spaces {
                    for strip in [1, 4, 64] {
                        let at = format!("{w}x{h} mode {m} strip {strip}");
                        for (mw, mh, symmetric) in
                            [(5, 5, true), (3, 7, true), (5, 5, false), (9, 3, true)]
                        {
                            let k = Bilateral {
                                input: input(),
                                spatial: mask(mw, mh, symmetric),
                                range: 30.0,
                            };
                            let shared =
                                same_bits(&format!("{mw}x{mh} bilateral {at}"), &k, space, strip);
                            assert!(shared, "{mw}x{mh} bilateral: no weights shared");
                        }
                        let k = Commuting {
                            input: input(),
                            spatial: mask(5, 3, true),
                            range: 0.5,
                        };
                        assert!(same_bits(&format!("commuting {at}"), &k, space, strip));
                        let k = Inside {
                            input: input(),
                            window: Domain::new(5, 5).unwrap(),
                            spatial: 0.125,
                            range: 30.0,
                        };
                        assert!(same_bits(&format!("inside {at}"), &k, space, strip));
                    }
                }
            }
        }
    }
}
