#!/usr/bin/env bash
# One whole device call: the GPU tests named by FK_GPU_TEST (a pytest -k expression; none when unset), then
# scripts/device-call.sh over the lanes files for the lent card, then scripts/pack-out.sh, so everything comes back as
# $OUT/out.tgz (+ $OUT/picks.tgz). Why a script in git: the sessions' wrappers lived in .lanes/ (ignored) and were lost
# with each fresh checkout.
# Usage (the device command): FK_BUDGET=SECONDS [FK_GPU_TEST=EXPR] [FK_GPU_TEST_CARD=H200] \
#   bash scripts/device-tested-call.sh "H200 FILES" "OTHER FILES"
# SECONDS: under the call's timeout_s; the lanes runs get what the tests leave, less 25 s to pack.
# FK_GPU_TEST_CARD: run the tests only on a card whose name holds it.
# Afterwards out.tgz holds call.log (this script's log), gpu/card.txt, gpu/gpu-tests.log and run/ (device-call.sh's
# $OUT: chain.log, mem/, one lanes.tgz a lanes file). Clocks are only read.
set -u
usage='usage: FK_BUDGET=SECONDS bash scripts/device-tested-call.sh "H200 FILES" "OTHER FILES"'
[ "$#" -eq 2 ] || { echo "$usage" >&2; exit 2; }
out=${OUT:?OUT names the device call\'s output folder}
budget=${FK_BUDGET:?FK_BUDGET (the call\'s seconds, under its timeout_s) is required}
start=$(date +%s)
mkdir -p "$out/gpu" "$out/run"
{
  nvidia-smi --query-gpu=name,uuid,clocks.sm,clocks.mem --format=csv,noheader > "$out/gpu/card.txt"
  if [ -n "${FK_GPU_TEST:-}" ] && grep -q "${FK_GPU_TEST_CARD:-}" "$out/gpu/card.txt"; then
    # the GPU tests need the carried wheels and, for SGLang's JIT kernels, the toolkit device-chain.sh also finds
    ( source scripts/device-env.sh || { echo "=== GPU tests: the carried wheels did not install"; exit 1; }
      if [ -z "${CUDA_HOME:-}" ] && command -v nvcc >/dev/null; then
        CUDA_HOME=$(dirname "$(dirname "$(readlink -f "$(command -v nvcc)")")"); export CUDA_HOME
      fi
      timeout $(( budget / 3 )) python3 -m pytest tests/gpu -o addopts="" -v -s --durations=5 -k "$FK_GPU_TEST" \
        > "$out/gpu/gpu-tests.log" 2>&1
      echo "=== GPU tests ($FK_GPU_TEST): exit $?; $(tail -1 "$out/gpu/gpu-tests.log")" )
  fi
  left=$(( budget - ($(date +%s) - start) - 25 ))
  echo "=== lanes: $left s left"
  OUT=$out/run FK_CALL_BUDGET=$left bash scripts/device-call.sh "$1" "$2"
  status=$?  # the lanes' exit status is the call's, after packing whatever they left
  echo "=== call: $(( $(date +%s) - start )) s of $budget, lanes exit $status"
} > "$out/call.log" 2>&1
bash scripts/pack-out.sh
exit "$status"
