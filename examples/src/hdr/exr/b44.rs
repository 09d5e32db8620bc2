//! B44 and B44A decompression of scanline blocks, subsampled channels
//! included.
//!
//! OpenEXR's B44 stores a block of up to 32 rows channel after channel, in
//! header order; each channel holds its own samples of those rows (for a
//! channel sampled every second row and column, up to 16 rows of
//! `width / 2` samples):
//! - a `float` or `uint` channel: its samples uncompressed, row after row,
//!   little-endian;
//! - a `half` channel: its samples cut into blocks of 4x4 (left to right,
//!   then top to bottom; past the channel's last column or row the encoder
//!   repeats it, and the decoder drops what lies outside), each block
//!   stored in 14 bytes, or in 3 when all 16 values are equal (B44A writes
//!   those; any B44 reader decodes both).
//!
//! A 14-byte block: every half `h` is first made an unsigned 16-bit `t`
//! that orders like the value (`h | 0x8000` for positive values, `!h` for
//! negative ones, `0x8000` for infinities and NaNs). Bytes 0 and 1 hold
//! `t[0]` big-endian; bytes 2..14 hold sixteen 6-bit fields, most
//! significant bit first: a `shift`, then fifteen differences `r` biased
//! by 32 and scaled by `2^shift`, from which the other values follow:
//! `t[4] = t[0] + (r0 << shift) - (32 << shift)`, then `t[8]` from `t[4]`
//! by `r1` and `t[12]` from `t[8]` by `r2` (the first column, down); then
//! along each row `i`, `t[4i+1]` from `t[4i]` by `r[3+i]`, `t[4i+2]` from
//! `t[4i+1]` by `r[7+i]`, `t[4i+3]` from `t[4i+2]` by `r[11+i]`, all
//! modulo 2^16. A 3-byte block holds `t` in bytes 0 and 1 and 0xfc in byte
//! 2; a `shift` field of 13 or more (byte 2 >= 52), impossible in a 14-byte
//! block, marks it. Each `t` is mapped back to a half (`t & 0x7fff` when
//! its top bit is set, `!t` otherwise): infinities and NaNs come back as 0.
//!
//! A channel with the `pLinear` hint was stored as `exp(h / 8)` of its
//! values; the decoder applies the inverse, `8 ln(h)` rounded to half
//! (negative values, infinities and NaNs to 0), as OpenEXR's
//! `b44ExpLogTable` does.
//!
//! The result is laid out as an uncompressed block: row by row, in each row
//! the channels sampled there.

use super::header::{Header, SampleType};
use exr::prelude::f16;
use std::sync::OnceLock;

/// Pixels along a side of a compressed block.
const SIDE: usize = 4;

/// A block's sixteen values, row-major.
type Block = [u16; 16];

/// Decompresses the B44 or B44A block of rows `y..y + rows` of a data
/// window `width` wide into `expected` bytes (an uncompressed block), or
/// says what is corrupt.
pub fn decompress(
    header: &Header,
    data: &[u8],
    y: i32,
    rows: usize,
    width: usize,
    expected: usize,
) -> Result<Vec<u8>, &'static str> {
    let mut at = 0;
    // Each channel's samples of the block, little-endian, row-major.
    let mut channels: Vec<(Vec<u8>, usize)> = Vec::with_capacity(header.channels.len());
    for c in &header.channels {
        let nx = width / c.x_sampling as usize;
        let ny = (y..y + rows as i32)
            .filter(|r| r.rem_euclid(c.y_sampling) == 0)
            .count();
        let line = nx * c.sample_type.size();
        if c.sample_type != SampleType::Half {
            let raw = data.get(at..at + line * ny).ok_or("B44 data ends early")?;
            at += raw.len();
            channels.push((raw.to_vec(), line));
            continue;
        }
        let mut values = vec![0u16; nx * ny];
        for by in (0..ny).step_by(SIDE) {
            for bx in (0..nx).step_by(SIDE) {
                let (mut block, used) = unpack(&data[at.min(data.len())..])?;
                at += used;
                if c.p_linear {
                    let table = to_linear_table();
                    block = block.map(|v| table[usize::from(v)]);
                }
                for (i, row) in block.chunks_exact(SIDE).enumerate().take(ny - by) {
                    let start = (by + i) * nx + bx;
                    let n = SIDE.min(nx - bx);
                    values[start..start + n].copy_from_slice(&row[..n]);
                }
            }
        }
        let bytes = values.iter().flat_map(|v| v.to_le_bytes()).collect();
        channels.push((bytes, line));
    }
    if at != data.len() {
        return Err("B44 data longer than its blocks");
    }
    let mut out = Vec::with_capacity(expected);
    let mut next = vec![0usize; channels.len()];
    for row in y..y + rows as i32 {
        for ((c, (bytes, line)), next) in header.channels.iter().zip(&channels).zip(&mut next) {
            if row.rem_euclid(c.y_sampling) == 0 {
                out.extend_from_slice(&bytes[*next..*next + line]);
                *next += line;
            }
        }
    }
    if out.len() != expected {
        return Err("B44 block size");
    }
    Ok(out)
}

