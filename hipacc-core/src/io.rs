//! Image files: loading any format the `image` crate decodes, saving
//! luminance and RGBA images as OpenEXR, 16-bit PNG or PFM.
//!
//! # Loading
//! [`load_luminance`] returns one `f32` channel, [`load_rgba`] four. Integer
//! samples are scaled to `[0, 1]` (8-bit values divided by 255, 16-bit values
//! by 65535); floating-point samples (OpenEXR, Radiance HDR, PFM) are kept as
//! they are. No transfer curve is undone: an sRGB-encoded PNG yields its
//! encoded values. The luminance of a colour pixel uses the Rec. 709 weights,
//! `Y = 0.2126 R + 0.7152 G + 0.0722 B` (computed in `f32` on the scaled
//! channels); a gray pixel, also one stored as RGB with equal channels, is
//! its own luminance; alpha is ignored. For
//! [`load_rgba`], gray becomes `(Y, Y, Y, 1)` and a missing alpha is 1.
//!
//! The format is recognised from the file's first bytes, falling back to the
//! extension. Decoding refuses images whose pixels would need more than
//! 512 MiB before allocating them (the `image` crate's default limit).
//!
//! # Saving
//! The extension of the path chooses the format ([`OutputFormat`]):
//! - `.exr`: 32-bit float OpenEXR, values exact. A luminance image is written
//!   as RGB with every channel holding the luminance (the encoder needs RGB).
//! - `.png`: 16-bit PNG (grayscale for luminance, RGBA for colour), each value
//!   clamped to `[0, 1]`, scaled by 65535 and rounded to nearest; NaN
//!   becomes 0.
//! - `.pfm`: Portable Float Map, 32-bit float little-endian, exact (`Pf`
//!   grayscale for luminance, `PF` RGB for colour, whose alpha is dropped).
//!
//! Every save writes a temporary file in the target's directory and renames
//! it over the target when complete, so a failure never leaves a partial file.
//!
//! Every failure is [`Error::ImageFile`] naming the path and what went wrong.
//!
//! ```
//! use hipacc_core::{io, Image};
//! let dir = std::env::temp_dir().join(format!("hipacc-io-doc-{}", std::process::id()));
//! std::fs::create_dir_all(&dir).unwrap();
//! let img = Image::from_vec(2, 1, vec![0.25f32, 1.5])?;
//! let path = dir.join("ramp.pfm");
//! io::save_luminance(&img, &path)?;
//! assert_eq!(io::load_luminance(&path)?.to_vec()?, vec![0.25, 1.5]);
//! # std::fs::remove_dir_all(&dir).unwrap();
//! # Ok::<(), hipacc_core::Error>(())
//! ```

mod pfm;
#[cfg(test)]
mod tests;

use crate::{Error, Image, Result, Rgba};
use image::{DynamicImage, ExtendedColorType, ImageEncoder, ImageError, ImageReader};
use std::fs::File;
use std::io::{BufReader, BufWriter};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// Rec. 709 luminance weights of red, green and blue.
pub const REC709: [f32; 3] = [0.2126, 0.7152, 0.0722];

/// The extensions [`OutputFormat::from_path`] accepts, for messages.
const OUTPUT_EXTENSIONS: &str = ".exr, .png or .pfm";

/// A file format images are saved in, chosen by extension.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum OutputFormat {
    /// OpenEXR with 32-bit float channels (`.exr`).
    Exr,
    /// PNG with 16-bit channels (`.png`).
    Png16,
    /// Portable Float Map, 32-bit float little-endian (`.pfm`).
    Pfm,
}

impl OutputFormat {
    /// The format for `path`'s extension (case-insensitive); an error names
    /// the extensions that are supported.
    pub fn from_path(path: &Path) -> Result<OutputFormat> {
        let ext = path
            .extension()
            .and_then(|e| e.to_str())
            .map(str::to_ascii_lowercase);
        match ext.as_deref() {
            Some("exr") => Ok(OutputFormat::Exr),
            Some("png") => Ok(OutputFormat::Png16),
            Some("pfm") => Ok(OutputFormat::Pfm),
            Some(other) => Err(file_error(
                path,
                format!("unsupported output extension `.{other}` (use {OUTPUT_EXTENSIONS})"),
            )),
            None => Err(file_error(
                path,
                format!("output has no extension to choose a format (use {OUTPUT_EXTENSIONS})"),
            )),
        }
    }
}

