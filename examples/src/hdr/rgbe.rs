//! Radiance RGBE pictures (`.hdr`, `.pic`): a tolerant reader.
//!
//! A Radiance picture is a text header, a resolution line and the pixels
//! (Greg Ward, "Real Pixels", Graphics Gems II, 1991; Radiance's
//! `refer/filefmts` notes):
//!
//! - **Header**: newline-terminated lines up to the first empty line. One of
//!   them is the signature `#?RADIANCE` (other programs write `#?RGBE` or
//!   their own name after `#?`). Files written by old tools have lines such as
//!   `VIEW=` *before* the signature, so the lines are accepted in any order;
//!   a header without any `#?` line is refused. `FORMAT=32-bit_rle_rgbe` is
//!   the only pixel format read; `32-bit_rle_xyze` (CIE XYZ primaries) is
//!   refused with a message saying so. `EXPOSURE=e` lines mean the stored
//!   values were multiplied by `e` (several lines multiply); the reader divides
//!   by their product, as pfstools' `pfsin` does, so values are in the
//!   scene's radiance units. Other lines (`VIEW=`, `PRIMARIES=`,
//!   `COLORCORR=`, commands) are ignored: the channels are taken as linear
//!   RGB in Radiance's primaries.
//! - **Resolution line**: `-Y H +X W` is the usual top-to-bottom,
//!   left-to-right order. All eight orientations of the format are read:
//!   `±Y H ±X W` stores rows (`+Y` from the bottom up, `-X` right to left),
//!   `±X W ±Y H` stores columns. The image returned is always top row first.
//! - **Pixels**: four bytes per pixel, a mantissa per channel and a shared
//!   exponent: `value = m * 2^(e - 136)`, and 0 when `e == 0` (without
//!   Radiance's half-step offset, as `pfsin` decodes). Each scanline is either
//!   new-style run-length encoded (scanlines of 8 to 32767 pixels: the bytes
//!   `2 2 hi lo` with the length, then each channel as runs, a count byte
//!   above 128 repeating the next byte `count - 128` times, otherwise that
//!   many literal bytes) or flat pixels, where a pixel `1 1 1 n` repeats the
//!   previous pixel `n << shift` times (old-style runs; `shift` grows by 8 for
//!   consecutive repeat pixels).
//!
//! # Limits
//! Before allocating pixels the reader refuses a side over [`MAX_SIDE`],
//! more than [`MAX_PIXELS`] pixels, and more scanlines than the bytes left in
//! the file could encode (each takes at least 4 bytes). Truncated or corrupt
//! pixel data is an error naming the scanline; no input makes it panic.

#[cfg(test)]
mod tests;

use hipacc::core::{Image, Rgba};
use thiserror::Error;

/// The largest width or height accepted.
pub const MAX_SIDE: usize = 1 << 16;
/// The largest number of pixels accepted (`width * height`).
pub const MAX_PIXELS: usize = 1 << 28;
/// The header (up to the resolution line) must end within this many bytes.
const MAX_HEADER: usize = 1 << 16;

/// Why a Radiance picture could not be read.
#[derive(Debug, Error, Clone, PartialEq, Eq)]
pub enum RgbeError {
    /// Nothing to read.
    #[error("the file is empty")]
    Empty,
    /// The bytes are not a Radiance picture (no signature, no header end).
    #[error("not a Radiance HDR file: {0}")]
    NotRadiance(String),
    /// A header line has a value the reader cannot use.
    #[error("bad Radiance header: {0}")]
    Header(String),
    /// The pixel format is not RGBE.
    #[error(
        "unsupported Radiance pixel format `{0}` (only 32-bit_rle_rgbe is read; \
         convert XYZE pictures to RGBE first, e.g. with Radiance's `ra_xyze -r`)"
    )]
    UnsupportedFormat(String),
    /// The resolution line is malformed.
    #[error("bad Radiance resolution line `{line}`: {reason}")]
    Resolution {
        /// The line as read.
        line: String,
        /// What is wrong with it.
        reason: String,
    },
    /// The declared size is refused before allocating.
    #[error("image of {width}x{height} pixels refused: {reason}")]
    TooLarge {
        /// Declared width.
        width: usize,
        /// Declared height.
        height: usize,
        /// Which limit it exceeds.
        reason: String,
    },
    /// The file ends inside the pixel data.
    #[error("truncated pixel data: the file ends in scanline {scanline} of {scanlines}")]
    Truncated {
        /// The incomplete scanline (0-based, in file order).
        scanline: usize,
        /// How many scanlines the resolution line declares.
        scanlines: usize,
    },
    /// A scanline's encoding is invalid.
    #[error("corrupt pixel data in scanline {scanline}: {reason}")]
    Corrupt {
        /// The scanline (0-based, in file order).
        scanline: usize,
        /// What is wrong.
        reason: String,
    },
}