/// Decodes the compressed 4x4 block at the start of `data` into halves;
/// returns them and the bytes used (3 or 14).
pub fn unpack(data: &[u8]) -> Result<(Block, usize), &'static str> {
    let head = data.get(..3).ok_or("B44 data ends early")?;
    let t0 = u16::from_be_bytes([head[0], head[1]]);
    if head[2] >= 13 << 2 {
        return Ok(([from_ordered(t0); 16], 3));
    }
    let bytes = data.get(..14).ok_or("B44 data ends early")?;
    // Bytes 2..14 as one 96-bit big-endian number: sixteen 6-bit fields.
    let bits = bytes[2..]
        .iter()
        .fold(0u128, |acc, &b| (acc << 8) | u128::from(b));
    let field = |k: u32| ((bits >> (90 - 6 * k)) & 0x3f) as u16;
    let shift = field(0);
    let r = |k: usize| field(1 + k as u32);
    let step = |from: u16, r: u16| from.wrapping_add(r << shift).wrapping_sub(32 << shift);
    let mut t = [0u16; 16];
    t[0] = t0;
    for i in 1..SIDE {
        t[SIDE * i] = step(t[SIDE * (i - 1)], r(i - 1));
    }
    for i in 0..SIDE {
        for j in 1..SIDE {
            t[SIDE * i + j] = step(t[SIDE * i + j - 1], r(3 + 4 * (j - 1) + i));
        }
    }
    Ok((t.map(from_ordered), 14))
}

/// A half's bits from the ordered form the blocks store.
pub fn from_ordered(t: u16) -> u16 {
    if t & 0x8000 != 0 {
        t & 0x7fff
    } else {
        !t
    }
}

/// The ordered form of a half's bits (infinities and NaNs become 0x8000, 0).
pub fn to_ordered(h: u16) -> u16 {
    if h & 0x7c00 == 0x7c00 {
        0x8000
    } else if h & 0x8000 != 0 {
        !h
    } else {
        h | 0x8000
    }
}

/// `8 ln(h)` for every half `h` (0 for negative values, infinities and
/// NaNs): the inverse of the `exp(h / 8)` that B44 applies to `pLinear`
/// channels.
fn to_linear_table() -> &'static [u16] {
    static TABLE: OnceLock<Vec<u16>> = OnceLock::new();
    TABLE.get_or_init(|| (0..=u16::MAX).map(to_linear).collect())
}

/// `8 ln(h)` rounded to half (see [`to_linear_table`]).
pub fn to_linear(bits: u16) -> u16 {
    let h = f16::from_bits(bits);
    if !h.is_finite() || h.to_f32() < 0.0 {
        return 0;
    }
    f16::from_f64(8.0 * f64::from(h.to_f32()).ln()).to_bits()
}

