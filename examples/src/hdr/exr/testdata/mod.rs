//! Writers of small OpenEXR files for tests: any channels (subsampled ones
//! included, which the `exr` crate cannot write), any data and display
//! windows, optional chromaticities, no compression, RLE, ZIP, [`pxr24`] or
//! [`b44`] (B44 and B44A); and the headers of deep and multi-part files,
//! which only need to be refused.
//!
//! The flat-and-steps chart ([`flat_steps`], [`flat_steps_file`]) is the
//! hard case for a Poisson solver: large constant areas whose gradients are
//! zero, separated by sharp luminance steps, optionally stored in a data
//! window larger than, offset from or disjoint with the display window.

pub mod b44;
pub mod pxr24;

use super::header::{Chromaticities, SampleType, Window};

/// How the writer compresses the scanline blocks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Compression {
    /// Raw samples, one row per block.
    None,
    /// OpenEXR RLE, one row per block.
    Rle,
    /// zlib, 16 rows per block.
    Zip,
    /// PXR24, 16 rows per block (lossy for float samples).
    Pxr24,
    /// B44, 32 rows per block (lossy for half samples).
    B44,
    /// B44A: B44 with flat 4x4 blocks in 3 bytes.
    B44a,
}

impl Compression {
    /// The code the header stores.
    pub fn code(self) -> u8 {
        match self {
            Compression::None => 0,
            Compression::Rle => 1,
            Compression::Zip => 3,
            Compression::Pxr24 => 5,
            Compression::B44 => 6,
            Compression::B44a => 7,
        }
    }

    /// Rows per scanline block.
    pub fn rows_per_block(self) -> usize {
        match self {
            Compression::None | Compression::Rle => 1,
            Compression::Zip | Compression::Pxr24 => 16,
            Compression::B44 | Compression::B44a => 32,
        }
    }
}

/// One channel to write: its samples at its own resolution (the data
/// window's size divided by the sampling), row-major.
#[derive(Debug, Clone)]
pub struct Channel {
    /// The channel's name.
    pub name: String,
    /// `Half` or `Float` (`Uint` stores the values truncated to integers).
    pub sample_type: SampleType,
    /// (x, y) sampling; (1, 1) for full resolution.
    pub sampling: (i32, i32),
    /// The samples.
    pub samples: Vec<f32>,
    /// The `pLinear` hint (B44 stores such half channels as `exp(h / 8)`).
    pub p_linear: bool,
}

impl Channel {
    /// A full-resolution float channel.
    pub fn float(name: &str, samples: Vec<f32>) -> Channel {
        Channel {
            name: name.into(),
            sample_type: SampleType::Float,
            sampling: (1, 1),
            samples,
            p_linear: false,
        }
    }
}

/// A single-part scanline file to write.
#[derive(Debug, Clone)]
pub struct Spec {
    /// The stored pixels.
    pub data_window: Window,
    /// The picture's frame.
    pub display_window: Window,
    /// The channels, in any order (written sorted by name).
    pub channels: Vec<Channel>,
    /// Written when present.
    pub chromaticities: Option<Chromaticities>,
    /// Block compression.
    pub compression: Compression,
}

/// A window of `width` x `height` pixels with its top-left corner at (x, y).
pub fn window(x: i32, y: i32, width: usize, height: usize) -> Window {
    Window {
        x_min: x,
        y_min: y,
        x_max: x + width as i32 - 1,
        y_max: y + height as i32 - 1,
    }
}

/// A float RGB file whose data window is `data` and display window
/// `display`; `pixels` covers the data window row by row.
pub fn rgb(data: Window, display: Window, pixels: &[[f32; 3]]) -> Spec {
    let plane = |c: usize| pixels.iter().map(|p| p[c]).collect();
    Spec {
        data_window: data,
        display_window: display,
        channels: vec![
            Channel::float("R", plane(0)),
            Channel::float("G", plane(1)),
            Channel::float("B", plane(2)),
        ],
        chromaticities: None,
        compression: Compression::Zip,
    }
}

