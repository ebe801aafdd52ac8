#!/usr/bin/env bash
# Everything that needs the GPU, in one device-tool call (carry .whl; see scripts/device-env.sh):
#   1. the GPU-only measurement tests (side streams, CUDA graphs, noop in both modes);
#   2. agent=noop and agent=reference over every task (scripts/device-suite.sh);
#   3. scripts/measure.py (measured ceilings, noop distribution, five-run spread, overhead).
# Results land in $OUT: gpu-tests.log, tables.md, runs.tgz, measure.txt. Usage: bash scripts/device-session.sh
# Measured 2026-11-29: with 87 tasks this no longer fits one 600 s device call; run its steps in separate calls
# (the suite with tasks.include=[...] batches, or scale=ray on the 2-GPU machine).
set -uo pipefail
source scripts/device-env.sh || exit 1
out=${OUT:-/tmp/fk-out}
mkdir -p "$out"
python3 -m pytest tests/gpu -q 2>&1 | tee "$out/gpu-tests.log" | tail -5
FK_AGENT_TIMEOUT=${FK_AGENT_TIMEOUT:-240} bash scripts/device-suite.sh harness.max_timing_s=5 | tail -4
# ceilings and the five-run spread (the noop distribution comes from the suite above); prints each run as it ends
timeout 300 python3 scripts/measure.py hardware=h200 --parts ceilings,repeat --out /tmp/measure harness.max_timing_s=2 \
  harness.cuda_graphs=false 2>&1 | tee "$out/measure.txt"
