#!/usr/bin/env python3
"""Times hipacc-rs pipelines against Halide's fused schedules, in one run.

    target/compare-venv/bin/python benches/scripts/pipeline_compare.py [--rounds R] [--runs N]

The venv is the one benches/scripts/compare.sh sets up (halide==21.0.0,
numpy); HL_JIT_TARGET is set here (PERF.md: Halide's default JIT target
claims AVX-512 on these machines). Each round runs
`pipeline-ratios --json --rounds N` (hipacc-rs, fused and kernel by kernel)
and then each Halide peer for N timed calls, each peer in a process of its
own started with glibc's mmap threshold raised, so that the per-strip
buffers of Halide are not fresh pages on every call (PERF.md). Samples are
pooled over rounds.

Before timing, every peer's output is compared with hipacc-rs's on the
same 2048x2048 input (`pipeline-ratios --dump`): the largest difference
relative to the largest magnitude of the output must stay below 1e-5
(both sum the same f32 terms, in other orders and with or without fused
multiply-adds: a few ulp of the larger terms).
"""

import argparse
import json
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
PIPELINES = ["unsharp", "harris"]


def peer_main(name, dump, runs):
    """In the peer's process: check the output, then print the samples."""
    import numpy as np

    from compare.common import SIZE, time_block
    from compare.pipelines import PIPELINE_PEERS

    load = lambda f: np.fromfile(os.path.join(dump, f), dtype="<f4").reshape(SIZE, SIZE)
    _, cls = PIPELINE_PEERS[name]
    peer = cls(load("input.f32"))
    peer.run()
    want = load(f"{name}.f32")
    rel = float(np.max(np.abs(peer.output() - want)) / max(float(np.max(np.abs(want))), 1e-30))
    samples = time_block(peer.run, runs)
    print(json.dumps({"rel_diff": rel, "samples_ms": samples}))


def run_peer(name, dump, runs):
    env = dict(os.environ, MALLOC_MMAP_THRESHOLD_=str(1 << 30), MALLOC_TRIM_THRESHOLD_=str(1 << 30),
               HL_JIT_TARGET="x86-64-linux-avx-avx2-f16c-fma-sse41")
    out = subprocess.run([sys.executable, os.path.abspath(__file__), "--peer", name, "--dump", dump,
                          "--runs", str(runs)], env=env, check=True, capture_output=True, text=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--runs", type=int, default=15)
    p.add_argument("--bin", default=os.path.join(ROOT, "target", "release", "pipeline-ratios"))
    p.add_argument("--report", default=os.path.join(ROOT, "target", "perf-report", "pipelines.md"),
                   help="where the table is written; compare.py adds it to PERFORMANCE.md")
    p.add_argument("--peer")
    p.add_argument("--dump")
    a = p.parse_args()
    if a.peer:
        return peer_main(a.peer, a.dump, a.runs)
    if a.rounds < 1 or a.runs < 7:
        p.error("need --rounds >= 1 and --runs >= 7")
    env = dict(os.environ, RAYON_NUM_THREADS=os.environ.get("RAYON_NUM_THREADS", "2"))
    samples = {}
    diffs = {}
    with tempfile.TemporaryDirectory() as dump:
        for rnd in range(a.rounds):
            args = [a.bin, "--json", "--rounds", str(a.runs)] + (["--dump", dump] if rnd == 0 else [])
            lines = subprocess.run(args, env=env, check=True, capture_output=True, text=True).stdout
            for line in lines.splitlines():
                j = json.loads(line)
                samples.setdefault((j["pipeline"], "fused"), []).append(j["fused_ms"])
                samples.setdefault((j["pipeline"], "unfused"), []).append(j["unfused_ms"])
            for name in PIPELINES:
                r = run_peer(name, dump, a.runs)
                diffs[name] = r["rel_diff"]
                samples.setdefault((name, "halide"), []).extend(r["samples_ms"])
    lines = ["| pipeline | hipacc-rs fused ms | hipacc-rs kernel by kernel ms | Halide fused ms "
             "| fused / Halide | max rel diff |", "|---|---:|---:|---:|---:|---:|"]
    bad = []
    for name in PIPELINES:
        med = {k: statistics.median(samples[(name, k)]) for k in ("fused", "unfused", "halide")}
        lines.append(f"| {name} | {med['fused']:.2f} | {med['unfused']:.2f} | {med['halide']:.2f} "
                     f"| {med['fused'] / med['halide']:.2f} | {diffs[name]:.1e} |")
        if diffs[name] > TOLERANCE:
            bad.append(name)
    lines += ["", f"Rounds: {a.rounds}; timed runs per block: {a.runs}. hipacc-rs: the median of "
              "each round's median (pipeline-ratios); Halide: the median of all its runs. Max rel "
              "diff: the largest |Halide - hipacc-rs| over the largest |hipacc-rs| (tolerance "
              f"{TOLERANCE})."]
    text = "\n".join(lines) + "\n"
    print(text, end="")
    os.makedirs(os.path.dirname(a.report), exist_ok=True)
    with open(a.report, "w") as f:
        f.write(text)
    if bad:
        sys.exit(f"pipeline_compare.py: outputs differ beyond {TOLERANCE}: {bad}")


if __name__ == "__main__":
    main()
