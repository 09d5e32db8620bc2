#!/usr/bin/env bash
# Compares hdr-compress with pfstools' pfstmo_fattal02 (Fattal et al. 2002):
# output similarity and speed, one markdown table row per image.
#
#   bash benches/scripts/hdr_compare.sh [--reference-only] [images...]
#
# Images default to every .hdr/.pic/.exr/.pfm file in ../shared/hdr (relative
# to the repository root). On a fresh machine the script installs what it
# needs: pfstools and pfstmo (apt-get, through sudo unless run as root) and a
# Python virtual environment in target/hdr-compare-venv with pinned numpy and
# opencv-python-headless (for ssim.py); it builds hdr-compress in release mode.
#
# For each image IN:
#  1. reference: `pfsin IN | pfstmo_fattal02 | pfsgamma -g 2.2 | pfsout REF.png`
#     (pfstmo's defaults, DCT solver; its output is linear, hence the display
#     gamma), timed as a whole;
#  2. `pfstmo_fattal02 < IN.pfs > OUT.pfs` alone, IN.pfs converted beforehand;
#  3. ours: `hdr-compress IN -o OURS.png --json --backend B` timed as a whole
#     process, and the JSON's `ms.tonemap` (tone mapping without file I/O);
#  4. SSIM (ssim.py: Wang et al., 11x11 Gaussian window, sigma 1.5) of the
#     luma of OURS.png against REF.png.
# Every time is the median of RUNS runs (default 3). Outputs are kept in
# target/hdr-compare/.
#
# Environment: HDR_COMPARE_BACKEND (default cpu) is passed to --backend;
# HDR_COMPARE_RUNS (default 3). --reference-only skips hdr-compress and
# instead reports the SSIM of pfstmo's --multigrid solver against its default,
# a check of the measuring chain (PERF.md quotes about 0.5).
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$ROOT"
WORK=target/hdr-compare
VENV=target/hdr-compare-venv
BACKEND=${HDR_COMPARE_BACKEND:-cpu}
RUNS=${HDR_COMPARE_RUNS:-3}
NUMPY_VERSION=2.2.6
OPENCV_VERSION=4.10.0.84

REFERENCE_ONLY=0
if [[ ${1:-} == --reference-only ]]; then
    REFERENCE_ONLY=1
    shift
fi

die() {
    echo "hdr_compare.sh: $*" >&2
    exit 1
}

as_root() {
    if [[ $(id -u) -eq 0 ]]; then "$@"; else sudo "$@"; fi
}

apt_install() {
    echo "installing $* (apt-get)" >&2
    as_root apt-get update -qq
    as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@" >/dev/null
}

setup() {
    if ! command -v pfstmo_fattal02 >/dev/null || ! command -v pfsin >/dev/null; then
        apt_install pfstools pfstmo
    fi
    if ! [[ -x $VENV/bin/python ]] ||
        ! "$VENV/bin/python" -c "import numpy, cv2" 2>/dev/null; then
        rm -rf "$VENV"
        if ! python3 -m venv "$VENV" 2>/dev/null; then
            rm -rf "$VENV"
            apt_install python3-venv
            python3 -m venv "$VENV"
        fi
        "$VENV/bin/python" -m pip install -q --disable-pip-version-check \
            "numpy==$NUMPY_VERSION" "opencv-python-headless==$OPENCV_VERSION"
    fi
    "$VENV/bin/python" benches/scripts/ssim.py --self-test >/dev/null ||
        die "ssim.py --self-test failed"
    if [[ $REFERENCE_ONLY -eq 0 ]]; then
        cargo build --release -q -p hipacc-examples --bin hdr-compress
    fi
}

now_ns() { date +%s%N; }

