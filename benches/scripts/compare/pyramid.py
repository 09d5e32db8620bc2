"""pyramid: Burt-Adelson decomposition and reconstruction with OpenCV.

G_{k+1} = pyrDown(G_k) (5x5 binomial blur, even rows and columns kept),
L_k = G_k - pyrUp(G_{k+1}), L_bottom = G_bottom; R_bottom = L_bottom,
R_k = L_k + pyrUp(R_{k+1}). OpenCV reflects without repeating the edge
pixel (BORDER_REFLECT_101), as the project's pyramid does.
"""

import time

import numpy as np


class OpenCvPyramid:
    """All L_k stored; decomposition and reconstruction timed together."""

    def __init__(self, img, levels):
        import cv2

        self.cv2 = cv2
        self.img = np.ascontiguousarray(img, dtype=np.float32)
        self.levels = levels
        self.g = self.l = self.r = None
        self.split_ms = (0.0, 0.0)

    def decompose(self):
        cv2 = self.cv2
        g = [self.img]
        for _ in range(self.levels - 1):
            g.append(cv2.pyrDown(g[-1]))
        lap = []
        for k in range(self.levels - 1):
            h, w = g[k].shape
            lap.append(g[k] - cv2.pyrUp(g[k + 1], dstsize=(w, h)))
        lap.append(g[-1].copy())
        self.g, self.l = g, lap

    def reconstruct(self):
        cv2 = self.cv2
        r = self.l[-1]
        for k in range(self.levels - 2, -1, -1):
            h, w = self.l[k].shape
            r = self.l[k] + cv2.pyrUp(r, dstsize=(w, h))
        self.r = r

    def run(self):
        t0 = time.perf_counter()
        self.decompose()
        t1 = time.perf_counter()
        self.reconstruct()
        self.split_ms = ((t1 - t0) * 1e3, (time.perf_counter() - t1) * 1e3)

    def max_error(self):
        """max |R_0 - G_0|."""
        return float(np.max(np.abs(self.r - self.img)))
