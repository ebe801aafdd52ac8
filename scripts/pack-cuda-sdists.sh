#!/usr/bin/env bash
# Adds the source distributions of mamba-ssm (216 kB) and causal-conv1d (24 kB) to the device tool's carried wheels
# (.whl/): neither ships a wheel for the device's platform, so scripts/device-chain.sh compiles their CUDA kernels
# there (scripts/build_cuda_extension.py: selective_scan_cuda in 78 s on the H100 machine's 16 cores, 2026-12-06,
# docs/results/h100-2026-12-06-forty-first) for the selective_scan and causal_conv1d baselines. On this 2-core
# machine, one file after another, `--objects-only` took 167 s for selective_scan_cuda and 518 s for
# causal_conv1d_cuda, the latter while a CI run shared the cores (2026-12-06).
# pip cannot fetch them alone (their metadata step imports torch with CUDA), so they come from PyPI's simple index.
# Usage: bash scripts/pack-cuda-sdists.sh [DEST]   (DEST defaults to .whl)
set -euo pipefail
dest=${1:-.whl}
mkdir -p "$dest"
fetch() {  # PROJECT FILE A_SOURCE_IT_MUST_HOLD
  if [ ! -f "$dest/$2" ]; then
    url=$(curl -fsS "https://pypi.org/simple/$1/" | grep -o "https://[^\"#]*/$2" | head -1)
    [ -n "$url" ] || { echo "pack-cuda-sdists.sh: $2 is not on PyPI's simple index" >&2; exit 1; }
    curl -fsSL -o "$dest/$2" "$url"
  fi
  members=$(tar -tzf "$dest/$2")
  grep -q "$3" <<< "$members" || { echo "pack-cuda-sdists.sh: $dest/$2 holds no $3" >&2; exit 1; }
  ls -la "$dest/$2"
}
fetch mamba-ssm mamba_ssm-2.3.2.post1.tar.gz csrc/selective_scan/selective_scan_fwd_bf16.cu
fetch causal-conv1d causal_conv1d-1.7.0.tar.gz csrc/causal_conv1d_fwd.cu