/// Loads an image file as luminance (see the [module docs](self)).
pub fn load_luminance(path: impl AsRef<Path>) -> Result<Image<f32>> {
    let path = path.as_ref();
    match decode(path)? {
        Decoded::Image(img) => luminance_of(&img).map_err(|e| relabel(e, path)),
        Decoded::Float(f) => f.to_luminance().map_err(|e| relabel(e, path)),
    }
}

/// Loads an image file as RGBA (see the [module docs](self)).
pub fn load_rgba(path: impl AsRef<Path>) -> Result<Image<Rgba<f32>>> {
    let path = path.as_ref();
    match decode(path)? {
        Decoded::Image(img) => rgba_of(&img).map_err(|e| relabel(e, path)),
        Decoded::Float(f) => f.to_rgba().map_err(|e| relabel(e, path)),
    }
}

/// Saves a luminance image in the format of `path`'s extension (see the
/// [module docs](self)).
pub fn save_luminance(image: &Image<f32>, path: impl AsRef<Path>) -> Result<()> {
    let path = path.as_ref();
    let format = OutputFormat::from_path(path)?;
    let (w, h) = dimensions_u32(image, path)?;
    let pixels = image.to_vec()?;
    write_atomically(path, |out| match format {
        OutputFormat::Exr => {
            let rgb: Vec<f32> = pixels.iter().flat_map(|&v| [v, v, v]).collect();
            encode_exr(out, &rgb, w, h, ExtendedColorType::Rgb32F)
        }
        OutputFormat::Png16 => {
            let gray: Vec<u8> = pixels
                .iter()
                .flat_map(|&v| to_u16(v).to_ne_bytes())
                .collect();
            image::codecs::png::PngEncoder::new(out)
                .write_image(&gray, w, h, ExtendedColorType::L16)
                .map_err(|e| e.to_string())
        }
        OutputFormat::Pfm => pfm::write(out, &pixels, 1, image.width(), image.height()),
    })
}

/// Saves an RGBA image in the format of `path`'s extension (see the
/// [module docs](self)); PFM keeps red, green and blue only.
pub fn save_rgba(image: &Image<Rgba<f32>>, path: impl AsRef<Path>) -> Result<()> {
    let path = path.as_ref();
    let format = OutputFormat::from_path(path)?;
    let (w, h) = dimensions_u32(image, path)?;
    let pixels = image.to_vec()?;
    write_atomically(path, |out| match format {
        OutputFormat::Exr => {
            let rgba: Vec<f32> = pixels.iter().flat_map(|p| p.to_array()).collect();
            encode_exr(out, &rgba, w, h, ExtendedColorType::Rgba32F)
        }
        OutputFormat::Png16 => {
            let rgba: Vec<u8> = pixels
                .iter()
                .flat_map(|p| p.to_array())
                .flat_map(|v| to_u16(v).to_ne_bytes())
                .collect();
            image::codecs::png::PngEncoder::new(out)
                .write_image(&rgba, w, h, ExtendedColorType::Rgba16)
                .map_err(|e| e.to_string())
        }
        OutputFormat::Pfm => {
            let rgb: Vec<f32> = pixels.iter().flat_map(|p| [p.r, p.g, p.b]).collect();
            pfm::write(out, &rgb, 3, image.width(), image.height())
        }
    })
}

impl Image<f32> {
    /// Loads an image file as luminance; see [`load_luminance`].
    pub fn load(path: impl AsRef<Path>) -> Result<Image<f32>> {
        load_luminance(path)
    }
    /// Saves by extension; see [`save_luminance`].
    pub fn save(&self, path: impl AsRef<Path>) -> Result<()> {
        save_luminance(self, path)
    }
}

