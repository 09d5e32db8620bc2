//! Writing tone-mapped results: 8- or 16-bit PNG, JPEG, or linear OpenEXR.
//!
//! The output path's extension chooses the format ([`OutputKind::from_path`]):
//! `.png` (8 bits per channel, or 16 with `bits = 16`), `.jpg`/`.jpeg`
//! (8 bits, quality 1 to 100, default [`DEFAULT_JPEG_QUALITY`]) and `.exr`
//! (32-bit float). A bit depth or quality that does not apply to the format
//! is an error, so a mistyped command fails before any work is done;
//! [`check_writable`] likewise tests the output directory up front.
//!
//! [`save`] writes red, green and blue; alpha is dropped. PNG and JPEG take
//! display-encoded values in `[0, 1]` (the caller applies the gamma):
//! each is clamped, scaled to 255 or 65535 and rounded to nearest, NaN
//! becoming 0. OpenEXR takes linear values and stores them unchanged.
//! PNG uses fast deflate with the `Sub` filter on every row: on photographs
//! the files are a few percent larger than with per-row filter choice and
//! best compression, and encoding is several times faster (tens of times
//! faster than the `image` crate's default level).
//!
//! Every file is written to a temporary file in the target's directory and
//! renamed over the target once complete: a failure leaves no file behind,
//! and an existing target is replaced only by a complete image. [`write`]
//! sends an image to a stream (standard output) instead, encoded in memory
//! first so that a failed encoding writes nothing.
//!
//! Encoding errors say "cannot encode": the `image` crate reports every
//! OpenEXR failure, encoding included, as a decoding error, so its text is
//! not shown as it is ([`encode_message`]).

use anyhow::{anyhow, bail, Result};
use hipacc::core::io::write_atomically;
use hipacc::core::{Image, Rgba};
use image::codecs::jpeg::JpegEncoder;
use image::codecs::openexr::OpenExrEncoder;
use image::codecs::png::{CompressionType, FilterType, PngEncoder};
use image::ImageError;
use image::{ExtendedColorType, ImageEncoder};
use rayon::prelude::*;
use std::fs::File;
use std::io::{Cursor, Seek, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// The JPEG quality used when none is given.
pub const DEFAULT_JPEG_QUALITY: u8 = 90;

/// The output extensions, for messages.
const OUTPUT_FORMATS: &str = ".png, .jpg/.jpeg or .exr";

/// The names `--format` takes.
pub const FORMAT_NAMES: [&str; 3] = ["png", "jpg", "exr"];

/// An output file format with its options.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OutputKind {
    /// PNG, 8 bits per channel.
    Png8,
    /// PNG, 16 bits per channel.
    Png16,
    /// JPEG with the given quality (1 to 100).
    Jpeg(u8),
    /// OpenEXR, 32-bit float linear RGB.
    Exr,
}

impl OutputKind {
    /// The format for `path`'s extension (case-insensitive), with the PNG bit
    /// depth (`None`: 8) and the JPEG quality (`None`: the default). Either
    /// option given for a format it does not apply to is an error.
    pub fn from_path(path: &Path, bits: Option<u32>, quality: Option<u32>) -> Result<OutputKind> {
        let ext = path.extension().and_then(|e| e.to_str());
        Self::from_extension(ext, bits, quality)
            .map_err(|message| anyhow!("{}: {message}", path.display()))
    }

    /// The format named by `--format` (`png`, `jpg`, `jpeg` or `exr`, any
    /// case), with the options as in [`OutputKind::from_path`].
    pub fn from_name(name: &str, bits: Option<u32>, quality: Option<u32>) -> Result<OutputKind> {
        Self::from_extension(Some(name), bits, quality)
            .map_err(|message| anyhow!("--format {name}: {message}"))
    }

