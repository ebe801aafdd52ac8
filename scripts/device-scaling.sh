#!/usr/bin/env bash
# Issue #5's scale-out measurement on the lent 2-GPU machine (device tool: kind nvidia-h200-x2, carry .whl): the
# level1+level2 noop suite on 1 GPU (scale=serial) or on 2 (scale=ray), with fresh Inductor and Triton caches so
# neither run inherits the other's compiled kernels:
#   bash scripts/device-scaling.sh 2    then    bash scripts/device-scaling.sh 1
# then, here: python scripts/compare_runs.py gpus1 gpus2 (unpacked from the two gpus<N>.tgz) for the agreement.
# Measured 2026-11-30: the worker logs add up to ~1100-1200 s for level1+level2 on one GPU (FLA's Triton
# autotuning alone is 50-115 s a task), more than one 600 s device call: run it in chunks with FK_LEVELS=[1] /
# FK_LEVELS=[2] (and FK_CHUNK=a,b,... for tasks.include) and add the chunks' walls, saying so.
set -uo pipefail
lanes=${1:?usage: device-scaling.sh 1|2 [extra hydra overrides]}
shift
source scripts/device-env.sh || exit 1
out=${OUT:-/tmp/fk-out}
mkdir -p "$out"
# FK_CACHE=DIR: Inductor and Triton caches shared by the runs that name it (warm runs on equal footing); default
# fresh per lane count.
cache=${FK_CACHE:-/tmp/fk-cache-$lanes-$$}
export TORCHINDUCTOR_CACHE_DIR=$cache/inductor TRITON_CACHE_DIR=$cache/triton
scale=(scale=serial)
[ "$lanes" = 2 ] && scale=(scale=ray scale.devices=2)
start=$(date +%s)
chunk=()
[ -n "${FK_CHUNK:-}" ] && chunk=("tasks.include=[$FK_CHUNK]")
timeout "${FK_RUN_TIMEOUT:-570}" python3 -m fastkernels hardware=h200 tasks=all "tasks.levels=${FK_LEVELS:-[1,2]}" \
  "${chunk[@]}" agent=noop harness.cuda_graphs=false harness.max_timing_s=1 harness.max_iterations=100 "${scale[@]}" \
  hydra.run.dir="$out/${FK_NAME:-gpus$lanes}" "$@" 2>&1 | grep -v " PASSED" | tail -5
name=${FK_NAME:-gpus$lanes}
echo "$name: gpus=$lanes wall $(( $(date +%s) - start )) s ($(ls "$out/$name"/workers/*.rows.jsonl 2>/dev/null | wc -l) tasks with rows)"
tar czf "$out/$name.tgz" -C "$out" "$name" && rm -rf "${out:?}/$name"