impl Image<Rgba<f32>> {
    /// Loads an image file as RGBA; see [`load_rgba`].
    pub fn load(path: impl AsRef<Path>) -> Result<Image<Rgba<f32>>> {
        load_rgba(path)
    }
    /// Saves by extension; see [`save_rgba`].
    pub fn save(&self, path: impl AsRef<Path>) -> Result<()> {
        save_rgba(self, path)
    }
}

/// The luminance of a decoded image (see the [module docs](self)).
pub fn luminance_of(img: &DynamicImage) -> Result<Image<f32>> {
    let (w, h) = (img.width() as usize, img.height() as usize);
    let data: Vec<f32> = match img {
        DynamicImage::ImageLuma8(b) => b.pixels().map(|p| unit8(p.0[0])).collect(),
        DynamicImage::ImageLumaA8(b) => b.pixels().map(|p| unit8(p.0[0])).collect(),
        DynamicImage::ImageLuma16(b) => b.pixels().map(|p| unit16(p.0[0])).collect(),
        DynamicImage::ImageLumaA16(b) => b.pixels().map(|p| unit16(p.0[0])).collect(),
        DynamicImage::ImageRgb8(b) => b.pixels().map(|p| luma(p.0.map(unit8))).collect(),
        DynamicImage::ImageRgba8(b) => b.pixels().map(|p| luma(rgb_of(p.0.map(unit8)))).collect(),
        DynamicImage::ImageRgb16(b) => b.pixels().map(|p| luma(p.0.map(unit16))).collect(),
        DynamicImage::ImageRgba16(b) => b.pixels().map(|p| luma(rgb_of(p.0.map(unit16)))).collect(),
        DynamicImage::ImageRgb32F(b) => b.pixels().map(|p| luma(p.0)).collect(),
        DynamicImage::ImageRgba32F(b) => b.pixels().map(|p| luma(rgb_of(p.0))).collect(),
        other => other.to_rgb32f().pixels().map(|p| luma(p.0)).collect(),
    };
    Image::from_vec(w, h, data)
}

/// The RGBA pixels of a decoded image (see the [module docs](self)).
pub fn rgba_of(img: &DynamicImage) -> Result<Image<Rgba<f32>>> {
    let (w, h) = (img.width() as usize, img.height() as usize);
    let gray = |v: f32, a: f32| Rgba::new(v, v, v, a);
    let data: Vec<Rgba<f32>> = match img {
        DynamicImage::ImageLuma8(b) => b.pixels().map(|p| gray(unit8(p.0[0]), 1.0)).collect(),
        DynamicImage::ImageLumaA8(b) => b
            .pixels()
            .map(|p| gray(unit8(p.0[0]), unit8(p.0[1])))
            .collect(),
        DynamicImage::ImageLuma16(b) => b.pixels().map(|p| gray(unit16(p.0[0]), 1.0)).collect(),
        DynamicImage::ImageLumaA16(b) => b
            .pixels()
            .map(|p| gray(unit16(p.0[0]), unit16(p.0[1])))
            .collect(),
        DynamicImage::ImageRgb8(b) => b.pixels().map(|p| opaque(p.0.map(unit8))).collect(),
        DynamicImage::ImageRgba8(b) => b.pixels().map(|p| rgba(p.0.map(unit8))).collect(),
        DynamicImage::ImageRgb16(b) => b.pixels().map(|p| opaque(p.0.map(unit16))).collect(),
        DynamicImage::ImageRgba16(b) => b.pixels().map(|p| rgba(p.0.map(unit16))).collect(),
        DynamicImage::ImageRgb32F(b) => b.pixels().map(|p| opaque(p.0)).collect(),
        DynamicImage::ImageRgba32F(b) => b.pixels().map(|p| rgba(p.0)).collect(),
        other => other.to_rgba32f().pixels().map(|p| rgba(p.0)).collect(),
    };
    Image::from_vec(w, h, data)
}

/// `Y` of linear or encoded RGB with the [`REC709`] weights. The weights sum
/// to 1, and a gray pixel (`r == g == b`) returns its value exactly, so
/// luminance saved as RGB (OpenEXR) loads back unchanged.
#[inline]
pub fn luma([r, g, b]: [f32; 3]) -> f32 {
    if r == g && g == b {
        return r;
    }
    REC709[0] * r + REC709[1] * g + REC709[2] * b
}