/// Writes `rgb` as OpenEXR's RGBA interface does with `WRITE_YC`: `Y` at
/// every pixel, `RY`/`BY` at even columns and rows. (OpenEXR low-pass
/// filters the chroma before dropping samples; for this smooth image the
/// filter changes the chroma little; `hdr_exr_inputs` bounds it.) A
/// ZIP-compressed file of `w` x `h` (both even) at the origin.
pub fn luminance_chroma(rgb: &[[f32; 3]], w: usize, h: usize, sample_type: SampleType) -> Spec {
    // Rec.709's luminance weights (0.2126, 0.7152, 0.0722), as the reader
    // derives them from the primaries (their last digits differ).
    let yw = super::colour::luminance_weights(&super::colour::REC709)
        .unwrap()
        .map(|v| v as f32);
    let luma: Vec<f32> = rgb
        .iter()
        .map(|p| p[0] * yw[0] + p[1] * yw[1] + p[2] * yw[2])
        .collect();
    let chroma = |c: usize| {
        let mut out = Vec::new();
        for y in (0..h).step_by(2) {
            for x in (0..w).step_by(2) {
                let i = y * w + x;
                out.push((rgb[i][c] - luma[i]) / luma[i]);
            }
        }
        out
    };
    let channel = |name: &str, samples, sampling| Channel {
        name: name.into(),
        sample_type,
        sampling,
        samples,
        p_linear: false,
    };
    let window = window(0, 0, w, h);
    Spec {
        data_window: window,
        display_window: window,
        chromaticities: None,
        compression: Compression::Zip,
        channels: vec![
            channel("Y", luma.clone(), (1, 1)),
            channel("RY", chroma(0), (2, 2)),
            channel("BY", chroma(2), (2, 2)),
        ],
    }
}

/// How the data window of [`flat_steps_file`] sits against its display window.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WindowCase {
    /// Both windows are (0,0)-(w-1,h-1).
    Same,
    /// The data window extends 16 pixels past the display window on every side.
    Larger,
    /// The data window is the display window's size, moved by (37, -23).
    Offset,
    /// The data window lies entirely right of and below the display window.
    Disjoint,
}

/// The chart: 8 columns x 4 rows of flat patches whose luminance spans
/// 1e-3 to 1e2 (each patch a different level, neighbours far apart), with
/// a mildly coloured tint per row. Every patch is constant, every edge a
/// step of one pixel.
pub fn flat_steps(width: usize, height: usize) -> Vec<[f32; 3]> {
    let tints = [
        [1.0, 1.0, 1.0],
        [1.0, 0.8, 0.6],
        [0.6, 0.8, 1.0],
        [0.9, 1.0, 0.7],
    ];
    (0..height)
        .flat_map(|y| {
            (0..width).map(move |x| {
                let (col, row) = (x * 8 / width.max(1), y * 4 / height.max(1));
                // Alternate dark and bright patches: a checkerboard of levels.
                let step = (col * 5 + row * 3) % 16;
                let level = 10f32.powf(-3.0 + 5.0 * step as f32 / 15.0);
                tints[row].map(|t| t * level)
            })
        })
        .collect()
}

/// The windows of `case` for a picture of `width` x `height`: (data, display).
pub fn windows(case: WindowCase, width: usize, height: usize) -> (Window, Window) {
    let display = window(0, 0, width, height);
    let data = match case {
        WindowCase::Same => display,
        WindowCase::Larger => window(-16, -16, width + 32, height + 32),
        WindowCase::Offset => window(37, -23, width, height),
        WindowCase::Disjoint => window(width as i32 + 10, height as i32 + 5, width, height),
    };
    (data, display)
}

/// A ZIP-compressed float RGB OpenEXR file holding [`flat_steps`] over the
/// whole data window of `case` (so the data window's size, not the display
/// window's, is the chart's size).
pub fn flat_steps_file(case: WindowCase, width: usize, height: usize) -> Vec<u8> {
    let (data, display) = windows(case, width, height);
    let (w, h) = (data.width() as usize, data.height() as usize);
    write(&rgb(data, display, &flat_steps(w, h)))
}

