"""Rotary embedding through SGLang's JIT-compiled CUDA fused rope kernel (sglang.kernels.ops.attention.rope
.apply_rope_with_cos_sin_cache_inplace, kernels/jit/csrc/elementwise/rope.cuh), what SGLang's
RotaryEmbedding.forward_cuda runs on CUDA for head sizes 64, 128, 256 and 512: query and key viewed as
[tokens, heads, head_size] (sliced to the rotary dim where it is partial) and rotated in place from the fp32 cos/sin
cache, which SGLang keeps in fp32 on CUDA, as this task's table is; neox and GPT-J layouts alike. SGLang sends other
head sizes to its port of vLLM's rotary_embedding kernel; here they, and a call without a key, fall back to the
vectorised PyTorch path (torch_native.py) and say so.

SGLang builds the kernel with nvcc and ninja through apache-tvm-ffi (sglang.kernels.jit), one module per (layout,
rotary dim, dtype), cached under ~/.cache/sglang/jit (or SGLANG_JIT_CACHE_DIR). The constructor builds the bfloat16
one on a GPU machine, so nvcc runs while the baseline is built, never in a timed call. The build needs CUDA_HOME to
name the toolkit when the nvcc on PATH is a wrapper outside it (scripts/device-chain.sh sets it)."""

from __future__ import annotations

from pathlib import Path

import torch
# at import, as every library baseline (the worker's integrity snapshot follows the baselines' imports)
import tvm_ffi  # noqa: F401 - what SGLang loads the built kernels through
from sglang.kernels.ops.attention.rope import _jit_fused_rope_module, apply_rope_with_cos_sin_cache_inplace

from fastkernels.implementations import import_file

# The vectorised PyTorch production path (the same fp32 table) is the base class and the fallback.
_native = import_file(Path(__file__).with_name("torch_native.py"), namespace="tasks.rotary_embedding")

HEAD_SIZES = (64, 128, 256, 512)  # RotaryEmbedding.__init__'s condition for the fused kernel on CUDA


class RotaryEmbedding(_native.RotaryEmbedding):
    def __init__(self, head_size: int, rotary_dim: int, max_position_embeddings: int, base: float,
                 is_neox_style: bool) -> None:
        super().__init__(head_size, rotary_dim, max_position_embeddings, base, is_neox_style)
        if torch.cuda.is_available() and head_size in HEAD_SIZES:
            _jit_fused_rope_module(is_neox_style, rotary_dim, torch.bfloat16, torch.bfloat16)  # the nvcc build, now

    def fallback_reason(self, inputs: dict[str, torch.Tensor | None]) -> str:
        """Why this case would not run SGLang's kernel, "" when it does (fastkernels.evaluate._fallback_reason)."""
        if inputs.get("key") is None:
            return "no key (SGLang's forward_cuda rotates q and k together)"
        if self.head_size not in HEAD_SIZES:
            return f"head size {self.head_size} (SGLang's fused rope kernel takes {', '.join(map(str, HEAD_SIZES))})"
        return ""

    def forward(self, positions: torch.Tensor, query: torch.Tensor, key: torch.Tensor | None = None):
        if self.fallback_reason({"key": key}):
            return super().forward(positions, query, key)
        tokens = positions.shape[0]
        q = query.view(tokens, -1, self.head_size)
        k = key.view(tokens, -1, self.head_size)
        if self.rotary_dim != self.head_size:
            q, k = q[..., : self.rotary_dim], k[..., : self.rotary_dim]
        apply_rope_with_cos_sin_cache_inplace(positions=positions, q=q, k=k, cos_sin_cache=self.cos_sin_cache,
                                              is_neox=self.is_neox_style)
        return query, key
