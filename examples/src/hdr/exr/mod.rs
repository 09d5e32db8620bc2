//! OpenEXR input: every channel layout a photographer meets, as linear
//! Rec.709 RGBA.
//!
//! - [`header`]: the project's own header reader; it refuses deep data
//!   ("deep data is not supported") and multi-part files ("multi-part files
//!   are not supported") by their version flags, and checks the data
//!   window's size before any pixel is decoded.
//! - [`planes`]: flat files through the `exr` crate (scanline or tiled,
//!   every compression the crate reads, half/float/uint samples).
//! - [`subsampled`]: files with subsampled channels (luminance/chroma), read
//!   by the project: scanline blocks with no compression, RLE, ZIPS, ZIP,
//!   PIZ ([`piz`]), PXR24 ([`pxr24`]), B44 or B44A ([`b44`]).
//! - [`luma_chroma`]: `Y`/`RY`/`BY` back to RGB as OpenEXR's RGBA interface.
//! - [`colour`]: the `chromaticities` attribute, converted to Rec.709.
//! - [`testdata`]: writers of small OpenEXR files for tests.
//!
//! Channels are chosen as OpenEXR's RGBA interface does: `R`, `G`, `B` (a
//! missing one reads as 0) and `A`; else `Y` with `RY`/`BY` (luminance and
//! chroma) or `Y` alone (grey); a file with a single channel of any other
//! name is grey too. Alpha is 1 where the file has no `A`. A file without
//! such channels whose colour is in one layer (a renderer's
//! `ViewLayer.Combined.R`, `.G`, `.B`, `.A` beside `ViewLayer.Depth.Z`)
//! is read from that layer's channels by the same rules; with several
//! such layers the error names them.
//!
//! The image is the data window: every stored pixel, whatever the display
//! window. A data window larger than or offset from the display window is
//! normal (overscan, crops) and loads silently. A display window that does
//! not overlap the data window at all would show nothing but background in
//! a viewer; the stored pixels are still what the photographer wants
//! tone-mapped, so they are loaded and a warning says so.

pub mod b44;
pub mod colour;
pub mod dwa;
pub mod header;
pub mod luma_chroma;
pub mod piz;
pub mod planes;
pub mod pxr24;
pub mod subsampled;
pub mod testdata;

use super::rgbe::{MAX_PIXELS, MAX_SIDE};
use hipacc::core::{Image, Rgba};
use planes::Plane;

/// A decoded OpenEXR file.
#[derive(Debug)]
pub struct Decoded {
    /// Linear Rec.709 RGBA, the data window's pixels.
    pub image: Image<Rgba<f32>>,
    /// Things the user should know that do not stop the load (one line each).
    pub warnings: Vec<String>,
}

/// Decodes an OpenEXR file held in `bytes` (which start with the magic
/// number). Every error is one line without the file's name.
pub fn decode(bytes: &[u8]) -> Result<Decoded, String> {
    let header = header::parse(bytes, MAX_SIDE, MAX_PIXELS)?;
    let subsampled = header
        .channels
        .iter()
        .any(|c| c.x_sampling != 1 || c.y_sampling != 1);
    let planes = if subsampled {
        subsampled::read_subsampled(bytes, &header)?
    } else {
        planes::read_flat(bytes)?
    };
    let (w, h) = (
        header.data_window.width() as usize,
        header.data_window.height() as usize,
    );
    let chroma = header.chromaticities.unwrap_or(colour::REC709);
    let (rgb, alpha) = assemble(&planes, w, h, &chroma)?;
    let matrix = colour::to_rec709(&chroma)?;
    let pixels: Vec<Rgba<f32>> = rgb
        .into_iter()
        .enumerate()
        .map(|(i, p)| {
            let [r, g, b] = match &matrix {
                None => p,
                Some(m) => colour::apply(m, p.map(f64::from)).map(|v| v as f32),
            };
            Rgba::new(r, g, b, alpha.map_or(1.0, |a| a[i]))
        })
        .collect();
    let image = Image::from_vec(w, h, pixels).map_err(|e| e.to_string())?;
    let mut warnings = Vec::new();
    if !header.display_window.overlaps(&header.data_window) {
        warnings.push(format!(
            "the display window {} does not overlap the data window {}: a viewer would show \
             only background; tone-mapping all {w}x{h} stored pixels",
            header.display_window, header.data_window
        ));
    }
    Ok(Decoded { image, warnings })
}