/// Encodes `spec` as a single-part scanline OpenEXR file.
///
/// # Panics
/// When a channel's sample count does not match the data window and its
/// sampling (a bug in the calling test).
pub fn write(spec: &Spec) -> Vec<u8> {
    let mut channels = spec.channels.clone();
    channels.sort_by(|a, b| a.name.cmp(&b.name));
    let (w, h) = (
        spec.data_window.width() as usize,
        spec.data_window.height() as usize,
    );
    for c in &channels {
        let (xs, ys) = (c.sampling.0 as usize, c.sampling.1 as usize);
        assert_eq!(
            c.samples.len(),
            (w / xs) * (h / ys),
            "samples of channel {}",
            c.name
        );
    }
    let mut out = header_bytes(spec, &channels, 0);
    let rows = spec.compression.rows_per_block();
    let blocks: Vec<Vec<u8>> = (0..h)
        .step_by(rows)
        .map(|first| {
            let y = spec.data_window.y_min + first as i32;
            let raw = raw_block(spec, &channels, first, rows.min(h - first));
            let data = compress(spec, &channels, &raw, y, rows.min(h - first));
            let mut block = y.to_le_bytes().to_vec();
            block.extend_from_slice(&(data.len() as i32).to_le_bytes());
            block.extend_from_slice(&data);
            block
        })
        .collect();
    let mut offset = (out.len() + 8 * blocks.len()) as u64;
    for b in &blocks {
        out.extend_from_slice(&offset.to_le_bytes());
        offset += b.len() as u64;
    }
    blocks.iter().for_each(|b| out.extend_from_slice(b));
    out
}

/// The header of a deep scanline file (version flag and `type`
/// attribute); readers must refuse it before looking for pixels.
pub fn deep_header() -> Vec<u8> {
    let spec = rgb(window(0, 0, 2, 2), window(0, 0, 2, 2), &[[1.0; 3]; 4]);
    let mut bytes = header_bytes(&spec, &spec.channels, 0x800);
    bytes.pop(); // reopen the attribute list to add the part's type
    push_attribute(&mut bytes, "type", "string", b"deepscanline");
    push_attribute(&mut bytes, "version", "int", &1i32.to_le_bytes());
    bytes.push(0);
    bytes
}

fn push_attribute(out: &mut Vec<u8>, name: &str, kind: &str, value: &[u8]) {
    for s in [name, kind] {
        out.extend_from_slice(s.as_bytes());
        out.push(0);
    }
    out.extend_from_slice(&(value.len() as i32).to_le_bytes());
    out.extend_from_slice(value);
}

fn header_bytes(spec: &Spec, channels: &[Channel], flags: u32) -> Vec<u8> {
    let mut out = vec![0x76, 0x2f, 0x31, 0x01];
    out.extend_from_slice(&(2 | flags).to_le_bytes());
    let mut list = Vec::new();
    for c in channels {
        list.extend_from_slice(c.name.as_bytes());
        let kind: i32 = match c.sample_type {
            SampleType::Uint => 0,
            SampleType::Half => 1,
            SampleType::Float => 2,
        };
        list.push(0);
        list.extend_from_slice(&kind.to_le_bytes());
        list.extend_from_slice(&[u8::from(c.p_linear), 0, 0, 0]);
        list.extend_from_slice(&c.sampling.0.to_le_bytes());
        list.extend_from_slice(&c.sampling.1.to_le_bytes());
    }
    list.push(0);
    let window = |w: &Window| {
        [w.x_min, w.y_min, w.x_max, w.y_max]
            .iter()
            .flat_map(|v| v.to_le_bytes())
            .collect::<Vec<_>>()
    };
    let code = spec.compression.code();
    push_attribute(&mut out, "channels", "chlist", &list);
    push_attribute(&mut out, "compression", "compression", &[code]);
    push_attribute(&mut out, "dataWindow", "box2i", &window(&spec.data_window));
    push_attribute(
        &mut out,
        "displayWindow",
        "box2i",
        &window(&spec.display_window),
    );
    push_attribute(&mut out, "lineOrder", "lineOrder", &[0]);
    push_attribute(&mut out, "pixelAspectRatio", "float", &1f32.to_le_bytes());
    push_attribute(&mut out, "screenWindowCenter", "v2f", &[0; 8]);
    push_attribute(&mut out, "screenWindowWidth", "float", &1f32.to_le_bytes());
    if let Some(c) = &spec.chromaticities {
        let values = [c.primaries[0], c.primaries[1], c.primaries[2], c.white];
        let bytes: Vec<u8> = values
            .iter()
            .flatten()
            .flat_map(|&v| (v as f32).to_le_bytes())
            .collect();
        push_attribute(&mut out, "chromaticities", "chromaticities", &bytes);
    }
    out.push(0);
    out
}

