#!/usr/bin/env bash
# Regenerates the hash-pinned lock files in requirements/ from pyproject.toml and requirements/<line>.in with uv
# (`pip install uv`, or `pip install -e '.[lock]'`). The lock files are what the containers, the Nix flake and
# `scripts/pack-wheels.sh` install, and what env.json's `lock_drift` compares a run's packages against.
#
#   scripts/lock.sh [cpu|gpu-cu128|all] [--torch-index]
#
#   cpu        Python 3.11, x86_64 manylinux_2_28, extras [test], torch 2.13.0+cpu (requirements/cpu.lock)
#   gpu-cu128  Python 3.12 (Ubuntu 24.04's, the CUDA image's), x86_64 manylinux_2_28, extras [production,test],
#              the torch of requirements/gpu-cu128.in from PyPI (its CUDA 12.8 build) (requirements/gpu-cu128.lock)
#   --torch-index  resolve torch against PyTorch's own index (download.pytorch.org/whl/{cpu,cu128}) instead: for
#              gpu-cu128 that locks torch 2.13.0+cu128 (FASTKERNELS_TORCH_CU128 overrides the pin).
#
# The CPU torch wheel is not on PyPI: without --torch-index it must lie in a --find-links directory, taken from
# PIP_FIND_LINKS (a local wheel cache; its sha256 must match PyTorch's published file, or `pip install` refuses it).
set -euo pipefail
cd "$(dirname "$0")/.."
line=${1:-all}
torch_index=0
[[ "${2:-}" == "--torch-index" || "${1:-}" == "--torch-index" ]] && torch_index=1
[[ "$line" == "--torch-index" ]] && line=all
uv=${UV:-$(command -v uv || echo .venv/bin/uv)}
[[ -x "$uv" ]] || { echo "lock.sh: uv not found (pip install uv, or set UV=/path/to/uv)" >&2; exit 1; }

compile() {  # compile <line> <python> <extras...> -- <extra uv args...>
  local name=$1 python=$2; shift 2
  local args=()
  while [[ $# -gt 0 && "$1" != "--" ]]; do args+=(--extra "$1"); shift; done
  shift || true
  local links=()
  [[ -n "${PIP_FIND_LINKS:-}" ]] && for dir in $PIP_FIND_LINKS; do links+=(--find-links "$dir"); done
  # Seeded with the current lock: uv keeps its pins and only resolves what changed (`--upgrade` in "$@" to refresh).
  [[ -f "requirements/$name.lock" ]] && cp "requirements/$name.lock" "requirements/$name.lock.tmp"
  "$uv" pip compile pyproject.toml "requirements/$name.in" "${args[@]}" "$@" "${links[@]}" \
    --python-version "$python" --python-platform x86_64-manylinux_2_28 --generate-hashes --no-emit-find-links \
    --custom-compile-command "scripts/lock.sh $name" -o "requirements/$name.lock.tmp" -q
  # pip must know where the torch build comes from when the lock is installed; the index line says so.
  { sed -n '1,2p' "requirements/$name.lock.tmp"; [[ ${#index_lines[@]} -gt 0 ]] && printf '%s\n' "${index_lines[@]}"
    sed '1,2d' "requirements/$name.lock.tmp"; } > "requirements/$name.lock"
  rm -f "requirements/$name.lock.tmp"
  echo "requirements/$name.lock: $(grep -c '^[a-z0-9]' "requirements/$name.lock") pins, $(wc -c < "requirements/$name.lock") bytes"
}

if [[ "$line" == cpu || "$line" == all ]]; then
  index_lines=("--extra-index-url https://download.pytorch.org/whl/cpu")
  extra=()
  (( torch_index )) && extra=(--extra-index-url https://download.pytorch.org/whl/cpu --index-strategy unsafe-best-match)
  compile cpu 3.11 test -- "${extra[@]}"
fi
if [[ "$line" == gpu-cu128 || "$line" == all ]]; then
  index_lines=()
  extra=()
  if (( torch_index )); then
    index_lines=("--extra-index-url https://download.pytorch.org/whl/cu128")
    extra=(--extra-index-url https://download.pytorch.org/whl/cu128 --index-strategy unsafe-best-match
           --override <(echo "torch==${FASTKERNELS_TORCH_CU128:-2.13.0+cu128}"))
  fi
  compile gpu-cu128 3.12 production test -- "${extra[@]}"
fi
