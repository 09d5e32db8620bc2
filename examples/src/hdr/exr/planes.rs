//! Channel planes of a flat (not deep, not subsampled) OpenEXR file, read
//! through the `exr` crate: scanline or tiled, any compression the crate
//! decodes (none, RLE, ZIPS, ZIP, PIZ, PXR24, B44, B44A, DWAA, DWAB), half,
//! float and uint samples, the largest level of mip- or rip-mapped files.

use exr::prelude::{AnyChannels, FlatSamples, ReadChannels, ReadLayers};
use std::io::Cursor;

/// One channel's samples at its own resolution, row-major.
#[derive(Debug, Clone)]
pub struct Plane {
    /// The channel's name.
    pub name: String,
    /// Samples per row.
    pub width: usize,
    /// Rows.
    pub height: usize,
    /// One sample every `x_sampling` columns of the data window.
    pub x_sampling: usize,
    /// One sample every `y_sampling` rows of the data window.
    pub y_sampling: usize,
    /// The samples, as f32 (uint samples converted).
    pub samples: Vec<f32>,
}

/// Reads every channel of the file's only layer. The header has been
/// checked by [`super::header::parse`], so its dimensions are sane.
pub fn read_flat(bytes: &[u8]) -> Result<Vec<Plane>, String> {
    let image = exr::prelude::read()
        .no_deep_data()
        .largest_resolution_level()
        .all_channels()
        .first_valid_layer()
        .all_attributes()
        .non_parallel()
        .from_buffered(Cursor::new(bytes))
        .map_err(crate_message)?;
    let layer = image.layer_data;
    let (width, height) = (layer.size.width(), layer.size.height());
    let AnyChannels { list } = layer.channel_data;
    Ok(list
        .into_iter()
        .map(|channel| Plane {
            name: channel.name.to_string(),
            width,
            height,
            x_sampling: 1,
            y_sampling: 1,
            samples: match channel.sample_data {
                FlatSamples::F32(v) => v,
                other => other.values_as_f32().collect(),
            },
        })
        .collect())
}

/// One line describing an error of the `exr` crate.
fn crate_message(e: exr::error::Error) -> String {
    let text = e.to_string().replace('\n', " ");
    match e {
        exr::error::Error::NotSupported(_) => format!("unsupported OpenEXR variant: {text}"),
        exr::error::Error::Io(io) if io.kind() == std::io::ErrorKind::UnexpectedEof => {
            format!("not a valid OpenEXR file: truncated ({text})")
        }
        _ => format!("not a valid OpenEXR file: {text}"),
    }
}
