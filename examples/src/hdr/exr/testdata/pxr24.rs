//! A PXR24 encoder for test files, written from the OpenEXR file-format
//! specification as the inverse of [`crate::hdr::exr::pxr24`] (see there
//! for the layout): per row and channel, the differences of the samples'
//! integer forms, split into byte planes, then zlib.

use super::Channel;
use crate::hdr::exr::header::SampleType;

/// A float's 24-bit form: sign, exponent and the significand rounded to
/// its top 15 bits (halfway rounds away from zero); a rounding that would
/// overflow to infinity truncates instead; infinities keep their bits and
/// NaNs their top 15 significand bits (at least one of them set).
pub fn float_to_24(v: f32) -> u32 {
    let bits = v.to_bits();
    let (sign, exponent, significand) =
        (bits & 0x8000_0000, bits & 0x7f80_0000, bits & 0x007f_ffff);
    let magnitude = if exponent == 0x7f80_0000 {
        let top = significand >> 8;
        (exponent >> 8) | top | u32::from(significand != 0 && top == 0)
    } else {
        let rounded = ((exponent | significand) + (significand & 0x80)) >> 8;
        if rounded >= 0x7f_8000 {
            (exponent | significand) >> 8
        } else {
            rounded
        }
    };
    (sign >> 8) | magnitude
}

/// Compresses the uncompressed block `raw` of rows `y..y + rows` of a data
/// window `width` wide holding `channels` (sorted by name).
pub fn compress(channels: &[Channel], raw: &[u8], y: i32, rows: usize, width: usize) -> Vec<u8> {
    let mut stream = Vec::new();
    let mut at = 0;
    for row in y..y + rows as i32 {
        for c in channels {
            if row.rem_euclid(c.sampling.1) != 0 {
                continue;
            }
            let n = width / c.sampling.0 as usize;
            let size = c.sample_type.size();
            let (values, planes): (Vec<u32>, usize) = {
                let line = &raw[at..at + n * size];
                at += n * size;
                match c.sample_type {
                    SampleType::Half => (
                        line.chunks_exact(2)
                            .map(|b| u32::from(u16::from_le_bytes([b[0], b[1]])))
                            .collect(),
                        2,
                    ),
                    SampleType::Float => (
                        line.chunks_exact(4)
                            .map(|b| float_to_24(f32::from_le_bytes([b[0], b[1], b[2], b[3]])))
                            .collect(),
                        3,
                    ),
                    SampleType::Uint => (
                        line.chunks_exact(4)
                            .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
                            .collect(),
                        4,
                    ),
                }
            };
            let mut previous = 0u32;
            let diffs: Vec<u32> = values
                .iter()
                .map(|&v| {
                    let d = v.wrapping_sub(previous);
                    previous = v;
                    d
                })
                .collect();
            for plane in (0..planes).rev() {
                stream.extend(diffs.iter().map(|d| (d >> (8 * plane)) as u8));
            }
        }
    }
    miniz_oxide::deflate::compress_to_vec_zlib(&stream, 6)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn floats_keep_their_top_24_bits_rounded() {
        assert_eq!(float_to_24(1.0), 0x3f_8000);
        assert_eq!(float_to_24(-2.0), 0xc0_0000);
        // 1 + 2^-16: bit 7 of the significand set, rounds up to 1 + 2^-15.
        assert_eq!(float_to_24(f32::from_bits(0x3f80_0080)), 0x3f_8001);
        assert_eq!(float_to_24(f32::from_bits(0x3f80_007f)), 0x3f_8000);
        // The largest float would round to infinity: truncated instead.
        assert_eq!(float_to_24(f32::MAX), 0x7f_7fff);
        assert_eq!(float_to_24(f32::INFINITY), 0x7f_8000);
        // A NaN whose top 15 significand bits are 0 stays a NaN.
        assert_eq!(float_to_24(f32::from_bits(0x7f80_0001)), 0x7f_8001);
    }
}