/// A decoded Radiance picture.
#[derive(Debug, Clone, PartialEq)]
pub struct RgbePicture {
    /// Width in pixels.
    pub width: usize,
    /// Height in pixels.
    pub height: usize,
    /// Linear RGB, row-major, top row first, already divided by the
    /// header's exposure.
    pub pixels: Vec<[f32; 3]>,
}

impl RgbePicture {
    /// The picture as an RGBA image with alpha 1.
    pub fn to_image(&self) -> hipacc::core::Result<Image<Rgba<f32>>> {
        let data = self
            .pixels
            .iter()
            .map(|&[r, g, b]| Rgba::new(r, g, b, 1.0))
            .collect();
        Image::from_vec(self.width, self.height, data)
    }
}

/// What the header and resolution line declare.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Header {
    /// Width in pixels.
    pub width: usize,
    /// Height in pixels.
    pub height: usize,
    /// The product of the `EXPOSURE=` values (1 without any).
    pub exposure: f64,
    /// How scanlines map to the image.
    pub orientation: Orientation,
    /// Offset of the first pixel byte in the file.
    pub data_offset: usize,
}

/// The order pixels are stored in, from the resolution line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Orientation {
    /// Scanlines are columns (`±X W ±Y H`) instead of rows.
    pub columns: bool,
    /// Rows are stored bottom to top (`+Y`).
    pub bottom_up: bool,
    /// Columns are stored right to left (`-X`).
    pub right_to_left: bool,
}

impl Orientation {
    /// Row and column of position `j` of scanline `i` in an image of
    /// `width x height`.
    fn place(self, i: usize, j: usize, width: usize, height: usize) -> (usize, usize) {
        let (row_step, col_step) = if self.columns { (j, i) } else { (i, j) };
        let row = if self.bottom_up {
            height - 1 - row_step
        } else {
            row_step
        };
        let col = if self.right_to_left {
            width - 1 - col_step
        } else {
            col_step
        };
        (row, col)
    }
}

/// Decodes a whole Radiance picture from its bytes.
pub fn decode(bytes: &[u8]) -> Result<RgbePicture, RgbeError> {
    let (header, raw) = decode_raw(bytes)?;
    let scale = 1.0 / header.exposure;
    Ok(RgbePicture {
        width: header.width,
        height: header.height,
        pixels: raw.iter().map(|&px| to_rgb(px, scale)).collect(),
    })
}

/// Decodes a Radiance file straight into an RGBA image with alpha 1 (the
/// pixels of [`decode`]): the run-length decoding runs on one thread into
/// a buffer of the encoded pixels, their conversion to floats in parallel
/// into the image's one buffer.
pub fn decode_image(bytes: &[u8]) -> Result<Image<Rgba<f32>>, String> {
    use rayon::prelude::*;
    let (header, raw) = decode_raw(bytes).map_err(|e| e.to_string())?;
    let scale = 1.0 / header.exposure;
    let pixels: Vec<Rgba<f32>> = raw
        .par_iter()
        .with_min_len(8192)
        .map(|&px| {
            let [r, g, b] = to_rgb(px, scale);
            Rgba::new(r, g, b, 1.0)
        })
        .collect();
    Image::from_vec(header.width, header.height, pixels).map_err(|e| e.to_string())
}

/// The header and the encoded pixels, row-major, top row first.
fn decode_raw(bytes: &[u8]) -> Result<(Header, Vec<[u8; 4]>), RgbeError> {
    let header = parse_header(bytes)?;
    let Header {
        width,
        height,
        orientation,
        ..
    } = header;
    let (scanlines, length) = if orientation.columns {
        (width, height)
    } else {
        (height, width)
    };
    let mut raw = vec![[0u8; 4]; width * height];
    let mut cursor = Cursor {
        bytes,
        pos: header.data_offset,
    };
    let mut line = vec![[0u8; 4]; length];
    for i in 0..scanlines {
        read_scanline(&mut cursor, &mut line).map_err(|e| e.at(i, scanlines))?;
        for (j, &px) in line.iter().enumerate() {
            let (row, col) = orientation.place(i, j, width, height);
            raw[row * width + col] = px;
        }
    }
    Ok((header, raw))
}

