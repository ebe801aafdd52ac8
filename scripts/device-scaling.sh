#!/usr/bin/env bash
# Issue #5's scale-out measurement on the lent 2-GPU machine (device tool: kind nvidia-h200-x2, carry .whl): the
# level1+level2 noop suite on 1 GPU (scale=serial) or on 2 (scale=ray), with fresh Inductor and Triton caches so
# neither run inherits the other's compiled kernels:
#   bash scripts/device-scaling.sh 2    then    bash scripts/device-scaling.sh 1
# then, here: python scripts/compare_runs.py gpus1 gpus2 (unpacked from the two gpus<N>.tgz) for the agreement.
# One call does not hold a cold pass (H200 x2, 2026-11-30, docs/scaling.md): compiling dominates. So fill the caches
# first with FK_CACHE=/tmp/fk-cache and cheap timing overrides, in calls made back to back (the machine keeps /tmp
# while warm, 30 s), then time the 2-GPU pass, then the 1-GPU pass as two halves on the two GPUs at once (`halves`
# below), adding their walls: each half runs serially on one GPU, under the same two-process host load as the
# 2-GPU pass. Measured that way: 608 s on 1 GPU, 315 s on 2.
#   bash scripts/device-scaling.sh halves   runs that 1-GPU pass: level 1 serially on GPU 0 and level 2 serially on
#                                            GPU 1 at once, and prints the sum of their walls.
set -uo pipefail
lanes=${1:?usage: device-scaling.sh 1|2|halves [extra hydra overrides]}
shift
source scripts/device-env.sh || exit 1
out=${OUT:-/tmp/fk-out}
mkdir -p "$out"
if [ "$lanes" = halves ]; then
  base=${FK_NAME:-gpus1}
  CUDA_VISIBLE_DEVICES=0 FK_LEVELS=[1] FK_NAME=${base}_l1 bash "$0" 1 "$@" > "$out/${base}_l1.txt" 2>&1 &
  CUDA_VISIBLE_DEVICES=1 FK_LEVELS=[2] FK_NAME=${base}_l2 bash "$0" 1 "$@" > "$out/${base}_l2.txt" 2>&1 &
  wait
  cat "$out/${base}_l1.txt" "$out/${base}_l2.txt"
  walls=$(grep -ho "gpus=1 wall [0-9]* s" "$out/${base}_l1.txt" "$out/${base}_l2.txt" | awk '{s += $3} END {print s}')
  echo "$base: 1 GPU, level 1 then level 2 serially: $walls s (the sum of the two halves' walls)"
  exit 0
fi
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
done_tasks=$(ls "$out/$name"/workers/*.rows.jsonl 2>/dev/null | wc -l)
echo "$name: gpus=$lanes wall $(( $(date +%s) - start )) s ($done_tasks tasks with rows)"
tar czf "$out/$name.tgz" -C "$out" "$name" && rm -rf "${out:?}/$name"
