"""Non-causal attention through torch's scaled_dot_product_attention forced onto SDPBackend.CUDNN_ATTENTION:
cuDNN's fused flash attention for Hopper."""

from __future__ import annotations

from pathlib import Path

from torch.nn.attention import SDPBackend

from fastkernels.implementations import import_file

_default = import_file(Path(__file__).with_name("sdpa_default.py"), namespace="tasks.encoder_attention")


class EncoderAttention(_default.EncoderAttention):
    backend = SDPBackend.CUDNN_ATTENTION
