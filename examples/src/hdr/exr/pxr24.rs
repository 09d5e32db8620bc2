//! PXR24 decompression of scanline blocks, subsampled channels included.
//!
//! OpenEXR's PXR24 (contributed by Pixar) stores a block of up to 16 rows
//! as one zlib stream. Before compression, for each row of the block and
//! each channel sampled on that row (in header order), the row's samples
//! become integers — a `uint` as is, a `half` by its 16 bits, a `float`
//! rounded to 24 bits (sign, exponent and the top 15 significand bits:
//! lossy) — and each integer is replaced by its difference to the previous
//! sample of the row (the first by its difference to 0, modulo 2^32). The
//! differences are then split into bytes, most significant first, and the
//! bytes transposed into planes: for each row and channel, the `n` most
//! significant bytes of the row's `n` samples, then the `n` next ones, and
//! so on (2 planes for `half`, 3 for `float`, 4 for `uint`).
//!
//! Decoding inflates the stream, adds the differences back up (wrapping)
//! and writes each row as an uncompressed block holds it, little-endian; a
//! `float` is its 24 bits followed by a zero byte. The channel's `pLinear`
//! hint plays no part.

use super::header::{Header, SampleType};

/// Planes (bytes per sample) of a channel's rows in the zlib stream.
fn planes(sample_type: SampleType) -> usize {
    match sample_type {
        SampleType::Half => 2,
        SampleType::Float => 3,
        SampleType::Uint => 4,
    }
}

/// Decompresses the PXR24 block of rows `y..y + rows` of a data window
/// `width` wide into `expected` bytes (an uncompressed block), or says what
/// is corrupt.
pub fn decompress(
    header: &Header,
    data: &[u8],
    y: i32,
    rows: usize,
    width: usize,
    expected: usize,
) -> Result<Vec<u8>, &'static str> {
    // Each row's channels: (samples, planes, sample type).
    let lines: Vec<(usize, usize, SampleType)> = (y..y + rows as i32)
        .flat_map(|row| {
            header
                .channels
                .iter()
                .filter(move |c| row.rem_euclid(c.y_sampling) == 0)
                .map(|c| {
                    let n = width / c.x_sampling as usize;
                    (n, planes(c.sample_type), c.sample_type)
                })
        })
        .collect();
    let stream_size: usize = lines.iter().map(|&(n, p, _)| n * p).sum();
    let stream = miniz_oxide::inflate::decompress_to_vec_zlib_with_limit(data, stream_size)
        .map_err(|_| "PXR24 zlib data")?;
    if stream.len() != stream_size {
        return Err("PXR24 data has the wrong size");
    }
    let mut out = Vec::with_capacity(expected);
    let mut at = 0;
    for (n, p, sample_type) in lines {
        let plane = |k: usize| &stream[at + k * n..at + (k + 1) * n];
        let mut pixel = 0u32;
        for x in 0..n {
            // The difference, with its most significant byte first.
            let diff = (0..p).fold(0u32, |d, k| (d << 8) | u32::from(plane(k)[x]));
            match sample_type {
                SampleType::Half => {
                    pixel = pixel.wrapping_add(diff);
                    out.extend_from_slice(&(pixel as u16).to_le_bytes());
                }
                SampleType::Float => {
                    pixel = pixel.wrapping_add(diff << 8);
                    out.extend_from_slice(&pixel.to_le_bytes());
                }
                SampleType::Uint => {
                    pixel = pixel.wrapping_add(diff);
                    out.extend_from_slice(&pixel.to_le_bytes());
                }
            }
        }
        at += n * p;
    }
    if out.len() != expected {
        return Err("PXR24 block size");
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hdr::exr::header::{Channel, Window};

    fn header(channels: Vec<Channel>, width: i32, height: i32) -> Header {
        let window = Window {
            x_min: 0,
            y_min: 0,
            x_max: width - 1,
            y_max: height - 1,
        };
        Header {
            channels,
            compression: 5,
            data_window: window,
            display_window: window,
            chromaticities: None,
            tiled: false,
            tile_size: None,
            end: 0,
        }
    }

    fn channel(name: &str, sample_type: SampleType, sampling: i32) -> Channel {
        Channel {
            name: name.into(),
            sample_type,
            x_sampling: sampling,
            y_sampling: sampling,
            p_linear: false,
        }
    }

    #[test]
    fn a_hand_made_block_decodes() {
        // One row of three half samples 0x3c00 (1.0), 0x4000 (2.0),
        // 0x3c00: differences 0x3c00, 0x0400, 0xfc00 (wrapping), as a
        // high-byte plane then a low-byte plane.
        let h = header(vec![channel("Y", SampleType::Half, 1)], 3, 1);
        let stream = [0x3c, 0x04, 0xfc, 0x00, 0x00, 0x00];
        let data = miniz_oxide::deflate::compress_to_vec_zlib(&stream, 6);
        let out = decompress(&h, &data, 0, 1, 3, 6).unwrap();
        assert_eq!(out, [0x00, 0x3c, 0x00, 0x40, 0x00, 0x3c]);
        // A float: 24 bits 0x3f8000 (1.0), planes of one byte each.
        let h = header(vec![channel("Y", SampleType::Float, 1)], 1, 1);
        let data = miniz_oxide::deflate::compress_to_vec_zlib(&[0x3f, 0x80, 0x00], 6);
        let out = decompress(&h, &data, 0, 1, 1, 4).unwrap();
        assert_eq!(f32::from_le_bytes(out.try_into().unwrap()), 1.0);
    }

    #[test]
    fn subsampled_rows_hold_only_their_samples() {
        // Rows 0 and 1 of a 4-wide block: row 0 has Y (4) and RY (2), row 1
        // only Y: 10 half samples, all zero differences but the first.
        let h = header(
            vec![
                channel("RY", SampleType::Half, 2),
                channel("Y", SampleType::Half, 1),
            ],
            4,
            2,
        );
        let mut stream = vec![0u8; 2 * (2 + 4 + 4)];
        stream[0] = 0x3c; // RY row 0, first sample's high byte
        let data = miniz_oxide::deflate::compress_to_vec_zlib(&stream, 6);
        let out = decompress(&h, &data, 0, 2, 4, 20).unwrap();
        let words: Vec<u16> = out
            .chunks_exact(2)
            .map(|b| u16::from_le_bytes([b[0], b[1]]))
            .collect();
        assert_eq!(words[..2], [0x3c00, 0x3c00]);
        assert!(words[2..].iter().all(|&w| w == 0));
        // A stream one byte short is an error.
        let data = miniz_oxide::deflate::compress_to_vec_zlib(&stream[1..], 6);
        assert!(decompress(&h, &data, 0, 2, 4, 20).is_err());
    }
}
