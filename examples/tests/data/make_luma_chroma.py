"""Writes the luminance/chroma OpenEXR fixtures of hdr_exr_inputs.rs.

Every file is written by the OpenEXR library itself. Y is full resolution,
RY and BY are sampled every second column and row, as OpenEXR's RGBA
interface writes them.

- luma_chroma_{half,float}_{piz,zip}.exr (40x70): each image twice, PIZ- and
  ZIP-compressed, so a test can require that both decode to the same pixels
  (both compressions are lossless).
- luma_chroma_{half,float}_{pxr24,b44,b44a,dwaa,dwab}.exr (42x70, so that the chroma
  planes, 21 samples wide and 35 high, end in partial B44 blocks; with flat
  areas, which B44A stores in 3-byte blocks), and luma_chroma_half_b44_plinear.exr
  (B44 with the pLinear hint on every channel). PXR24 (for float samples),
  B44 and DWA (for half samples) are lossy, so each file has a twin named
  `..._decoded_zip.exr`: the samples OpenEXR decodes from it, written
  ZIP-compressed. A test can require that both decode to the same pixels.

Run with the `OpenEXR` (3.x) and `numpy` Python packages:

    python3 make_luma_chroma.py OUTPUT_DIR
"""

import sys

import numpy as np
import OpenEXR


def image(w, h, luminance_type):
    """The 40x70 image of the PIZ/ZIP pairs. (The bindings take a subsampled
    channel's samples from the first quarter of the full-size array given,
    row after row: RY and BY hold the top rows of `ry` and `by`.)"""
    y, x = np.mgrid[0:h, 0:w].astype(np.float64)
    lum = np.exp(0.08 * x - 0.03 * y) * (1.2 + np.sin(x / 5.0) * np.cos(y / 7.0))
    ry = 0.3 * np.sin(x / 6.0) + 0.05 * y / h
    by = -0.2 * np.cos(y / 4.0) + 0.1 * x / w
    return {
        "Y": OpenEXR.Channel(lum.astype(luminance_type)),
        "RY": OpenEXR.Channel(ry.astype(np.float16), 2, 2),
        "BY": OpenEXR.Channel(by.astype(np.float16), 2, 2),
    }


def subsampled(samples, w, h):
    """A full-size array whose first quarter holds `samples` (h/2 x w/2), as
    the bindings want a channel sampled 2x2."""
    full = np.zeros((h, w), dtype=samples.dtype)
    full.flat[: samples.size] = samples.ravel()
    return full


def flat_image(w, h, luminance_type, p_linear):
    """The image of the lossy fixtures: smooth, with flat areas in the
    luminance and in both chroma planes (where B44A writes 3-byte blocks)."""
    y, x = np.mgrid[0:h, 0:w].astype(np.float64)
    lum = np.exp(0.08 * x - 0.03 * y) * (1.2 + np.sin(x / 5.0) * np.cos(y / 7.0))
    lum[0:16, 0:16] = 3.0
    cy, cx = np.mgrid[0 : h // 2, 0 : w // 2].astype(np.float64)
    ry = 0.3 * np.sin(cx / 3.0) + 0.1 * cy / h
    by = -0.2 * np.cos(cy / 2.0) + 0.2 * cx / w
    ry[20:32, 4:20] = -0.125
    by[20:32, 4:20] = 0.25
    return {
        "Y": OpenEXR.Channel(lum.astype(luminance_type), 1, 1, p_linear),
        "RY": OpenEXR.Channel(subsampled(ry.astype(np.float16), w, h), 2, 2, p_linear),
        "BY": OpenEXR.Channel(subsampled(by.astype(np.float16), w, h), 2, 2, p_linear),
    }


def write(path, compression, channels):
    header = {"compression": compression, "type": OpenEXR.scanlineimage}
    with OpenEXR.File(header, channels) as f:
        f.write(path)


def decoded(path):
    """The samples OpenEXR decodes from `path`, each with a channel that
    writes them again."""
    out = {}
    with OpenEXR.File(path) as f:
        h, w = f.channels()["Y"].pixels.shape
        for name, c in f.channels().items():
            pixels = c.pixels.copy()
            full = pixels if c.xSampling == 1 else subsampled(pixels, w, h)
            out[name] = (pixels, OpenEXR.Channel(full, c.xSampling, c.ySampling))
    return out


def main(out):
    # 40x70: three PIZ blocks of 32, 32 and 6 rows.
    for suffix, luminance_type in [("half", np.float16), ("float", np.float32)]:
        for name, compression in [
            ("piz", OpenEXR.PIZ_COMPRESSION),
            ("zip", OpenEXR.ZIP_COMPRESSION),
        ]:
            write(f"{out}/luma_chroma_{suffix}_{name}.exr", compression, image(40, 70, luminance_type))
    lossy = [
        ("pxr24", OpenEXR.PXR24_COMPRESSION, False),
        ("b44", OpenEXR.B44_COMPRESSION, False),
        ("b44a", OpenEXR.B44A_COMPRESSION, False),
        ("b44_plinear", OpenEXR.B44_COMPRESSION, True),
        ("dwaa", OpenEXR.DWAA_COMPRESSION, False),
        ("dwab", OpenEXR.DWAB_COMPRESSION, False),
    ]
    for suffix, luminance_type in [("half", np.float16), ("float", np.float32)]:
        for name, compression, p_linear in lossy:
            if p_linear and suffix == "float":
                continue
            path = f"{out}/luma_chroma_{suffix}_{name}.exr"
            write(path, compression, flat_image(42, 70, luminance_type, p_linear))
            samples = decoded(path)
            twin = f"{out}/luma_chroma_{suffix}_{name}_decoded_zip.exr"
            write(twin, OpenEXR.ZIP_COMPRESSION, {k: v[1] for k, v in samples.items()})
            # The twin holds exactly the samples decoded from the original.
            for k, (pixels, _) in decoded(twin).items():
                assert np.array_equal(
                    pixels.view(np.uint8), samples[k][0].view(np.uint8)
                ), (path, k)


if __name__ == "__main__":
    main(sys.argv[1])
