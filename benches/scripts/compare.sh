#!/usr/bin/env bash
# Runs the performance comparison of hipacc-rs against Halide, OpenCV, NumPy
# (and pfstmo for HDR) and rewrites PERFORMANCE.md:
#
#   bash benches/scripts/compare.sh [compare.py options, e.g. --rounds 5 --pyamg]
#
# Creates a Python virtual environment in target/compare-venv with pinned
# peers (installing python3-venv with apt-get if venv is missing), builds
# hipacc-bench, suite-ratios and pipeline-ratios in release mode and runs
# benches/scripts/pipeline_compare.py, then benches/scripts/compare.py, from
# the repository root. Results: target/perf-report/, docs/images/perf-chart.svg
# and PERFORMANCE.md. The hdr workload needs the images in ../shared/hdr
# (skipped otherwise) and installs pfstools/pfstmo through hdr_compare.sh.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$ROOT"
VENV=target/compare-venv
PACKAGES=(
    halide==21.0.0
    opencv-python-headless==5.0.0.93
    numpy==2.4.6
    scipy==1.17.1
    pyamg==5.4.1
    imageio==2.38.1
    pillow==13.0.0
)
STAMP="$VENV/.pinned-$(printf '%s\n' "${PACKAGES[@]}" | cksum | cut -d' ' -f1)"

as_root() {
    if [[ $(id -u) -eq 0 ]]; then "$@"; else sudo "$@"; fi
}

if ! [[ -f $STAMP && -x $VENV/bin/python ]]; then
    rm -rf "$VENV"
    if ! python3 -m venv "$VENV" 2>/dev/null; then
        rm -rf "$VENV"
        echo "installing python3-venv (apt-get)" >&2
        as_root apt-get update -qq
        as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-venv >/dev/null
        python3 -m venv "$VENV"
    fi
    "$VENV/bin/python" -m pip install -q --disable-pip-version-check "${PACKAGES[@]}"
    touch "$STAMP"
fi

cargo build --release -q -p hipacc-benches --bin hipacc-bench --bin suite-ratios --bin pipeline-ratios
export HL_JIT_TARGET=x86-64-linux-avx-avx2-f16c-fma-sse41
# Multi-kernel pipelines against Halide's fused schedules: written to
# target/perf-report/pipelines.md, which compare.py adds to PERFORMANCE.md.
"$VENV/bin/python" benches/scripts/pipeline_compare.py
exec "$VENV/bin/python" benches/scripts/compare.py "$@"
