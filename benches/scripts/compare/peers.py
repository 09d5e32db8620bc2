"""The peers timed beside hipacc at full size, each built and run in a
process of its own.

Peers share nothing with each other there: a library's thread pool,
allocator state or BLAS threads left behind by one peer cannot slow the
next. That mattered: in one shared process, Halide's gauss5 measured
1.3 ms fresh and 2.5 ms right after the NumPy multigrid peer had run,
with nothing else changed. hipacc-bench runs as a process of its own too.
"""

import multiprocessing

import numpy as np

from . import filters, pyramid, vcycle
from .common import SIZE, time_block

PYRAMID_SIZE, PYRAMID_LEVELS = 4096, 11
VCYCLE_LEVELS = 6


def test_image(n):
    """The project's pyramid test image (smooth waves plus hashed noise)."""
    x = np.arange(n, dtype=np.uint32)[None, :]
    y = np.arange(n, dtype=np.uint32)[:, None]
    h = (x * np.uint32(0x9E3779B9)) ^ (y * np.uint32(0x85EBCA6B))
    h = h ^ (h >> np.uint32(15))
    noise = ((h * np.uint32(0x2C1B3C6D)) >> np.uint32(8)).astype(np.float32) / np.float32(2**24)
    fx, fy = x.astype(np.float32), y.astype(np.float32)
    return (0.5 + 0.2 * np.sin(fx * 0.031) * np.cos(fy * 0.017) + 0.1 * (noise - 0.5)).astype(np.float32)


def _specs(workload, use_pyamg):
    """(name, build) pairs; build() makes the peer on full-size inputs."""
    def inputs(n):
        rng = np.random.default_rng(1)
        return [rng.random((SIZE, SIZE), dtype=np.float32) for _ in range(n)]

    if workload == "gauss5":
        return [(name, lambda cls=cls: cls(*inputs(1))) for name, cls in filters.GAUSS5_PEERS]
    if workload == "jacobi":
        return [(name, lambda cls=cls: cls(*inputs(2))) for name, cls in filters.JACOBI_PEERS]
    if workload == "pyramid":
        return [("OpenCV pyrDown/pyrUp",
                 lambda: pyramid.OpenCvPyramid(test_image(PYRAMID_SIZE), PYRAMID_LEVELS))]
    if workload == "vcycle":
        out = [("NumPy multigrid",
                lambda: vcycle.NumpyMultigrid(inputs(1)[0], VCYCLE_LEVELS, 1.0 / SIZE))]
        if use_pyamg:
            out.append(("pyamg SA V-cycle",
                        lambda: vcycle.PyamgVcycle(inputs(1)[0], VCYCLE_LEVELS, 1.0 / SIZE)))
        return out
    raise ValueError(workload)


def names(workload, use_pyamg):
    """The peers' names for a workload, in timing order."""
    return [name for name, _ in _specs(workload, use_pyamg)]


class Isolated:
    """One peer in a freshly started interpreter (spawned, not forked: the
    parent has live thread pools), answering timing requests over a pipe."""

    def __init__(self, workload, index, use_pyamg):
        ctx = multiprocessing.get_context("spawn")
        self.conn, child = ctx.Pipe()
        self.proc = ctx.Process(target=_serve, args=(child, workload, index, use_pyamg), daemon=True)
        self.proc.start()
        child.close()
        self._reply()  # built

    def _reply(self):
        try:
            kind, value = self.conn.recv()
        except EOFError:
            raise RuntimeError(f"peer process exited with status {self.proc.exitcode}") from None
        if kind == "error":
            raise RuntimeError(f"peer failed:\n{value}")
        return value

    def time_block(self, runs):
        """One block (common.time_block); the timed calls' ms."""
        self.conn.send(runs)
        return self._reply()

    def close(self):
        self.conn.send(None)
        self.proc.join(timeout=10)


def _serve(conn, workload, index, use_pyamg):
    import traceback

    try:
        peer = _specs(workload, use_pyamg)[index][1]()
        conn.send(("ok", None))
        while (runs := conn.recv()) is not None:
            conn.send(("ok", time_block(peer.run, runs)))
    except Exception:  # reported to the parent, which stops the run
        conn.send(("error", traceback.format_exc()))
