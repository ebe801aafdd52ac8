"""MoE experts through SGLang 0.5.23's Triton fused MoE (sglang.srt.layers.moe.moe_runner.triton_utils.fused_moe
.outplace_fused_experts), what SGLang's FusedMoE layer runs for unquantized bf16 experts on CUDA without expert
parallelism (filter_expert=False): the JIT-built CUDA moe_align_block_size sorts the (token, slot) pairs by expert
into BLOCK_SIZE_M blocks, fused_moe_kernel (Triton) runs the gathered gate_up GEMM, the JIT CUDA silu_and_mul rounds
silu(gate) * up once to bf16, fused_moe_kernel runs the down GEMM with the routing weight on its fp32 accumulator,
and the slots are summed (torch.add for top_k 2, else the top-k sum kernel). Tile sizes come from the tuned configs
SGLang ships per (experts, intermediate size, GPU, Triton version), else its default heuristic. This is the kernel
vLLM's fused_experts also runs (SGLang's file says it was adapted from vLLM's). w13_weight [E, 2I, H] (gate rows
first) and w2_weight [E, H, I] are SGLang's w13 / w2 layouts; the int64 ids are narrowed to int32, as SGLang's
router hands them over.

One substitution, named here and in the manifest: on CUDA SGLang's top-k sum for more than 32 tokens and top_k > 2 is
sgl_kernel's AOT moe_sum_reduce, and sgl_kernel (a several-hundred-MB wheel of prebuilt CUDA kernels) is not
installed. While the module is imported, `sgl_kernel.moe_sum_reduce` is bound to SGLang's own Triton top-k sum
(moe_sum_reduce_triton, the same contract: out = scale * sum over slots, what SGLang runs on CUDA for up to 32 tokens
and on ROCm), and the stand-in module is removed again afterwards.

SGLang reads its settings (tuned-config lookup, deterministic mode, fused all-reduce) from a runtime context its
server publishes at start-up; where none is published, the adapter publishes the defaults of ServerArgs, as a server
started with no MoE options would have them, for SGLang's "dummy" model path (its own short cut past loading a model
config, which would need the network).

SGLang's JIT kernels build with nvcc through apache-tvm-ffi on first use (cached under ~/.cache/sglang/jit); a
small call at import on a GPU machine puts those builds in the worker's start-up, never in a timed call."""

from __future__ import annotations

import importlib
import sys
import types
from pathlib import Path

import torch
# at import, as every library baseline (the worker's integrity snapshot follows the baselines' imports)
import tvm_ffi  # noqa: F401 - what SGLang loads its JIT-built kernels through

from fastkernels.implementations import import_file

FUSED_MOE = "sglang.srt.layers.moe.moe_runner.triton_utils.fused_moe"

_eager = import_file(Path(__file__).with_name("experts.py"), namespace="tasks.moe_experts")


def import_fused_moe() -> types.ModuleType:
    """SGLang's fused MoE module; without sgl_kernel, imported beside a stand-in that binds only moe_sum_reduce."""
    try:
        import sgl_kernel  # noqa: F401 - the real AOT kernels, where installed
        return importlib.import_module(FUSED_MOE)
    except ImportError:
        pass
    from sglang.kernels.ops.moe.fused_moe_triton_kernels import moe_sum_reduce_triton
    stand_in = types.ModuleType("sgl_kernel")
    stand_in.moe_sum_reduce = moe_sum_reduce_triton
    sys.modules["sgl_kernel"] = stand_in
    try:
        return importlib.import_module(FUSED_MOE)
    finally:
        if sys.modules.get("sgl_kernel") is stand_in:
            del sys.modules["sgl_kernel"]


def publish_default_settings() -> None:
    """SGLang's default server settings, unless a runtime context is already published in this process."""
    from sglang.srt.runtime_context import get_exec, publish
    from sglang.srt.server_args import ServerArgs
    try:
        get_exec()
    except ValueError:  # "config namespace 'exec' not published"
        publish(ServerArgs(model_path="dummy"), role="scheduler")  # no model config is read


_fused_moe = import_fused_moe()
publish_default_settings()


class FusedMoEExperts(_eager.FusedMoEExperts):
    def forward(self, hidden_states: torch.Tensor, topk_weights: torch.Tensor, topk_ids: torch.Tensor) -> torch.Tensor:
        return _fused_moe.outplace_fused_experts(
            hidden_states, self.w13_weight, self.w2_weight, topk_weights, topk_ids.to(torch.int32),
            filter_expert=False)


def _build_jit_kernels() -> None:
    """One small call of each path (the single-block and the multi-block alignment), so nvcc runs now."""
    experts = FusedMoEExperts(4, 128, 64).to("cuda", torch.bfloat16)
    for tokens in (3, 300):
        x = torch.randn(tokens, 128, device="cuda", dtype=torch.bfloat16)
        ids = torch.randint(0, 4, (tokens, 2), device="cuda")
        experts(x, torch.rand(tokens, 2, device="cuda"), ids)
    torch.cuda.synchronize()


if torch.cuda.is_available():
    _build_jit_kernels()
