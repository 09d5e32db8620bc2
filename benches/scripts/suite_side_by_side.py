#!/usr/bin/env python3
"""Times one or more suite-ratios binaries against Halide on chosen suite
workloads, interleaved in one run:

    target/compare-venv/bin/python benches/scripts/suite_side_by_side.py \\
        --bins OLD,NEW --only bilateral5,bilateral13 [--rounds R] [--runs N]

A change to the CPU backend is measured against the binary before it this
way on a machine shared with other work: per round and workload, every
binary (`suite-ratios --only NAME`, N timed calls after a warm-up) and
then Halide's peer (suite_compare.py's, same environment) run back to
back, so that load changes hit all of them alike. Prints per workload
Halide's median and each binary's median and ratio to it. The first
binary's dump is the reference the Halide output is checked against
(suite_compare.TOLERANCE).
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import suite_compare  # noqa: E402


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--bins", required=True, help="comma-separated suite-ratios binaries")
    p.add_argument("--only", required=True, help="comma-separated suite workloads")
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--runs", type=int, default=5)
    a = p.parse_args()
    bins, names = a.bins.split(","), a.only.split(",")
    env = dict(os.environ, RAYON_NUM_THREADS=os.environ.get("RAYON_NUM_THREADS", "2"))
    from compare.suite import SUITE_PEERS
    ours, halide = {}, {}
    with tempfile.TemporaryDirectory() as dump:
        subprocess.run([bins[0], "--json", "--rounds", "1", "--runs", "5", "--dump", dump],
                       env=env, check=True, capture_output=True)
        for _ in range(a.rounds):
            for name in names:
                for b in bins:
                    out = subprocess.run([b, "--json", "--rounds", "1", "--runs", str(a.runs),
                                          "--only", name],
                                         env=env, check=True, capture_output=True, text=True)
                    for line in out.stdout.splitlines():
                        ours.setdefault((b, name), []).extend(json.loads(line)["samples_ms"])
                index = [label for label, _ in SUITE_PEERS[name]].index("Halide")
                r = suite_compare.run_peer(name, index, dump, a.runs)
                if r["rel_diff"] > suite_compare.TOLERANCE:
                    sys.exit(f"{name}: Halide differs from {bins[0]} by {r['rel_diff']:.1e}")
                halide.setdefault(name, []).extend(r["samples_ms"])
    for name in names:
        h = statistics.median(halide[name])
        cells = [f"{b} {statistics.median(ours[(b, name)]):.2f} ms "
                 f"({statistics.median(ours[(b, name)]) / h:.2f}x)" for b in bins]
        print(f"{name}: Halide {h:.2f} ms; " + "; ".join(cells))


if __name__ == "__main__":
    main()
