source scripts/device-env.sh || exit 1; t0=$(date +%s); B=${B:-470}; R=/tmp/r3; mkdir -p $R
left() { echo $((B - $(date +%s) + t0)); }
TRITON_CACHE_DIR=/tmp/cu/triton TORCHINDUCTOR_CACHE_DIR=/tmp/cu/inductor timeout 200 python3 -m pytest tests/gpu -o addopts="" -q --durations=6 -k "per_case_compile or helper_process or preload_leaves or failed_capture or slow_oracle" > $R/gpu-tests-rest.log 2>&1
OUT=$R/reference FK_CACHE=/tmp/c0 FK_PACK_MARGIN=25 FK_TASKS="tasks=all tasks.include=[dlrm_bottom_mlp,adaln_modulation,siglip_mlp,quick_gelu,per_token_group_quant_fp8,rms_norm,silu_and_mul,mrope,timestep_embedding,selective_scan,mamba_mixer,rope_3d]" FK_CALL_BUDGET=$(left) bash scripts/device-session.sh reference > $R/gpu0.log 2>&1
tar czf $OUT/call.tgz -C $R . ; tail -9 $R/gpu-tests-rest.log; grep -E "rows:|REWARD|FAIL|step " $R/gpu0.log
