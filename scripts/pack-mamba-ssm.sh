#!/usr/bin/env bash
# Adds mamba-ssm's source distribution (216 kB) to the device tool's carried wheels (.whl/): it ships no wheel for
# the device's platform, so scripts/device-chain.sh compiles its CUDA selective scan there
# (scripts/build_selective_scan.py, forward kernels only, about a minute on 16 cores; 167 s for the five files one
# after another on this 2-core machine, 2026-12-06) for selective_scan's mamba_ssm_cuda baseline.
# pip cannot fetch it alone (its metadata step imports torch with CUDA), so it is taken from PyPI's simple index.
# Usage: bash scripts/pack-mamba-ssm.sh [DEST]   (DEST defaults to .whl)
set -euo pipefail
dest=${1:-.whl}
version=2.3.2.post1
mkdir -p "$dest"
file=mamba_ssm-$version.tar.gz
if [ ! -f "$dest/$file" ]; then
  url=$(curl -fsS https://pypi.org/simple/mamba-ssm/ | grep -o "https://[^\"#]*/$file" | head -1)
  [ -n "$url" ] || { echo "pack-mamba-ssm.sh: $file is not on PyPI's simple index" >&2; exit 1; }
  curl -fsSL -o "$dest/$file" "$url"
fi
members=$(tar -tzf "$dest/$file")
grep -q "csrc/selective_scan/selective_scan_fwd_bf16.cu" <<< "$members" \
  || { echo "pack-mamba-ssm.sh: $dest/$file holds no selective scan sources" >&2; exit 1; }
ls -la "$dest/$file"
