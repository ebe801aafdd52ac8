#!/usr/bin/env bash
# Runs several scripts/device-lanes.sh files one after another within ONE device call, each given what is left of
# the call's budget, and carries the tuning picks forward: the merged picks of one file are what the next restores.
# Why: a lent machine is released after 30 s idle, and its warm caches with it, so the warm lanes and the first
# timed call of a pass go in one call (2026-12-03: warm + call 1 in 413 s).
# Usage: FK_CALL_BUDGET=SECONDS bash scripts/device-chain.sh .lanes/warm.txt .lanes/call-1.txt ...
# SECONDS must stay under the device tool's limit for the call, which is the session's device time left less a cold
# start when the machine is not warm: device-lanes.sh packs its archive only when its runs end, and a call killed at
# the limit brings nothing back (the twenty-seventh session's fourth call: a 470 s budget, a 385 s limit).
# $OUT/ext/ holds the CUDA extensions built from carried sdists (copy to .ext/ and carry it next time).
# Afterwards $OUT holds, per file, NAME/lanes.tgz (NAME: the file's name without .txt) and picks.tgz, the last
# merged picks (copy it to .picks/HARDWARE.tgz); each file's own NAME/picks.tgz is removed at the end. FK_PICKS
# names the picks the first file restores (default .picks/${FK_HARDWARE:-h200}.tgz; FK_HARDWARE=auto: the profile
# scripts/device_profile.py finds for the lent card); each later file restores the one before it left. A file that
# would start with under FK_CHAIN_MIN_S (default 30) seconds left is skipped, and says so.
set -uo pipefail
[ "$#" -ge 1 ] || { echo "usage: FK_CALL_BUDGET=SECONDS bash scripts/device-chain.sh LANES_FILE ..." >&2; exit 2; }
for file in "$@"; do
  [ -f "$file" ] || { echo "device-chain.sh: no lanes file $file" >&2; exit 2; }
done
names=$(for file in "$@"; do basename "$file" .txt; done)
[ -z "$(sort <<< "$names" | uniq -d)" ] || { echo "device-chain.sh: two lanes files share a name ($(sort <<< \
  "$names" | uniq -d | head -1)): their archives would land in one directory" >&2; exit 2; }
budget=${FK_CALL_BUDGET:?FK_CALL_BUDGET (the call's seconds, under the device tool's limit) is required}
out=${OUT:-/tmp/fk-out}
start=$(date +%s)
if [ "${FK_HARDWARE:-}" = auto ]; then  # resolved once: every file runs under, and passes on, one profile's picks
  if [ -d .whl ] && [ "${FK_WHEELS:-carried}" != none ]; then source scripts/device-env.sh || exit 1; fi
  FK_HARDWARE=$(python3 scripts/device_profile.py) || exit 1; export FK_HARDWARE
  echo "=== hardware=auto resolves to $FK_HARDWARE"
fi
if [ -z "${CUDA_HOME:-}" ] && command -v nvcc >/dev/null; then
  # SGLang's JIT-built baselines (tasks/*/sglang_jit.py) link against $CUDA_HOME/lib64/libcudart.so and otherwise
  # take the toolkit from the nvcc on PATH, which may be a wrapper script outside it (this CPU machine's is)
  for home in "$(dirname "$(dirname "$(readlink -f "$(command -v nvcc)")")")" /usr/local/cuda; do
    if [ -e "$home/lib64/libcudart.so" ]; then export CUDA_HOME=$home; echo "=== CUDA_HOME=$home"; break; fi
  done
fi
# FK_CUDA_EXT=skip skips the CUDA extensions' builds below (75 s a cold machine, 2026-12-07) where no task needs them.
if ls .whl/*.tar.gz >/dev/null 2>&1 && [ "${FK_WHEELS:-carried}" != none ] && [ "${FK_CUDA_EXT:-build}" != skip ]; then
  # mamba_ssm's selective scan and Dao-AILab's causal conv1d (the mamba_ssm_cuda and dao_cuda baselines) have no
  # wheel: built here (scripts/pack-cuda-sdists.sh carries the sdists), both at once, against this machine's torch,
  # into the carried wheels' site directory, which every run puts on PYTHONPATH. A build carried back from an
  # earlier call ($OUT/ext/, carried as .ext/) is used instead when it imports here.
  source scripts/device-env.sh || exit 1
  mkdir -p "$out/ext"
  for pair in selective_scan_cuda:mamba_ssm causal_conv1d_cuda:causal_conv1d; do
    name=${pair%%:*}; sdist=$(ls .whl/"${pair#*:}"-*.tar.gz 2>/dev/null | head -1)
    [ -n "$sdist" ] || continue
    if ls .ext/"$name"*.so >/dev/null 2>&1 && cp .ext/"$name"*.so /tmp/site/ && python3 -c "import torch, $name"; then
      echo "=== $name: the carried build imports"; cp .ext/"$name"*.so "$out/ext/"; continue
    fi
    ( MAX_JOBS=$(nproc) python3 scripts/build_cuda_extension.py "$name" "$sdist" --out "/tmp/fk-$name" \
        && cp "/tmp/fk-$name/$name"*.so /tmp/site/ && cp "/tmp/fk-$name/$name"*.so "$out/ext/" \
        || echo "=== $name: build failed, its baseline is left out" ) &
  done
  wait
fi
picks=${FK_PICKS:-.picks/${FK_HARDWARE:-h200}.tgz}
mkdir -p "$out"
for file in "$@"; do
  name=$(basename "$file" .txt)
  left=$(( budget - ($(date +%s) - start) ))
  if [ "$left" -lt "${FK_CHAIN_MIN_S:-30}" ]; then
    echo "=== $name: skipped, ${left} s of FK_CALL_BUDGET=$budget left"
    continue
  fi
  echo "=== $name: ${left} s left"
  FK_CALL_BUDGET=$left FK_PICKS=$picks OUT=$out/$name bash scripts/device-lanes.sh "$file"
  [ -f "$out/$name/picks.tgz" ] && picks=$out/$name/picks.tgz
done
[ -f "$picks" ] && cp "$picks" "$out/picks.tgz"
rm -f "$out"/*/picks.tgz  # each file's picks were for the next file only: the last, merged, is $out/picks.tgz
echo "=== chain: $(( $(date +%s) - start )) s of $budget"
