"""gauss5 and jacobi: Halide (scheduled), OpenCV and NumPy peers.

- gauss5: 5x5 binomial Gaussian, separable [1 4 6 4 1]/16 twice,
  clamp-to-edge borders.
- jacobi: one weighted-Jacobi sweep of the 5-point Poisson operator, h^2 = 1,
  omega 0.8, neighbours outside the image read as 0:
  u' = (1-w) u + w/4 (f + u[x-1] + u[x+1] + u[y-1] + u[y+1]).

Each peer is a class with run() (one timed call on preallocated buffers) and
output(), built on given input arrays.
"""

import numpy as np

from .common import HALIDE_TARGET, OMEGA

TAPS = np.array([1, 4, 6, 4, 1], dtype=np.float32) / 16.0


def halide_target():
    import halide as hl

    return hl.Target(HALIDE_TARGET)


class HalideGauss5:
    """Separable, 64-row parallel strips, the horizontal pass computed per
    strip into stack storage, both vectorised 8 wide.

    Without store_in(Stack), Halide mallocs the strip's 0.5 MiB of
    horizontal sums inside the parallel loop, and its time then depends on
    how glibc serves that block: from fresh mmap'd pages on every call
    (forced with MALLOC_MMAP_THRESHOLD_=131072) it measured 6.7 ms instead
    of 1.4 ms. On the stack it does not depend on the allocator.
    """

    def __init__(self, img):
        import halide as hl

        h, w = img.shape
        self.inp = hl.Buffer(np.ascontiguousarray(img))
        self.out_np = np.zeros((h, w), dtype=np.float32)
        self.out = hl.Buffer(self.out_np)
        x, y, yo, yi = hl.Var("x"), hl.Var("y"), hl.Var("yo"), hl.Var("yi")
        src = hl.BoundaryConditions.repeat_edge(self.inp)
        bx = hl.Func("bx")
        bx[x, y] = sum(hl.f32(float(TAPS[i])) * src[x + i - 2, y] for i in range(5))
        by = hl.Func("by")
        by[x, y] = sum(hl.f32(float(TAPS[j])) * bx[x, y + j - 2] for j in range(5))
        by.split(y, yo, yi, 64).parallel(yo).vectorize(x, 8)
        bx.compute_at(by, yo).vectorize(x, 8).store_in(hl.MemoryType.Stack)
        by.compile_jit(halide_target())
        self.func = by

    def run(self):
        self.func.realize(self.out)

    def output(self):
        return self.out_np


class HalideJacobi:
    """constant_exterior(0), 32-row parallel strips, vectorised 8 wide."""

    def __init__(self, u, f):
        import halide as hl

        h, w = u.shape
        self.u = hl.Buffer(np.ascontiguousarray(u))
        self.f = hl.Buffer(np.ascontiguousarray(f))
        self.out_np = np.zeros((h, w), dtype=np.float32)
        self.out = hl.Buffer(self.out_np)
        x, y, yo, yi = hl.Var("x"), hl.Var("y"), hl.Var("yo"), hl.Var("yi")
        uu = hl.BoundaryConditions.constant_exterior(self.u, hl.f32(0.0))
        keep, step = hl.f32(1.0 - OMEGA), hl.f32(OMEGA * 0.25)
        out = hl.Func("jacobi")
        nb = uu[x - 1, y] + uu[x + 1, y] + uu[x, y - 1] + uu[x, y + 1]
        out[x, y] = keep * uu[x, y] + step * (self.f[x, y] + nb)
        out.split(y, yo, yi, 32).parallel(yo).vectorize(x, 8)
        out.compile_jit(halide_target())
        self.func = out

    def run(self):
        self.func.realize(self.out)

    def output(self):
        return self.out_np


class OpenCvGauss5:
    """cv2.sepFilter2D with BORDER_REPLICATE into a preallocated output."""

    def __init__(self, img):
        import cv2

        self.cv2 = cv2
        self.img = np.ascontiguousarray(img)
        self.out = np.zeros_like(self.img)
        self.k = TAPS.reshape(5, 1)

    def run(self):
        cv2 = self.cv2
        cv2.sepFilter2D(self.img, cv2.CV_32F, self.k, self.k, dst=self.out,
                        borderType=cv2.BORDER_REPLICATE)

    def output(self):
        return self.out


class NumpyGauss5:
    """Edge padding, then two passes of five shifted slices."""

    def __init__(self, img):
        self.img = img
        self.out = None

    def run(self):
        p = np.pad(self.img, 2, mode="edge")
        h, w = self.img.shape
        rows = sum(TAPS[i] * p[:, i:i + w] for i in range(5))
        self.out = sum(TAPS[j] * rows[j:j + h, :] for j in range(5))

    def output(self):
        return self.out


class NumpyJacobi:
    """Zero padding, then shifted slices."""

    def __init__(self, u, f):
        self.u, self.f = u, f
        self.out = None

    def run(self):
        p = np.pad(self.u, 1)
        nb = p[1:-1, :-2] + p[1:-1, 2:] + p[:-2, 1:-1] + p[2:, 1:-1]
        self.out = np.float32(1.0 - OMEGA) * self.u + np.float32(OMEGA * 0.25) * (self.f + nb)

    def output(self):
        return self.out


# (name, class) of each peer; class(inputs...) builds it.
GAUSS5_PEERS = [
    ("Halide 21 (scheduled)", HalideGauss5),
    ("OpenCV sepFilter2D", OpenCvGauss5),
    ("NumPy", NumpyGauss5),
]
JACOBI_PEERS = [
    ("Halide 21 (scheduled)", HalideJacobi),
    ("NumPy", NumpyJacobi),
]
