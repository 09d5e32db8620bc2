#!/usr/bin/env python3
"""Times the sample suite (benches/src/suite.rs) against Halide and OpenCV,
in one run.

    target/compare-venv/bin/python benches/scripts/suite_compare.py [--rounds R] [--runs N]

The venv is the one benches/scripts/compare.sh sets up (halide==21.0.0,
opencv-python-headless, numpy); the binary is target/release/suite-ratios
(`cargo build --release -p hipacc-benches --bin suite-ratios`; `--bin`
names another). Both sides are timed alike: each round runs `suite-ratios
--json --rounds 1 --runs N` (hipacc-rs on the native CPU: per workload one
untimed call, then N timed calls into output images allocated once) and
then each peer of each workload, warmed up and timed for N calls into
preallocated outputs, in a process of its own (HL_JIT_TARGET named
explicitly, glibc's mmap threshold raised as for the pipelines: PERF.md).
Samples are pooled over rounds on both sides; the table gives medians,
the ratio hipacc-rs / Halide and the geometric mean of those ratios.

Before timing, every peer's output is compared with hipacc-rs's on the
same 2048x2048 inputs (`suite-ratios --dump`): the largest difference
relative to the largest magnitude of the output must stay below 1e-5
(different summation orders, fused multiply-adds and exp implementations:
a few ulp of the larger terms); the histograms must be equal.
"""

import argparse
import json
import math
import os
import statistics
import subprocess
import sys
import tempfile

sys.dont_write_bytecode = True
os.environ["PYTHONDONTWRITEBYTECODE"] = "1"
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

ROOT = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
TOLERANCE = 1e-5
WORKLOADS = ["box3", "box7", "box13", "gauss3", "gauss13", "bilateral5", "bilateral13", "bilateral5d",
             "unsharp1", "sobel", "laplace", "erode3", "dilate5", "median3", "shitomasi", "hornschunck"]
HISTOGRAM_PEERS = ["NumPy", "OpenCV"]


def peer_main(name, index, dump, runs):
    """In the peer's process: check the output, then print the samples."""
    import numpy as np

    from compare.common import SIZE, time_block

    load = lambda f, t="<f4": np.fromfile(os.path.join(dump, f), dtype=t).reshape(SIZE, SIZE)
    if name == "histogram":
        img = load("input.u8", np.uint8)
        if HISTOGRAM_PEERS[index] == "NumPy":
            run = lambda: np.bincount(img.ravel(), minlength=256)
        else:
            import cv2
            cv2.setNumThreads(2)
            run = lambda: cv2.calcHist([img], [0], None, [256], [0, 256]).ravel()
        want = np.fromfile(os.path.join(dump, "histogram.u64"), dtype="<u8")
        got = run().astype(np.uint64)
        rel = 0.0 if np.array_equal(got, want) else 1.0
        samples = time_block(run, runs)
        print(json.dumps({"rel_diff": rel, "samples_ms": samples}))
        return
    from compare.suite import SUITE_PEERS
    flow = {k: load(f"{k}.f32") for k in ("ix", "iy", "it", "u", "v")}
    _, factory = SUITE_PEERS[name][index]
    peer = factory(load("input.f32"), flow)
    peer.run()
    outs = peer.outputs() if hasattr(peer, "outputs") else [peer.output()]
    wants = [load(f"{name}.f32")] + ([load("hornschunck_v.f32")] if name == "hornschunck" else [])
    rel = 0.0
    for got, want in zip(outs, wants):
        scale = max(float(np.max(np.abs(want))), 1e-30)
        rel = max(rel, float(np.max(np.abs(got.astype(np.float64) - want))) / scale)
    samples = time_block(peer.run, runs)
    print(json.dumps({"rel_diff": rel, "samples_ms": samples}))


