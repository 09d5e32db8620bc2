//! Loading high-dynamic-range images: Radiance RGBE, OpenEXR and PFM.
//!
//! The format is recognised from the first bytes (the OpenEXR magic
//! number, a `#?` Radiance signature, a `PF`/`Pf` PFM header) and otherwise
//! from the extension: `.hdr`, `.pic` and `.rgbe` are Radiance pictures
//! (whose header may begin with lines other than the signature), `.exr`
//! OpenEXR, `.pfm` Portable Float Map.
//!
//! The path `-` is standard input: its bytes are read to the end and the
//! format is taken from them alone; messages name it "standard input".
//!
//! - Radiance pictures go through the project's reader ([`super::rgbe`]).
//! - OpenEXR goes through [`super::exr`]: RGB(A), luminance, single-channel
//!   and luminance/chroma files, converted to Rec.709 primaries; deep and
//!   multi-part files are refused by name. The header's dimensions are
//!   checked against [`rgbe::MAX_SIDE`] and [`rgbe::MAX_PIXELS`] before any pixel is
//!   decoded.
//! - PFM goes through [`hipacc::core::io::load_rgba`] (colour `PF` and
//!   grayscale `Pf`, both byte orders); from standard input, through a
//!   temporary file, since that reader reads files.
//!
//! The result is linear RGB with alpha (1 unless an OpenEXR file stores
//! alpha). Every failure is one line naming the file: nonexistent, empty,
//! truncated or corrupt files, absurd dimensions, unknown extensions.

use super::rgbe;
use anyhow::{anyhow, Result};
use hipacc::core::{Image, Rgba};
use std::io::{IsTerminal, Read};
use std::path::Path;

/// The input formats, for messages.
const INPUT_FORMATS: &str = ".hdr/.pic (Radiance RGBE), .exr (OpenEXR) or .pfm";

/// The first four bytes of every OpenEXR file.
const EXR_MAGIC: [u8; 4] = [0x76, 0x2f, 0x31, 0x01];

/// The name of standard input in messages.
const STDIN_NAME: &str = "standard input";

/// A high-dynamic-range file format.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InputKind {
    /// Radiance RGBE (`.hdr`, `.pic`).
    Radiance,
    /// OpenEXR (`.exr`).
    Exr,
    /// Portable Float Map (`.pfm`).
    Pfm,
}

/// A loaded image and what the user should be told about it.
#[derive(Debug)]
pub struct Loaded {
    /// Linear RGBA.
    pub image: Image<Rgba<f32>>,
    /// One-line warnings naming the file (e.g. a display window outside
    /// the data window); the load succeeded regardless.
    pub warnings: Vec<String>,
}

/// Loads a high-dynamic-range image as linear RGBA (see the module docs);
/// warnings are dropped (see [`load_hdr_with`] and [`load`]).
pub fn load_hdr(path: &Path) -> Result<Image<Rgba<f32>>> {
    load(path).map(|loaded| loaded.image)
}

/// Loads like [`load_hdr`] and hands each warning to `warn`.
pub fn load_hdr_with(path: &Path, mut warn: impl FnMut(&str)) -> Result<Image<Rgba<f32>>> {
    let loaded = load(path)?;
    loaded.warnings.iter().for_each(|w| warn(w));
    Ok(loaded.image)
}

/// Loads a high-dynamic-range image (`-` for standard input) with its warnings.
pub fn load(path: &Path) -> Result<Loaded> {
    if path.as_os_str() == "-" {
        let stdin = std::io::stdin();
        // Waiting for an image typed on a keyboard would look like a hang.
        if stdin.is_terminal() {
            return Err(anyhow!(
                "{STDIN_NAME}: is a terminal; pipe an image in (`hdr-compress - < photo.exr`)"
            ));
        }
        let mut bytes = Vec::new();
        stdin
            .lock()
            .read_to_end(&mut bytes)
            .map_err(|e| anyhow!("{STDIN_NAME}: cannot read: {e}"))?;
        return decode(&bytes, None);
    }
    let fail = |message: String| anyhow!("{}: {message}", path.display());
    let meta = std::fs::metadata(path).map_err(|e| fail(format!("cannot read: {e}")))?;
    if meta.is_dir() {
        return Err(fail("is a directory, not an image file".into()));
    }
    let bytes = std::fs::read(path).map_err(|e| fail(format!("cannot read: {e}")))?;
    decode(&bytes, Some(path))
}

