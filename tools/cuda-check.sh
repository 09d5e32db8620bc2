#!/usr/bin/env bash
# Compiles every CUDA variant family of the test kernels with NVRTC for
# compute_90 and assembles it with `ptxas -arch=sm_90 -v`, printing the
# registers, shared memory, stack and spills of each variant. Needs no GPU.
#
# NVRTC and ptxas come from the pip wheels nvidia-cuda-nvrtc-cu12 and
# nvidia-cuda-nvcc-cu12 installed under $HIPACC_NVCUDA_DIR (default
# /opt/nvcuda); with a GPU present the CUDA backend tests run as well.
set -euo pipefail
cd "$(dirname "$0")/.."
export HIPACC_NVCUDA_DIR="${HIPACC_NVCUDA_DIR:-/opt/nvcuda}"
export LD_LIBRARY_PATH="$HIPACC_NVCUDA_DIR/nvidia/cuda_nvrtc/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
cargo test -p hipacc --test cuda_ptxas --test cuda_backend -- --nocapture --test-threads 1 "$@"