/// Parses the header and resolution line and checks the declared size
/// against the limits and the bytes that follow (see the module docs).
pub fn parse_header(bytes: &[u8]) -> Result<Header, RgbeError> {
    if bytes.is_empty() {
        return Err(RgbeError::Empty);
    }
    let mut pos = 0;
    let mut signed = false;
    let mut exposure = 1.0f64;
    loop {
        let line = next_line(bytes, &mut pos).ok_or_else(|| {
            RgbeError::NotRadiance(if signed {
                "the header does not end with an empty line".into()
            } else {
                "no `#?RADIANCE` signature line".into()
            })
        })?;
        if line.is_empty() {
            break;
        }
        if let Some(name) = line.strip_prefix(b"#?") {
            signed |= !name.is_empty();
        } else if let Some(value) = line.strip_prefix(b"FORMAT=") {
            let value = String::from_utf8_lossy(value).trim().to_string();
            if value != "32-bit_rle_rgbe" {
                return Err(RgbeError::UnsupportedFormat(value));
            }
        } else if let Some(value) = line.strip_prefix(b"EXPOSURE=") {
            exposure *= parse_exposure(value)?;
        }
    }
    if !signed {
        return Err(RgbeError::NotRadiance(
            "no `#?RADIANCE` signature line".into(),
        ));
    }
    if !(exposure.is_finite() && exposure > 0.0) {
        return Err(RgbeError::Header(format!(
            "the product of the EXPOSURE values ({exposure}) is not a positive number"
        )));
    }
    let line = next_line(bytes, &mut pos).ok_or_else(|| RgbeError::Resolution {
        line: String::new(),
        reason: "missing after the header".into(),
    })?;
    let (width, height, orientation) = parse_resolution(line)?;
    check_size(width, height, orientation, bytes.len() - pos)?;
    Ok(Header {
        width,
        height,
        exposure,
        orientation,
        data_offset: pos,
    })
}

/// The next `\n`-terminated line (without `\n` and a trailing `\r`) within
/// the header limit, advancing `pos` past it.
fn next_line<'a>(bytes: &'a [u8], pos: &mut usize) -> Option<&'a [u8]> {
    let end = bytes.len().min(MAX_HEADER);
    let rest = bytes.get(*pos..end)?;
    let len = rest.iter().position(|&b| b == b'\n')?;
    *pos += len + 1;
    let line = &rest[..len];
    Some(line.strip_suffix(b"\r").unwrap_or(line))
}

fn parse_exposure(value: &[u8]) -> Result<f64, RgbeError> {
    let text = String::from_utf8_lossy(value);
    match text.trim().parse::<f64>() {
        Ok(e) if e.is_finite() && e > 0.0 => Ok(e),
        _ => Err(RgbeError::Header(format!(
            "EXPOSURE=`{}` is not a positive number",
            text.trim()
        ))),
    }
}

/// `±Y H ±X W` or `±X W ±Y H`.
fn parse_resolution(line: &[u8]) -> Result<(usize, usize, Orientation), RgbeError> {
    let text = String::from_utf8_lossy(line).trim().to_string();
    let bad = |reason: &str| RgbeError::Resolution {
        line: text.chars().take(60).collect(),
        reason: reason.to_string(),
    };
    let tokens: Vec<&str> = text.split_ascii_whitespace().collect();
    let [axis1, n1, axis2, n2] = tokens[..] else {
        return Err(bad("expected four fields such as `-Y 512 +X 768`"));
    };
    let axis = |s: &str| match s {
        "-Y" => Ok(('Y', false)),
        "+Y" => Ok(('Y', true)),
        "+X" => Ok(('X', false)),
        "-X" => Ok(('X', true)),
        _ => Err(bad("axes must be -Y, +Y, +X or -X")),
    };
    let ((a1, flip1), (a2, flip2)) = (axis(axis1)?, axis(axis2)?);
    if a1 == a2 {
        return Err(bad("the two axes must differ"));
    }
    let count = |s: &str| {
        if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) {
            return Err(bad("sizes must be decimal numbers"));
        }
        Ok(s.parse::<usize>().unwrap_or(usize::MAX))
    };
    let (n1, n2) = (count(n1)?, count(n2)?);
    let columns = a1 == 'X';
    let (width, height, bottom_up, right_to_left) = if columns {
        (n1, n2, flip2, flip1)
    } else {
        (n2, n1, flip1, flip2)
    };
    let orientation = Orientation {
        columns,
        bottom_up,
        right_to_left,
    };
    Ok((width, height, orientation))
}

fn check_size(
    width: usize,
    height: usize,
    orientation: Orientation,
    data_bytes: usize,
) -> Result<(), RgbeError> {
    let refuse = |reason: String| {
        Err(RgbeError::TooLarge {
            width,
            height,
            reason,
        })
    };
    if width == 0 || height == 0 {
        return refuse("the image has no pixels".into());
    }
    if width > MAX_SIDE || height > MAX_SIDE {
        return refuse(format!("a side exceeds {MAX_SIDE} pixels"));
    }
    if width * height > MAX_PIXELS {
        return refuse(format!("more than {MAX_PIXELS} pixels"));
    }
    let scanlines = if orientation.columns { width } else { height };
    if data_bytes / 4 < scanlines {
        return refuse(format!(
            "{scanlines} scanlines need at least {} bytes, the file holds {data_bytes} after \
             the header",
            4 * scanlines
        ));
    }
    Ok(())
}

