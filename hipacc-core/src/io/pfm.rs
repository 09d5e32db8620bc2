//! Portable Float Map (PFM): uncompressed 32-bit float images.
//!
//! A PFM file is a text header of three whitespace-separated lines,
//! `PF` (RGB) or `Pf` (grayscale), `width height`, and a scale whose sign
//! gives the byte order (negative: little-endian, positive: big-endian), then
//! one whitespace byte and `width * height * channels` IEEE 754 floats,
//! rows from the bottom of the image to the top. The scale's magnitude is
//! informative only; values are read and written as they are.
//! (<https://www.pauldebevec.com/Research/HDR/PFM/>)
//!
//! Writing uses little-endian floats (scale `-1.0`). Reading accepts both
//! byte orders and checks the header's dimensions against the file's length
//! before allocating any pixels.

use crate::{Image, Result, Rgba};
use std::fs::File;
use std::io::{BufRead, BufReader, BufWriter, Read, Write};
use std::path::Path;

/// A decoded PFM: rows top to bottom, `channels` (1 or 3) floats per pixel.
pub(super) struct FloatMap {
    width: usize,
    height: usize,
    channels: usize,
    data: Vec<f32>,
}

impl FloatMap {
    /// Luminance: gray as is, RGB with the Rec. 709 weights.
    pub(super) fn to_luminance(&self) -> Result<Image<f32>> {
        let data = match self.channels {
            1 => self.data.clone(),
            _ => self
                .data
                .chunks_exact(3)
                .map(|c| super::luma([c[0], c[1], c[2]]))
                .collect(),
        };
        Image::from_vec(self.width, self.height, data)
    }

    /// RGBA with alpha 1; gray is replicated into red, green and blue.
    pub(super) fn to_rgba(&self) -> Result<Image<Rgba<f32>>> {
        let data = match self.channels {
            1 => self.data.iter().map(|&v| Rgba::new(v, v, v, 1.0)).collect(),
            _ => self
                .data
                .chunks_exact(3)
                .map(|c| Rgba::new(c[0], c[1], c[2], 1.0))
                .collect(),
        };
        Image::from_vec(self.width, self.height, data)
    }
}

/// Whether the file starts with a PFM signature or is named `*.pfm`.
pub(super) fn is_pfm(reader: &mut BufReader<File>, path: &Path) -> bool {
    let named = path
        .extension()
        .and_then(|e| e.to_str())
        .is_some_and(|e| e.eq_ignore_ascii_case("pfm"));
    let signed = reader.fill_buf().is_ok_and(|head| {
        head.len() >= 3
            && (head.starts_with(b"PF") || head.starts_with(b"Pf"))
            && head[2].is_ascii_whitespace()
    });
    named || signed
}

/// Decodes a PFM; the error is a message without the path.
pub(super) fn read(mut reader: impl Read) -> std::result::Result<FloatMap, String> {
    let mut bytes = Vec::new();
    reader
        .read_to_end(&mut bytes)
        .map_err(|e| format!("cannot read: {e}"))?;
    let mut header = Header {
        bytes: &bytes,
        pos: 0,
    };
    let channels = match header.token()? {
        "PF" => 3,
        "Pf" => 1,
        other => return Err(format!("bad signature `{other}` (expected `PF` or `Pf`)")),
    };
    let width = header.dimension("width")?;
    let height = header.dimension("height")?;
    let scale: f32 = header
        .token()?
        .parse()
        .ok()
        .filter(|s: &f32| s.is_finite() && *s != 0.0)
        .ok_or("the scale is not a non-zero number")?;
    // Exactly one whitespace byte separates the header from the pixels.
    let start = header.pos + 1;
    let count = width
        .checked_mul(height)
        .and_then(|n| n.checked_mul(channels))
        .filter(|n| n.checked_mul(4).is_some())
        .ok_or_else(|| format!("absurd dimensions {width}x{height}"))?;
    let available = bytes.len().saturating_sub(start);
    if available < count * 4 {
        return Err(format!(
            "truncated: {width}x{height} needs {} bytes of pixels, the file has {available}",
            count * 4
        ));
    }
    let little = scale < 0.0;
    let row_len = width * channels;
    let mut data = Vec::with_capacity(count);
    // File rows run bottom to top; ours run top to bottom.
    for row in (0..height).rev() {
        let at = start + row * row_len * 4;
        data.extend(bytes[at..at + row_len * 4].chunks_exact(4).map(|b| {
            let b = [b[0], b[1], b[2], b[3]];
            if little {
                f32::from_le_bytes(b)
            } else {
                f32::from_be_bytes(b)
            }
        }));
    }
    Ok(FloatMap {
        width,
        height,
        channels,
        data,
    })
}

/// Encodes `samples` (rows top to bottom, `channels` 1 or 3 per pixel).
pub(super) fn write(
    out: &mut BufWriter<File>,
    samples: &[f32],
    channels: usize,
    width: usize,
    height: usize,
) -> std::result::Result<(), String> {
    debug_assert_eq!(samples.len(), width * height * channels, "bug: PFM size");
    let signature = if channels == 3 { "PF" } else { "Pf" };
    let io = |e: std::io::Error| e.to_string();
    write!(out, "{signature}\n{width} {height}\n-1.0\n").map_err(io)?;
    for row in samples.chunks_exact(width * channels).rev() {
        for v in row {
            out.write_all(&v.to_le_bytes()).map_err(io)?;
        }
    }
    Ok(())
}

/// A cursor over the PFM header's whitespace-separated tokens.
struct Header<'a> {
    bytes: &'a [u8],
    pos: usize,
}

impl<'a> Header<'a> {
    /// The next token; at most 32 bytes, ASCII.
    fn token(&mut self) -> std::result::Result<&'a str, String> {
        while self
            .bytes
            .get(self.pos)
            .is_some_and(u8::is_ascii_whitespace)
        {
            self.pos += 1;
        }
        let start = self.pos;
        while self
            .bytes
            .get(self.pos)
            .is_some_and(|b| !b.is_ascii_whitespace())
            && self.pos - start <= 32
        {
            self.pos += 1;
        }
        if start == self.pos || self.pos >= self.bytes.len() {
            return Err("truncated header".into());
        }
        std::str::from_utf8(&self.bytes[start..self.pos])
            .map_err(|_| "the header is not text".to_string())
    }

    /// A positive dimension.
    fn dimension(&mut self, what: &str) -> std::result::Result<usize, String> {
        let t = self.token()?;
        t.parse()
            .ok()
            .filter(|&n: &usize| n > 0)
            .ok_or_else(|| format!("the {what} `{t}` is not a positive integer"))
    }
}
