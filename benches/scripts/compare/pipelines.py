"""unsharp and harris: Halide's fused schedules of the pipelines of
benches/src/pipelines.rs.

- unsharp: 5x5 binomial Gaussian ([1 4 6 4 1]^2 / 256, clamp-to-edge), then
  in + 1.5 (in - blur).
- harris: Sobel x and y (clamp-to-edge), the products ix^2, iy^2, ix iy
  summed over a 5x5 binomial window (clamp-to-edge on the derivatives),
  response sxx syy - sxy^2 - 0.04 (sxx + syy)^2.

Schedules as PERF.md found best here: 32-row parallel strips of the output,
every stage vectorised 8 wide, producers computed per strip, point-wise
stages inlined, the Gaussian sums separable (as Halide users write them).
The clamp of an intermediate's coordinates is written with min/max (a
BoundaryConditions function on a per-strip Func makes the edge strips
compute the whole image).
"""

import numpy as np

from .filters import halide_target

BINOMIAL = [1.0, 4.0, 6.0, 4.0, 1.0]
AMOUNT = 1.5
HARRIS_K = 0.04
STRIP = 32


class _Halide:
    """A compiled pipeline realised into a preallocated output."""

    def run(self):
        self.func.realize(self.out)

    def output(self):
        return self.out_np


class HalideUnsharp(_Halide):
    def __init__(self, img):
        import halide as hl
        h, w = img.shape
        self.inp = hl.Buffer(np.ascontiguousarray(img))
        self.out_np = np.zeros((h, w), dtype=np.float32)
        self.out = hl.Buffer(self.out_np)
        x, y, yo, yi = hl.Var("x"), hl.Var("y"), hl.Var("yo"), hl.Var("yi")
        src = hl.BoundaryConditions.repeat_edge(self.inp)
        bx = hl.Func("bx")
        bx[x, y] = sum(hl.f32(BINOMIAL[i] / 16.0) * src[x + i - 2, y] for i in range(5))
        blur = hl.Func("blur")
        blur[x, y] = sum(hl.f32(BINOMIAL[j] / 16.0) * bx[x, y + j - 2] for j in range(5))
        out = hl.Func("unsharp")
        v = self.inp[x, y]
        out[x, y] = v + hl.f32(AMOUNT) * (v - blur[x, y])
        out.split(y, yo, yi, STRIP).parallel(yo).vectorize(x, 8)
        bx.compute_at(out, yo).vectorize(x, 8)
        blur.compute_at(out, yo).vectorize(x, 8)
        out.compile_jit(halide_target())
        self.func = out


class HalideHarris(_Halide):
    def __init__(self, img):
        import halide as hl
        h, w = img.shape
        self.inp = hl.Buffer(np.ascontiguousarray(img))
        self.out_np = np.zeros((h, w), dtype=np.float32)
        self.out = hl.Buffer(self.out_np)
        x, y, yo, yi = hl.Var("x"), hl.Var("y"), hl.Var("yo"), hl.Var("yi")
        s = hl.BoundaryConditions.repeat_edge(self.inp)
        ix, iy = hl.Func("ix"), hl.Func("iy")
        ix[x, y] = ((s[x + 1, y - 1] - s[x - 1, y - 1]) + hl.f32(2.0) * (s[x + 1, y] - s[x - 1, y])
                    + (s[x + 1, y + 1] - s[x - 1, y + 1]))
        iy[x, y] = ((s[x - 1, y + 1] - s[x - 1, y - 1]) + hl.f32(2.0) * (s[x, y + 1] - s[x, y - 1])
                    + (s[x + 1, y + 1] - s[x + 1, y - 1]))
        cx = hl.min(hl.max(x, 0), w - 1)
        cy = hl.min(hl.max(y, 0), h - 1)
        gx, gy = hl.Func("gx"), hl.Func("gy")
        gx[x, y] = ix[cx, cy]
        gy[x, y] = iy[cx, cy]
        prods = hl.Func("prods")
        prods[x, y] = (gx[x, y] * gx[x, y], gy[x, y] * gy[x, y], gx[x, y] * gy[x, y])
        hsum = hl.Func("hsum")
        hsum[x, y] = tuple(
            sum(hl.f32(BINOMIAL[i] / 16.0) * prods[x + i - 2, y][c] for i in range(5)) for c in range(3))
        vsum = hl.Func("vsum")
        vsum[x, y] = tuple(
            sum(hl.f32(BINOMIAL[j] / 16.0) * hsum[x, y + j - 2][c] for j in range(5)) for c in range(3))
        out = hl.Func("harris")
        sxx, syy, sxy = vsum[x, y][0], vsum[x, y][1], vsum[x, y][2]
        trace = sxx + syy
        out[x, y] = sxx * syy - sxy * sxy - hl.f32(HARRIS_K) * trace * trace
        out.split(y, yo, yi, STRIP).parallel(yo).vectorize(x, 8)
        for f in (ix, iy, hsum):
            f.compute_at(out, yo).vectorize(x, 8)
        out.compile_jit(halide_target())
        self.func = out


# (name, class) of each pipeline's peer; class(input) builds it.
PIPELINE_PEERS = {
    "unsharp": ("Halide 21 (fused per 32-row strip)", HalideUnsharp),
    "harris": ("Halide 21 (fused per 32-row strip)", HalideHarris),
}
