//! The OpenEXR header, read by the project itself.
//!
//! The `exr` crate validates a header as a whole and refuses subsampled
//! channels, deep data and a few other valid variants with messages that do
//! not name the feature. This reader takes only what the loader decides on —
//! the version flags, `channels`, `compression`, `dataWindow`,
//! `displayWindow`, `chromaticities`, `tiles` and `type` — so that every
//! refusal can say exactly what the file uses, and so that the dimensions
//! are checked before any pixel is decoded. Layout per the OpenEXR file
//! format specification ("OpenEXR File Layout"): magic number, version
//! field, attributes `name\0type\0size value` ended by an empty name.

/// The version field's bit for a single-part tiled file.
const TILED_FLAG: u32 = 0x200;
/// The version field's bit for deep ("non-image") parts.
const DEEP_FLAG: u32 = 0x800;
/// The version field's bit for multi-part files.
const MULTI_PART_FLAG: u32 = 0x1000;

/// A pixel rectangle, both corners inclusive, as OpenEXR's `box2i`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Window {
    /// Left column.
    pub x_min: i32,
    /// Top row.
    pub y_min: i32,
    /// Right column (inclusive).
    pub x_max: i32,
    /// Bottom row (inclusive).
    pub y_max: i32,
}

impl Window {
    /// Columns covered (0 or negative when the box is empty or inverted).
    pub fn width(&self) -> i64 {
        i64::from(self.x_max) - i64::from(self.x_min) + 1
    }

    /// Rows covered (0 or negative when the box is empty or inverted).
    pub fn height(&self) -> i64 {
        i64::from(self.y_max) - i64::from(self.y_min) + 1
    }

    /// Whether the two windows share at least one pixel.
    pub fn overlaps(&self, other: &Window) -> bool {
        self.x_min.max(other.x_min) <= self.x_max.min(other.x_max)
            && self.y_min.max(other.y_min) <= self.y_max.min(other.y_max)
    }
}

impl std::fmt::Display for Window {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "({},{})-({},{})",
            self.x_min, self.y_min, self.x_max, self.y_max
        )
    }
}

/// How a channel stores its samples.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SampleType {
    /// 32-bit unsigned integer.
    Uint,
    /// 16-bit float.
    Half,
    /// 32-bit float.
    Float,
}

impl SampleType {
    /// Bytes per stored sample.
    pub fn size(self) -> usize {
        match self {
            SampleType::Half => 2,
            SampleType::Uint | SampleType::Float => 4,
        }
    }
}

/// One entry of the `channels` attribute.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Channel {
    /// The channel's name (`R`, `Y`, `RY`, `diffuse.R`, ...).
    pub name: String,
    /// The stored sample type.
    pub sample_type: SampleType,
    /// One sample every `x_sampling` columns.
    pub x_sampling: i32,
    /// One sample every `y_sampling` rows.
    pub y_sampling: i32,
    /// The `pLinear` hint: the values are perceptually linear (B44 stores
    /// such half channels as `exp(x / 8)`, see [`super::b44`]).
    pub p_linear: bool,
}

/// The CIE xy chromaticities of the primaries and the white point.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Chromaticities {
    /// Red, green and blue primaries, each `[x, y]`.
    pub primaries: [[f64; 2]; 3],
    /// The white point `[x, y]`.
    pub white: [f64; 2],
}

/// The parts of a single-part OpenEXR header that the loader uses.
#[derive(Debug, Clone)]
pub struct Header {
    /// The channels, in file order (sorted by name).
    pub channels: Vec<Channel>,
    /// The compression code (0 none, 1 RLE, 2 ZIPS, 3 ZIP, 4 PIZ, 5 PXR24,
    /// 6 B44, 7 B44A, ...).
    pub compression: u8,
    /// The stored pixels.
    pub data_window: Window,
    /// The picture's frame.
    pub display_window: Window,
    /// The `chromaticities` attribute, if present.
    pub chromaticities: Option<Chromaticities>,
    /// Whether pixels are stored in tiles rather than scanline blocks.
    pub tiled: bool,
    /// The tile size of a tiled file (from the `tiles` attribute).
    pub tile_size: Option<(u32, u32)>,
    /// The byte offset just after the header: the chunk offset table.
    pub end: usize,
}

