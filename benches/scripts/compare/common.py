"""Shared pieces of the comparison runner: timing, statistics, hipacc-bench.

Every implementation is timed in a block of its own: warm-up calls for at
least 0.1 s, then `runs` timed calls. The runner alternates the blocks of all implementations
of a workload round after round, and pools each implementation's samples.
"""

import json
import os
import statistics
import subprocess
import time

# Halide's default JIT target claims AVX-512 on machines that lack it and
# dies with SIGILL: always name the target explicitly.
HALIDE_TARGET = "x86-64-linux-avx-avx2-f16c-fma-sse41"
os.environ.setdefault("HL_JIT_TARGET", HALIDE_TARGET)

SIZE = 2048
OMEGA = 0.8


# Untimed calls before a block's timed ones last at least this long (as in
# hipacc-bench): idle cores come back to speed and thread pools wake.
WARM_UP_S = 0.1


def time_block(fn, runs):
    """Calls fn to warm up (at least once and for WARM_UP_S), then runs
    times; the samples in ms."""
    start = time.perf_counter()
    fn()
    while time.perf_counter() - start < WARM_UP_S:
        fn()
    out = []
    for _ in range(runs):
        t0 = time.perf_counter()
        fn()
        out.append((time.perf_counter() - t0) * 1e3)
    return out


def summary(samples):
    """(median, min, max) of a list of ms."""
    return statistics.median(samples), min(samples), max(samples)


def max_diff(a, b):
    """max |a - b| as a float (arrays of the same shape)."""
    if a.shape != b.shape:
        raise ValueError(f"shapes differ: {a.shape} vs {b.shape}")
    import numpy as np

    return float(np.max(np.abs(a.astype(np.float64) - b.astype(np.float64))))


class HipaccBench:
    """Runs the hipacc-bench binary and parses its JSON lines."""

    def __init__(self, binary, backend="cpu"):
        self.binary = binary
        self.backend = backend

    def run(self, workload, runs, extra_args=()):
        """The JSON objects hipacc-bench prints for one workload."""
        cmd = [self.binary, "--workload", workload, "--backend", self.backend,
               "--runs", str(runs), *extra_args]
        proc = subprocess.run(cmd, capture_output=True, text=True)
        if proc.returncode != 0:
            raise RuntimeError(f"{' '.join(cmd)} failed:\n{proc.stderr}")
        lines = [json.loads(l) for l in proc.stdout.splitlines() if l.startswith("{")]
        if not lines:
            raise RuntimeError(f"{' '.join(cmd)} printed no JSON")
        return lines

    def dump(self, directory, size):
        """Writes the small-size verification data (see hipacc-bench --dump)."""
        cmd = [self.binary, "--backend", self.backend, "--dump", str(directory),
               "--size", str(size)]
        proc = subprocess.run(cmd, capture_output=True, text=True)
        if proc.returncode != 0:
            raise RuntimeError(f"{' '.join(cmd)} failed:\n{proc.stderr}")
        with open(os.path.join(directory, "dump.json")) as f:
            return json.load(f)


def load_f32(directory, name, shape):
    """A raw little-endian f32 file of hipacc-bench --dump as an array."""
    import numpy as np

    return np.fromfile(os.path.join(directory, name), dtype="<f4").reshape(shape)
