//! Scanline files with subsampled channels, read by the project itself.
//!
//! The `exr` crate (1.74) refuses any channel whose sampling is not 1x1
//! ("channel subsampling not supported yet"), yet OpenEXR's RGBA interface
//! writes luminance/chroma files with `RY` and `BY` sampled every second
//! column and row. This reader decodes such files when they are stored in
//! scanline blocks with no compression, RLE, ZIPS, ZIP, [`piz`](super::piz),
//! [`pxr24`](super::pxr24), [`b44`](super::b44) (B44 and B44A) or
//! [`dwa`](super::dwa) (DWAA and DWAB): every compression OpenEXR offers
//! but HTJ2K, which is refused with a one-line message naming it.
//!
//! A block holds, for each of its rows `y` and each channel in header
//! order, the channel's samples of that row when `y` is a multiple of the
//! channel's y sampling, little-endian. RLE and ZIP blocks are byte streams
//! that were split into even and odd bytes and delta-coded before
//! compression (OpenEXR's `ImfRle`/`ImfZip`); both steps are undone here.
//! The other codecs return the block in that layout directly.

use super::header::{compression_name, Header, SampleType};
use super::planes::Plane;
use exr::prelude::f16;

/// Reads every channel at its own resolution.
pub fn read_subsampled(bytes: &[u8], header: &Header) -> Result<Vec<Plane>, String> {
    if header.tiled {
        return Err("subsampled channels in a tiled file are not supported".into());
    }
    if header.compression > 9 {
        return Err(format!(
            "subsampled (luminance/chroma) files with {} are not supported (only no \
             compression, RLE, ZIPS, ZIP, PIZ, PXR24, B44, B44A, DWAA and DWAB)",
            compression_name(header.compression)
        ));
    }
    let block_rows = header.rows_per_block();
    let window = header.data_window;
    let (width, height) = (window.width() as usize, window.height() as usize);
    let mut planes = Vec::with_capacity(header.channels.len());
    for c in &header.channels {
        let (xs, ys) = (c.x_sampling, c.y_sampling);
        if window.x_min.rem_euclid(xs) != 0
            || window.y_min.rem_euclid(ys) != 0
            || width % xs as usize != 0
            || height % ys as usize != 0
        {
            return Err(format!(
                "not a valid OpenEXR file: channel `{}` sampled {xs}x{ys} does not divide the \
                 data window {window}",
                c.name
            ));
        }
        let (w, h) = (width / xs as usize, height / ys as usize);
        planes.push(Plane {
            name: c.name.clone(),
            width: w,
            height: h,
            x_sampling: xs as usize,
            y_sampling: ys as usize,
            samples: vec![0.0; w * h],
        });
    }
    let blocks = height.div_ceil(block_rows);
    let table = bytes
        .get(header.end..header.end + blocks * 8)
        .ok_or("not a valid OpenEXR file: truncated offset table")?;
    for (i, entry) in table.chunks_exact(8).enumerate() {
        let offset = u64::from_le_bytes(entry.try_into().unwrap_or_default());
        let truncated = || format!("not a valid OpenEXR file: truncated (block {i} is missing)");
        let at = usize::try_from(offset).map_err(|_| truncated())?;
        let head = bytes.get(at..at.saturating_add(8)).ok_or_else(truncated)?;
        let y = i32::from_le_bytes([head[0], head[1], head[2], head[3]]);
        let size = u32::from_le_bytes([head[4], head[5], head[6], head[7]]) as usize;
        let data = bytes
            .get(at + 8..(at + 8).saturating_add(size))
            .ok_or_else(truncated)?;
        let first = i64::from(y) - i64::from(window.y_min);
        if first < 0 || first as usize >= height || !(first as usize).is_multiple_of(block_rows) {
            return Err(format!(
                "not a valid OpenEXR file: block {i} starts at row {y}"
            ));
        }
        let rows = block_rows.min(height - first as usize);
        let raw = decompress(header, data, y, rows, width)?;
        unpack(header, &raw, y, rows, &mut planes);
    }
    Ok(planes)
}

/// Bytes that rows `y..y + rows` hold once decompressed.
fn block_size(header: &Header, y: i32, rows: usize, width: usize) -> usize {
    (0..rows as i32)
        .map(|r| {
            let row = y + r;
            header
                .channels
                .iter()
                .filter(|c| row.rem_euclid(c.y_sampling) == 0)
                .map(|c| width / c.x_sampling as usize * c.sample_type.size())
                .sum::<usize>()
        })
        .sum()
}