/// The name of compression `code`, for messages.
pub fn compression_name(code: u8) -> String {
    match code {
        0 => "no compression".into(),
        1 => "RLE".into(),
        2 => "ZIPS".into(),
        3 => "ZIP".into(),
        4 => "PIZ".into(),
        5 => "PXR24".into(),
        6 => "B44".into(),
        7 => "B44A".into(),
        8 => "DWAA".into(),
        9 => "DWAB".into(),
        10 => "HTJ2K256".into(),
        11 => "HTJ2K32".into(),
        _ => format!("compression {code}"),
    }
}

/// A little-endian reader over the header's bytes; every read checks the
/// length, so truncated headers are errors.
struct Cursor<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Cursor<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8], String> {
        let end = self.at.checked_add(n).filter(|&e| e <= self.bytes.len());
        let end = end.ok_or("not a valid OpenEXR file: truncated header")?;
        let slice = &self.bytes[self.at..end];
        self.at = end;
        Ok(slice)
    }

    fn i32(&mut self) -> Result<i32, String> {
        let b = self.take(4)?;
        Ok(i32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }

    fn f32(&mut self) -> Result<f32, String> {
        Ok(f32::from_bits(self.i32()? as u32))
    }

    /// A NUL-terminated name of at most `max` bytes.
    fn name(&mut self, max: usize) -> Result<String, String> {
        let rest = &self.bytes[self.at..];
        let len = rest
            .iter()
            .take(max + 1)
            .position(|&b| b == 0)
            .ok_or("not a valid OpenEXR file: an attribute name is unterminated or too long")?;
        let name = String::from_utf8_lossy(&rest[..len]).into_owned();
        self.at += len + 1;
        Ok(name)
    }
}

/// Reads the header of an OpenEXR file (the magic number is already known
/// to match). Refuses deep and multi-part files by their version flags, and
/// files whose data window exceeds `max_side` a side or `max_pixels` in all.
pub fn parse(bytes: &[u8], max_side: usize, max_pixels: usize) -> Result<Header, String> {
    let mut cur = Cursor { bytes, at: 4 };
    let version = cur.i32()? as u32;
    if version & 0xff != 2 {
        return Err(format!(
            "unsupported OpenEXR version {} (only version 2 exists)",
            version & 0xff
        ));
    }
    if version & DEEP_FLAG != 0 {
        return Err("deep data is not supported".into());
    }
    if version & MULTI_PART_FLAG != 0 {
        return Err("multi-part files are not supported".into());
    }
    let max_name = if version & 0x400 != 0 { 255 } else { 31 };
    let mut channels = None;
    let (mut compression, mut data_window, mut display_window) = (None, None, None);
    let mut chromaticities = None;
    let mut tile_size = None;
    loop {
        let name = cur.name(max_name)?;
        if name.is_empty() {
            break;
        }
        let kind = cur.name(max_name)?;
        let size = cur.i32()?;
        let size = usize::try_from(size)
            .map_err(|_| format!("not a valid OpenEXR file: attribute `{name}` has size {size}"))?;
        let value = cur.take(size)?;
        let mut v = Cursor {
            bytes: value,
            at: 0,
        };
        match (name.as_str(), kind.as_str()) {
            ("channels", "chlist") => channels = Some(parse_channels(&mut v, max_name)?),
            ("compression", "compression") => compression = Some(v.take(1)?[0]),
            ("dataWindow", "box2i") => data_window = Some(parse_window(&mut v)?),
            ("displayWindow", "box2i") => display_window = Some(parse_window(&mut v)?),
            ("chromaticities", "chromaticities") => {
                let mut c = [0f64; 8];
                for slot in &mut c {
                    *slot = f64::from(v.f32()?);
                }
                chromaticities = Some(Chromaticities {
                    primaries: [[c[0], c[1]], [c[2], c[3]], [c[4], c[5]]],
                    white: [c[6], c[7]],
                });
            }
            ("tiles", "tiledesc") => {
                tile_size = Some((v.i32()? as u32, v.i32()? as u32));
            }
            ("type", "string") if value.starts_with(b"deep") => {
                return Err("deep data is not supported".into());
            }
            _ => {}
        }
    }
    let missing = |what: &str| format!("not a valid OpenEXR file: the header has no `{what}`");
    let header = Header {
        channels: channels.ok_or_else(|| missing("channels"))?,
        compression: compression.ok_or_else(|| missing("compression"))?,
        data_window: data_window.ok_or_else(|| missing("dataWindow"))?,
        display_window: display_window.ok_or_else(|| missing("displayWindow"))?,
        chromaticities,
        tiled: version & TILED_FLAG != 0 || tile_size.is_some(),
        tile_size,
        end: cur.at,
    };
    check_size(&header.data_window, max_side, max_pixels)?;
    let table_end = header
        .end
        .saturating_add(header.min_chunks().saturating_mul(8));
    if table_end > bytes.len() {
        return Err(format!(
            "not a valid OpenEXR file: truncated (the file ends before its table of {} blocks)",
            header.min_chunks()
        ));
    }
    Ok(header)
}