fn unit8(v: u8) -> f32 {
    f32::from(v) / 255.0
}

fn unit16(v: u16) -> f32 {
    f32::from(v) / 65535.0
}

fn rgb_of([r, g, b, _]: [f32; 4]) -> [f32; 3] {
    [r, g, b]
}

fn opaque([r, g, b]: [f32; 3]) -> Rgba<f32> {
    Rgba::new(r, g, b, 1.0)
}

fn rgba([r, g, b, a]: [f32; 4]) -> Rgba<f32> {
    Rgba::new(r, g, b, a)
}

/// `[0, 1]` to 16 bits: clamped, scaled, rounded to nearest; NaN to 0.
fn to_u16(v: f32) -> u16 {
    if v.is_nan() {
        return 0;
    }
    (v.clamp(0.0, 1.0) * 65535.0).round() as u16
}

/// What a file decoded to: an image of the `image` crate, or a PFM.
enum Decoded {
    Image(DynamicImage),
    Float(pfm::FloatMap),
}

/// Opens and decodes `path`, recognising PFM ourselves and everything else
/// through the `image` crate.
fn decode(path: &Path) -> Result<Decoded> {
    let file = File::open(path).map_err(|e| file_error(path, format!("cannot read: {e}")))?;
    if std::fs::metadata(path).is_ok_and(|m| m.len() == 0) {
        return Err(file_error(path, "the file is empty"));
    }
    let mut reader = BufReader::new(file);
    if pfm::is_pfm(&mut reader, path) {
        return pfm::read(reader)
            .map(Decoded::Float)
            .map_err(|m| file_error(path, format!("not a valid PFM file: {m}")));
    }
    let reader = ImageReader::new(reader)
        .with_guessed_format()
        .map_err(|e| file_error(path, format!("cannot read: {e}")))?;
    let Some(format) = reader.format() else {
        return Err(file_error(
            path,
            "unsupported image format (readable: PNG, JPEG, OpenEXR, Radiance HDR, TIFF, \
             BMP, PNM, PFM)",
        ));
    };
    let img = reader
        .decode()
        .map_err(|e| file_error(path, decode_message(format, &e)))?;
    if img.width() == 0 || img.height() == 0 {
        return Err(file_error(
            path,
            format!("image has no pixels ({}x{})", img.width(), img.height()),
        ));
    }
    Ok(Decoded::Image(img))
}

fn decode_message(format: image::ImageFormat, e: &ImageError) -> String {
    let name = format!("{format:?}").to_uppercase();
    match e {
        ImageError::Unsupported(u) => format!("unsupported {name} variant: {u}"),
        ImageError::Limits(l) => format!("image too large to load: {l}"),
        ImageError::IoError(io) if io.kind() == std::io::ErrorKind::UnexpectedEof => {
            format!("not a valid {name} file: truncated ({io})")
        }
        other => format!("not a valid {name} file: {other}"),
    }
}

fn dimensions_u32<T: crate::Pixel>(image: &Image<T>, path: &Path) -> Result<(u32, u32)> {
    match (u32::try_from(image.width()), u32::try_from(image.height())) {
        (Ok(w), Ok(h)) => Ok((w, h)),
        _ => Err(file_error(
            path,
            format!(
                "{}x{} is too large for an image file",
                image.width(),
                image.height()
            ),
        )),
    }
}

fn encode_exr(
    out: &mut BufWriter<File>,
    samples: &[f32],
    w: u32,
    h: u32,
    color: ExtendedColorType,
) -> std::result::Result<(), String> {
    let bytes: Vec<u8> = samples.iter().flat_map(|v| v.to_ne_bytes()).collect();
    image::codecs::openexr::OpenExrEncoder::new(out)
        .write_image(&bytes, w, h, color)
        .map_err(|e| e.to_string())
}

