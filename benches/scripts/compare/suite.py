"""The peers of the suite of benches/src/suite.rs: Halide with the best
schedule found here for each workload, and OpenCV where it has the same
operation with the same border (BORDER_REPLICATE = hipacc's Clamp).

Halide schedules: 32-row parallel strips of the output, vectorised 8 wide;
separable windows (box sums, Gaussians, erosion/dilation) as a row pass
computed per strip and a column pass, as Halide users write them; the
corner detector fused per strip like the Harris pipeline of pipelines.py;
the two Horn-Schunck components as one tuple-valued Func. The histogram
has no Halide peer here (a parallel histogram needs rfactor and atomics;
NumPy's bincount and OpenCV's calcHist stand in).
"""

import numpy as np

from .filters import halide_target
from .pipelines import HalideUnsharp

STRIP = 32
BILATERAL_SIGMA_R = 0.1
BILATERAL_SIGMA_S = 2.0
HS_ALPHA2 = 0.25


def gaussian(r, sigma):
    """benches/src/suite.rs `gaussian`: normalised in f64, rounded to f32."""
    d = np.arange(-r, r + 1, dtype=np.float64)
    w = np.exp(-d * d / (2.0 * sigma * sigma))
    return (w / w.sum()).astype(np.float32)


class _Halide:
    """A compiled Halide pipeline realised into preallocated outputs."""

    def run(self):
        self.func.realize(self.outs if len(self.outs) > 1 else self.outs[0])

    def output(self):
        return self.out_np[0]


def _setup(obj, img, n_out=1):
    import halide as hl
    h, w = img.shape
    obj.inp = hl.Buffer(np.ascontiguousarray(img))
    obj.out_np = [np.zeros((h, w), dtype=np.float32) for _ in range(n_out)]
    obj.outs = [hl.Buffer(o) for o in obj.out_np]
    return hl, hl.BoundaryConditions.repeat_edge(obj.inp), h, w


def _strips(hl, out, *per_strip):
    x, y = out.args()[0], out.args()[1]
    yo, yi = hl.Var("yo"), hl.Var("yi")
    out.split(y, yo, yi, STRIP).parallel(yo).vectorize(x, 8)
    for f in per_strip:
        f.compute_at(out, yo).vectorize(f.args()[0], 8)
    out.compile_jit(halide_target())
    return out


class HalideSeparable(_Halide):
    """A separable window: `combine` over a row pass then a column pass."""

    def __init__(self, img, weights=None, radius=None, combine="sum", scale=1.0):
        hl, src, h, w = _setup(self, img)
        x, y = hl.Var("x"), hl.Var("y")
        r = radius if radius is not None else len(weights) // 2
        taps = range(-r, r + 1)

        def fold(values):
            values = list(values)
            if combine == "sum":
                return sum(values[1:], values[0])
            op = hl.min if combine == "min" else hl.max
            acc = values[0]
            for v in values[1:]:
                acc = op(acc, v)
            return acc

        wt = (lambda i: hl.f32(float(weights[i + r]))) if weights is not None else None
        row = hl.Func("row")
        row[x, y] = fold((wt(i) * src[x + i, y]) if wt else src[x + i, y] for i in taps)
        out = hl.Func("out")
        col = fold((wt(j) * row[x, y + j]) if wt else row[x, y + j] for j in taps)
        out[x, y] = col * hl.f32(scale) if scale != 1.0 else col
        self.func = _strips(hl, out, row)


class HalideStencil(_Halide):
    """A stencil written out: `body(hl, src, x, y)` gives the value."""

    def __init__(self, img, body):
        hl, src, h, w = _setup(self, img)
        x, y = hl.Var("x"), hl.Var("y")
        out = hl.Func("out")
        out[x, y] = body(hl, src, x, y)
        self.func = _strips(hl, out)


def sobel_body(hl, s, x, y):
    gx = ((s[x + 1, y - 1] - s[x - 1, y - 1]) + hl.f32(2.0) * (s[x + 1, y] - s[x - 1, y])
          + (s[x + 1, y + 1] - s[x - 1, y + 1]))
    gy = ((s[x - 1, y + 1] - s[x - 1, y - 1]) + hl.f32(2.0) * (s[x, y + 1] - s[x, y - 1])
          + (s[x + 1, y + 1] - s[x + 1, y - 1]))
    return hl.sqrt(gx * gx + gy * gy)


def laplace_body(hl, s, x, y):
    return s[x, y - 1] + s[x - 1, y] + hl.f32(-4.0) * s[x, y] + s[x + 1, y] + s[x, y + 1]


MEDIAN_PAIRS = [(1, 2), (4, 5), (7, 8), (0, 1), (3, 4), (6, 7), (1, 2), (4, 5), (7, 8), (0, 3),
                (5, 8), (4, 7), (3, 6), (1, 4), (2, 5), (4, 7), (4, 2), (6, 4), (4, 2)]


