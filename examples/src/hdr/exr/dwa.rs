//! DWAA and DWAB blocks of subsampled (luminance/chroma) files.
//!
//! DWA is OpenEXR's DCT-based lossy compression: per block, luminance and
//! chroma channels go through an 8x8 DCT with quantised, Huffman- and
//! zlib-coded coefficients, others through RLE or zlib. The `exr` crate
//! decodes it, channel sampling included, but refuses subsampled files
//! before it reaches a block; its codec is public, so the block is handed
//! to it with the file's channel list, and it returns the rows in the
//! layout the other codecs of [`super::subsampled`] return (each row's
//! channels in header order, each channel's samples of that row).
//!
//! DWAA blocks hold 32 rows, DWAB blocks 256.

use super::header::{Header, SampleType};
use exr::math::Vec2;
use exr::meta::attribute::{
    ChannelDescription, ChannelList, IntegerBounds, SampleType as ExrSample, Text,
};
use exr::prelude::SmallVec;

/// Decodes the block of rows `y..y + rows` (`width` pixels wide) into its
/// `expected` bytes of little-endian samples.
pub fn decompress(
    header: &Header,
    data: &[u8],
    y: i32,
    rows: usize,
    width: usize,
    expected: usize,
) -> Result<Vec<u8>, String> {
    let list = header
        .channels
        .iter()
        .map(|c| {
            Ok(ChannelDescription {
                name: Text::new_or_none(&c.name)
                    .ok_or_else(|| format!("channel name `{}`", c.name))?,
                sample_type: match c.sample_type {
                    SampleType::Half => ExrSample::F16,
                    SampleType::Float => ExrSample::F32,
                    SampleType::Uint => ExrSample::U32,
                },
                quantize_linearly: c.p_linear,
                sampling: Vec2(c.x_sampling as usize, c.y_sampling as usize),
            })
        })
        .collect::<Result<SmallVec<[ChannelDescription; 5]>, String>>()?;
    let rect = IntegerBounds::new((header.data_window.x_min, y), (width, rows));
    let out = exr::compression::dwa::decompress(
        &ChannelList::new(list),
        data.to_vec(),
        rect,
        expected,
        true,
    )
    .map_err(|e| format!("DWA data: {e}"))?;
    if out.len() != expected {
        return Err("DWA data: wrong size".into());
    }
    // The codec returns native-endian samples, which the reader takes as
    // stored (little-endian): the same bytes on every little-endian host.
    if cfg!(target_endian = "big") {
        return Err("DWA data on a big-endian host is not supported".into());
    }
    Ok(out)
}