/// `exp(h / 8)` rounded to half (0 for infinities and NaNs, the largest
/// half where it would overflow): what a B44 writer stores for a `pLinear`
/// channel's value `h`.
pub fn from_linear(bits: u16) -> u16 {
    let h = f16::from_bits(bits);
    if !h.is_finite() {
        return 0;
    }
    let x = f64::from(h.to_f32());
    if x >= 8.0 * f64::from(f16::MAX.to_f32()).ln() {
        return f16::MAX.to_bits();
    }
    f16::from_f64((x / 8.0).exp()).to_bits()
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    #[test]
    fn the_ordered_form_sorts_like_the_values() {
        let halves = [-65504.0f32, -2.0, -0.5, -0.0, 0.0, 1e-7, 0.5, 1.0, 65504.0];
        let t: Vec<u16> = halves
            .iter()
            .map(|&v| to_ordered(f16::from_f32(v).to_bits()))
            .collect();
        assert!(t.windows(2).all(|w| w[0] <= w[1]), "{t:x?}");
        for &v in &halves {
            let bits = f16::from_f32(v).to_bits();
            assert_eq!(from_ordered(to_ordered(bits)), bits, "{v}");
        }
        assert_eq!(from_ordered(to_ordered(f16::INFINITY.to_bits())), 0);
        assert_eq!(from_ordered(to_ordered(f16::NAN.to_bits())), 0);
    }

    /// Blocks computed by hand from the format's description (see the
    /// module docs), so that an encoder and a decoder sharing a mistake
    /// cannot pass.
    pub(crate) mod known {
        /// 1.0 (0x3c00) everywhere, in 14 bytes: t = 0xbc00, shift 0, all
        /// fifteen differences 32 (0b100000), i.e. the bit pattern
        /// 000000 100000 100000 100000 (0x02 0x08 0x20) then 100000 x 4
        /// (0x82 0x08 0x20) three times.
        pub(crate) const FLAT_14: [u8; 14] = [
            0xbc, 0x00, 0x02, 0x08, 0x20, 0x82, 0x08, 0x20, 0x82, 0x08, 0x20, 0x82, 0x08, 0x20,
        ];
        /// -1.0 (0xbc00) everywhere, in 3 bytes: t = !0xbc00 = 0x43ff, 0xfc.
        pub(crate) const FLAT_3: [u8; 3] = [0x43, 0xff, 0xfc];
        /// Every row 0x3c00, 0x3c01, 0x3c02, 0x3c03 (t = 0xbc00..0xbc03,
        /// distances to the largest 3, 2, 1, 0): shift 0, the first
        /// column's differences 32, the others 33 (0b100001 x 4 = 0x86 0x18
        /// 0x61). Lossless.
        pub(crate) const RAMP_EXACT: [u8; 14] = [
            0xbc, 0x00, 0x02, 0x08, 0x20, 0x86, 0x18, 0x61, 0x86, 0x18, 0x61, 0x86, 0x18, 0x61,
        ];
        /// The rows of [`RAMP_LOSSY`] before compression: steps of 101.
        pub(crate) const RAMP_LOSSY_IN: [u16; 4] = [0x3c00, 0x3c65, 0x3cca, 0x3d2f];
        /// Distances 303, 202, 101, 0 need shift 2 (shift 1 gives a
        /// difference of 152 - 101 = 51 > 31): rounded half to even they
        /// are 76, 50, 25, 0, differences 26, 25, 25 (+32: 58 = 0b111010,
        /// 57 = 0b111001); t[0] = 0xbd2f - 76 * 4 = 0xbbff.
        pub(crate) const RAMP_LOSSY: [u8; 14] = [
            0xbb, 0xff, 0x0a, 0x08, 0x20, 0xeb, 0xae, 0xba, 0xe7, 0x9e, 0x79, 0xe7, 0x9e, 0x79,
        ];
        /// What [`RAMP_LOSSY`] decodes to: t = 0xbbff, + 58 * 4 - 128 =
        /// 0xbc67, + 57 * 4 - 128 = 0xbccb, + 100 = 0xbd2f (the largest,
        /// exact), less the top bit.
        pub(crate) const RAMP_LOSSY_OUT: [u16; 4] = [0x3bff, 0x3c67, 0x3ccb, 0x3d2f];
    }

    #[test]
    fn hand_computed_blocks_decode() {
        use known::*;
        assert_eq!(unpack(&FLAT_14).unwrap(), ([0x3c00; 16], 14));
        assert_eq!(unpack(&FLAT_3).unwrap(), ([0xbc00; 16], 3));
        let rows = |r: [u16; 4]| std::array::from_fn::<u16, 16, _>(|i| r[i % 4]);
        assert_eq!(
            unpack(&RAMP_EXACT).unwrap(),
            (rows([0x3c00, 0x3c01, 0x3c02, 0x3c03]), 14)
        );
        assert_eq!(unpack(&RAMP_LOSSY).unwrap(), (rows(RAMP_LOSSY_OUT), 14));
        // Trailing bytes belong to the next block; too few are an error.
        let mut two = FLAT_3.to_vec();
        two.extend_from_slice(&FLAT_14);
        assert_eq!(unpack(&two).unwrap().1, 3);
        assert!(unpack(&FLAT_14[..13]).is_err());
        assert!(unpack(&FLAT_3[..2]).is_err());
    }

    #[test]
    fn the_linear_conversions_match_openexrs_table_entries() {
        // Entries of OpenEXR's b44ExpLogTable.h.
        assert_eq!(to_linear(0x0000), 0xfc00, "8 ln(0) = -inf");
        assert_eq!(to_linear(0x0001), 0xd829);
        assert_eq!(to_linear(0x3c00), 0x0000, "8 ln(1) = 0");
        assert_eq!(to_linear(0xbc00), 0x0000, "negative");
        assert_eq!(from_linear(0x0000), 0x3c00, "exp(0) = 1");
        assert_eq!(from_linear(0x7bff), 0x7bff, "overflow clamps");
        assert_eq!(from_linear(0x7c00), 0x0000, "infinity");
        // exp(8 / 8) = e, and back.
        assert_eq!(f16::from_bits(from_linear(0x4800)).to_f32(), 2.71875);
        assert_eq!(to_linear(from_linear(0x4800)), 0x4800);
    }
}
