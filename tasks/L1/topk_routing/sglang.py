"""MoE top-k routing through SGLang's fused router (sglang.kernels.ops.moe.moe_fused_gate, SGLang 0.5.23), what
SGLang's fused_topk runs on CUDA for softmax scoring (its "unified Triton router", which replaced the topk_softmax
CUDA kernel vLLM's fused_topk calls): one Triton kernel a few rows a program, the row's softmax in fp32, then top_k
argmax rounds on the logits (lowest expert id wins a tie), the weights summed and divided when renormalize. It
returns fp32 weights and int32 ids, as vLLM's and SGLang's MoE kernels consume them; this task's interface returns
int64 ids, so they are widened after the kernel (one more small launch, which vLLM's and SGLang's layers skip)."""

from __future__ import annotations

from pathlib import Path

import torch
# at import, as every library baseline (the worker's integrity snapshot follows the baselines' imports)
from sglang.kernels.ops.moe.moe_fused_gate import moe_fused_gate

from fastkernels.implementations import import_file

# The native path owns the constructor (num_experts, top_k, renormalize); only forward differs.
_native = import_file(Path(__file__).with_name("torch_native.py"), namespace="tasks.topk_routing")


class TopKRouter(_native.TopKRouter):
    def forward(self, router_logits: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        # fused_topk's CUDA branch verbatim: no bias, softmax scoring, no shared experts, no scaling
        weights, ids = moe_fused_gate(router_logits, None, self.top_k, scoring_func="softmax",
                                      renormalize=self.renormalize)
        return weights, ids.to(torch.int64)
