"""The outputs of the comparison: table.md, chart.svg and PERFORMANCE.md.

A row is a dict with workload, impl, median, min, max (ms), and optionally
bound_ms (the workload's bandwidth bound at the run's triad bandwidth) and
hipacc (True for the project's rows). The ratio to the best peer is the
row's median over the fastest median among the workload's other
implementations (not hipacc, not bounds): below 1 is faster than every peer.
"""

import datetime
import html
import os
import platform
import shutil
import subprocess


def best_peer(rows, workload):
    peers = [r["median"] for r in rows
             if r["workload"] == workload and not r.get("hipacc") and not r.get("is_bound")]
    return min(peers) if peers else None


def fmt_ms(v):
    if v is None:
        return "-"
    if v >= 100:
        return f"{v:.0f}"
    if v >= 10:
        return f"{v:.1f}"
    return f"{v:.2f}"


def table_md(rows):
    """The markdown table of all rows."""
    out = ["| workload | implementation | median ms | min ms | max ms "
           "| ratio to best peer | fraction of bandwidth bound |",
           "|---|---|---:|---:|---:|---:|---:|"]
    for r in rows:
        best = best_peer(rows, r["workload"])
        ratio = "-" if best is None or r.get("is_bound") else f"{r['median'] / best:.2f}"
        frac = "-"
        if r.get("bound_ms") and not r.get("is_bound"):
            frac = f"{r['bound_ms'] / r['median']:.0%}"
        name = f"**{r['impl']}**" if r.get("hipacc") else r["impl"]
        out.append(f"| {r['workload']} | {name} | {fmt_ms(r['median'])} | {fmt_ms(r.get('min'))} "
                   f"| {fmt_ms(r.get('max'))} | {ratio} | {frac} |")
    return "\n".join(out) + "\n"


def chart_svg(rows):
    """A horizontal bar chart of medians, one group per workload, bars
    scaled to the slowest implementation of their workload."""
    bar_h, gap, left, width = 18, 14, 300, 420
    groups = []
    for r in rows:
        if not groups or groups[-1][0] != r["workload"]:
            groups.append((r["workload"], []))
        groups[-1][1].append(r)
    height = 50 + sum(24 + len(g[1]) * (bar_h + 4) + gap for g in groups)
    total_w = left + width + 110
    s = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{total_w}" height="{height}" '
         f'viewBox="0 0 {total_w} {height}" font-family="sans-serif" font-size="12">',
         f'<rect width="{total_w}" height="{height}" fill="white"/>',
         '<text x="10" y="22" font-size="15" font-weight="bold">Median time per workload '
         '(bars relative to the slowest implementation; shorter is faster)</text>']
    y = 44
    for workload, items in groups:
        s.append(f'<text x="10" y="{y + 12}" font-weight="bold">{html.escape(workload)}</text>')
        y += 20
        slowest = max(r["median"] for r in items)
        for r in items:
            w = max(1.0, width * r["median"] / slowest)
            colour = ("#d9534f" if r.get("hipacc") else "#999999" if r.get("is_bound")
                      else "#4a7ab5")
            s.append(f'<text x="{left - 8}" y="{y + 13}" text-anchor="end">'
                     f'{html.escape(r["impl"])}</text>')
            s.append(f'<rect x="{left}" y="{y}" width="{w:.1f}" height="{bar_h}" fill="{colour}"/>')
            s.append(f'<text x="{left + w + 6:.1f}" y="{y + 13}">{fmt_ms(r["median"])} ms</text>')
            y += bar_h + 4
        y += gap
    s.append("</svg>")
    return "\n".join(s) + "\n"


def machine():
    """CPU model, logical cores and memory, from /proc."""
    model = platform.processor() or "unknown CPU"
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    model = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    mem = "unknown memory"
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemTotal"):
                    mem = f"{int(line.split()[1]) / 2**20:.1f} GiB"
                    break
    except OSError:
        pass
    return f"{model}, {os.cpu_count()} logical cores, {mem}"


def git_revision(root):
    try:
        out = subprocess.run(["git", "-C", root, "rev-parse", "--short", "HEAD"],
                             capture_output=True, text=True, check=True)
        return out.stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def write(out_dir, root, rows, sections, command):
    """Writes out_dir/{table.md,chart.svg,report.md}, copies the chart to
    docs/images/perf-chart.svg and rewrites PERFORMANCE.md under root.
    sections: (title, markdown) pairs shown after the table."""
    os.makedirs(out_dir, exist_ok=True)
    table = table_md(rows)
    with open(os.path.join(out_dir, "table.md"), "w") as f:
        f.write(table)
    with open(os.path.join(out_dir, "chart.svg"), "w") as f:
        f.write(chart_svg(rows))
    images = os.path.join(root, "docs", "images")
    os.makedirs(images, exist_ok=True)
    shutil.copyfile(os.path.join(out_dir, "chart.svg"), os.path.join(images, "perf-chart.svg"))
    date = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    body = [
        "# Performance",
        "",
        "hipacc-rs beside Halide, OpenCV, NumPy, pyamg, pfstmo and the memory-bandwidth",
        "bound on the workloads of the benchmark suite. This file is generated by the",
        "comparison runner; do not edit it by hand. To reproduce it, from the repository root:",
        "",
        "```sh",
        command,
        "```",
        "",
        f"- Measured: {date}, revision `{git_revision(root)}`",
        f"- Machine: {machine()}",
        "",
        "Bold rows are hipacc-rs. Times are medians, minima and maxima over every timed run of",
        "all rounds; each round times every implementation in a block of its own, one after",
        "the other, so all see the same machine noise. Each peer runs in a process of its own",
        "(as hipacc-bench does), so no peer's thread pools or allocator state slow another, and",
        "every block warms up for at least 0.1 s first. The ratio is the row's median over the",
        "fastest peer's (below 1: faster than every peer). The bandwidth fraction is the time",
        "the bytes the workload must move take at the STREAM triad bandwidth of the same run,",
        "over the row's median.",
        "",
        table,
        "![median times](docs/images/perf-chart.svg)",
        "",
    ]
    for title, text in sections:
        body += [f"## {title}", "", text.rstrip(), ""]
    # Figures measured by hand (distributed runs, GPUs this machine lacks)
    # are kept in a file of their own and appended, never lost.
    by_hand = os.path.join(root, "docs", "measured-by-hand.md")
    if os.path.exists(by_hand):
        with open(by_hand) as f:
            body += [f.read().split("\n", 2)[2].rstrip(), ""]
    text = "\n".join(body)
    with open(os.path.join(out_dir, "report.md"), "w") as f:
        f.write(text)
    with open(os.path.join(root, "PERFORMANCE.md"), "w") as f:
        f.write(text)