/// The samples of data-window rows `first..first + rows`, as a block holds them.
fn raw_block(spec: &Spec, channels: &[Channel], first: usize, rows: usize) -> Vec<u8> {
    let w = spec.data_window.width() as usize;
    let mut raw = Vec::new();
    for r in first..first + rows {
        let y = spec.data_window.y_min + r as i32;
        for c in channels {
            if y.rem_euclid(c.sampling.1) != 0 {
                continue;
            }
            let cw = w / c.sampling.0 as usize;
            let row = r / c.sampling.1 as usize;
            for &v in &c.samples[row * cw..][..cw] {
                match c.sample_type {
                    SampleType::Half => raw
                        .extend_from_slice(&exr::prelude::f16::from_f32(v).to_bits().to_le_bytes()),
                    SampleType::Float => raw.extend_from_slice(&v.to_le_bytes()),
                    SampleType::Uint => raw.extend_from_slice(&(v as u32).to_le_bytes()),
                }
            }
        }
    }
    raw
}

/// Compresses the uncompressed block `raw` of rows `y..y + rows`.
fn compress(spec: &Spec, channels: &[Channel], raw: &[u8], y: i32, rows: usize) -> Vec<u8> {
    let width = spec.data_window.width() as usize;
    let packed = match spec.compression {
        Compression::None => return raw.to_vec(),
        Compression::Rle | Compression::Zip => zip_or_rle(spec.compression, raw),
        Compression::Pxr24 => pxr24::compress(channels, raw, y, rows, width),
        Compression::B44 => b44::compress(channels, raw, y, rows, width, false),
        Compression::B44a => b44::compress(channels, raw, y, rows, width, true),
    };
    // A block that does not shrink is stored raw, as OpenEXR does.
    if packed.len() < raw.len() {
        packed
    } else {
        raw.to_vec()
    }
}

fn zip_or_rle(compression: Compression, raw: &[u8]) -> Vec<u8> {
    // Split even and odd bytes, then delta-code (the inverse of the reader).
    let mut split: Vec<u8> = raw
        .iter()
        .step_by(2)
        .chain(raw.iter().skip(1).step_by(2))
        .copied()
        .collect();
    for i in (1..split.len()).rev() {
        split[i] = split[i].wrapping_sub(split[i - 1]).wrapping_add(128);
    }
    match compression {
        Compression::Zip => miniz_oxide::deflate::compress_to_vec_zlib(&split, 6),
        _ => rle(&split),
    }
}

fn rle(data: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < data.len() {
        let run = data[i..]
            .iter()
            .take(128)
            .take_while(|&&b| b == data[i])
            .count();
        if run >= 3 {
            out.push((run - 1) as u8);
            out.push(data[i]);
            i += run;
        } else {
            let start = i;
            while i < data.len() && i - start < 127 {
                let ahead = data[i..]
                    .iter()
                    .take(3)
                    .take_while(|&&b| b == data[i])
                    .count();
                if ahead >= 3 {
                    break;
                }
                i += 1;
            }
            out.push((-((i - start) as i32)) as u8);
            out.extend_from_slice(&data[start..i]);
        }
    }
    out
}
