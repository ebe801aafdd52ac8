"""MoE experts through SGLang 0.5.23's Triton fused MoE kernels, in the order SGLang's fused_experts_impl runs them
for unquantized experts without expert parallelism (sglang.srt.layers.moe.moe_runner.triton_utils.fused_moe
._fused_moe_kernel_sequence; SGLang's file says it was adapted from vLLM's fused_experts):

1. moe_align_block_size sorts the (token, slot) pairs by expert into BLOCK_SIZE_M blocks: SGLang's own function, which
   on CUDA calls sgl_kernel's AOT kernel; that wheel is too large to carry, so SGLang's JIT-built CUDA alignment
   kernel (the same contract) takes that call where it is not installed;
2. fused_moe_kernel (Triton, invoke_fused_moe_kernel) runs the gathered gate_up GEMM, rounded to x's dtype;
3. SGLang's JIT CUDA silu_and_mul rounds silu(gate) * up once;
4. fused_moe_kernel runs the down GEMM with the routing weight on its fp32 accumulator, one row a slot;
5. the slots are summed: torch.add for top_k 2; SGLang's Triton moe_sum_reduce_triton otherwise.

Why not SGLang's own entry point: fused_experts reads SGLang's runtime settings, which its server publishes at start
and which cannot be published here. Publishing imports every SGLang quantization scheme, and on CUDA those import
the AOT sgl_kernel wheel (several hundred MB, not installed; the H100, 2026-12-07, docs/results/h100-2026-12-07-
forty-fifth). So this adapter reads SGLang's tuned tile configs as get_moe_configs does (the file for the expert count,
intermediate size and GPU under the installed Triton's folder, else under the newest other version that has it; the
down GEMM's own file, else the up one's; the closest batch size), with SGLang's default heuristic where no file
exists. Four differences from SGLang's server: the alignment's JIT kernel where its CUDA path calls the AOT one
(step 1); no TMA path (SGLang takes it where a tuned file asks, as its H100 file for E=128 N=768 does; the H200 files
for these cases do not); its deterministic mode is not read (off by default); and beyond 32 tokens with top_k > 2
the slots are summed by SGLang's Triton kernel, where its CUDA path calls sgl_kernel's AOT one.

Importing SGLang's triton_utils package imports its fused_moe module, which on CUDA imports sgl_kernel's
moe_sum_reduce at load: it is imported beside a stand-in module that binds only that name to the Triton sum, removed
again afterwards (on the H100 the package imports that way). SGLang's JIT kernels build with nvcc through
apache-tvm-ffi on first use (cached); a small call at import on a GPU machine puts the builds in the worker's
start-up, never in a timed call. w13_weight [E, 2I, H] (gate rows first) and w2_weight [E, H, I] are SGLang's w13 /
w2 layouts; the int64 ids are narrowed to int32, as SGLang's router hands them over."""

from __future__ import annotations

import importlib
import importlib.util
import json
import sys
import types
from pathlib import Path
from typing import Any, Callable, TypeVar

import torch
import triton
import triton.language as tl
# at import, as every library baseline (the worker's integrity snapshot follows the baselines' imports)
import tvm_ffi  # noqa: F401 - what SGLang loads its JIT-built kernels through
from sglang.kernels.ops.activation.activation import silu_and_mul
from sglang.kernels.ops.moe.fused_moe_triton_kernels import invoke_fused_moe_kernel, moe_sum_reduce_triton

from fastkernels.implementations import import_file

TRITON_UTILS = "sglang.srt.layers.moe.moe_runner.triton_utils"
JIT_ALIGN = "sglang.kernels.ops.moe.moe_align"
T = TypeVar("T")

_eager = import_file(Path(__file__).with_name("experts.py"), namespace="tasks.moe_experts")


def with_moe_sum_reduce(load: Callable[[], T]) -> T:
    """load() with the real sgl_kernel where installed, else beside a stand-in binding only moe_sum_reduce."""
    if importlib.util.find_spec("sgl_kernel") is not None:  # the real AOT kernels, where installed
        return load()
    stand_in = types.ModuleType("sgl_kernel")
    stand_in.moe_sum_reduce = moe_sum_reduce_triton
    sys.modules["sgl_kernel"] = stand_in
    try:
        return load()
    finally:
        if sys.modules.get("sgl_kernel") is stand_in:
            del sys.modules["sgl_kernel"]


_align = with_moe_sum_reduce(lambda: importlib.import_module(f"{TRITON_UTILS}.moe_align_block_size"))


def jit_moe_align(topk_ids: torch.Tensor, num_experts: int, block_size: int, sorted_ids: torch.Tensor,
                  expert_ids: torch.Tensor, num_tokens_post_pad: torch.Tensor, cumsum_buffer: torch.Tensor,
                  pad_sorted_token_ids: bool, ignore_invalid_expert: bool = False) -> None:
    """SGLang's JIT CUDA alignment kernel, called as its moe_align_block_size calls sgl_kernel's AOT one: the first
    eight arguments are the same contract (SGLang calls this kernel itself where it pads expert ids or counts the
    inactive prefix)."""
    if ignore_invalid_expert:
        raise ValueError("SGLang's JIT alignment kernel has no ignore_invalid_expert")
    sys.modules[JIT_ALIGN].moe_align_block_size(topk_ids, num_experts, block_size, sorted_ids, expert_ids,
                                                num_tokens_post_pad, cumsum_buffer, pad_sorted_token_ids)


