#!/usr/bin/env python3
"""Times hipacc-rs and its peers on identical workloads, in one session.

    python3 benches/scripts/compare.py [--rounds R] [--runs N] [--out DIR]
        [--workloads gauss5,jacobi,pyramid,vcycle,hdr,suite] [--pyamg] [--bin PATH]

Normally started by benches/scripts/compare.sh, which installs the peers.
For each round, each workload's implementations are timed one after the
other, each in a block of its own (warm-up calls for at least 0.1 s, then N
timed calls): hipacc through the hipacc-bench binary, then the Python peers,
each peer in a process of its own (compare/peers.py says why). Samples are
pooled over the rounds. The STREAM triad is hipacc-bench's (Rust, rayon,
f64 arrays of 64 MiB), timed once per round.

Before timing, every peer is checked against hipacc on a small image
(hipacc-bench --dump) and the max |diff| is reported. The hdr workload runs
benches/scripts/hdr_compare.sh (pfstmo_fattal02) and hipacc-bench on the
images in ../shared/hdr; without them it is skipped. The suite workload runs
benches/scripts/suite_compare.py (HIPAcc's samples against Halide and
OpenCV, target/release/suite-ratios) with the same rounds and runs; its
workloads join the table and the chart as "suite NAME" rows.

Writes DIR/table.md, DIR/chart.svg, DIR/report.md, docs/images/perf-chart.svg
and PERFORMANCE.md (all relative to the repository root).
"""

import argparse
import os
import re
import subprocess
import sys

import numpy as np

sys.dont_write_bytecode = True  # keep the source tree clean
os.environ["PYTHONDONTWRITEBYTECODE"] = "1"  # in the peers' processes too
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import suite_compare  # noqa: E402
from compare import filters, peers, pyramid, report, vcycle  # noqa: E402
from compare.common import SIZE, HipaccBench, load_f32, max_diff, summary  # noqa: E402

ROOT = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
WORKLOADS = ["gauss5", "jacobi", "pyramid", "vcycle", "hdr", "suite"]
SUITE_BIN = os.path.join(os.environ.get("CARGO_TARGET_DIR", "target"), "release", "suite-ratios")
HDR_DIR = os.path.join("..", "shared", "hdr")
HDR_EXT = (".hdr", ".pic", ".exr", ".pfm")
BYTES_PER_PIXEL = {"gauss5": 8, "jacobi": 12}


def log(msg):
    print(msg, file=sys.stderr, flush=True)


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--runs", type=int, default=7, help="timed runs per block (at least 7)")
    p.add_argument("--out", default=os.path.join("target", "perf-report"))
    p.add_argument("--workloads", default=",".join(WORKLOADS))
    p.add_argument("--pyamg", action="store_true",
                   help="add pyamg's smoothed-aggregation V-cycle (its setup takes minutes)")
    target = os.environ.get("CARGO_TARGET_DIR", "target")
    p.add_argument("--bin", default=os.path.join(target, "release", "hipacc-bench"))
    p.add_argument("--command", default="bash benches/scripts/compare.sh",
                   help="the command PERFORMANCE.md names")
    a = p.parse_args()
    a.workloads = [w.strip() for w in a.workloads.split(",") if w.strip()]
    bad = [w for w in a.workloads if w not in WORKLOADS]
    if bad or a.rounds < 1 or a.runs < 7:
        p.error(f"unknown workloads {bad}" if bad else "need --rounds >= 1 and --runs >= 7")
    return a


