# Two lanes on nvidia-h200-x2; every result lands under /tmp/r and comes back as one archive ($OUT takes 8 files).
source scripts/device-env.sh || exit 1; t0=$(date +%s); B=${B:-588}; R=/tmp/r; mkdir -p $R
left() { echo $((B - $(date +%s) + t0)); }
ab="tasks=all tasks.include=[timestep_embedding,hardswish,embedding,mrope,gated_delta_rule_decode]"
eg="tasks=all tasks.include=[sparse_propagation,selective_scan,retention,rwkv7_wkv]"
( export CUDA_VISIBLE_DEVICES=1 FK_CACHE=/tmp/c1 OUT=$R/gpu-tests FK_PACK_MARGIN=15 FK_CALL_BUDGET=$(left)
  bash scripts/device-session.sh gpu-tests ) > $R/gpu1.log 2>&1 &
( export CUDA_VISIBLE_DEVICES=0
  OUT=$R/ab-off FK_CACHE=/tmp/c0a FK_TASKS="$ab" FK_CALL_BUDGET=$(left) bash scripts/device-session.sh noop
  OUT=$R/ab-on FK_CACHE=/tmp/c0b FK_TASKS="$ab" FK_OVERRIDES="harness.launch_pad_decay_after=64" FK_CALL_BUDGET=$(left) bash scripts/device-session.sh noop
  OUT=$R/eager FK_CACHE=/tmp/c0b FK_PICKS=$R/ab-on/picks.tgz FK_TASKS="$eg" FK_OVERRIDES="harness.time_eager=true harness.cuda_graphs=false" FK_CALL_BUDGET=$(left) bash scripts/device-session.sh noop
  OUT=$R/reference FK_CACHE=/tmp/c0b FK_PICKS=$R/eager/picks.tgz FK_TASKS="tasks=all tasks.include=[dlrm_bottom_mlp,adaln_modulation,siglip_mlp,quick_gelu,per_token_group_quant_fp8,rms_norm,silu_and_mul]" FK_CALL_BUDGET=$(left) bash scripts/device-session.sh reference
) > $R/gpu0.log 2>&1 &
wait; tar czf $OUT/call.tgz -C $R . ; cp $R/gpu-tests/gpu-tests.log $OUT/ 2>/dev/null
grep -v "^  PASSED" $R/gpu0.log | grep -E "rows:|REWARD|FAIL|step " ; tail -15 $R/gpu1.log