# On CUDA, SGLang's moe_align_block_size runs sgl_kernel's AOT alignment (H100, 2026-12-07: "No module named
# 'sgl_kernel'" at the first call); where that wheel is not installed its JIT kernel takes the call
if getattr(_align, "sgl_moe_align_block_size", None) is not None and importlib.util.find_spec("sgl_kernel") is None:
    importlib.import_module(JIT_ALIGN)
    _align.sgl_moe_align_block_size = jit_moe_align

_configs = importlib.import_module(f"{TRITON_UTILS}.fused_moe_triton_config")


def tuned_configs(experts: int, intermediate: int, down: bool) -> dict[int, dict[str, Any]] | None:
    """SGLang's tuned configs by batch size for this GPU, found as its get_moe_configs finds them, or None."""
    name = _configs.get_config_file_name(experts, intermediate, None, down_moe=down)
    root = Path(_configs.__file__).parent / "configs"
    installed = f"triton_{triton.__version__.replace('.', '_')}"
    others = sorted((d.name for d in root.iterdir() if d.name.startswith("triton_") and d.name != installed),
                    key=lambda d: tuple(int(x) for x in d.removeprefix("triton_").split("_")), reverse=True)
    for folder in (installed, *others):
        if (root / folder / name).exists():
            return {int(m): config for m, config in json.loads((root / folder / name).read_text()).items()}
    return tuned_configs(experts, intermediate, False) if down else None


def default_config(tokens: int, experts: int) -> dict[str, int]:
    """SGLang's get_default_config for unquantized experts."""
    if tokens <= experts:
        return {"BLOCK_SIZE_M": 16, "BLOCK_SIZE_N": 32, "BLOCK_SIZE_K": 64, "GROUP_SIZE_M": 1}
    return {"BLOCK_SIZE_M": 64, "BLOCK_SIZE_N": 64, "BLOCK_SIZE_K": 32, "GROUP_SIZE_M": 8}


def kernel_configs(tokens: int, experts: int, intermediate: int) -> tuple[dict[str, Any], dict[str, Any]]:
    """The up and down GEMMs' configs for `tokens`: the closest tuned batch size, without TMA."""
    def closest(configs: dict[int, dict[str, Any]]) -> dict[str, Any]:
        return dict(configs[min(configs, key=lambda m: abs(m - tokens))])

    up_configs = tuned_configs(experts, intermediate, down=False)
    up = closest(up_configs) if up_configs else default_config(tokens, experts)
    down_configs = tuned_configs(experts, intermediate, down=True) if up_configs else None
    down = closest(down_configs) if down_configs else dict(up)
    down["BLOCK_SIZE_M"] = up["BLOCK_SIZE_M"]  # the alignment is shared, as SGLang overrides it
    up.pop("USE_TMA", None)
    down.pop("USE_TMA", None)
    return up, down


_UNQUANTIZED = dict(use_fp8_w8a8=False, use_int8_w8a8=False, use_int8_w8a16=False, use_int4_w4a16=False,
                    per_channel_quant=False, block_shape=None, filter_expert=False)


class FusedMoEExperts(_eager.FusedMoEExperts):
    def forward(self, hidden_states: torch.Tensor, topk_weights: torch.Tensor, topk_ids: torch.Tensor) -> torch.Tensor:
        ids = topk_ids.to(torch.int32)
        tokens, top_k = ids.shape
        experts, gate_up, hidden = self.w13_weight.shape
        up, down = kernel_configs(tokens, experts, self.w2_weight.shape[2])
        sorted_ids, expert_ids, padded = _align.moe_align_block_size(ids, up["BLOCK_SIZE_M"], experts)
        compute_type = tl.bfloat16 if hidden_states.dtype == torch.bfloat16 else tl.float16
        cache1 = hidden_states.new_empty(tokens * top_k, gate_up)
        invoke_fused_moe_kernel(hidden_states, self.w13_weight, None, cache1, None, None, None, topk_weights, ids,
                                sorted_ids, expert_ids, padded, False, top_k, up, compute_type=compute_type,
                                **_UNQUANTIZED)
        cache2 = hidden_states.new_empty(tokens * top_k, gate_up // 2)
        silu_and_mul(cache1, cache2)
        cache3 = hidden_states.new_empty(tokens, top_k, hidden)
        invoke_fused_moe_kernel(cache2, self.w2_weight, None, cache3, None, None, None, topk_weights, ids,
                                sorted_ids, expert_ids, padded, True, 1, down, compute_type=compute_type,
                                router_topk=top_k, **_UNQUANTIZED)
        out = torch.empty_like(hidden_states)
        if top_k == 2:
            torch.add(cache3[:, 0], cache3[:, 1], out=out)
        else:
            moe_sum_reduce_triton(cache3, out, 1.0)
        return out


def _build_jit_kernels() -> None:
    """A small call of the single-block and the multi-block alignment, so nvcc runs now."""
    experts = FusedMoEExperts(4, 128, 64).to("cuda", torch.bfloat16)
    for tokens in (3, 300):
        x = torch.randn(tokens, 128, device="cuda", dtype=torch.bfloat16)
        experts(x, torch.rand(tokens, 2, device="cuda"), torch.randint(0, 4, (tokens, 2), device="cuda"))
    torch.cuda.synchronize()


if torch.cuda.is_available():
    _build_jit_kernels()