def verify(bench, workloads, out_dir, use_pyamg):
    """Checks each peer against hipacc's dump; a markdown table."""
    d = os.path.join(out_dir, "verify")
    meta = bench.dump(d, 64)
    n = meta["size"]
    lines = [f"Each peer against hipacc-rs on {n}x{n} inputs written by `hipacc-bench --dump`.", "",
             "| workload | implementation | compared | max abs diff |", "|---|---|---|---:|"]

    def row(w, impl, what, v):
        lines.append(f"| {w} | {impl} | {what} | {v:.3g} |")
        log(f"verify {w} {impl}: {what}: max |diff| {v:.3g}")

    if "gauss5" in workloads:
        img, ref = load_f32(d, "gauss5.in.f32", (n, n)), load_f32(d, "gauss5.out.f32", (n, n))
        for name, cls in filters.GAUSS5_PEERS:
            peer = cls(img)
            peer.run()
            row("gauss5", name, "output", max_diff(peer.output(), ref))
    if "jacobi" in workloads:
        u, f = load_f32(d, "jacobi.u.f32", (n, n)), load_f32(d, "jacobi.f.f32", (n, n))
        ref = load_f32(d, "jacobi.out.f32", (n, n))
        for name, cls in filters.JACOBI_PEERS:
            peer = cls(u, f)
            peer.run()
            row("jacobi", name, "output", max_diff(peer.output(), ref))
    if "pyramid" in workloads:
        cv = pyramid.OpenCvPyramid(load_f32(d, "pyramid.in.f32", (n, n)), meta["pyramid_levels"])
        cv.run()
        row("pyramid", "OpenCV", "G_1", max_diff(cv.g[1], load_f32(d, "pyramid.g1.f32", (n // 2, n // 2))))
        l0 = load_f32(d, "pyramid.l0.f32", (n, n))
        row("pyramid", "OpenCV", "L_0 without its 2-pixel border",
            max_diff(cv.l[0][2:-2, 2:-2], l0[2:-2, 2:-2]))
        row("pyramid", "OpenCV", "L_0 with its border", max_diff(cv.l[0], l0))
        row("pyramid", "OpenCV", "R_0", max_diff(cv.r, load_f32(d, "pyramid.r0.f32", (n, n))))
    if "vcycle" in workloads:
        f = load_f32(d, "vcycle.f.f32", (n, n))
        mg = vcycle.NumpyMultigrid(f, meta["vcycle_levels"], meta["vcycle_spacing"])
        for i in (1, 2):
            mg.run()
            ref = load_f32(d, f"vcycle.u{i}.f32", (n, n))
            row("vcycle", "NumPy multigrid", f"u after {i} cycle(s) (max abs u {np.abs(ref).max():.2f})",
                max_diff(mg.output(), ref))
        if use_pyamg:
            lines.append("| vcycle | pyamg | not compared: a different (algebraic) hierarchy | - |")
    lines += ["", "The pyramid's last two rows and columns differ by design: at the far edge "
              "OpenCV's pyrUp reflects in the upsampled grid, hipacc-rs in the coarse grid; "
              "the reconstruction is exact in both."]
    return "\n".join(lines)


def hdr_images():
    if not os.path.isdir(HDR_DIR):
        return []
    return sorted(os.path.join(HDR_DIR, f) for f in os.listdir(HDR_DIR) if f.lower().endswith(HDR_EXT))


def run_hdr(bench, runs, rows):
    """hipacc-bench on each image and hdr_compare.sh; the latter's table."""
    images = hdr_images()
    if not images:
        log(f"hdr: skipped, no HDR images in {HDR_DIR}")
        return None
    lines = bench.run("hdr", runs, [a for img in images for a in ("--input", img)])
    log("hdr: running benches/scripts/hdr_compare.sh (pfstmo_fattal02)")
    proc = subprocess.run(["bash", "benches/scripts/hdr_compare.sh", *images],
                          capture_output=True, text=True)
    if proc.returncode != 0:
        log(f"hdr_compare.sh failed:\n{proc.stderr}")
        table = None
    else:
        table = proc.stdout
    pfstmo = {}
    for line in (table or "").splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 5 and re.match(r"^[\d.]+ / ", cells[4]):
            pfstmo[cells[0]] = float(cells[4].split("/")[0])
    for j in lines:
        w = f"hdr {j['image']} {j['width']}x{j['height']}"
        rows.append({"workload": w, "impl": "hipacc-rs (tone mapping)", "hipacc": True,
                     "median": j["median_ms"], "min": j["min_ms"], "max": j["max_ms"]})
        if j["image"] in pfstmo:
            rows.append({"workload": w, "impl": "pfstmo_fattal02 (DCT)", "median": pfstmo[j["image"]]})
    return table


def goals(rows, triad_gbs):
    """The CPU goals of the issue, checked against this run's rows."""
    def med(w, prefix):
        for r in rows:
            if r["workload"] == w and r["impl"].startswith(prefix):
                return r
        return None

    out = ["| goal | measured | met |", "|---|---|---|"]

    def line(goal, measured, ok):
        out.append(f"| {goal} | {measured} | {'yes' if ok else 'no'} |")

    for w in ("gauss5", "jacobi"):
        h, p = med(w, "hipacc"), med(w, "Halide")
        if h and p:
            line(f"{w}: hipacc-rs at least as fast as Halide",
                 f"{h['median']:.2f} ms vs {p['median']:.2f} ms ({h['median'] / p['median']:.2f}x)",
                 h["median"] <= p["median"])
    h = med("jacobi", "hipacc")
    if h and h.get("bound_ms"):
        frac = h["bound_ms"] / h["median"]
        line("jacobi: at least 70% of the STREAM triad bandwidth",
             f"{frac:.0%} ({12 * SIZE * SIZE / (h['median'] * 1e6):.1f} of {triad_gbs:.1f} GB/s)", frac >= 0.7)
    h, p = med("pyramid", "hipacc"), med("pyramid", "OpenCV")
    if h and p:
        line("pyramid: faster than OpenCV", f"{h['median']:.1f} ms vs {p['median']:.1f} ms",
             h["median"] < p["median"])
    for r in rows:
        if r["workload"].startswith("hdr") and r.get("hipacc"):
            p = med(r["workload"], "pfstmo")
            if p:
                sp = p["median"] / r["median"]
                line(f"{r['workload']}: at least 5x faster than pfstmo_fattal02 (DCT)",
                     f"{r['median']:.0f} ms vs {p['median']:.0f} ms ({sp:.1f}x)", sp >= 5)
    per, geo = suite_ratios(rows)
    for name, r in per.items():
        line(f"suite {name}: at or below 1.0x Halide's best schedule", f"{r:.2f}x", r <= 1.0)
    if per:
        line("suite: geometric mean of hipacc-rs / Halide at or below 0.8", f"{geo:.2f}", geo <= 0.8)
    return "\n".join(out)


def run_suite(rounds, runs, rows):
    """suite_compare.py's measurement: rows for the table and the chart,
    and its own table (with the outputs' differences)."""
    if not os.access(SUITE_BIN, os.X_OK):
        sys.exit(f"compare.py: {SUITE_BIN} not found; build it with "
                 "cargo build --release -p hipacc-benches --bin suite-ratios")
    log("suite: benches/scripts/suite_compare.py")
    samples, diffs = suite_compare.measure(SUITE_BIN, rounds, runs)
    for (name, impl), v in samples.items():
        med, lo, hi = summary(v)
        rows.append({"workload": f"suite {name}", "impl": impl, "hipacc": impl == "hipacc-rs",
                     "median": med, "min": lo, "max": hi, "suite": name})
    text, bad = suite_compare.table(samples, diffs, rounds, runs)
    if bad:
        sys.exit(f"compare.py: suite outputs differ beyond {suite_compare.TOLERANCE}: {bad}")
    return text


def suite_ratios(rows):
    """{suite workload: hipacc-rs / Halide} from the rows, and their geometric mean."""
    med = {(r["suite"], r["impl"]): r["median"] for r in rows if r.get("suite")}
    per = {n: med[(n, "hipacc-rs")] / med[(n, "Halide")] for (n, impl) in med
           if impl == "Halide" and (n, "hipacc-rs") in med}
    geo = float(np.exp(np.mean(np.log(list(per.values()))))) if per else None
    return per, geo


def main():
    a = parse_args()
    os.chdir(ROOT)
    if not os.access(a.bin, os.X_OK):
        sys.exit(f"compare.py: {a.bin} not found; build it with "
                 "cargo build --release -p hipacc-benches --bin hipacc-bench")
    bench = HipaccBench(a.bin)
    timed = [w for w in a.workloads if w not in ("hdr", "suite")]
    sections = [("Same computation", verify(bench, timed, a.out, a.pyamg))] if timed else []
    # Written by benches/scripts/pipeline_compare.py (multi-kernel pipelines
    # against Halide's fused schedules), when it has run.
    pipelines_md = os.path.join(a.out, "pipelines.md")
    if os.path.exists(pipelines_md):
        with open(pipelines_md) as f:
            sections.append(("Pipelines: pipeline_compare.py", f.read()))

    log("starting one process per peer")
    isolated = {w: [(name, peers.Isolated(w, i, a.pyamg)) for i, name in enumerate(peers.names(w, a.pyamg))]
                for w in timed}
    samples = {}
    extras = {}
    triad = []

    def add(key, values):
        samples.setdefault(key, []).extend(values)

    for rnd in range(a.rounds):
        log(f"round {rnd + 1}/{a.rounds}")
        t = bench.run("triad", a.runs)[0]
        triad.extend(t["samples_ms"])
        extras["triad_bytes"] = t["bytes"]
        for w in timed:
            j = bench.run(w, a.runs)[0]
            add((w, "hipacc-rs"), j["samples_ms"])
            extras[w] = j
            if w == "pyramid":
                add(("pyramid-split", "decompose"), [j["decompose_ms"]])
                add(("pyramid-split", "reconstruct"), [j["reconstruct_ms"]])
            for name, peer in isolated[w]:
                add((w, name), peer.time_block(a.runs))
            log(f"  {w}: " + ", ".join(f"{k[1]} {np.median(v):.2f} ms" for k, v in samples.items() if k[0] == w))

    for procs in isolated.values():
        for _, peer in procs:
            peer.close()
    triad_ms = float(np.median(triad))
    triad_gbs = extras["triad_bytes"] / (triad_ms * 1e6)
    rows = []
    for w in timed:
        if w in BYTES_PER_PIXEL:
            bound_bytes = BYTES_PER_PIXEL[w] * SIZE * SIZE
            bound_note = f"{BYTES_PER_PIXEL[w]} B/px"
        elif w == "vcycle":
            bound_bytes = extras[w]["bytes"]
            bound_note = f"{bound_bytes / 1e6:.0f} MB"
        else:
            bound_bytes, bound_note = None, None
        bound_ms = bound_bytes / (triad_gbs * 1e6) if bound_bytes else None
        for (sw, name), v in samples.items():
            if sw != w:
                continue
            med, lo, hi = summary(v)
            rows.append({"workload": w, "impl": name, "hipacc": name == "hipacc-rs",
                         "median": med, "min": lo, "max": hi, "bound_ms": bound_ms})
        if bound_ms:
            rows.append({"workload": w, "impl": f"bandwidth bound ({bound_note} at triad)",
                         "is_bound": True, "median": bound_ms})
    hdr_table = run_hdr(bench, a.runs, rows) if "hdr" in a.workloads else None
    suite_table = run_suite(a.rounds, a.runs, rows) if "suite" in a.workloads else None

    notes = [
        f"- STREAM triad (hipacc-bench --workload triad: Rust, rayon, three 64 MiB f64 arrays, "
        f"24 B per element): {triad_gbs:.1f} GB/s (median {triad_ms:.2f} ms).",
        f"- Rounds: {a.rounds}; timed runs per block: {a.runs}; each block preceded by warm-up runs for at least 0.1 s.",
    ]
    if "pyramid" in extras:
        p = extras["pyramid"]
        down = np.median(samples[("pyramid-split", "decompose")])
        up = np.median(samples[("pyramid-split", "reconstruct")])
        notes.append(f"- hipacc-rs pyramid (median over rounds of each round's median): decompose "
                     f"{down:.1f} ms, reconstruct {up:.1f} ms, max |R_0 - G_0| {p['max_error']:.2g}.")
    if "vcycle" in extras:
        notes.append("- vcycle: hipacc-rs fuses the residual and the restriction; its bound counts "
                     "the bytes its kernels must move (benches/src/vcycle.rs).")
    if hdr_table:
        notes.append("- hdr: hipacc-rs is `tone_map` in process (default parameters, gamma 2.2, warm, "
                     "file I/O excluded); pfstmo_fattal02 is its whole process on a .pfs file, the "
                     "median of hdr_compare.sh's runs. hdr_compare.sh's own table below times "
                     "hdr-compress as one cold process per image.")
    if suite_table:
        notes.append("- suite: HIPAcc's samples written as the README teaches (benches/src/suite.rs), "
                     "each against Halide's best schedule written here (benches/scripts/compare/suite.py) "
                     "and OpenCV; suite-ratios times hipacc-rs as the peers are timed (a warm-up call, "
                     "then blocks of timed calls into preallocated outputs).")
    sections.append(("Notes", "\n".join(notes)))
    sections.insert(0, ("Goals on the CPU backend", goals(rows, triad_gbs)))
    if "hdr" in a.workloads:
        sections.append(("HDR compression: hdr_compare.sh",
                         hdr_table or f"Skipped: no HDR images in {HDR_DIR}, or the script failed."))
    if suite_table:
        sections.append(("Sample suite: suite_compare.py", suite_table))
    report.write(a.out, ROOT, rows, sections, a.command)
    print(report.table_md(rows))
    log(f"wrote {a.out}/table.md, {a.out}/chart.svg, docs/images/perf-chart.svg and PERFORMANCE.md")


if __name__ == "__main__":
    main()
