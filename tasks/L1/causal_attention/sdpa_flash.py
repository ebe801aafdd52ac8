"""Causal GQA attention through torch's scaled_dot_product_attention forced onto the FlashAttention-2 backend
(SDPBackend.FLASH_ATTENTION): the flash-attn kernels vendored in PyTorch, i.e. flash_attn_func(q, k, v, causal=True)
for [batch, seq, heads, head_dim] inputs, with GQA through enable_gqa=True. On an H200 it runs about 2x slower than
the cuDNN backend (sdpa_cudnn.py), which is what PyTorch picks by default there."""

from __future__ import annotations

from pathlib import Path

from torch.nn.attention import SDPBackend

from fastkernels.implementations import import_file

_default = import_file(Path(__file__).with_name("sdpa_default.py"), namespace="tasks.causal_attention")


class CausalAttention(_default.CausalAttention):
    backend = SDPBackend.FLASH_ATTENTION