/// Decodes the bytes of an image read from `path` (`None`: standard
/// input, whose format must then show in its first bytes).
pub fn decode(bytes: &[u8], path: Option<&Path>) -> Result<Loaded> {
    let name = path.map_or_else(|| STDIN_NAME.to_string(), |p| p.display().to_string());
    let fail = |message: String| anyhow!("{name}: {message}");
    if bytes.is_empty() {
        return Err(fail(match path {
            Some(_) => "the file is empty".into(),
            None => "standard input is empty (no image was piped in)".into(),
        }));
    }
    let kind = match (sniff(bytes), path) {
        (Some(kind), _) => kind,
        (None, Some(p)) => kind_from_extension(p).ok_or_else(|| fail(unknown_extension(p)))?,
        (None, None) => {
            return Err(fail(format!(
                "not a recognised image: standard input must start like an OpenEXR, Radiance                  (`#?`) or PFM (`PF`/`Pf`) file ({INPUT_FORMATS})"
            )))
        }
    };
    let plain = |image| Loaded {
        image,
        warnings: Vec::new(),
    };
    match kind {
        InputKind::Radiance => load_radiance(bytes).map(plain).map_err(fail),
        InputKind::Exr => {
            let decoded = super::exr::decode(bytes).map_err(fail)?;
            let warnings = decoded
                .warnings
                .iter()
                .map(|w| format!("{name}: {w}"))
                .collect();
            Ok(Loaded {
                image: decoded.image,
                warnings,
            })
        }
        InputKind::Pfm => match path {
            Some(p) => hipacc::core::io::load_rgba(p)
                .map(plain)
                .map_err(|e| anyhow!("{e}")),
            None => load_pfm_bytes(bytes).map(plain),
        },
    }
}

/// PFM from memory, through a temporary file for the project's PFM reader;
/// messages name standard input, not the temporary file.
fn load_pfm_bytes(bytes: &[u8]) -> Result<Image<Rgba<f32>>> {
    let fail = |message: String| anyhow!("{STDIN_NAME}: {message}");
    let file = tempfile::Builder::new()
        .prefix(".hdr-compress-stdin-")
        .suffix(".pfm")
        .tempfile()
        .map_err(|e| fail(format!("cannot buffer the image in a temporary file: {e}")))?;
    std::fs::write(file.path(), bytes)
        .map_err(|e| fail(format!("cannot buffer the image in a temporary file: {e}")))?;
    let temp_name = file.path().display().to_string();
    hipacc::core::io::load_rgba(file.path())
        .map_err(|e| anyhow!("{}", e.to_string().replace(&temp_name, STDIN_NAME)))
}

/// The format announced by a file's first bytes, if any.
pub fn sniff(head: &[u8]) -> Option<InputKind> {
    if head.starts_with(&EXR_MAGIC) {
        Some(InputKind::Exr)
    } else if head.starts_with(b"#?") {
        Some(InputKind::Radiance)
    } else if (head.starts_with(b"PF") || head.starts_with(b"Pf"))
        && head.get(2).is_some_and(u8::is_ascii_whitespace)
    {
        Some(InputKind::Pfm)
    } else {
        None
    }
}

