//! The parts of a halo-padded block that a halo exchange touches.
//!
//! An exchange reads pixels near the block's edges (what the neighbours'
//! halos and its own boundary copies need) and writes the halo ring around
//! the block. Where the block lives on a device, only those rectangles
//! cross the bus ([`Image::read_rects`](hipacc_core::Image::read_rects),
//! [`Image::write_rects`](hipacc_core::Image::write_rects)), not the block.

use hipacc_core::Rect;

/// The pixels of the `width x height` rectangle at `(x, y)` that lie
/// fewer than `depth` pixels from its edges, as at most four disjoint
/// rectangles (the whole rectangle when the bands would meet).
pub(super) fn band(x: usize, y: usize, width: usize, height: usize, depth: usize) -> Vec<Rect> {
    if depth == 0 || width == 0 || height == 0 {
        return Vec::new();
    }
    if 2 * depth >= width || 2 * depth >= height {
        return vec![Rect::new(x, y, width, height)];
    }
    let inner = height - 2 * depth;
    vec![
        Rect::new(x, y, width, depth),
        Rect::new(x, y + height - depth, width, depth),
        Rect::new(x, y + depth, depth, inner),
        Rect::new(x + width - depth, y + depth, depth, inner),
    ]
}

/// The halo ring of a `width x height` block with a halo of `halo`
/// pixels: the local image's pixels outside the block.
pub(super) fn ring(halo: usize, width: usize, height: usize) -> Vec<Rect> {
    band(0, 0, width + 2 * halo, height + 2 * halo, halo)
}

/// The smallest band of the block (`width x height` at `(halo, halo)` of
/// a local image `stride` pixels wide) that holds every local index in
/// `indices`, all of which lie in the block.
pub(super) fn frame(
    indices: impl IntoIterator<Item = usize>,
    stride: usize,
    halo: usize,
    width: usize,
    height: usize,
) -> Vec<Rect> {
    let depth = indices
        .into_iter()
        .map(|i| {
            let (x, y) = (i % stride - halo, i / stride - halo);
            x.min(width - 1 - x).min(y).min(height - 1 - y) + 1
        })
        .max()
        .unwrap_or(0);
    band(halo, halo, width, height, depth)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// How often each pixel of a `w x h` image is covered by `rects`.
    fn cover(rects: &[Rect], w: usize, h: usize) -> Vec<u32> {
        let mut n = vec![0u32; w * h];
        for r in rects {
            assert!(r.fits_in(w, h), "{r:?} outside {w}x{h}");
            for y in r.y..r.y + r.height {
                for x in r.x..r.x + r.width {
                    n[y * w + x] += 1;
                }
            }
        }
        n
    }

    #[test]
    fn bands_cover_exactly_the_pixels_near_the_edges_once() {
        for (w, h) in [(1, 1), (2, 7), (9, 4), (11, 13), (30, 5)] {
            for depth in 0..8 {
                let n = cover(&band(0, 0, w, h, depth), w, h);
                for y in 0..h {
                    for x in 0..w {
                        let near = x.min(w - 1 - x).min(y).min(h - 1 - y) < depth;
                        assert_eq!(n[y * w + x], u32::from(near), "{w}x{h} depth {depth}");
                    }
                }
            }
        }
    }

    #[test]
    fn the_ring_is_the_local_image_less_the_block() {
        let (halo, w, h) = (3, 5, 2);
        let (lw, lh) = (w + 2 * halo, h + 2 * halo);
        let n = cover(&ring(halo, w, h), lw, lh);
        for y in 0..lh {
            for x in 0..lw {
                let block = (halo..halo + w).contains(&x) && (halo..halo + h).contains(&y);
                assert_eq!(n[y * lw + x], u32::from(!block), "({x}, {y})");
            }
        }
        assert!(ring(0, w, h).is_empty());
    }

    #[test]
    fn a_frame_holds_its_indices_and_no_deeper_band() {
        let (halo, w, h) = (2, 12, 9);
        let stride = w + 2 * halo;
        let at = |x: usize, y: usize| (y + halo) * stride + x + halo;
        // The deepest index is 2 pixels inside the bottom edge.
        let indices = [at(0, 0), at(11, 4), at(5, 6)];
        let rects = frame(indices, stride, halo, w, h);
        assert_eq!(rects, band(halo, halo, w, h, 3));
        let n = cover(&rects, stride, h + 2 * halo);
        assert!(indices.iter().all(|&i| n[i] == 1));
        assert!(frame([], stride, halo, w, h).is_empty());
    }
}
