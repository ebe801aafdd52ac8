#!/usr/bin/env bash
# The GPU measurements, as named steps that each fit one device-tool call (carry .whl; see scripts/device-env.sh):
#   gpu-tests   the GPU-only measurement and exploit tests (side streams, CUDA graphs, noop in both modes), each
#               logged by name; FK_GPU_TESTS="EXPR" runs only those pytest's -k EXPR selects (what a cut call left)
#   exploits    the CPU exploit suite (tests/exploits) on GPU cases: scripts/gpu_exploits.py, FK_EXPLOIT_JOBS runs side
#               by side (default 4), FK_EXPLOITS="A B" to pick, in $OUT/exploits.txt
#   noop        agent=noop over $FK_TASKS (default tasks=all), rows and tables in $OUT/noop.tgz
#   inductor    agent=noop over every task with an Inductor (torch_compile) production implementation, in
#               $OUT/inductor.tgz; every candidate log line with an Inductor note in inductor-candidates-compiled.txt
#               (a noop candidate runs its baseline's compiled function: the file should stay empty)
#   reference   agent=reference over $FK_TASKS (default: the tasks agents/reference has a candidate for; a task
#               without one would still time its baseline, 3-10 s a case), in $OUT/reference.tgz
#   ceilings    measured copy bandwidth and bf16 GEMM rate (scripts/measure.py)
#   repeat      one candidate task re-measured five times in fresh runs (scripts/measure.py)
#   diagnose    scripts/diagnose_noop.py on the noop rows that still moved in the tenth session's all-task pass
#               (convnext_block's convnextv2_tiny_stage1_224_b64, 0.989 with a tight interval, and timestep_embedding's
#               dit_xl2_train_256 under Inductor, 1.011), or on "$FK_DIAGNOSE" ("TASK CASE [--impl N] [--lottery K]")
#   calls       noop over $FK_TASKS keeping every timed call (harness.keep_call_times), as the harness runs and
#               with rechecks=0; scripts/call_times.py on each row further than 2% from 1 (on a GPU also on each
#               graph row further than 1%, --graphs), in $OUT/calls.txt
#   caches      noop over $FK_TASKS (default: softmax, layer_norm_2d, rope_3d, gla_chunk, gated_delta_rule) twice,
#               in shared and in per-case compile caches, each from fresh directories holding only the restored
#               picks: the compile time per-case caches add, in $OUT/caches.txt (runs in $OUT/caches.tgz)
#   warm        compile and autotune $FK_TASKS once with cheap timing (3 calls a case), rows discarded after
#               scripts/row_summary.py (statuses, failures, review notes) into $OUT/warm-rows.txt: what a timed step
#               after it then measures is the harness, not Inductor's and Triton's first compiles
# Usage: bash scripts/device-session.sh STEP [STEP ...]; extra Hydra overrides in FK_OVERRIDES. Several GPUs at once,
# with everything back as one archive: scripts/device-lanes.sh. The Inductor and
# Triton caches (Triton's autotuning picks too) live in FK_CACHE (default /tmp/fk-cache), shared by every step and by
# the calls made while the machine stays warm (30 s after each): `bash scripts/device-session.sh warm`, then in the
# next call the timed steps.
# Measured 2026-11-30: the whole task library (87 tasks) took 2457 s of worker time from cold caches (1435 s of it
# first compiles and autotuning), more than one call and, on one GPU, more than one session's device time: split it
# with FK_TASKS (scripts/remaining_tasks.py prints the splits) or use 2 GPUs (FK_OVERRIDES="scale=ray
# scale.devices=2" on nvidia-h200-x2). scripts/device-scaling.sh measures 1 vs 2 GPUs.
# FK_HARDWARE picks another profile (default h200; tests/test_device_session.py runs steps with cpu and
# FK_WHEELS=none, in the environment it runs in instead of the carried wheels).
# FK_CALL_BUDGET=SECONDS (the device call's timeout_s): every step's run is cut short FK_PACK_MARGIN (default 60) s
# before the call would end, so its rows are packed under $OUT instead of lost with the call (2026-12-01: a step cut
# by the call's limit lost its worker logs); a step that no longer fits is skipped and says so. It counts from this
# script's start: a second invocation in the same call gets what the first left.
set -uo pipefail
session_start=$(date +%s)
step_limit() {  # seconds the step's run may take: FK_RUN_TIMEOUT (else $1), within what FK_CALL_BUDGET leaves
  local limit=${FK_RUN_TIMEOUT:-$1}
  if [ -n "${FK_CALL_BUDGET:-}" ]; then
    local left=$(( FK_CALL_BUDGET - ($(date +%s) - session_start) - ${FK_PACK_MARGIN:-60} ))
    [ "$left" -lt "$limit" ] && limit=$left
  fi
  echo "$limit"
}
if [ -d .whl ] && [ "${FK_WHEELS:-carried}" != none ]; then source scripts/device-env.sh || exit 1; fi
hardware=${FK_HARDWARE:-h200}
out=${OUT:-/tmp/fk-out}
mkdir -p "$out"
read -r -a tasks <<< "${FK_TASKS:-tasks=all}"
read -r -a overrides <<< "${FK_OVERRIDES:-}"
cache=${FK_CACHE:-/tmp/fk-cache}
export TORCHINDUCTOR_CACHE_DIR=$cache/inductor TRITON_CACHE_DIR=$cache/triton
# Tuning picks (scripts/tuning_picks.py): FK_PICKS (default .picks/$hardware.tgz; carry .picks) is restored into the
# caches before the first step, and after every step $OUT/picks.tgz holds the caches' picks merged with it: copy it
# to FK_PICKS on the development machine for the next session. FK_PICKS=none tunes everything afresh.
picks=${FK_PICKS:-.picks/$hardware.tgz}
picks_args=(--triton "$TRITON_CACHE_DIR" --inductor "$TORCHINDUCTOR_CACHE_DIR")
if [ "$picks" != none ] && [ -f "$picks" ]; then
  python3 scripts/tuning_picks.py restore "$picks" "${picks_args[@]}" || exit 1
  FASTKERNELS_TUNING_PICKS="$(sha256sum "$picks" | cut -c1-16) $picks"; export FASTKERNELS_TUNING_PICKS
