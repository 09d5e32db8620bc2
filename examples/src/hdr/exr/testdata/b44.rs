//! A B44/B44A encoder for test files, written from the OpenEXR file-format
//! specification as the inverse of [`crate::hdr::exr::b44`] (see there for
//! the layout).
//!
//! Packing a 4x4 block: with `t` the ordered forms of its halves and `tMax`
//! the largest, the smallest `shift` is found for which the distances
//! `d[i] = (tMax - t[i]) / 2^shift` (rounded half to even) have running
//! differences, biased by 32, within 0..=63; B44A stores a block whose
//! differences are all 0 in 3 bytes. For channels without the `pLinear`
//! hint, `t[0]` is then adjusted so that the largest value comes back
//! exactly (`t[0] = tMax - d[0] * 2^shift`).

use super::Channel;
use crate::hdr::exr::b44::{from_linear, to_ordered};
use crate::hdr::exr::header::SampleType;

/// `x / 2^shift`, rounded half to even.
fn shift_and_round(x: i32, shift: u32) -> i32 {
    if shift == 0 {
        return x;
    }
    let (q, rem, half) = (x >> shift, x & ((1 << shift) - 1), 1 << (shift - 1));
    if rem > half || (rem == half && q & 1 == 1) {
        q + 1
    } else {
        q
    }
}

/// Which running difference `r[k]` is `d[from] - d[to]`: the first column
/// downwards, then for each column pair the four rows.
fn pairs() -> [(usize, usize); 15] {
    let mut p = [(0, 0); 15];
    for (i, pair) in p.iter_mut().take(3).enumerate() {
        *pair = (4 * i, 4 * i + 4);
    }
    for j in 0..3 {
        for i in 0..4 {
            p[3 + 4 * j + i] = (4 * i + j, 4 * i + j + 1);
        }
    }
    p
}

/// Packs 16 halves (row-major) into 14 bytes, or 3 when `flat_blocks` and
/// all are equal; `exact_max` adjusts `t[0]` as the module docs say.
pub fn pack(s: [u16; 16], flat_blocks: bool, exact_max: bool) -> Vec<u8> {
    let mut t = s.map(to_ordered);
    let t_max = *t.iter().max().unwrap_or(&0);
    let mut shift = 0u32;
    let (d, r) = loop {
        let d = t.map(|v| shift_and_round(i32::from(t_max - v), shift));
        let r = pairs().map(|(a, b)| d[a] - d[b] + 32);
        if r.iter().all(|v| (0..=63).contains(v)) {
            break (d, r);
        }
        shift += 1;
    };
    if flat_blocks && r.iter().all(|&v| v == 32) {
        let [hi, lo] = t[0].to_be_bytes();
        return vec![hi, lo, 0xfc];
    }
    if exact_max {
        t[0] = t_max.wrapping_sub((d[0] << shift) as u16);
    }
    let mut bits = u128::from(shift);
    for v in r {
        bits = (bits << 6) | v as u128;
    }
    let mut out = t[0].to_be_bytes().to_vec();
    out.extend_from_slice(&bits.to_be_bytes()[4..]);
    out
}

/// Compresses the uncompressed block `raw` of rows `y..y + rows` of a data
/// window `width` wide holding `channels` (sorted by name); `flat_blocks`
/// is B44A's 3-byte encoding of flat blocks.
pub fn compress(
    channels: &[Channel],
    raw: &[u8],
    y: i32,
    rows: usize,
    width: usize,
    flat_blocks: bool,
) -> Vec<u8> {
    // Each channel's rows of the block, gathered from the row-interleaved raw block.
    let mut per_channel: Vec<Vec<u8>> = vec![Vec::new(); channels.len()];
    let mut at = 0;
    for row in y..y + rows as i32 {
        for (c, out) in channels.iter().zip(&mut per_channel) {
            if row.rem_euclid(c.sampling.1) == 0 {
                let n = width / c.sampling.0 as usize * c.sample_type.size();
                out.extend_from_slice(&raw[at..at + n]);
                at += n;
            }
        }
    }
    let mut out = Vec::new();
    for (c, bytes) in channels.iter().zip(per_channel) {
        if c.sample_type != SampleType::Half {
            out.extend_from_slice(&bytes);
            continue;
        }
        let nx = width / c.sampling.0 as usize;
        let ny = bytes.len() / 2 / nx.max(1);
        let value = |x: usize, y: usize| {
            // Past the last column or row, the last one repeats.
            let i = 2 * (y.min(ny - 1) * nx + x.min(nx - 1));
            u16::from_le_bytes([bytes[i], bytes[i + 1]])
        };
        for by in (0..ny).step_by(4) {
            for bx in (0..nx).step_by(4) {
                let mut s = [0u16; 16];
                for (i, v) in s.iter_mut().enumerate() {
                    *v = value(bx + i % 4, by + i / 4);
                    if c.p_linear {
                        *v = from_linear(*v);
                    }
                }
                out.extend(pack(s, flat_blocks, !c.p_linear));
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hand_computed_blocks_encode() {
        use crate::hdr::exr::b44::tests::known::*;
        assert_eq!(pack([0x3c00; 16], false, true), FLAT_14);
        assert_eq!(pack([0x3c00; 16], true, true), [0xbc, 0x00, 0xfc]);
        assert_eq!(pack([0xbc00; 16], true, true), FLAT_3);
        let rows = |r: [u16; 4]| std::array::from_fn::<u16, 16, _>(|i| r[i % 4]);
        assert_eq!(
            pack(rows([0x3c00, 0x3c01, 0x3c02, 0x3c03]), true, true),
            RAMP_EXACT
        );
        assert_eq!(pack(rows(RAMP_LOSSY_IN), true, true), RAMP_LOSSY);
    }

    #[test]
    fn rounding_is_half_to_even() {
        assert_eq!(shift_and_round(5, 0), 5);
        assert_eq!(shift_and_round(6, 2), 2); // 1.5 -> 2
        assert_eq!(shift_and_round(10, 2), 2); // 2.5 -> 2
        assert_eq!(shift_and_round(11, 2), 3); // 2.75 -> 3
        assert_eq!(shift_and_round(9, 2), 2); // 2.25 -> 2
    }
}