    /// The extension files of this format get (`png`, `jpg` or `exr`).
    pub fn extension(self) -> &'static str {
        match self {
            OutputKind::Png8 | OutputKind::Png16 => "png",
            OutputKind::Jpeg(_) => "jpg",
            OutputKind::Exr => "exr",
        }
    }

    fn from_extension(
        ext: Option<&str>,
        bits: Option<u32>,
        quality: Option<u32>,
    ) -> std::result::Result<OutputKind, String> {
        let ext = ext.map(str::to_ascii_lowercase);
        let kind = match ext.as_deref() {
            Some("png") => match bits {
                None | Some(8) => OutputKind::Png8,
                Some(16) => OutputKind::Png16,
                Some(b) => return Err(format!("PNG is written with 8 or 16 bits, not {b}")),
            },
            Some("jpg" | "jpeg") => match quality {
                None => OutputKind::Jpeg(DEFAULT_JPEG_QUALITY),
                Some(q @ 1..=100) => OutputKind::Jpeg(q as u8),
                Some(q) => {
                    return Err(format!("JPEG quality must be 1 to 100, not {q}"));
                }
            },
            Some("exr") => OutputKind::Exr,
            Some(other) => {
                return Err(format!(
                    "unsupported output extension `.{other}` (use {OUTPUT_FORMATS})"
                ))
            }
            None => {
                return Err(format!(
                    "output has no extension to choose a format (use {OUTPUT_FORMATS})"
                ))
            }
        };
        if bits.is_some() && !matches!(kind, OutputKind::Png8 | OutputKind::Png16) {
            return Err("a bit depth applies to PNG output only".into());
        }
        if quality.is_some() && !matches!(kind, OutputKind::Jpeg(_)) {
            return Err("a quality applies to JPEG output only".into());
        }
        Ok(kind)
    }
}

/// The format for `path` ([`OutputKind::from_path`]) after checking that the
/// file can be written ([`check_writable`]): the checks to run before any
/// computation.
pub fn prepare(path: &Path, bits: Option<u32>, quality: Option<u32>) -> Result<OutputKind> {
    if path.is_dir() {
        bail!("{}: is a directory, not an output file", path.display());
    }
    let kind = OutputKind::from_path(path, bits, quality)?;
    check_writable(path)?;
    Ok(kind)
}

/// Checks that `path` names a file in an existing, writable directory, by
/// creating and removing an empty temporary file there. An existing `path`
/// is left untouched.
pub fn check_writable(path: &Path) -> Result<()> {
    let fail = |message: String| anyhow!("{}: {message}", path.display());
    if path.is_dir() {
        bail!("{}: is a directory, not an output file", path.display());
    }
    let dir = directory_of(path);
    match std::fs::metadata(&dir) {
        Ok(m) if m.is_dir() => {}
        Ok(_) => return Err(fail(format!("{} is not a directory", dir.display()))),
        Err(e) => return Err(fail(format!("cannot write in {}: {e}", dir.display()))),
    }
    probe(path).map_err(|e| fail(format!("cannot write: {e}")))
}

/// Writes `image`'s red, green and blue in `kind`'s format (see the module
/// docs); the file appears complete or not at all.
pub fn save(image: &Image<Rgba<f32>>, path: &Path, kind: OutputKind) -> Result<()> {
    let samples = Samples::of(image, kind).map_err(|m| anyhow!("{}: {m}", path.display()))?;
    write_atomically(path, |out| {
        stall_for_tests();
        samples.encode(out)
    })
    .map_err(|e| anyhow!("{e}"))
}

/// Writes `image` in `kind`'s format to `out` (standard output), `name`
/// naming it in errors. The image is encoded in memory first: a failed
/// encoding writes nothing.
pub fn write(
    image: &Image<Rgba<f32>>,
    out: &mut dyn Write,
    name: &str,
    kind: OutputKind,
) -> Result<()> {
    let fail = |message: String| anyhow!("{name}: {message}");
    let samples = Samples::of(image, kind).map_err(fail)?;
    let mut buffer = Cursor::new(Vec::new());
    samples
        .encode(&mut buffer)
        .map_err(|m| fail(format!("cannot encode: {m}")))?;
    out.write_all(buffer.get_ref())
        .and_then(|()| out.flush())
        .map_err(|e| fail(format!("cannot write: {e}")))
}

