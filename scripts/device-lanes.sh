#!/usr/bin/env bash
# Runs scripts/device-session.sh steps on the GPUs of one machine at once, a lane per GPU, within one device call, and
# brings everything back as ONE archive: the device tool returns at most 8 files from $OUT (2026-12-01: a call whose
# two lanes left 16 files there lost half of them, the GPU tests' log among them).
# Usage: FK_CALL_BUDGET=SECONDS bash scripts/device-lanes.sh .lanes/FILE   (SECONDS: the call's timeout_s; .lanes/ is
# ignored by git, so name it in the device call's carry with .whl and .picks)
# LANES_FILE holds one run a line, `GPU STEP [VAR=VALUE ...]` in shell quoting (# starts a comment), e.g.
#   0 noop FK_TASKS="tasks=all tasks.include=[softmax,gelu]"
#   1 gpu-tests FK_PACK_MARGIN=20
# Every line is checked first (a GPU index, one of device-session.sh's steps, VAR=VALUE words): a bad one stops it
# with one error naming the file and line, before anything runs.
# A GPU's runs go in order, in caches of their own (FK_CACHE=/tmp/fk-lane-GPU, so a later run reuses the compiles),
# each restoring the tuning picks the run before it left; the lanes run side by side (CUDA_VISIBLE_DEVICES=GPU).
# Every run gets what is left of FK_CALL_BUDGET, counted from this script's start (unless its line sets its own).
# Afterwards $OUT holds lanes.tgz (run N of GPU g's $OUT as lane-g-N/, and each lane's log as lane-g.log) and
# picks.tgz (every lane's last picks merged: copy it to .picks/HARDWARE.tgz). `scripts/remaining_tasks.py --lanes-dir`
# writes a pass's lanes files. The seventeenth session's call2.sh/call3.sh
# (docs/results/h200-2026-12-01-seventeenth/) are what this replaces.
set -uo pipefail
lanes_file=${1:?usage: FK_CALL_BUDGET=SECONDS bash scripts/device-lanes.sh LANES_FILE}
[ -f "$lanes_file" ] || { echo "device-lanes.sh: no lanes file $lanes_file" >&2; exit 2; }
start=$(date +%s)
runs=$(grep -v -E '^[[:space:]]*(#|$)' "$lanes_file")
[ -n "$runs" ] || { echo "device-lanes.sh: $lanes_file holds no runs" >&2; exit 2; }
# the steps are device-session.sh's case labels
steps=" $(grep -oE '^    [a-z|-]+\)' scripts/device-session.sh | tr -d ' )' | tr '|\n' '  ')"
number=0
while IFS= read -r line; do  # every line checked before any runs: a bad one would otherwise surface mid-call
  number=$((number + 1))
  [[ "$line" =~ ^[[:space:]]*(#|$) ]] && continue
  bad() { echo "device-lanes.sh: $lanes_file line $number ($line): $1" >&2; exit 2; }
  eval "set -- $line" 2>/dev/null || bad "not a shell word list"
  [[ "${1:-}" =~ ^[0-9]+$ ]] || bad "the first word must be a GPU index"
  [[ "$steps" == *" ${2:-none} "* ]] || bad "unknown step '${2:-}' (one of:$steps)"
  shift 2
  for assignment in "$@"; do
    [[ "$assignment" =~ ^[A-Za-z_][A-Za-z0-9_]*= ]] || bad "'$assignment' is not VAR=VALUE"
  done
done < "$lanes_file"
budget=${FK_CALL_BUDGET:-590}
out=${OUT:-/tmp/fk-out}
work=$(mktemp -d /tmp/fk-lanes.XXXXXX)
mkdir -p "$out"
# device-session.sh sets up the carried wheels itself; this script needs them for the picks merge at the end
if [ -d .whl ] && [ "${FK_WHEELS:-carried}" != none ]; then source scripts/device-env.sh || exit 1; fi
first_picks=${FK_PICKS:-.picks/${FK_HARDWARE:-h200}.tgz}

run_lane() {  # GPU: its runs, in the file's order
  local gpu=$1 number=0 picks=$first_picks line step dir
  while IFS= read -r line; do
    eval "set -- $line"
    [ "$1" = "$gpu" ] || continue
    step=$2; shift 2
    number=$((number + 1)); dir=$work/lane-$gpu-$number; mkdir -p "$dir"
    echo "== lane $gpu run $number: $step $*"
    ( export CUDA_VISIBLE_DEVICES=$gpu FK_CACHE=/tmp/fk-lane-$gpu OUT=$dir FK_PICKS=$picks
      export FK_CALL_BUDGET=$(( budget - ($(date +%s) - start) ))
      for assignment in "$@"; do export "${assignment?}"; done  # a line's own settings win
      bash scripts/device-session.sh "$step" < /dev/null )
    [ "$picks" != none ] && [ -f "$dir/picks.tgz" ] && picks=$dir/picks.tgz
  done <<< "$runs"
  echo "$picks" > "$work/lane-$gpu.picks"
}

for gpu in $(awk '{print $1}' <<< "$runs" | sort -u); do
  run_lane "$gpu" > "$work/lane-$gpu.log" 2>&1 &
done
wait

if [ "$first_picks" != none ]; then  # merge every lane's last picks: restore them all into one scratch cache
  merged=$(mktemp -d /tmp/fk-picks.XXXXXX)
  for list in "$work"/lane-*.picks; do
    archive=$(cat "$list"); rm -f "$list"
    [ -f "$archive" ] && python3 scripts/tuning_picks.py restore "$archive" --triton "$merged/triton" \
      --inductor "$merged/inductor" | tail -1
  done
  python3 scripts/tuning_picks.py collect "$out/picks.tgz" --triton "$merged/triton" --inductor "$merged/inductor" \
    | tail -1
  rm -rf "$merged"
fi
rm -f "$work"/lane-*.picks
tar czf "$out/lanes.tgz" -C "$work" .
for log in "$work"/lane-*.log; do
  echo "== $(basename "$log")"
  grep -E "^== lane|rows: |REWARD_HACK|FAILED|failed|passed|^step |skipped" "$log" | grep -v "^  PASSED" | tail -20
done
rm -rf "$work"