fi
collect_picks() {
  [ "$picks" = none ] && return
  local merge=$out/picks.tgz; [ -f "$merge" ] || merge=$picks
  python3 scripts/tuning_picks.py collect "$out/picks.tgz" "${picks_args[@]}" --merge "$merge" | tail -1
}
# Every step here runs trusted code (the harness's own noop and reference candidates), so its baselines compile in
# the shared caches under FK_CACHE, whose picks collect_picks gathers; an agent's run keeps the default per-case
# caches, seeded from FASTKERNELS_TUNING_PICKS (fastkernels/case_caches.py).
trusted=(harness.compile_caches=shared)
cheap=(harness.warmup=1 harness.iterations=3 harness.max_iterations=3 harness.max_timing_s=0.05 harness.rechecks=0
       harness.repeat_runs=1 harness.cuda_graphs=false)
for step in "$@"; do
  start=$(date +%s)
  if [ "$(step_limit 1)" -lt 1 ]; then echo "step $step: skipped, FK_CALL_BUDGET=$FK_CALL_BUDGET s is spent"; continue; fi
  case "$step" in
    gpu-tests)  # exploit candidates among them: caches of their own, never collected as picks
      TRITON_CACHE_DIR=$cache/untrusted/triton TORCHINDUCTOR_CACHE_DIR=$cache/untrusted/inductor \
        timeout "$(step_limit 540)" python3 -m pytest tests/gpu -o addopts="" -v --durations=5 \
          ${FK_GPU_TESTS:+-k "$FK_GPU_TESTS"} 2>&1 | tee "$out/gpu-tests.log" | tail -12 ;;
    exploits)  # untrusted candidates, as gpu-tests: caches of their own, never collected as picks
      TRITON_CACHE_DIR=$cache/untrusted/triton TORCHINDUCTOR_CACHE_DIR=$cache/untrusted/inductor \
        timeout "$(step_limit 540)" python3 scripts/gpu_exploits.py --hardware "$hardware" \
          --jobs "${FK_EXPLOIT_JOBS:-4}" --out /tmp/gpu-exploits "${overrides[@]}" ${FK_EXPLOITS:+--names $FK_EXPLOITS} \
          2>&1 | tee "$out/exploits.txt" ;;
    noop|reference|inductor)
      agent=$step; selection=("${tasks[@]}")
      if [ "$step" = inductor ]; then  # every task with an Inductor production implementation, noop
        agent=noop
        selection=(tasks=all "tasks.include=[$(python3 -c 'from fastkernels.registry import Registry
r = Registry()
print(",".join(n for n in r.names if any(i.name.startswith("torch_compile") for i in r.get(n).implementations.production)))')]")
      fi
      if [ "$step" = reference ] && [ -z "${FK_TASKS:-}" ]; then  # a task without a candidate still times its baseline
        selection=(tasks=all "tasks.include=[$(python3 -c 'from fastkernels.plan import candidate_path
from fastkernels.registry import Registry
from pathlib import Path
r = Registry()
print(",".join(n for n in r.names if candidate_path(Path("agents/reference"), r.get(n)).exists()))')]")
      fi
      timeout "$(step_limit 540)" python3 -m fastkernels hardware="$hardware" "${selection[@]}" agent="$agent" \
        hydra.run.dir="$out/$step" "${trusted[@]}" "${overrides[@]}" 2>&1 | grep -v " PASSED" | tail -12
      python3 scripts/row_summary.py "$out/$step" | tee "$out/$step-rows.txt" | head -40
      [ "$step" = inductor ] && grep -h ": candidate checked (Inductor" "$out/$step"/workers/*.log \
        | tee "$out/inductor-candidates-compiled.txt" | head -5
      python3 -m fastkernels.report "$out/$step" > "$out/$step.md" 2>/dev/null \
        || python3 scripts/measure.py --parts none --noop-rows "$out/$step" --out /tmp/measure | tail -12
      tar czf "$out/$step.tgz" -C "$out" "$step" && rm -rf "${out:?}/$step" ;;
    warm)  # its run directory under $OUT: lanes sharing a GPU warm side by side (scripts/device-lanes.sh), one
      # instance a side (they share one compiled function): six lanes at four instances a side ran out of device
      # memory on gelu_and_mul's prefill cases (2026-12-02)
      timeout "$(step_limit 540)" python3 -m fastkernels hardware="$hardware" "${tasks[@]}" agent=noop \
        hydra.run.dir="$out/warm-run" "${trusted[@]}" "${overrides[@]}" "${cheap[@]}" harness.instances=1 2>&1 \
        | tail -2
      echo "warm: $(ls "$out"/warm-run/workers/*.rows.jsonl 2>/dev/null | wc -l) tasks compiled"
      python3 scripts/row_summary.py "$out/warm-run" | tee "$out/warm-rows.txt" | head -40
      rm -rf "${out:?}/warm-run" ;;
    diagnose)
      if [ -n "${FK_DIAGNOSE:-}" ]; then read -r -a targets <<< "$FK_DIAGNOSE"; runs=("${targets[*]}")
      else runs=("convnext_block convnextv2_tiny_stage1_224_b64 --lottery 4"
                 "timestep_embedding dit_xl2_train_256 --impl torch_compile --lottery 6"); fi
      for target in "${runs[@]}"; do
        read -r -a words <<< "$target"
        # FK_DIAGNOSE_SCRIPT: another diagnosis taking TASK CASE [options] (scripts/judge_paths.py)
        timeout "$(step_limit 120)" python3 "scripts/${FK_DIAGNOSE_SCRIPT:-diagnose_noop.py}" "${words[@]}" 2>&1 \
          | tee -a "$out/diagnose.txt"
      done ;;
    calls)
      for variant in default harness.rechecks=0; do
        extra=(); [ "$variant" = default ] || extra=("$variant")
        timeout "$(step_limit 240)" python3 -m fastkernels hardware="$hardware" "${tasks[@]}" agent=noop \
          hydra.run.dir="$out/calls-${variant##*=}" harness.keep_call_times=true "${trusted[@]}" "${overrides[@]}" \
          "${extra[@]}" 2>&1 | tail -1
        { echo "== $variant"; python3 scripts/call_times.py "$out/calls-${variant##*=}" --over 0.02 2>&1
          [ "$hardware" = cpu ] || { echo "== $variant, graph replays"
            python3 scripts/call_times.py "$out/calls-${variant##*=}" --over 0.01 --graphs 2>&1; }; } \
          | tee -a "$out/calls.txt"
      done
      tar czf "$out/calls.tgz" -C "$out" calls-default calls-0 && rm -rf "$out"/calls-default "$out"/calls-0 ;;
    caches)  # what per-case compile caches cost: the same noop run in shared and in per-case caches, each variant
      # starting from fresh directories that hold only the restored picks, so neither reuses the other's kernels
      selection=("${tasks[@]}")
      [ -z "${FK_TASKS:-}" ] \
        && selection=(tasks=all "tasks.include=[softmax,layer_norm_2d,rope_3d,gla_chunk,gated_delta_rule]")
      for variant in shared per_case; do
        fresh=$cache/caches-$variant; rm -rf "$fresh"; mkdir -p "$fresh"
        if [ "$picks" != none ] && [ -f "$picks" ]; then
          python3 scripts/tuning_picks.py restore "$picks" --triton "$fresh/triton" --inductor "$fresh/inductor" \
            | tail -1
        fi
        TRITON_CACHE_DIR=$fresh/triton TORCHINDUCTOR_CACHE_DIR=$fresh/inductor timeout "$(step_limit 270)" \
          python3 -m fastkernels hardware="$hardware" "${selection[@]}" agent=noop \
          hydra.run.dir="$out/caches-$variant" harness.compile_caches="$variant" "${overrides[@]}" 2>&1 | tail -1
        { echo "== harness.compile_caches=$variant"; python3 scripts/row_summary.py "$out/caches-$variant" | head -3
          python3 scripts/measure.py --parts none --noop-rows "$out/caches-$variant" --out /tmp/measure-caches 2>&1 \
            | grep -E "^noop:|^worker time:|compile time \("; } | tee -a "$out/caches.txt"
        rm -rf "$fresh"
      done
      tar czf "$out/caches.tgz" -C "$out" caches-shared caches-per_case \
        && rm -rf "$out"/caches-shared "$out"/caches-per_case ;;
    ceilings|repeat)
      timeout "$(step_limit 300)" python3 scripts/measure.py hardware="$hardware" --parts "$step" --out /tmp/measure \
        harness.cuda_graphs=false "${trusted[@]}" "${overrides[@]}" 2>&1 | tee -a "$out/measure.txt" ;;
    *) echo "unknown step $step (gpu-tests, exploits, noop, reference, inductor, ceilings, repeat, warm, diagnose, calls, caches)"
       exit 2 ;;
  esac
  collect_picks
  echo "step $step: $(( $(date +%s) - start )) s"
done