/// An image's size and red, green and blue samples in the bytes an
/// encoder of `kind` takes.
struct Samples {
    width: u32,
    height: u32,
    kind: OutputKind,
    bytes: Vec<u8>,
    color: ExtendedColorType,
}

/// Pixels converted per parallel task when building [`Samples`].
const CHUNK: usize = 8192;

impl Samples {
    /// Converts `image`'s pixels for `kind` (in parallel; the buffer is
    /// first touched by the threads that fill it).
    fn of(image: &Image<Rgba<f32>>, kind: OutputKind) -> std::result::Result<Samples, String> {
        let (width, height) = match (u32::try_from(image.width()), u32::try_from(image.height())) {
            (Ok(w), Ok(h)) => (w, h),
            _ => return Err("the image is too large for an image file".into()),
        };
        let pixels = image.read().map_err(|e| e.to_string())?;
        let (bytes, color) = match kind {
            OutputKind::Png8 | OutputKind::Jpeg(_) => (
                convert(&pixels, |v, out: &mut [u8; 1]| out[0] = to_u8(v)),
                ExtendedColorType::Rgb8,
            ),
            OutputKind::Png16 => (
                convert(&pixels, |v, out: &mut [u8; 2]| {
                    *out = to_u16(v).to_ne_bytes()
                }),
                ExtendedColorType::Rgb16,
            ),
            OutputKind::Exr => (
                convert(&pixels, |v, out: &mut [u8; 4]| *out = v.to_ne_bytes()),
                ExtendedColorType::Rgb32F,
            ),
        };
        Ok(Samples {
            width,
            height,
            kind,
            bytes,
            color,
        })
    }

    /// Encodes into `out`; errors in [`encode_message`]'s words.
    fn encode<W: Write + Seek>(&self, out: &mut W) -> std::result::Result<(), String> {
        let (w, h, kind, bytes, color) =
            (self.width, self.height, self.kind, &self.bytes, self.color);
        match kind {
            OutputKind::Png8 | OutputKind::Png16 => {
                PngEncoder::new_with_quality(out, CompressionType::Fast, FilterType::Sub)
                    .write_image(bytes, w, h, color)
            }
            OutputKind::Jpeg(q) => {
                JpegEncoder::new_with_quality(out, q).write_image(bytes, w, h, color)
            }
            OutputKind::Exr => OpenExrEncoder::new(out).write_image(bytes, w, h, color),
        }
        .map_err(|e| encode_message(kind, &e))
    }
}

/// Red, green and blue of every pixel, each written as `N` bytes by `put`.
fn convert<const N: usize>(
    pixels: &[Rgba<f32>],
    put: impl Fn(f32, &mut [u8; N]) + Sync,
) -> Vec<u8> {
    let mut bytes = vec![0u8; pixels.len() * 3 * N];
    bytes
        .par_chunks_mut(CHUNK * 3 * N)
        .zip(pixels.par_chunks(CHUNK))
        .for_each(|(out, px)| {
            for (o, p) in out.chunks_exact_mut(3 * N).zip(px) {
                for (c, v) in o.chunks_exact_mut(N).zip([p.r, p.g, p.b]) {
                    if let Ok(c) = <&mut [u8; N]>::try_from(c) {
                        put(v, c);
                    }
                }
            }
        });
    bytes
}

/// The text of an error the `image` crate returned while encoding. Its
/// OpenEXR codec wraps every failure, a failed write included, in a
/// "Format error decoding OpenExr" error; only the cause is kept, under
/// the format's name.
fn encode_message(kind: OutputKind, e: &ImageError) -> String {
    let format = match kind {
        OutputKind::Png8 | OutputKind::Png16 => "PNG",
        OutputKind::Jpeg(_) => "JPEG",
        OutputKind::Exr => "OpenEXR",
    };
    match e {
        ImageError::Decoding(d) => match std::error::Error::source(d) {
            Some(cause) => format!("{format}: {cause}"),
            None => format!("{format}: the encoder failed"),
        },
        ImageError::IoError(io) => format!("{format}: {io}"),
        other => other.to_string(),
    }
}

