#!/usr/bin/env bash
# Runs scripts/device-session.sh steps on the GPUs of one machine at once, a lane per GPU, within one device call, and
# brings everything back as ONE archive: the device tool returns at most 8 files from $OUT (2026-12-01: a call whose
# two lanes left 16 files there lost half of them, the GPU tests' log among them).
# Usage: FK_CALL_BUDGET=SECONDS bash scripts/device-lanes.sh .lanes/FILE   (SECONDS: the call's timeout_s; .lanes/ is
# ignored by git, so name it in the device call's carry with .whl and .picks)
# LANES_FILE holds one run a line, `LANE STEP [VAR=VALUE ...]` in shell quoting (# starts a comment), e.g.
#   0 noop FK_TASKS="tasks=all tasks.include=[softmax,gelu]"
#   1 gpu-tests FK_PACK_MARGIN=20
# A LANE is a GPU index, or GPU:NAME for one of several lanes on that GPU (0:a, 0:b): lanes that share a GPU disturb
# each other's timing, so they are for untimed work only (the warm step: compiling and autotuning, CPU-bound, in
# parallel: scripts/remaining_tasks.py --warm-lanes writes such a file).
# Every line is checked first (a GPU index, one of device-session.sh's steps, VAR=VALUE words): a bad one stops it
# with one error naming the file and line, before anything runs.
# A lane's runs go in order, each restoring the tuning picks the run before it left; the lanes run side by side
# (CUDA_VISIBLE_DEVICES=GPU). The lanes of one GPU share its caches (FK_CACHE=/tmp/fk-lane-GPU, kept while the
# machine stays warm), so a later run or call on that GPU reuses their compiles.
# Every run gets what is left of FK_CALL_BUDGET, counted from this script's start (unless its line sets its own).
# Afterwards $OUT holds lanes.tgz (run N of lane g's $OUT as lane-g-N/, and each lane's log as lane-g.log; a lane
# GPU:NAME is written GPU-NAME) and
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
  [[ "${1:-}" =~ ^[0-9]+(:[A-Za-z0-9_-]+)?$ ]] || bad "the first word must be a lane: a GPU index, or GPU:NAME"
  [[ "$steps" == *" ${2:-none} "* ]] || bad "unknown step '${2:-}' (one of:$steps)"
  shift 2
  for assignment in "$@"; do
    [[ "$assignment" =~ ^[A-Za-z_][A-Za-z0-9_]*= ]] || bad "'$assignment' is not VAR=VALUE"
  done
done < "$lanes_file"
# lanes that share a GPU run side by side on it, which would disturb any timing: only the untimed warm step may
shared=$(awk '{split($1, lane, ":"); if (!seen[$1]++) count[lane[1]]++} END {for (g in count) if (count[g] > 1) print g}' <<< "$runs")
number=0
while IFS= read -r line; do
  number=$((number + 1))
  [[ "$line" =~ ^[[:space:]]*(#|$) ]] && continue
  eval "set -- $line"
  if [ "$2" != warm ] && grep -qx "${1%%:*}" <<< "$shared"; then
    echo "device-lanes.sh: $lanes_file line $number ($line): $2 on GPU ${1%%:*}, which several lanes share: lanes" \
      "side by side on one GPU disturb each other's timing, so only warm may share one" >&2
    exit 2
  fi
done < "$lanes_file"
budget=${FK_CALL_BUDGET:-590}
out=${OUT:-/tmp/fk-out}
work=$(mktemp -d /tmp/fk-lanes.XXXXXX)
mkdir -p "$out"
# device-session.sh sets up the carried wheels itself; this script needs them for the picks merge at the end
if [ -d .whl ] && [ "${FK_WHEELS:-carried}" != none ]; then source scripts/device-env.sh || exit 1; fi
first_picks=${FK_PICKS:-.picks/${FK_HARDWARE:-h200}.tgz}

run_lane() {  # LANE: its runs, in the file's order
  local lane=$1 gpu=${1%%:*} number=0 picks=$first_picks line step dir
  while IFS= read -r line; do
    eval "set -- $line"
    [ "$1" = "$lane" ] || continue
    step=$2; shift 2
    number=$((number + 1)); dir=$work/lane-${lane/:/-}-$number; mkdir -p "$dir"
    echo "== lane $lane run $number: $step $*"
    ( export CUDA_VISIBLE_DEVICES=$gpu FK_CACHE=/tmp/fk-lane-$gpu OUT=$dir FK_PICKS=$picks
      export FK_CALL_BUDGET=$(( budget - ($(date +%s) - start) ))
      for assignment in "$@"; do export "${assignment?}"; done  # a line's own settings win
      bash scripts/device-session.sh "$step" < /dev/null )
    [ "$picks" != none ] && [ -f "$dir/picks.tgz" ] && picks=$dir/picks.tgz
  done <<< "$runs"
  echo "$picks" > "$work/lane-${lane/:/-}.picks"
}

for lane in $(awk '{print $1}' <<< "$runs" | sort -u); do
  run_lane "$lane" > "$work/lane-${lane/:/-}.log" 2>&1 &
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
# each run's own picks (about 150 KB) stay out of the archive: the merged picks.tgz beside it holds them all, and
# the archives are kept in the repository, whose working tree travels in the device tool's 64 MiB carry
tar czf "$out/lanes.tgz" --exclude='lane-*/picks.tgz' -C "$work" .
for log in "$work"/lane-*.log; do
  echo "== $(basename "$log")"
  grep -E "^== lane|rows: |REWARD_HACK|FAILED|failed|passed|^step |skipped" "$log" | grep -v "^  PASSED" | tail -20
done
rm -rf "$work"