/// One RGBE pixel to linear RGB, multiplied by `scale`.
fn to_rgb([r, g, b, e]: [u8; 4], scale: f64) -> [f32; 3] {
    if e == 0 {
        return [0.0; 3];
    }
    // 2^(e - 136) (the mantissa bytes are 8-bit fractions), built from
    // its exponent bits: exact, as `powi` is, without its loop per pixel.
    let f = scale * f64::from_bits((u64::from(e) + 1023 - 136) << 52);
    [r, g, b].map(|m| (f64::from(m) * f) as f32)
}

/// A scanline error before its index is known.
enum LineError {
    Truncated,
    Corrupt(String),
}

impl LineError {
    fn at(self, scanline: usize, scanlines: usize) -> RgbeError {
        match self {
            LineError::Truncated => RgbeError::Truncated {
                scanline,
                scanlines,
            },
            LineError::Corrupt(reason) => RgbeError::Corrupt { scanline, reason },
        }
    }
}

struct Cursor<'a> {
    bytes: &'a [u8],
    pos: usize,
}

impl Cursor<'_> {
    fn byte(&mut self) -> Result<u8, LineError> {
        let b = *self.bytes.get(self.pos).ok_or(LineError::Truncated)?;
        self.pos += 1;
        Ok(b)
    }

    fn pixel(&mut self) -> Result<[u8; 4], LineError> {
        let px = self
            .bytes
            .get(self.pos..self.pos + 4)
            .ok_or(LineError::Truncated)?;
        self.pos += 4;
        Ok([px[0], px[1], px[2], px[3]])
    }

    fn peek_pixel(&self) -> Option<[u8; 4]> {
        let px = self.bytes.get(self.pos..self.pos + 4)?;
        Some([px[0], px[1], px[2], px[3]])
    }
}

/// Reads one scanline of `line.len()` pixels, run-length encoded or flat.
fn read_scanline(cursor: &mut Cursor<'_>, line: &mut [[u8; 4]]) -> Result<(), LineError> {
    let len = line.len();
    if (8..=0x7fff).contains(&len) {
        if let Some([2, 2, hi, lo]) = cursor.peek_pixel() {
            if hi & 0x80 == 0 {
                let declared = usize::from(hi) << 8 | usize::from(lo);
                if declared != len {
                    return Err(LineError::Corrupt(format!(
                        "run-length scanline of {declared} pixels where {len} are expected"
                    )));
                }
                cursor.pos += 4;
                return read_rle(cursor, line);
            }
        }
    }
    read_flat(cursor, line)
}

/// New-style run-length encoding: each channel in turn as runs.
fn read_rle(cursor: &mut Cursor<'_>, line: &mut [[u8; 4]]) -> Result<(), LineError> {
    let len = line.len();
    for channel in 0..4 {
        let mut x = 0;
        while x < len {
            let code = usize::from(cursor.byte()?);
            let (count, run) = if code > 128 {
                (code - 128, Some(cursor.byte()?))
            } else {
                (code, None)
            };
            if count > len - x {
                return Err(LineError::Corrupt(format!(
                    "a run of {count} overruns the scanline at pixel {x} of {len}"
                )));
            }
            for px in &mut line[x..x + count] {
                px[channel] = match run {
                    Some(v) => v,
                    None => cursor.byte()?,
                };
            }
            x += count;
        }
    }
    Ok(())
}

/// Flat pixels with old-style repeat pixels `1 1 1 n`.
fn read_flat(cursor: &mut Cursor<'_>, line: &mut [[u8; 4]]) -> Result<(), LineError> {
    let len = line.len();
    let mut x = 0;
    let mut shift = 0u32;
    while x < len {
        let px = cursor.pixel()?;
        if let [1, 1, 1, n] = px {
            if x == 0 {
                return Err(LineError::Corrupt("a repeat pixel before any pixel".into()));
            }
            if shift > 24 {
                return Err(LineError::Corrupt(format!(
                    "more than four consecutive repeat pixels at pixel {x} of {len}"
                )));
            }
            let count = usize::try_from(u64::from(n) << shift).unwrap_or(usize::MAX);
            if count > len - x {
                return Err(LineError::Corrupt(format!(
                    "a repeat of {count} overruns the scanline at pixel {x} of {len}"
                )));
            }
            let previous = line[x - 1];
            line[x..x + count].fill(previous);
            x += count;
            shift += 8;
        } else {
            line[x] = px;
            x += 1;
            shift = 0;
        }
    }
    Ok(())
}