/// `HDR_COMPRESS_TEST_STALL_MS`: a test hook that pauses every file write
/// for that many milliseconds after its temporary file exists, so that the
/// tests can interrupt a write at a known moment. Unset in normal use.
fn stall_for_tests() {
    if let Some(ms) = std::env::var("HDR_COMPRESS_TEST_STALL_MS")
        .ok()
        .and_then(|v| v.parse::<u64>().ok())
    {
        std::thread::sleep(std::time::Duration::from_millis(ms));
    }
}

/// `[0, 1]` to 8 bits: clamped, scaled, rounded to nearest; NaN to 0.
fn to_u8(v: f32) -> u8 {
    if v.is_nan() {
        return 0;
    }
    (v.clamp(0.0, 1.0) * 255.0).round() as u8
}

/// `[0, 1]` to 16 bits: clamped, scaled, rounded to nearest; NaN to 0.
fn to_u16(v: f32) -> u16 {
    if v.is_nan() {
        return 0;
    }
    (v.clamp(0.0, 1.0) * 65535.0).round() as u16
}

/// The directory a file is written in (`.` for a bare name).
fn directory_of(path: &Path) -> PathBuf {
    match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    }
}

/// Creates and removes an empty file beside `target`: whether files can be
/// written there.
fn probe(target: &Path) -> std::io::Result<()> {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let name = target
        .file_name()
        .ok_or_else(|| std::io::Error::new(std::io::ErrorKind::InvalidInput, "not a file name"))?;
    let temp = directory_of(target).join(format!(
        ".{}.{}-{}.probe",
        name.to_string_lossy(),
        std::process::id(),
        COUNTER.fetch_add(1, Ordering::Relaxed)
    ));
    File::options().write(true).create_new(true).open(&temp)?;
    std::fs::remove_file(&temp)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ramp(w: usize, h: usize) -> Image<Rgba<f32>> {
        Image::from_fn(w, h, |x, y| {
            let v = (x + y * w) as f32 / (w * h - 1) as f32;
            Rgba::new(v, 1.0 - v, 0.5, 1.0)
        })
        .unwrap()
    }

    fn leftovers(dir: &Path) -> Vec<String> {
        std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n.ends_with(".tmp"))
            .collect()
    }

    #[test]
    fn kinds_from_extension_and_flags() {
        let p = Path::new;
        let kind = |path: &str, bits, quality| OutputKind::from_path(p(path), bits, quality);
        assert_eq!(kind("a.png", None, None).unwrap(), OutputKind::Png8);
        assert_eq!(kind("a.PNG", Some(8), None).unwrap(), OutputKind::Png8);
        assert_eq!(kind("a.png", Some(16), None).unwrap(), OutputKind::Png16);
        assert_eq!(kind("a.jpg", None, None).unwrap(), OutputKind::Jpeg(90));
        assert_eq!(
            kind("a.jpeg", None, Some(75)).unwrap(),
            OutputKind::Jpeg(75)
        );
        assert_eq!(kind("a.exr", None, None).unwrap(), OutputKind::Exr);
        let cases = [
            ("a.png", Some(12), None, "8 or 16 bits"),
            ("a.jpg", None, Some(0), "1 to 100"),
            ("a.jpg", None, Some(101), "1 to 100"),
            ("a.jpg", Some(16), None, "PNG output only"),
            ("a.exr", None, Some(80), "JPEG output only"),
            ("a.tif", None, None, "unsupported output extension `.tif`"),
            ("a", None, None, "no extension"),
        ];
        for (path, bits, quality, message) in cases {
            let err = kind(path, bits, quality).unwrap_err().to_string();
            assert!(err.starts_with(path) && err.contains(message), "{err}");
        }
    }

    #[test]
    fn writes_png8_png16_jpeg_and_exr() {
        let dir = tempfile::tempdir().unwrap();
        let img = ramp(5, 3);
        for (name, kind) in [
            ("o8.png", OutputKind::Png8),
            ("o16.png", OutputKind::Png16),
            ("o.jpg", OutputKind::Jpeg(95)),
            ("o.exr", OutputKind::Exr),
        ] {
            let path = dir.path().join(name);
            save(&img, &path, kind).unwrap();
            let back = image::open(&path).unwrap();
            assert_eq!((back.width(), back.height()), (5, 3), "{name}");
            let last = back.to_rgb32f().get_pixel(4, 2).0;
            let tolerance = if kind == OutputKind::Jpeg(95) {
                0.05
            } else {
                1e-6
            };
            for (got, want) in last.iter().zip([1.0, 0.0, 0.5]) {
                let want = match kind {
                    OutputKind::Png8 | OutputKind::Jpeg(_) => (want * 255.0f32).round() / 255.0,
                    OutputKind::Png16 => (want * 65535.0f32).round() / 65535.0,
                    OutputKind::Exr => want,
                };
                assert!((got - want).abs() <= tolerance, "{name}: {got} vs {want}");
            }
            let color = back.color();
            let expected = match kind {
                OutputKind::Png8 | OutputKind::Jpeg(_) => image::ColorType::Rgb8,
                OutputKind::Png16 => image::ColorType::Rgb16,
                OutputKind::Exr => image::ColorType::Rgb32F,
            };
            assert_eq!(color, expected, "{name}");
        }
        assert!(leftovers(dir.path()).is_empty());
    }

    #[test]
    fn exr_keeps_linear_values() {
        let dir = tempfile::tempdir().unwrap();
        let img = Image::from_vec(2, 1, vec![Rgba::new(1e4, 0.001, 3.5, 1.0); 2]).unwrap();
        let path = dir.path().join("lin.exr");
        save(&img, &path, OutputKind::Exr).unwrap();
        let back = image::open(&path).unwrap().to_rgb32f();
        assert_eq!(back.get_pixel(1, 0).0, [1e4, 0.001, 3.5]);
    }

    #[test]
    fn display_values_are_clamped_and_rounded() {
        assert_eq!(
            [-1.0, 0.0, 0.5, 1.0, 7.0, f32::NAN].map(to_u8),
            [0, 0, 128, 255, 255, 0]
        );
        assert_eq!(to_u16(0.5), 32768);
        assert_eq!(to_u16(f32::INFINITY), 65535);
    }

    #[test]
    fn unwritable_paths_fail_early_and_leave_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let missing = dir.path().join("no/such/dir/out.png");
        let err = prepare(&missing, None, None).unwrap_err().to_string();
        assert!(err.contains("cannot write in"), "{err}");
        let err = save(&ramp(2, 2), &missing, OutputKind::Png8)
            .unwrap_err()
            .to_string();
        assert!(err.contains("cannot write"), "{err}");
        let err = check_writable(dir.path()).unwrap_err().to_string();
        assert!(err.contains("is a directory"), "{err}");
        let file = dir.path().join("plain");
        std::fs::write(&file, b"x").unwrap();
        let err = check_writable(&file.join("out.png"))
            .unwrap_err()
            .to_string();
        assert!(err.contains("not a directory"), "{err}");
        let ok = dir.path().join("fine.png");
        assert_eq!(prepare(&ok, Some(16), None).unwrap(), OutputKind::Png16);
        assert!(!ok.exists(), "the check leaves no file");
        assert!(leftovers(dir.path()).is_empty());
    }

    #[test]
    fn failed_encoding_leaves_no_file_and_keeps_the_old_one() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("big.jpg");
        std::fs::write(&path, b"old").unwrap();
        // JPEG cannot hold more than 65535 pixels a side.
        let wide = Image::from_vec(70_000, 1, vec![Rgba::new(0.5, 0.5, 0.5, 1.0); 70_000]).unwrap();
        let err = save(&wide, &path, OutputKind::Jpeg(90))
            .unwrap_err()
            .to_string();
        assert!(err.contains("cannot encode"), "{err}");
        assert_eq!(std::fs::read(&path).unwrap(), b"old");
        assert!(leftovers(dir.path()).is_empty());
    }

    /// Accepts `room` bytes, then fails like a full disk.
    struct FullDisk {
        inner: Cursor<Vec<u8>>,
        room: usize,
    }

    impl Write for FullDisk {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            let n = buf
                .len()
                .min(self.room.saturating_sub(self.inner.get_ref().len()));
            if n == 0 && !buf.is_empty() {
                return Err(std::io::Error::new(
                    std::io::ErrorKind::StorageFull,
                    "no space left",
                ));
            }
            self.inner.write(&buf[..n])
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    impl Seek for FullDisk {
        fn seek(&mut self, pos: std::io::SeekFrom) -> std::io::Result<u64> {
            self.inner.seek(pos)
        }
    }

    #[test]
    fn samples_convert_every_pixel_in_order() {
        // More pixels than one conversion task takes.
        let (w, h) = (CHUNK + 37, 3);
        let img = Image::from_fn(w, h, |x, y| {
            let v = ((x * 7 + y * 13) % 1000) as f32 / 999.0;
            Rgba::new(v, 1.0 - v, v * 0.5, 1.0)
        })
        .unwrap();
        let px = img.to_vec().unwrap();
        let rgb = px.iter().flat_map(|p| [p.r, p.g, p.b]);
        let s8 = Samples::of(&img, OutputKind::Png8).unwrap();
        assert_eq!(s8.bytes, rgb.clone().map(to_u8).collect::<Vec<_>>());
        let s16 = Samples::of(&img, OutputKind::Png16).unwrap();
        let want16: Vec<u8> = rgb.clone().flat_map(|v| to_u16(v).to_ne_bytes()).collect();
        assert_eq!(s16.bytes, want16);
        let sf = Samples::of(&img, OutputKind::Exr).unwrap();
        assert_eq!(sf.bytes, rgb.flat_map(f32::to_ne_bytes).collect::<Vec<_>>());
    }

    #[test]
    fn encoding_errors_say_encode_not_decode() {
        for kind in [OutputKind::Exr, OutputKind::Png8, OutputKind::Jpeg(90)] {
            let samples = Samples::of(&ramp(64, 64), kind).unwrap();
            let mut out = FullDisk {
                inner: Cursor::new(Vec::new()),
                room: 100,
            };
            let err = samples.encode(&mut out).unwrap_err();
            assert!(!err.to_lowercase().contains("decod"), "{kind:?}: {err}");
            assert!(err.contains("no space left"), "{kind:?}: {err}");
        }
        let mut sink = Vec::new();
        let wide = Image::from_vec(70_000, 1, vec![Rgba::new(0.5, 0.5, 0.5, 1.0); 70_000]).unwrap();
        let err = write(&wide, &mut sink, "-", OutputKind::Jpeg(90))
            .unwrap_err()
            .to_string();
        assert!(err.starts_with("-: cannot encode"), "{err}");
        assert!(sink.is_empty(), "a failed encoding writes nothing");
    }

    #[test]
    fn streams_get_the_same_bytes_as_files() {
        let dir = tempfile::tempdir().unwrap();
        for kind in [OutputKind::Png16, OutputKind::Jpeg(80), OutputKind::Exr] {
            let path = dir.path().join(format!("o.{}", kind.extension()));
            save(&ramp(7, 5), &path, kind).unwrap();
            let mut sink = Vec::new();
            write(&ramp(7, 5), &mut sink, "-", kind).unwrap();
            assert_eq!(sink, std::fs::read(&path).unwrap(), "{kind:?}");
        }
    }

    #[test]
    fn formats_by_name() {
        assert_eq!(
            OutputKind::from_name("png", Some(16), None).unwrap(),
            OutputKind::Png16
        );
        assert_eq!(
            OutputKind::from_name("JPG", None, Some(70)).unwrap(),
            OutputKind::Jpeg(70)
        );
        assert_eq!(
            OutputKind::from_name("exr", None, None)
                .unwrap()
                .extension(),
            "exr"
        );
        let err = OutputKind::from_name("exr", Some(8), None)
            .unwrap_err()
            .to_string();
        assert!(err.starts_with("--format exr: a bit depth"), "{err}");
    }

    #[test]
    fn a_directory_is_named_as_one() {
        let dir = tempfile::tempdir().unwrap();
        let err = prepare(dir.path(), None, None).unwrap_err().to_string();
        assert!(err.contains("is a directory"), "{err}");
    }
}