/// RGB pixels (in the file's primaries) and the alpha plane, if any.
type Channels<'a> = (Vec<[f32; 3]>, Option<&'a [f32]>);

/// The RGB pixels (file primaries) and alpha, chosen from the channels as
/// the module docs say: the file's own, else those of its one layer that
/// holds colour.
fn assemble<'a>(
    planes: &'a [Plane],
    w: usize,
    h: usize,
    chroma: &header::Chromaticities,
) -> Result<Channels<'a>, String> {
    if let Some(channels) = assemble_layer(planes, None, w, h, chroma)? {
        return Ok(channels);
    }
    let layers = colour_layers(planes);
    if let [layer] = layers.as_slice() {
        if let Some(channels) = assemble_layer(planes, Some(layer), w, h, chroma)? {
            return Ok(channels);
        }
    }
    let names: Vec<&str> = planes.iter().map(|p| p.name.as_str()).collect();
    let mut message = format!(
        "no colour channels: the file has {} (expected R, G, B, or Y, or a single channel, \
         or one layer of them)",
        names.join(", ")
    );
    if layers.len() > 1 {
        message += &format!(
            "; the layers {} all hold colour, and none is the image",
            layers.join(", ")
        );
    }
    Err(message)
}

/// The layers (channel name prefixes up to the last `.`, such as
/// `diffuse` of `diffuse.R`) that have an `R`, `G`, `B` or `Y` channel.
fn colour_layers(planes: &[Plane]) -> Vec<&str> {
    let mut layers: Vec<&str> = planes
        .iter()
        .filter_map(|p| p.name.rsplit_once('.'))
        .filter(|(_, c)| matches!(*c, "R" | "G" | "B" | "Y"))
        .map(|(layer, _)| layer)
        .collect();
    layers.sort_unstable();
    layers.dedup();
    layers
}

/// [`assemble`] from the file's channels (`layer` `None`: every channel,
/// as OpenEXR's RGBA interface reads them) or from one layer's (`diffuse.R`
/// as `R`, the layer's channels only); `None` where they hold no colour.
fn assemble_layer<'a>(
    planes: &'a [Plane],
    layer: Option<&str>,
    w: usize,
    h: usize,
    chroma: &header::Chromaticities,
) -> Result<Option<Channels<'a>>, String> {
    // The channel's name within the layer, if it is one of the layer's.
    let own = |p: &'a Plane| -> Option<&'a str> {
        match layer {
            None => Some(p.name.as_str()),
            Some(l) => p
                .name
                .strip_prefix(l)
                .and_then(|n| n.strip_prefix('.'))
                .filter(|n| !n.contains('.')),
        }
    };
    let find = |name: &str| planes.iter().find(|p| own(p) == Some(name));
    let full = |p: &Plane| -> Result<(), String> {
        if p.width == w && p.height == h {
            Ok(())
        } else {
            Err(format!(
                "subsampled channel `{}` is not supported (only RY and BY may be subsampled)",
                p.name
            ))
        }
    };
    let alpha = find("A")
        .map(|a| full(a).map(|()| a.samples.as_slice()))
        .transpose()?;
    let colour: Vec<&Plane> = planes
        .iter()
        .filter(|p| own(p).is_some_and(|n| n != "A"))
        .collect();
    let rgb = [find("R"), find("G"), find("B")];
    if rgb.iter().any(Option::is_some) && colour.len() > 1 {
        for p in rgb.iter().flatten() {
            full(p)?;
        }
        let at = |p: Option<&Plane>, i: usize| p.map_or(0.0, |p| p.samples[i]);
        let pixels = (0..w * h).map(|i| rgb.map(|p| at(p, i))).collect();
        return Ok(Some((pixels, alpha)));
    }
    let (luma, chroma_pair) = match (find("Y"), find("RY"), find("BY")) {
        (Some(y), Some(ry), Some(by)) => (y, Some((ry, by))),
        (Some(y), _, _) => (y, None),
        _ if colour.len() == 1 => (colour[0], None),
        _ => return Ok(None),
    };
    full(luma)?;
    let yw = colour::luminance_weights(chroma)
        .ok_or_else(|| "the chromaticities attribute gives no luminance weights".to_string())?;
    let pixels = luma_chroma::to_rgb(luma, chroma_pair, yw.map(|v| v as f32))?;
    Ok(Some((pixels, alpha)))
}