/// Writes through `write` into a temporary file beside `path`, then renames
/// it to `path`: the file appears complete or not at all, and an existing
/// `path` is replaced only by a complete one. The temporary file is removed
/// on any failure; `write`'s error becomes "cannot encode: ...".
///
/// ```
/// use hipacc_core::io::write_atomically;
/// use std::io::Write;
/// let path = std::env::temp_dir().join(format!("hipacc-atomic-{}.txt", std::process::id()));
/// write_atomically(&path, |out| out.write_all(b"done").map_err(|e| e.to_string()))?;
/// assert_eq!(std::fs::read(&path).unwrap(), b"done");
/// assert!(write_atomically(&path, |_| Err("no".into())).is_err());
/// assert_eq!(std::fs::read(&path).unwrap(), b"done");
/// # std::fs::remove_file(&path).unwrap();
/// # Ok::<(), hipacc_core::Error>(())
/// ```
pub fn write_atomically(
    path: &Path,
    write: impl FnOnce(&mut BufWriter<File>) -> std::result::Result<(), String>,
) -> Result<()> {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let name = path
        .file_name()
        .ok_or_else(|| file_error(path, "not a file name"))?;
    let dir = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let tmp = TempFile(Some(dir.join(format!(
        ".{}.{}-{}.tmp",
        name.to_string_lossy(),
        std::process::id(),
        COUNTER.fetch_add(1, Ordering::Relaxed)
    ))));
    let tmp_path = tmp.0.as_deref().unwrap_or(path);
    let file =
        in_flight::create(tmp_path).map_err(|e| file_error(path, format!("cannot write: {e}")))?;
    let mut out = BufWriter::new(file);
    write(&mut out).map_err(|m| file_error(path, format!("cannot encode: {m}")))?;
    let file = out
        .into_inner()
        .map_err(|e| file_error(path, format!("cannot write: {}", e.error())))?;
    file.sync_all()
        .map_err(|e| file_error(path, format!("cannot write: {e}")))?;
    drop(file);
    std::fs::rename(tmp_path, path).map_err(|e| file_error(path, format!("cannot write: {e}")))?;
    in_flight::forget(tmp_path);
    tmp.keep();
    Ok(())
}

/// Removes the temporary file when dropped (on every failure path) unless
/// [`TempFile::keep`] was called after it was renamed.
struct TempFile(Option<PathBuf>);

impl TempFile {
    fn keep(mut self) {
        self.0 = None;
    }
}

impl Drop for TempFile {
    fn drop(&mut self) {
        if let Some(p) = &self.0 {
            let _ = std::fs::remove_file(p);
            in_flight::forget(p);
        }
    }
}

/// Removes the temporary file of every [`write_atomically`] in progress and
/// ends the process with `code`, for a signal handler: a program stopped
/// while writing leaves neither a partial output nor a hidden temporary
/// file. No new temporary file is created once this has begun.
pub fn remove_temporary_files_and_exit(code: i32) -> ! {
    in_flight::remove_all_and_exit(code)
}

/// The temporary files [`write_atomically`] has created and not yet renamed
/// or removed. A file is created and recorded under one lock, so that
/// [`remove_temporary_files_and_exit`], which holds the lock until the
/// process ends, sees every file that exists.
mod in_flight {
    use std::fs::File;
    use std::path::{Path, PathBuf};
    use std::sync::{Mutex, MutexGuard};

    static FILES: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

    fn files() -> MutexGuard<'static, Vec<PathBuf>> {
        FILES.lock().unwrap_or_else(|e| e.into_inner())
    }

    pub(super) fn create(path: &Path) -> std::io::Result<File> {
        let mut list = files();
        let file = File::create(path)?;
        list.push(path.to_path_buf());
        Ok(file)
    }

    pub(super) fn forget(path: &Path) {
        files().retain(|p| p != path);
    }

    pub(super) fn remove_all_and_exit(code: i32) -> ! {
        let list = files();
        for p in list.iter() {
            let _ = std::fs::remove_file(p);
        }
        std::process::exit(code)
    }
}

fn file_error(path: &Path, message: impl Into<String>) -> Error {
    Error::ImageFile {
        path: path.display().to_string(),
        message: message.into(),
    }
}

/// Turns an error of building the image into one naming the file.
fn relabel(e: Error, path: &Path) -> Error {
    match e {
        e @ Error::ImageFile { .. } => e,
        other => file_error(path, other.to_string()),
    }
}
