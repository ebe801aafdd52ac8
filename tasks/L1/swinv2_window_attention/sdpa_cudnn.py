"""SwinV2 window attention through torch's scaled_dot_product_attention forced onto the cuDNN backend
(SDPBackend.CUDNN_ATTENTION: cuDNN's fused flash attention, which takes the [1, heads, N, N] relative position bias
as a float bias broadcast over the windows). q and k are first normalised in fp32 with the head's logit scale folded
into q and rounded to q's dtype, as sdpa.py does, but by one Inductor-compiled function (a fused pass over each),
where sdpa.py's eager F.normalize runs several kernels; then scale 1. The memory-efficient backend sdpa.py gets
walks 64-token windows in tiles made for long sequences."""

from __future__ import annotations

from pathlib import Path

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel

from fastkernels.implementations import import_file

_eager = import_file(Path(__file__).with_name("swinv2_window_attention.py"), namespace="tasks.swinv2_window_attention")


def normalised(q: torch.Tensor, k: torch.Tensor, scale: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """normalize(q) * scale and normalize(k), computed in fp32 and rounded to q's and k's dtype."""
    qn = (F.normalize(q.float(), dim=-1) * scale).to(q.dtype)
    return qn, F.normalize(k.float(), dim=-1).to(k.dtype)


_normalised = torch.compile(normalised, dynamic=False)


class Swinv2WindowAttention(_eager.Swinv2WindowAttention):
    def forward(self, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, relative_position_bias: torch.Tensor):
        qn, kn = _normalised(q, k, self.scale(torch.float32))
        bias = relative_position_bias.to(q.dtype).unsqueeze(0).expand(q.shape[0], -1, -1, -1)
        with sdpa_kernel(SDPBackend.CUDNN_ATTENTION):
            return F.scaled_dot_product_attention(qn, kn, v, attn_mask=bias, scale=1.0)