impl Header {
    /// Rows per scanline block of this file's compression.
    pub fn rows_per_block(&self) -> usize {
        match self.compression {
            0..=2 => 1,
            3 | 5 => 16,
            4 | 6 | 7 | 8 | 11 => 32,
            _ => 256,
        }
    }

    /// The fewest blocks the file can hold: scanline blocks, or the tiles
    /// of the full-resolution level (mip- and rip-maps add more). Checking
    /// that their offset table fits in the file refuses a short file that
    /// claims a huge image before any pixel memory is allocated.
    pub fn min_chunks(&self) -> usize {
        let (w, h) = (
            self.data_window.width() as usize,
            self.data_window.height() as usize,
        );
        match self.tile_size {
            Some((tw, th)) if self.tiled && tw > 0 && th > 0 => w
                .div_ceil(tw as usize)
                .saturating_mul(h.div_ceil(th as usize)),
            _ => h.div_ceil(self.rows_per_block()),
        }
    }
}

fn parse_window(v: &mut Cursor<'_>) -> Result<Window, String> {
    Ok(Window {
        x_min: v.i32()?,
        y_min: v.i32()?,
        x_max: v.i32()?,
        y_max: v.i32()?,
    })
}

fn parse_channels(v: &mut Cursor<'_>, max_name: usize) -> Result<Vec<Channel>, String> {
    let mut channels = Vec::new();
    loop {
        let name = v.name(max_name)?;
        if name.is_empty() {
            return Ok(channels);
        }
        let sample_type = match v.i32()? {
            0 => SampleType::Uint,
            1 => SampleType::Half,
            2 => SampleType::Float,
            t => {
                return Err(format!(
                    "not a valid OpenEXR file: channel `{name}` has type {t}"
                ))
            }
        };
        let p_linear = v.take(4)?[0] != 0; // pLinear and three reserved bytes
        let (x_sampling, y_sampling) = (v.i32()?, v.i32()?);
        if x_sampling < 1 || y_sampling < 1 {
            return Err(format!(
                "not a valid OpenEXR file: channel `{name}` has sampling {x_sampling}x{y_sampling}"
            ));
        }
        channels.push(Channel {
            name,
            sample_type,
            x_sampling,
            y_sampling,
            p_linear,
        });
    }
}

fn check_size(window: &Window, max_side: usize, max_pixels: usize) -> Result<(), String> {
    let (w, h) = (window.width(), window.height());
    if w < 1 || h < 1 {
        return Err(format!("image has no pixels (data window {window})"));
    }
    let too_big = |n: i64| usize::try_from(n).map_or(true, |n| n > max_side);
    if too_big(w) || too_big(h) || (w * h) as u64 > max_pixels as u64 {
        return Err(format!(
            "image of {w}x{h} pixels refused: at most {max_side} pixels a side and \
             {max_pixels} in all"
        ));
    }
    Ok(())
}
