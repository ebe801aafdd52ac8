#!/usr/bin/env bash
# One device call whose lanes depend on the card the device tool lent (a call for nvidia-h200 may get an H100): the
# H200's lanes files or the others', run by scripts/device-chain.sh under FK_HARDWARE=auto, while the GPU's memory
# and every process's memory and command line are sampled every FK_SAMPLE_S (default 2) seconds into
# $OUT/mem/samples.txt (what each process held when the H100's moe_experts cases ran out of memory).
# Usage: FK_CALL_BUDGET=SECONDS bash scripts/device-call.sh "H200_LANES_FILES" "OTHER_LANES_FILES"
# Afterwards $OUT holds device-chain.sh's outputs, chain.log (its log), mem/samples.txt and mem/summary.txt
# (scripts/memory_samples.py on the samples). Clocks are only read.
set -u
[ "$#" -eq 2 ] || { echo "usage: FK_CALL_BUDGET=SECONDS bash scripts/device-call.sh \"H200 FILES\" \"OTHER FILES\"" >&2
                    exit 2; }
out=${OUT:-/tmp/fk-out}
card=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
echo "=== card: $card; $(nvidia-smi --query-gpu=uuid,clocks.sm,clocks.mem,temperature.gpu --format=csv,noheader)"
mkdir -p "$out/mem"
( while :; do
    echo "t $(date +%s)"
    nvidia-smi --query-compute-apps=pid,used_memory --format=csv,noheader
    nvidia-smi --query-gpu=memory.used --format=csv,noheader
    ps -eo pid,ppid,rss,args --no-headers | grep python | grep -v grep | cut -c1-200
    sleep "${FK_SAMPLE_S:-2}"
  done > "$out/mem/samples.txt" 2>&1 ) &
sampler=$!
case "$card" in *H200*) files=$1 ;; *) files=$2 ;; esac
# shellcheck disable=SC2086  # each argument is a list of lanes files
OUT=$out FK_HARDWARE=auto bash "${FK_CHAIN:-scripts/device-chain.sh}" $files 2>&1 | tee "$out/chain.log"
status=${PIPESTATUS[0]}
kill "$sampler" 2>/dev/null
# each GPU process's peak, last sample and parent, read here as the samples file may not come back
python3 "$(dirname "$0")/memory_samples.py" "$out/mem/samples.txt" > "$out/mem/summary.txt" 2>&1
exit "$status"