def run_peer(name, index, dump, runs):
    env = dict(os.environ, MALLOC_MMAP_THRESHOLD_=str(1 << 30), MALLOC_TRIM_THRESHOLD_=str(1 << 30),
               HL_JIT_TARGET="x86-64-linux-avx-avx2-f16c-fma-sse41", HL_NUM_THREADS="2")
    out = subprocess.run([sys.executable, os.path.abspath(__file__), "--peer", name, "--index",
                          str(index), "--dump", dump, "--runs", str(runs)],
                         env=env, check=True, capture_output=True, text=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def peers_of(name):
    if name == "histogram":
        return HISTOGRAM_PEERS
    from compare.suite import SUITE_PEERS
    return [label for label, _ in SUITE_PEERS[name]]


def measure(binary, rounds, runs):
    """Times hipacc-rs (suite-ratios) and every peer, round-robin; returns
    the pooled samples {(workload, implementation): [ms]} and the largest
    difference of each peer's output {(workload, implementation): rel}."""
    env = dict(os.environ, RAYON_NUM_THREADS=os.environ.get("RAYON_NUM_THREADS", "2"))
    samples, diffs = {}, {}
    with tempfile.TemporaryDirectory() as dump:
        for rnd in range(rounds):
            args = [binary, "--json", "--rounds", "1", "--runs", str(runs)]
            args += ["--dump", dump] if rnd == 0 else []
            lines = subprocess.run(args, env=env, check=True, capture_output=True, text=True).stdout
            for line in lines.splitlines():
                j = json.loads(line)
                samples.setdefault((j["workload"], "hipacc-rs"), []).extend(j["samples_ms"])
            for name in WORKLOADS + ["histogram"]:
                for index, label in enumerate(peers_of(name)):
                    r = run_peer(name, index, dump, runs)
                    diffs[(name, label)] = max(diffs.get((name, label), 0.0), r["rel_diff"])
                    samples.setdefault((name, label), []).extend(r["samples_ms"])
    return samples, diffs


def ratios(samples):
    """{workload: hipacc-rs median / Halide median} and their geometric mean."""
    med = lambda k: statistics.median(samples[k])
    r = {n: med((n, "hipacc-rs")) / med((n, "Halide")) for n in WORKLOADS
         if (n, "hipacc-rs") in samples and (n, "Halide") in samples}
    return r, math.exp(sum(math.log(v) for v in r.values()) / len(r))


def table(samples, diffs, rounds, runs):
    """The markdown table, the geometric mean and how it was measured; and
    the workloads whose outputs differ beyond the tolerance."""
    lines = ["| workload | hipacc-rs ms | Halide ms | OpenCV ms | NumPy ms | hipacc-rs / Halide "
             "| max rel diff |", "|---|---:|---:|---:|---:|---:|---:|"]
    bad = []
    per, geo = ratios(samples)
    for name in WORKLOADS + ["histogram"]:
        med = {k: statistics.median(v) for (n, k), v in samples.items() if n == name}
        cell = lambda k: f"{med[k]:.2f}" if k in med else "—"
        ratio = per.get(name)
        diff = max(d for (n, _), d in diffs.items() if n == name)
        lines.append(f"| {name} | {cell('hipacc-rs')} | {cell('Halide')} | {cell('OpenCV')} "
                     f"| {cell('NumPy')} | {f'{ratio:.2f}' if ratio else '—'} | {diff:.1e} |")
        if diff > TOLERANCE:
            bad.append(name)
    lines += ["", f"Geometric mean of hipacc-rs / Halide over {len(per)} workloads: {geo:.2f}.",
              "", f"2048x2048 inputs, 2 threads everywhere. Rounds: {rounds}; timed runs per "
              f"block: {runs}, after a warm-up, on every side; the median of all "
              "timed runs. Max rel diff: the largest |peer - hipacc-rs| "
              f"over the largest |hipacc-rs| (tolerance {TOLERANCE}; histograms: 0 = equal)."]
    return "\n".join(lines) + "\n", bad


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--runs", type=int, default=9)
    p.add_argument("--bin", default=os.path.join(ROOT, "target", "release", "suite-ratios"))
    p.add_argument("--report", default=os.path.join(ROOT, "target", "perf-report", "suite.md"),
                   help="where the table is written")
    p.add_argument("--peer")
    p.add_argument("--index", type=int, default=0)
    p.add_argument("--dump")
    a = p.parse_args()
    if a.peer:
        return peer_main(a.peer, a.index, a.dump, a.runs)
    if a.rounds < 1 or a.runs < 5:
        p.error("need --rounds >= 1 and --runs >= 5")
    samples, diffs = measure(a.bin, a.rounds, a.runs)
    text, bad = table(samples, diffs, a.rounds, a.runs)
    print(text, end="")
    os.makedirs(os.path.dirname(a.report), exist_ok=True)
    with open(a.report, "w") as f:
        f.write(text)
    if bad:
        sys.exit(f"suite_compare.py: outputs differ beyond {TOLERANCE}: {bad}")


if __name__ == "__main__":
    main()
