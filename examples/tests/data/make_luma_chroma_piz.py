"""Writes the luminance/chroma OpenEXR fixtures of hdr_exr_inputs.rs.

Each image is written twice by the OpenEXR library itself, once PIZ- and
once ZIP-compressed, so a test can require that both decode to the same
pixels (both compressions are lossless). Y is full resolution, RY and BY are
sampled every second column and row, as OpenEXR's RGBA interface writes
them. Run with the `OpenEXR` (3.x) and `numpy` Python packages:

    python3 make_luma_chroma_piz.py OUTPUT_DIR
"""

import sys

import numpy as np
import OpenEXR


def image(w, h, luminance_type):
    y, x = np.mgrid[0:h, 0:w].astype(np.float64)
    lum = np.exp(0.08 * x - 0.03 * y) * (1.2 + np.sin(x / 5.0) * np.cos(y / 7.0))
    ry = 0.3 * np.sin(x / 6.0) + 0.05 * y / h
    by = -0.2 * np.cos(y / 4.0) + 0.1 * x / w
    return {
        "Y": OpenEXR.Channel(lum.astype(luminance_type)),
        "RY": OpenEXR.Channel(ry.astype(np.float16), 2, 2),
        "BY": OpenEXR.Channel(by.astype(np.float16), 2, 2),
    }


def main(out):
    # 40x70: three PIZ blocks of 32, 32 and 6 rows.
    for suffix, luminance_type in [("half", np.float16), ("float", np.float32)]:
        for name, compression in [
            ("piz", OpenEXR.PIZ_COMPRESSION),
            ("zip", OpenEXR.ZIP_COMPRESSION),
        ]:
            header = {"compression": compression, "type": OpenEXR.scanlineimage}
            path = f"{out}/luma_chroma_{suffix}_{name}.exr"
            with OpenEXR.File(header, image(40, 70, luminance_type)) as f:
                f.write(path)


if __name__ == "__main__":
    main(sys.argv[1])
