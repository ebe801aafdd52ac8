"""vLLM's native per-token-group fp8 quantization (vllm_native.py) compiled by Inductor into one fused kernel: what
vLLM's compiled models run when the quant_fp8 custom op is disabled."""

from __future__ import annotations

from pathlib import Path

import torch

from fastkernels.implementations import import_file

_native = import_file(Path(__file__).with_name("vllm_native.py"), namespace="tasks.per_token_group_quant_fp8")


class PerTokenGroupQuantFP8(_native.PerTokenGroupQuantFP8):
    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        compiled = self.__dict__.get("_compiled")
        if compiled is None:
            compiled = self.__dict__["_compiled"] = torch.compile(super().forward, dynamic=False)
        return compiled(x)