def median_body(hl, s, x, y):
    p = [s[x + dx, y + dy] for dy in (-1, 0, 1) for dx in (-1, 0, 1)]
    for a, b in MEDIAN_PAIRS:
        p[a], p[b] = hl.min(p[a], p[b]), hl.max(p[a], p[b])
    return p[4]


def bilateral_body(r):
    g = gaussian(r, r / 2.0)
    inv = 1.0 / (2.0 * BILATERAL_SIGMA_R * BILATERAL_SIGMA_R)

    def body(hl, s, x, y):
        c = s[x, y]
        num, den = hl.f32(0.0), hl.f32(0.0)
        for dy in range(-r, r + 1):
            for dx in range(-r, r + 1):
                v = s[x + dx, y + dy]
                d = v - c
                wgt = hl.f32(float(g[dy + r] * g[dx + r])) * hl.exp(-(d * d) * hl.f32(inv))
                num = num + wgt * v
                den = den + wgt
        return num / den
    return body


def bilateral_domain_body(r):
    """The examples' form (examples/src/filters.rs, sigma_s = 2):
    exp(-(dx² + dy²) s - d² r) over the domain."""
    spatial = 1.0 / (2.0 * BILATERAL_SIGMA_S * BILATERAL_SIGMA_S)
    inv = 1.0 / (2.0 * BILATERAL_SIGMA_R * BILATERAL_SIGMA_R)

    def body(hl, s, x, y):
        c = s[x, y]
        num, den = hl.f32(0.0), hl.f32(0.0)
        for dy in range(-r, r + 1):
            for dx in range(-r, r + 1):
                v = s[x + dx, y + dy]
                d = v - c
                term = hl.f32(-float(dx * dx + dy * dy) * spatial)
                wgt = hl.exp(term - d * d * hl.f32(inv))
                num = num + wgt * v
                den = den + wgt
        return num / den
    return body


class HalideShiTomasi(_Halide):
    def __init__(self, img):
        hl, s, h, w = _setup(self, img)
        x, y = hl.Var("x"), hl.Var("y")
        ix, iy = hl.Func("ix"), hl.Func("iy")
        ix[x, y] = ((s[x + 1, y - 1] - s[x - 1, y - 1]) + hl.f32(2.0) * (s[x + 1, y] - s[x - 1, y])
                    + (s[x + 1, y + 1] - s[x - 1, y + 1]))
        iy[x, y] = ((s[x - 1, y + 1] - s[x - 1, y - 1]) + hl.f32(2.0) * (s[x, y + 1] - s[x, y - 1])
                    + (s[x + 1, y + 1] - s[x + 1, y - 1]))
        cx = hl.min(hl.max(x, 0), w - 1)
        cy = hl.min(hl.max(y, 0), h - 1)
        prods = hl.Func("prods")
        gx, gy = ix[cx, cy], iy[cx, cy]
        prods[x, y] = (gx * gx, gy * gy, gx * gy)
        hsum = hl.Func("hsum")
        hsum[x, y] = tuple(prods[x - 1, y][c] + prods[x, y][c] + prods[x + 1, y][c] for c in range(3))
        out = hl.Func("out")
        v = [hsum[x, y - 1][c] + hsum[x, y][c] + hsum[x, y + 1][c] for c in range(3)]
        half_trace = (v[0] + v[1]) * hl.f32(0.5)
        half_diff = (v[0] - v[1]) * hl.f32(0.5)
        out[x, y] = half_trace - hl.sqrt(half_diff * half_diff + v[2] * v[2])
        self.func = _strips(hl, out, ix, iy, hsum)


class HalideHornSchunck(_Halide):
    def __init__(self, img, flow):
        import halide as hl
        h, w = img.shape
        self.bufs = {k: hl.Buffer(np.ascontiguousarray(v)) for k, v in flow.items()}
        self.out_np = [np.zeros((h, w), dtype=np.float32) for _ in range(2)]
        self.outs = [hl.Buffer(o) for o in self.out_np]
        x, y = hl.Var("x"), hl.Var("y")
        u = hl.BoundaryConditions.repeat_edge(self.bufs["u"])
        v = hl.BoundaryConditions.repeat_edge(self.bufs["v"])
        ix, iy, it = self.bufs["ix"], self.bufs["iy"], self.bufs["it"]
        ubar = (u[x - 1, y] + u[x + 1, y] + u[x, y - 1] + u[x, y + 1]) * hl.f32(0.25)
        vbar = (v[x - 1, y] + v[x + 1, y] + v[x, y - 1] + v[x, y + 1]) * hl.f32(0.25)
        a, b = ix[x, y], iy[x, y]
        den = hl.f32(HS_ALPHA2) + a * a + b * b
        tu = (a * ubar + b * vbar + it[x, y]) / den
        tv = (b * vbar + a * ubar + it[x, y]) / (hl.f32(HS_ALPHA2) + b * b + a * a)
        out = hl.Func("out")
        out[x, y] = (ubar - a * tu, vbar - b * tv)
        self.func = _strips(hl, out)

    def outputs(self):
        return self.out_np


