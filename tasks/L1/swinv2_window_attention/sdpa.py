"""SwinV2 window attention through torch's scaled_dot_product_attention: q and k are normalised in fp32, the
per-head logit scale is folded into q, both are rounded to q's dtype, and the relative position bias is passed as
the float attn_mask with scale 1 (PyTorch picks its memory-efficient kernel, the fused one that takes a float
bias). transformers' own Swinv2SelfAttention runs the same math unfused (matmul, add, softmax, matmul) in bf16."""

from __future__ import annotations

from pathlib import Path

import torch
import torch.nn.functional as F

from fastkernels.implementations import import_file

_eager = import_file(Path(__file__).with_name("swinv2_window_attention.py"), namespace="tasks.swinv2_window_attention")


class Swinv2WindowAttention(_eager.Swinv2WindowAttention):
    def forward(self, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, relative_position_bias: torch.Tensor):
        qn = (F.normalize(q.float(), dim=-1) * self.scale(torch.float32)).to(q.dtype)
        kn = F.normalize(k.float(), dim=-1).to(k.dtype)
        bias = relative_position_bias.to(q.dtype).unsqueeze(0).expand(q.shape[0], -1, -1, -1)
        return F.scaled_dot_product_attention(qn, kn, v, attn_mask=bias, scale=1.0)
