//! PIZ decompression of scanline blocks, subsampled channels included.
//!
//! OpenEXR's PIZ (the default of many writers, and of the official
//! luminance/chroma samples) stores a block of up to 32 rows as:
//! - a bitmap of the 16-bit values that occur (little-endian `u16`s: the
//!   first and last non-zero byte of the 8192-byte bitmap, then those
//!   bytes), which maps the values to the dense range `0..n` (0 always
//!   included);
//! - an `i32` byte count, then the [`huffman`]-coded dense values of every
//!   channel in header order, each channel's samples at its own resolution
//!   (a `float` or `uint` sample is two 16-bit halves, low first);
//! - each channel transformed by the [`wavelet`] before coding (the halves
//!   of 32-bit samples separately).
//!
//! Decoding undoes the three steps and lays the samples out as an
//! uncompressed block: row by row, in each row the channels sampled there.
//! The `exr` crate (1.74) has a PIZ decoder, but reaches it only for
//! channels sampled at every pixel, which is why this one exists.

pub mod huffman;
pub mod wavelet;

use super::header::Header;

/// Bytes of the bitmap: one bit per 16-bit value.
const BITMAP_BYTES: usize = 1 << 13;

/// Decompresses the PIZ block of rows `y..y + rows` of a data window
/// `width` wide into `expected` bytes, or says what is corrupt.
pub fn decompress(
    header: &Header,
    data: &[u8],
    y: i32,
    rows: usize,
    width: usize,
    expected: usize,
) -> Result<Vec<u8>, &'static str> {
    let word = |at: usize| -> Result<u16, &'static str> {
        let b = data.get(at..at + 2).ok_or("PIZ header ends early")?;
        Ok(u16::from_le_bytes([b[0], b[1]]))
    };
    let (first, last) = (usize::from(word(0)?), usize::from(word(2)?));
    let mut bitmap = vec![0u8; BITMAP_BYTES];
    let mut at = 4;
    if first <= last {
        if last >= BITMAP_BYTES {
            return Err("PIZ bitmap range");
        }
        let bytes = data
            .get(at..at + last - first + 1)
            .ok_or("PIZ bitmap ends early")?;
        bitmap[first..=last].copy_from_slice(bytes);
        at += bytes.len();
    }
    let (lookup, max) = lookup_from_bitmap(&bitmap);
    let length = data.get(at..at + 4).ok_or("PIZ data ends early")?;
    let length = i32::from_le_bytes([length[0], length[1], length[2], length[3]]);
    let coded = usize::try_from(length)
        .ok()
        .and_then(|n| data.get(at + 4..at + 4 + n))
        .ok_or("PIZ data ends early")?;

    // Each channel's samples, as 16-bit halves, in the order coded.
    let layout: Vec<ChannelLayout> = header
        .channels
        .iter()
        .map(|c| ChannelLayout {
            nx: width / c.x_sampling as usize,
            ny: (y..y + rows as i32)
                .filter(|r| r.rem_euclid(c.y_sampling) == 0)
                .count(),
            halves: c.sample_type.size() / 2,
            y_sampling: c.y_sampling,
        })
        .collect();
    let count: usize = layout.iter().map(|c| c.nx * c.ny * c.halves).sum();
    if 2 * count != expected {
        return Err("PIZ block size");
    }
    let mut values = huffman::decode(coded, count)?;
    let mut start = 0;
    for c in &layout {
        let n = c.nx * c.ny * c.halves;
        let channel = &mut values[start..start + n];
        for half in 0..c.halves {
            wavelet::decode(
                &mut channel[half..],
                c.nx,
                c.halves,
                c.ny,
                c.nx * c.halves,
                max,
            );
        }
        start += n;
    }
    for v in &mut values {
        *v = lookup[usize::from(*v)];
    }
    Ok(uncompressed_order(&values, &layout, y, rows, expected))
}

/// Where a channel's samples lie among the decoded values.
struct ChannelLayout {
    nx: usize,
    ny: usize,
    halves: usize,
    y_sampling: i32,
}

/// The values in the order of an uncompressed block, little-endian.
fn uncompressed_order(
    values: &[u16],
    layout: &[ChannelLayout],
    y: i32,
    rows: usize,
    expected: usize,
) -> Vec<u8> {
    let mut next_row: Vec<usize> = Vec::with_capacity(layout.len());
    let mut start = 0;
    for c in layout {
        next_row.push(start);
        start += c.nx * c.ny * c.halves;
    }
    let mut out = Vec::with_capacity(expected);
    for row in y..y + rows as i32 {
        for (c, at) in layout.iter().zip(&mut next_row) {
            if row.rem_euclid(c.y_sampling) != 0 {
                continue;
            }
            let line = c.nx * c.halves;
            out.extend(values[*at..*at + line].iter().flat_map(|v| v.to_le_bytes()));
            *at += line;
        }
    }
    out
}

/// The dense code of every value present (0 always is) back to the value,
/// and the largest code.
fn lookup_from_bitmap(bitmap: &[u8]) -> (Vec<u16>, u16) {
    let mut lookup = vec![0u16; 1 << 16];
    let mut n = 0;
    for value in 0..1usize << 16 {
        if value == 0 || bitmap[value >> 3] & (1 << (value & 7)) != 0 {
            lookup[n] = value as u16;
            n += 1;
        }
    }
    (lookup, (n - 1) as u16)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_bitmap_maps_dense_codes_to_the_values_present() {
        let mut bitmap = vec![0u8; BITMAP_BYTES];
        bitmap[0] = 0b0000_0110; // 1 and 2
        bitmap[BITMAP_BYTES - 1] = 0x80; // 65535
        let (lookup, max) = lookup_from_bitmap(&bitmap);
        assert_eq!(max, 3);
        assert_eq!(&lookup[..4], &[0, 1, 2, 65535]);
    }
}