class OpenCv:
    """An OpenCV call on the input (2 threads)."""

    def __init__(self, img, call):
        import cv2
        cv2.setNumThreads(2)
        self.img = np.ascontiguousarray(img)
        self.call = call
        self.out = None

    def run(self):
        self.out = self.call(self.img)

    def output(self):
        return self.out


def _cv():
    import cv2
    return cv2


def cv_sobel(img):
    cv2 = _cv()
    gx = cv2.Sobel(img, cv2.CV_32F, 1, 0, ksize=3, borderType=cv2.BORDER_REPLICATE)
    gy = cv2.Sobel(img, cv2.CV_32F, 0, 1, ksize=3, borderType=cv2.BORDER_REPLICATE)
    return cv2.magnitude(gx, gy)


def cv_separable(weights):
    return lambda img: _cv().sepFilter2D(img, -1, weights, weights,
                                         borderType=_cv().BORDER_REPLICATE)


def cv_morph(op, n):
    def call(img):
        cv2 = _cv()
        k = np.ones((n, n), np.uint8)
        f = cv2.erode if op == "min" else cv2.dilate
        return f(img, k, borderType=cv2.BORDER_REPLICATE)
    return call


LAPLACE = np.array([[0, 1, 0], [1, -4, 1], [0, 1, 0]], np.float32)

# name -> list of (peer label, factory(input, flow)), the first one Halide.
SUITE_PEERS = {
    "box3": [("Halide", lambda i, f: HalideSeparable(i, radius=1, scale=1 / 9)),
             ("OpenCV", lambda i, f: OpenCv(i, lambda m: _cv().blur(m, (3, 3), borderType=_cv().BORDER_REPLICATE)))],
    "box7": [("Halide", lambda i, f: HalideSeparable(i, radius=3, scale=1 / 49)),
             ("OpenCV", lambda i, f: OpenCv(i, lambda m: _cv().blur(m, (7, 7), borderType=_cv().BORDER_REPLICATE)))],
    "box13": [("Halide", lambda i, f: HalideSeparable(i, radius=6, scale=1 / 169)),
              ("OpenCV", lambda i, f: OpenCv(i, lambda m: _cv().blur(m, (13, 13), borderType=_cv().BORDER_REPLICATE)))],
    "gauss3": [("Halide", lambda i, f: HalideSeparable(i, weights=[0.25, 0.5, 0.25])),
               ("OpenCV", lambda i, f: OpenCv(i, cv_separable(np.array([0.25, 0.5, 0.25], np.float32))))],
    "gauss13": [("Halide", lambda i, f: HalideSeparable(i, weights=gaussian(6, 2.0))),
                ("OpenCV", lambda i, f: OpenCv(i, cv_separable(gaussian(6, 2.0))))],
    "bilateral5": [("Halide", lambda i, f: HalideStencil(i, bilateral_body(2)))],
    "bilateral13": [("Halide", lambda i, f: HalideStencil(i, bilateral_body(6)))],
    "bilateral5d": [("Halide", lambda i, f: HalideStencil(i, bilateral_domain_body(2)))],
    # Halide's fused schedule of the two-kernel pipeline computes the same.
    "unsharp1": [("Halide", lambda i, f: HalideUnsharp(i))],
    "sobel": [("Halide", lambda i, f: HalideStencil(i, sobel_body)),
              ("OpenCV", lambda i, f: OpenCv(i, cv_sobel))],
    "laplace": [("Halide", lambda i, f: HalideStencil(i, laplace_body)),
                ("OpenCV", lambda i, f: OpenCv(i, lambda m: _cv().filter2D(m, -1, LAPLACE, borderType=_cv().BORDER_REPLICATE)))],
    "erode3": [("Halide", lambda i, f: HalideSeparable(i, radius=1, combine="min")),
               ("OpenCV", lambda i, f: OpenCv(i, cv_morph("min", 3)))],
    "dilate5": [("Halide", lambda i, f: HalideSeparable(i, radius=2, combine="max")),
                ("OpenCV", lambda i, f: OpenCv(i, cv_morph("max", 5)))],
    "median3": [("Halide", lambda i, f: HalideStencil(i, median_body)),
                ("OpenCV", lambda i, f: OpenCv(i, lambda m: _cv().medianBlur(m, 3)))],
    "shitomasi": [("Halide", lambda i, f: HalideShiTomasi(i))],
    "hornschunck": [("Halide", lambda i, f: HalideHornSchunck(i, f))],
}
