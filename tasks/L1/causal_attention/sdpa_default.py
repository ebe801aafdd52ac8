"""Causal GQA attention through torch's scaled_dot_product_attention with PyTorch's own backend choice (on an H200
in bf16 with torch 2.11 it matches the cuDNN backend's time; on CPU the fused CPU flash kernel or the math path)."""

from __future__ import annotations

import math

import contextlib

import torch
import torch.nn.functional as F
from torch import nn
from torch.nn.attention import SDPBackend, sdpa_kernel


class CausalAttention(nn.Module):
    backend: SDPBackend | None = None  # None: PyTorch chooses; sdpa_flash.py / sdpa_cudnn.py force one

    def __init__(self, num_heads: int, num_kv_heads: int, head_dim: int) -> None:
        super().__init__()
        self.num_heads = num_heads
        self.num_kv_heads = num_kv_heads
        self.head_dim = head_dim
        self.softmax_scale = 1.0 / math.sqrt(head_dim)

    def forward(self, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
        with sdpa_kernel(self.backend) if self.backend is not None else contextlib.nullcontext():
            out = F.scaled_dot_product_attention(
                q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2),
                is_causal=True, scale=self.softmax_scale, enable_gqa=self.num_kv_heads != self.num_heads,
            )
        return out.transpose(1, 2)
