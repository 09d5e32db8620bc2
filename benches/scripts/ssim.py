#!/usr/bin/env python3
"""Mean SSIM of the luma of two images (Wang, Bovik, Sheikh, Simoncelli 2004).

    python3 ssim.py A.png B.png      prints the mean SSIM, e.g. 0.9712
    python3 ssim.py --self-test      checks the implementation, exits non-zero on failure

As the authors' reference implementation (ssim_index.m): an 11x11 Gaussian
window with sigma 1.5 (normalised to sum 1), K1 = 0.01, K2 = 0.03, L = 255,
filtering in 'valid' mode (no padding: the SSIM map is (H-10)x(W-10)), and the
mean of the SSIM map. It does not downsample large images first (the later
ssim.m does).

The images are compared on luma Y = 0.299 R + 0.587 G + 0.114 B of their 8-bit
samples, in floating point. A 16-bit image is first reduced to 8 bits
(round(v / 257)), as an 8-bit writer would store it; a grayscale image is its
own luma; alpha is ignored. Both images must have the same size.

Reading uses OpenCV (IMREAD_UNCHANGED keeps 16-bit PNGs 16-bit).
"""

import sys

import numpy as np

K1, K2, L = 0.01, 0.03, 255.0
WINDOW, SIGMA = 11, 1.5


def gaussian_1d(size=WINDOW, sigma=SIGMA):
    """The separable factor of the normalised 2-D Gaussian window."""
    x = np.arange(size, dtype=np.float64) - (size - 1) / 2.0
    g = np.exp(-(x * x) / (2.0 * sigma * sigma))
    return g / g.sum()


def filter_valid(img, g):
    """Correlates img with the outer product of g, 'valid' mode."""
    n = len(g)
    h, w = img.shape
    rows = sum(g[i] * img[i:h - n + 1 + i, :] for i in range(n))
    return sum(g[j] * rows[:, j:w - n + 1 + j] for j in range(n))


def ssim(y1, y2):
    """Mean SSIM of two luma arrays (float64, values 0..255)."""
    if y1.shape != y2.shape:
        raise ValueError(f"sizes differ: {y1.shape[1]}x{y1.shape[0]} and {y2.shape[1]}x{y2.shape[0]}")
    if min(y1.shape) < WINDOW:
        raise ValueError(f"images must be at least {WINDOW}x{WINDOW}")
    g = gaussian_1d()
    c1, c2 = (K1 * L) ** 2, (K2 * L) ** 2
    mu1, mu2 = filter_valid(y1, g), filter_valid(y2, g)
    mu1_sq, mu2_sq, mu12 = mu1 * mu1, mu2 * mu2, mu1 * mu2
    s1 = filter_valid(y1 * y1, g) - mu1_sq
    s2 = filter_valid(y2 * y2, g) - mu2_sq
    s12 = filter_valid(y1 * y2, g) - mu12
    smap = ((2 * mu12 + c1) * (2 * s12 + c2)) / ((mu1_sq + mu2_sq + c1) * (s1 + s2 + c2))
    return float(smap.mean())


def luma8(img):
    """Luma of an image array as OpenCV reads it (BGR order), from 8-bit samples."""
    if img.dtype == np.uint16:
        img = np.round(img.astype(np.float64) / 257.0)
    elif img.dtype != np.uint8:
        raise ValueError(f"expected 8- or 16-bit samples, got {img.dtype}")
    img = img.astype(np.float64)
    if img.ndim == 2:
        return img
    if img.shape[2] == 1:
        return img[:, :, 0]
    b, g, r = img[:, :, 0], img[:, :, 1], img[:, :, 2]
    return 0.299 * r + 0.587 * g + 0.114 * b


def read_luma(path):
    import cv2

    img = cv2.imread(path, cv2.IMREAD_UNCHANGED)
    if img is None:
        raise ValueError(f"{path}: cannot read the image")
    return luma8(img)


def self_test():
    rng = np.random.default_rng(1)
    yy, xx = np.mgrid[0:96, 0:128]
    base = 128 + 60 * np.sin(xx / 9.0) * np.cos(yy / 13.0) + rng.normal(0, 10, (96, 128))
    img = np.clip(np.round(base), 0, 255)
    checks = []
    same = ssim(img, img)
    checks.append(("identical images give 1", abs(same - 1.0) < 1e-12, same))
    noisy = np.clip(img + rng.normal(0, 20, img.shape), 0, 255)
    s_noisy = ssim(img, noisy)
    checks.append(("a noisy copy gives less than 1", s_noisy < 0.95, s_noisy))
    noisier = np.clip(img + rng.normal(0, 60, img.shape), 0, 255)
    s_noisier = ssim(img, noisier)
    checks.append(("more noise gives less", s_noisier < s_noisy, s_noisier))
    checks.append(("symmetric", abs(ssim(noisy, img) - s_noisy) < 1e-12, ssim(noisy, img)))
    # A constant shift of mean m: luminance term only, with zero-variance-free images
    # the map is (2 mu1 mu2 + C1) / (mu1^2 + mu2^2 + C1) where the windows are flat.
    flat1, flat2 = np.full((20, 20), 100.0), np.full((20, 20), 120.0)
    c1 = (K1 * L) ** 2
    want = (2 * 100 * 120 + c1) / (100**2 + 120**2 + c1)
    got = ssim(flat1, flat2)
    checks.append(("flat images follow the formula", abs(got - want) < 1e-12, got))
    g = gaussian_1d()
    checks.append(("window sums to 1", abs(np.outer(g, g).sum() - 1) < 1e-12, np.outer(g, g).sum()))
    # 16-bit samples reduce to 8 bits; BGR order; gray is its own luma.
    bgr16 = np.zeros((2, 2, 3), np.uint16)
    bgr16[..., 2] = 65535
    checks.append(("16-bit red is 0.299 * 255", np.allclose(luma8(bgr16), 0.299 * 255), luma8(bgr16)[0, 0]))
    failed = 0
    for name, ok, value in checks:
        print(f"{'ok  ' if ok else 'FAIL'} {name}: {value:.6f}")
        failed += not ok
    return 1 if failed else 0


def main(argv):
    if argv[1:] == ["--self-test"]:
        return self_test()
    if len(argv) != 3:
        print("usage: ssim.py A.png B.png | ssim.py --self-test", file=sys.stderr)
        return 2
    try:
        value = ssim(read_luma(argv[1]), read_luma(argv[2]))
    except ValueError as e:
        print(f"ssim.py: {e}", file=sys.stderr)
        return 1
    print(f"{value:.4f}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