# Prints the median of its numeric arguments.
median() {
    printf '%s\n' "$@" | sort -g | awk '{ v[NR] = $1 } END {
        if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

# Runs a shell command line RUNS times; prints the median wall time in ms.
time_ms() {
    local times=() t0 t1
    for _ in $(seq "$RUNS"); do
        t0=$(now_ns)
        bash -c "$1" || die "failed: $1"
        t1=$(now_ns)
        times+=("$(((t1 - t0) / 1000000))")
    done
    median "${times[@]}"
}

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.1fx", a / b; else print "-" }'; }

# The JSON field ms.tonemap of hdr-compress's output.
tonemap_ms() {
    "$VENV/bin/python" -c 'import json, sys; print(round(json.load(sys.stdin)["ms"]["tonemap"]))' <"$1" ||
        die "no ms.tonemap in $1"
}

q() { printf '%q' "$1"; }

compare() {
    local in=$1 name stem size ref_ms tmo_ms ssim
    name=$(basename "$in")
    stem=$WORK/${name%.*}
    pfsin "$in" >"$stem.pfs"
    size=$(head -c 64 "$stem.pfs" | sed -n 2p | tr ' ' x)
    ref_ms=$(time_ms "pfsin $(q "$in") | pfstmo_fattal02 | pfsgamma -g 2.2 | pfsout $(q "$stem.ref.png")")
    tmo_ms=$(time_ms "pfstmo_fattal02 < $(q "$stem.pfs") > $(q "$stem.out.pfs")")
    if [[ $REFERENCE_ONLY -eq 1 ]]; then
        pfsin "$in" | pfstmo_fattal02 --multigrid | pfsgamma -g 2.2 | pfsout "$stem.multigrid.png"
        ssim=$("$VENV/bin/python" benches/scripts/ssim.py "$stem.multigrid.png" "$stem.ref.png")
        echo "| $name | $size | $ssim | $ref_ms | $tmo_ms |"
        return
    fi
    local wall=() tonemap=() t0 t1 ours_ms tm_ms
    for _ in $(seq "$RUNS"); do
        t0=$(now_ns)
        "${CARGO_TARGET_DIR:-target}/release/hdr-compress" "$in" -o "$stem.ours.png" --json --backend "$BACKEND" \
            >"$stem.json" || die "hdr-compress failed on $in"
        t1=$(now_ns)
        wall+=("$(((t1 - t0) / 1000000))")
        tonemap+=("$(tonemap_ms "$stem.json")")
    done
    ours_ms=$(median "${wall[@]}")
    tm_ms=$(median "${tonemap[@]}")
    ssim=$("$VENV/bin/python" benches/scripts/ssim.py "$stem.ours.png" "$stem.ref.png")
    echo "| $name | $size | $ssim | $ref_ms / $ours_ms / $(ratio "$ref_ms" "$ours_ms")" \
        "| $tmo_ms / $tm_ms / $(ratio "$tmo_ms" "$tm_ms") |"
}

main() {
    local images=("$@") f
    if [[ ${#images[@]} -eq 0 ]]; then
        [[ -d ../shared/hdr ]] || die "no images given and ../shared/hdr does not exist"
        for f in ../shared/hdr/*; do
            case "${f,,}" in *.hdr | *.pic | *.exr | *.pfm) images+=("$f") ;; esac
        done
        [[ ${#images[@]} -gt 0 ]] || die "no HDR images in ../shared/hdr"
    fi
    for f in "${images[@]}"; do
        [[ -r $f ]] || die "cannot read $f"
    done
    setup
    mkdir -p "$WORK"
    if [[ $REFERENCE_ONLY -eq 1 ]]; then
        echo "| image | size | SSIM pfstmo --multigrid vs default | whole pipeline ms | pfstmo_fattal02 alone ms |"
        echo "|---|---|---|---|---|"
    else
        echo "Backend: $BACKEND; median of $RUNS runs; ratio = reference / ours."
        echo
        echo "| image | size | SSIM | whole pipeline ms (ref / ours / ratio) | tone map only ms (pfstmo / ours / ratio) |"
        echo "|---|---|---|---|---|"
    fi
    for f in "${images[@]}"; do
        compare "$f"
    done
}

main "$@"
