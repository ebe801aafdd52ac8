"""Non-causal attention through torch's scaled_dot_product_attention with PyTorch's own backend choice, on the
[batch, heads, seq, head_dim] transposed views (what diffusers' AttnProcessor2_0 and transformers' "sdpa" attention
call; on CPU the fused CPU flash kernel or the math path)."""

from __future__ import annotations

import contextlib
from pathlib import Path

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel

from fastkernels.implementations import import_file

# The eager module owns the constructor (one interface for every implementation).
_eager = import_file(Path(__file__).with_name("encoder_attention.py"), namespace="tasks.encoder_attention")


class EncoderAttention(_eager.EncoderAttention):
    backend: SDPBackend | None = None  # None: PyTorch chooses; the sdpa_*.py adapters force one

    def forward(self, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
        with sdpa_kernel(self.backend) if self.backend is not None else contextlib.nullcontext():
            out = F.scaled_dot_product_attention(
                q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2), scale=self.softmax_scale
            )
        return out.transpose(1, 2)
