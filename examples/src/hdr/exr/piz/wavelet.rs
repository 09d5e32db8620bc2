//! The inverse of PIZ's two-dimensional Haar-like wavelet transform.
//!
//! The encoder transforms a channel's block of `nx x ny` 16-bit values in
//! place, level by level: at each level every 2x2 group of the values left
//! from the previous one becomes a mean and three differences (a pair at a
//! time), an odd last column or row being transformed along one axis only.
//! The pair transform is exact in 16 bits: with every value below `2^14`
//! it works on signed values (`mean = (a + b) >> 1`, `diff = a - b`); else
//! modulo `2^16` with an offset. The decoder undoes the levels in reverse
//! order, from the coarsest.

/// Undoes the transform of the values at `buf[i * ox + j * oy]` for
/// `i < nx`, `j < ny`. `max` is the largest value of the block's lookup
/// table, which chose the variant. The caller checks `buf` holds them all.
pub fn decode(buf: &mut [u16], nx: usize, ox: usize, ny: usize, oy: usize, max: u16) {
    let pair = if max < 1 << 14 { pair14 } else { pair16 };
    let n = nx.min(ny);
    let mut p = 1;
    while p <= n {
        p <<= 1;
    }
    p >>= 1;
    let mut p2 = p;
    p >>= 1;
    while p >= 1 {
        let (ox1, ox2, oy1, oy2) = (ox * p, ox * p2, oy * p, oy * p2);
        let last_row = oy * (ny - p2);
        let mut py = 0;
        while py <= last_row {
            let last = py + ox * (nx - p2);
            let mut px = py;
            while px <= last {
                let (p01, p10) = (px + ox1, px + oy1);
                let p11 = p10 + ox1;
                let (i00, i10) = pair(buf[px], buf[p10]);
                let (i01, i11) = pair(buf[p01], buf[p11]);
                (buf[px], buf[p01]) = pair(i00, i01);
                (buf[p10], buf[p11]) = pair(i10, i11);
                px += ox2;
            }
            if nx & p != 0 {
                let p10 = px + oy1;
                (buf[px], buf[p10]) = pair(buf[px], buf[p10]);
            }
            py += oy2;
        }
        if ny & p != 0 {
            let last = py + ox * (nx - p2);
            let mut px = py;
            while px <= last {
                let p01 = px + ox1;
                (buf[px], buf[p01]) = pair(buf[px], buf[p01]);
                px += ox2;
            }
        }
        p2 = p;
        p >>= 1;
    }
}

/// A mean and difference of two signed 14-bit values back to the values.
fn pair14(mean: u16, diff: u16) -> (u16, u16) {
    let (m, d) = (i32::from(mean as i16), i32::from(diff as i16));
    let a = m + (d & 1) + (d >> 1);
    (a as i16 as u16, (a - d) as i16 as u16)
}

/// The modulo-`2^16` variant of [`pair14`].
fn pair16(mean: u16, diff: u16) -> (u16, u16) {
    let (m, d) = (i32::from(mean), i32::from(diff));
    let b = (m - (d >> 1)) & 0xffff;
    let a = (d + b - 0x8000) & 0xffff;
    (a as u16, b as u16)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn enc14(a: u16, b: u16) -> (u16, u16) {
        let (a, b) = (i32::from(a as i16), i32::from(b as i16));
        (((a + b) >> 1) as i16 as u16, (a - b) as i16 as u16)
    }

    fn enc16(a: u16, b: u16) -> (u16, u16) {
        let ao = (i32::from(a) + 0x8000) & 0xffff;
        let b = i32::from(b);
        let mut m = (ao + b) >> 1;
        let d = ao - b;
        if d < 0 {
            m = (m + 0x8000) & 0xffff;
        }
        (m as u16, (d & 0xffff) as u16)
    }

    /// The forward transform, written from the format's description above.
    fn encode(buf: &mut [u16], nx: usize, ox: usize, ny: usize, oy: usize, max: u16) {
        let pair = if max < 1 << 14 { enc14 } else { enc16 };
        let n = nx.min(ny);
        let (mut p, mut p2) = (1, 2);
        while p2 <= n {
            let (ox1, ox2, oy1, oy2) = (ox * p, ox * p2, oy * p, oy * p2);
            let mut py = 0;
            while py <= oy * (ny - p2) {
                let mut px = py;
                while px <= py + ox * (nx - p2) {
                    let (p01, p10) = (px + ox1, px + oy1);
                    let p11 = p10 + ox1;
                    let (i00, i01) = pair(buf[px], buf[p01]);
                    let (i10, i11) = pair(buf[p10], buf[p11]);
                    (buf[px], buf[p10]) = pair(i00, i10);
                    (buf[p01], buf[p11]) = pair(i01, i11);
                    px += ox2;
                }
                if nx & p != 0 {
                    let p10 = px + oy1;
                    (buf[px], buf[p10]) = pair(buf[px], buf[p10]);
                }
                py += oy2;
            }
            if ny & p != 0 {
                let mut px = py;
                while px <= py + ox * (nx - p2) {
                    let p01 = px + ox1;
                    (buf[px], buf[p01]) = pair(buf[px], buf[p01]);
                    px += ox2;
                }
            }
            p = p2;
            p2 <<= 1;
        }
    }

    #[test]
    fn decoding_undoes_encoding_in_both_variants_and_any_shape() {
        let mut state = 12345u32;
        let mut next = || {
            state = state.wrapping_mul(1_103_515_245).wrapping_add(12345);
            (state >> 8) as u16
        };
        for (nx, ny) in [(1, 1), (1, 7), (5, 1), (2, 2), (7, 5), (16, 9), (33, 32)] {
            for (max, ox) in [((1 << 14) - 1, 1), (u16::MAX, 1), ((1 << 14) - 1, 2)] {
                let values: Vec<u16> = (0..nx * ny * ox).map(|_| next() % (max / 2 + 1)).collect();
                let mut buf = values.clone();
                let oy = nx * ox;
                for j in 0..ox {
                    encode(&mut buf[j..], nx, ox, ny, oy, max);
                }
                // A side of 1 leaves nothing to transform.
                if nx.min(ny) >= 2 {
                    assert_ne!(buf, values, "{nx}x{ny}: nothing encoded");
                }
                for j in 0..ox {
                    decode(&mut buf[j..], nx, ox, ny, oy, max);
                }
                assert_eq!(buf, values, "{nx}x{ny} max {max} ox {ox}");
            }
        }
    }
}