/// The format of a file named `path`, by its extension (case-insensitive).
pub fn kind_from_extension(path: &Path) -> Option<InputKind> {
    let ext = path.extension()?.to_str()?.to_ascii_lowercase();
    match ext.as_str() {
        "hdr" | "pic" | "rgbe" => Some(InputKind::Radiance),
        "exr" => Some(InputKind::Exr),
        "pfm" => Some(InputKind::Pfm),
        _ => None,
    }
}

fn unknown_extension(path: &Path) -> String {
    match path.extension() {
        Some(ext) => format!(
            "unsupported input extension `.{}` (use {INPUT_FORMATS})",
            ext.to_string_lossy()
        ),
        None => format!("no extension to choose a format (use {INPUT_FORMATS})"),
    }
}

fn load_radiance(bytes: &[u8]) -> std::result::Result<Image<Rgba<f32>>, String> {
    rgbe::decode_image(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;
    use image::codecs::openexr::OpenExrEncoder;
    use image::{ExtendedColorType, ImageEncoder};

    fn write(dir: &Path, name: &str, bytes: &[u8]) -> std::path::PathBuf {
        let path = dir.join(name);
        std::fs::write(&path, bytes).unwrap();
        path
    }

    fn exr_bytes(w: u32, h: u32) -> Vec<u8> {
        let samples: Vec<f32> = (0..w * h * 3).map(|i| i as f32 * 0.5 + 0.25).collect();
        let bytes: Vec<u8> = samples.iter().flat_map(|v| v.to_le_bytes()).collect();
        let mut out = std::io::Cursor::new(Vec::new());
        OpenExrEncoder::new(&mut out)
            .write_image(&bytes, w, h, ExtendedColorType::Rgb32F)
            .unwrap();
        out.into_inner()
    }

    fn one_line_error(path: &Path) -> String {
        let err = load_hdr(path).unwrap_err().to_string();
        assert!(!err.contains('\n'), "{err}");
        assert!(err.contains(&path.display().to_string()), "{err}");
        err
    }

    #[test]
    fn loads_radiance_by_extension_and_signature() {
        let dir = tempfile::tempdir().unwrap();
        let body = b"FORMAT=32-bit_rle_rgbe\n\n-Y 1 +X 2\n\x80\x40\x20\x81\x00\x00\x00\x00";
        let signed = [b"#?RADIANCE\n".as_slice(), body].concat();
        let late = [b"VIEW= -vtv\n#?RADIANCE\n".as_slice(), body].concat();
        for (name, bytes) in [("a.hdr", &signed), ("b.pic", &late), ("c.dat", &signed)] {
            let img = load_hdr(&write(dir.path(), name, bytes)).unwrap();
            assert_eq!(
                img.to_vec().unwrap()[0],
                Rgba::new(1.0, 0.5, 0.25, 1.0),
                "{name}"
            );
        }
        // A signature-less header needs the extension.
        let err = one_line_error(&write(dir.path(), "late.dat", &late));
        assert!(err.contains("unsupported input extension `.dat`"), "{err}");
    }

    #[test]
    fn loads_exr_and_pfm() {
        let dir = tempfile::tempdir().unwrap();
        let exr = load_hdr(&write(dir.path(), "x.exr", &exr_bytes(3, 2))).unwrap();
        assert_eq!((exr.width(), exr.height()), (3, 2));
        assert_eq!(exr.get(1, 0).unwrap(), Rgba::new(1.75, 2.25, 2.75, 1.0));
        let mut pfm = b"PF\n2 1\n-1\n".to_vec();
        for v in [1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0] {
            pfm.extend_from_slice(&v.to_le_bytes());
        }
        let img = load_hdr(&write(dir.path(), "p.pfm", &pfm)).unwrap();
        assert_eq!(img.to_vec().unwrap()[1], Rgba::new(4.0, 5.0, 6.0, 1.0));
    }

    #[test]
    fn bad_files_are_one_line_errors() {
        let dir = tempfile::tempdir().unwrap();
        let err = one_line_error(&dir.path().join("missing.hdr"));
        assert!(err.contains("cannot read"), "{err}");
        for name in ["empty.hdr", "empty.exr", "empty.pfm"] {
            let err = one_line_error(&write(dir.path(), name, b""));
            assert!(err.contains("the file is empty"), "{err}");
        }
        let err = one_line_error(&write(dir.path(), "x.png", b"not an hdr"));
        assert!(err.contains("unsupported input extension `.png`"), "{err}");
        let err = one_line_error(&write(dir.path(), "noext", b"not an hdr"));
        assert!(err.contains("no extension"), "{err}");
        let err = one_line_error(dir.path());
        assert!(err.contains("directory"), "{err}");
    }

    #[test]
    fn random_bytes_are_errors() {
        let dir = tempfile::tempdir().unwrap();
        let mut state = 0x2545_f491_4f6c_dd1du64;
        let noise: Vec<u8> = (0..4096)
            .map(|_| {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                (state >> 32) as u8
            })
            .collect();
        for name in ["r.hdr", "r.exr", "r.pfm", "r.pic"] {
            one_line_error(&write(dir.path(), name, &noise));
        }
        // Random bytes behind a valid magic number.
        let exr = [EXR_MAGIC.as_slice(), &noise].concat();
        one_line_error(&write(dir.path(), "m.exr", &exr));
    }

    #[test]
    fn truncated_exr_is_an_error() {
        let dir = tempfile::tempdir().unwrap();
        let full = exr_bytes(16, 16);
        for len in (1..full.len()).step_by(7) {
            let path = write(dir.path(), "t.exr", &full[..len]);
            one_line_error(&path);
        }
    }

    #[test]
    fn absurd_exr_dimensions_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let mut bytes = exr_bytes(4, 4);
        // The offset of an attribute's value (after its name, type and size).
        let value_at = |bytes: &[u8], name: &[u8]| {
            bytes.windows(name.len()).position(|w| w == name).unwrap() + name.len() + 4
        };
        // Patch both windows (box2i: xMin yMin xMax yMax) to 100000 x 100000.
        for name in [b"dataWindow\0box2i\0".as_slice(), b"displayWindow\0box2i\0"] {
            let at = value_at(&bytes, name);
            bytes[at + 8..at + 12].copy_from_slice(&99_999i32.to_le_bytes());
            bytes[at + 12..at + 16].copy_from_slice(&99_999i32.to_le_bytes());
        }
        // Keep the declared chunk count consistent, so that the header is
        // valid and only its size is absurd: tiles of a single level, or
        // blocks of scanlines.
        let tiles = b"tiles\0tiledesc\0";
        let chunks = if bytes.windows(tiles.len()).any(|w| w == tiles) {
            let at = value_at(&bytes, tiles);
            let size = |i: usize| u32::from_le_bytes(bytes[i..i + 4].try_into().unwrap());
            100_000u32.div_ceil(size(at)) * 100_000u32.div_ceil(size(at + 4))
        } else {
            let lines_per_chunk: u32 = match bytes[value_at(&bytes, b"compression\0compression\0")]
            {
                0..=2 => 1,
                3 | 5 => 16,
                9 => 256,
                _ => 32,
            };
            100_000u32.div_ceil(lines_per_chunk)
        };
        let at = value_at(&bytes, b"chunkCount\0int\0");
        bytes[at..at + 4].copy_from_slice(&chunks.to_le_bytes());
        let err = one_line_error(&write(dir.path(), "big.exr", &bytes));
        assert!(err.contains("100000x100000"), "{err}");
    }

    #[test]
    fn absurd_radiance_dimensions_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let bytes = b"#?RADIANCE\n\n-Y 65537 +X 65537\n\x80\x80\x80\x80";
        let err = one_line_error(&write(dir.path(), "big.hdr", bytes));
        assert!(err.contains("refused"), "{err}");
    }
}
