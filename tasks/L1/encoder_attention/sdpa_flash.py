"""Non-causal attention through torch's scaled_dot_product_attention forced onto SDPBackend.FLASH_ATTENTION:
the FlashAttention-2 kernels vendored in PyTorch, i.e. flash_attn_func(q, k, v, causal=False)."""

from __future__ import annotations

from pathlib import Path

from torch.nn.attention import SDPBackend

from fastkernels.implementations import import_file

_default = import_file(Path(__file__).with_name("sdpa_default.py"), namespace="tasks.encoder_attention")


class EncoderAttention(_default.EncoderAttention):
    backend = SDPBackend.FLASH_ATTENTION