fn decompress(
    header: &Header,
    data: &[u8],
    y: i32,
    rows: usize,
    width: usize,
) -> Result<Vec<u8>, String> {
    let expected = block_size(header, y, rows, width);
    // A block that would not shrink is stored as is, whatever the header says.
    if data.len() == expected {
        return Ok(data.to_vec());
    }
    let bad = |what: &str| format!("not a valid OpenEXR file: corrupt block at row {y} ({what})");
    let mut bytes = match header.compression {
        1 => unpack_rle(data, expected).ok_or_else(|| bad("RLE data"))?,
        2 | 3 => miniz_oxide::inflate::decompress_to_vec_zlib_with_limit(data, expected)
            .map_err(|_| bad("ZIP data"))?,
        4 => return super::piz::decompress(header, data, y, rows, width, expected).map_err(bad),
        5 => return super::pxr24::decompress(header, data, y, rows, width, expected).map_err(bad),
        6 | 7 => {
            return super::b44::decompress(header, data, y, rows, width, expected).map_err(bad)
        }
        8 | 9 => {
            return super::dwa::decompress(header, data, y, rows, width, expected)
                .map_err(|e| bad(&e))
        }
        _ => return Err(bad("wrong size")),
    };
    if bytes.len() != expected {
        return Err(bad("wrong size"));
    }
    undo_predictor(&mut bytes);
    Ok(interleave(&bytes))
}

/// OpenEXR's RLE: a signed count byte; `-n` copies `n` literal bytes,
/// `n >= 0` repeats the next byte `n + 1` times.
fn unpack_rle(mut data: &[u8], expected: usize) -> Option<Vec<u8>> {
    let mut out = Vec::with_capacity(expected);
    while let Some((&count, rest)) = data.split_first() {
        let count = count as i8;
        if count < 0 {
            let n = usize::from(count.unsigned_abs());
            out.extend_from_slice(rest.get(..n)?);
            data = &rest[n..];
        } else {
            let (&value, rest) = rest.split_first()?;
            out.resize(out.len() + count as usize + 1, value);
            data = rest;
        }
        if out.len() > expected {
            return None;
        }
    }
    Some(out)
}

/// Undoes the delta coding: each byte was stored as the difference to its
/// predecessor plus 128.
fn undo_predictor(bytes: &mut [u8]) {
    for i in 1..bytes.len() {
        bytes[i] = bytes[i - 1].wrapping_add(bytes[i]).wrapping_sub(128);
    }
}

/// Undoes the split: the first half holds the even bytes, the second half
/// the odd ones.
fn interleave(bytes: &[u8]) -> Vec<u8> {
    let (even, odd) = bytes.split_at(bytes.len().div_ceil(2));
    let mut out = Vec::with_capacity(bytes.len());
    for (i, &b) in even.iter().enumerate() {
        out.push(b);
        if let Some(&b) = odd.get(i) {
            out.push(b);
        }
    }
    out
}

/// Copies the samples of rows `y..y + rows` into the planes.
fn unpack(header: &Header, raw: &[u8], y: i32, rows: usize, planes: &mut [Plane]) {
    let mut at = 0;
    for row in y..y + rows as i32 {
        for (c, plane) in header.channels.iter().zip(planes.iter_mut()) {
            if row.rem_euclid(c.y_sampling) != 0 {
                continue;
            }
            let plane_row = (row - header.data_window.y_min) as usize / plane.y_sampling;
            let size = c.sample_type.size();
            let line = &raw[at..at + plane.width * size];
            at += line.len();
            let out = &mut plane.samples[plane_row * plane.width..][..plane.width];
            for (v, b) in out.iter_mut().zip(line.chunks_exact(size)) {
                *v = match c.sample_type {
                    SampleType::Half => f16::from_bits(u16::from_le_bytes([b[0], b[1]])).to_f32(),
                    SampleType::Float => f32::from_le_bytes([b[0], b[1], b[2], b[3]]),
                    SampleType::Uint => u32::from_le_bytes([b[0], b[1], b[2], b[3]]) as f32,
                };
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rle_and_byte_reordering_round_trip() {
        // 3 x 0x05, then literals 1 2.
        assert_eq!(
            unpack_rle(&[2, 5, 0xfe, 1, 2], 5).unwrap(),
            vec![5, 5, 5, 1, 2]
        );
        assert_eq!(unpack_rle(&[0xfe, 1], 5), None, "literal run past the end");
        assert_eq!(interleave(&[1, 3, 5, 2, 4]), vec![1, 2, 3, 4, 5]);
        let mut deltas = [10, 129, 127];
        undo_predictor(&mut deltas);
        assert_eq!(deltas, [10, 11, 10]);
    }
}
