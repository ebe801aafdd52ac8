"""SwinV2 window attention through FlexAttention (torch.nn.attention.flex_attention, compiled to Triton on CUDA:
flex decoding's kernel for windows of under 128 tokens, the flash-style one above) on the raw q, k, v. The
score_mod turns each q.k into SwinV2's scaled cosine logit, multiplying it by the two rows' fp32 inverse norms and
the head's logit scale, and adds relative_position_bias[h, i, j] read from the [heads, N, N] input. Nothing of size
[windows, heads, N, N] is written, and neither are normalised copies of q and k (the sdpa path writes both and
reads the bias as a float attn_mask, which rules out the flash backend). The logits are q.k accumulated in fp32
over the inputs themselves, scaled in fp32: no bf16 rounding of normalised q and k.

`...MaxAutotune` is the same attention forced onto the flash-style kernel (FORCE_USE_FLEX_ATTENTION: windows of 64
tokens would otherwise take the decoding kernel, built for a few queries against a long cache) and compiled under
max-autotune, which times FlexAttention's tile configurations (64-token tiles among them, where the default is 128
query rows for a 64-token window) and keeps the fastest.
"""

from __future__ import annotations

from pathlib import Path
from typing import Callable

import torch
from torch.nn.attention.flex_attention import flex_attention

from fastkernels.compiled import MAX_AUTOTUNE
from fastkernels.implementations import import_file

_eager = import_file(Path(__file__).with_name("swinv2_window_attention.py"), namespace="tasks.swinv2_window_attention")
_compiled = torch.compile(flex_attention, dynamic=False)
_compiled_max_autotune = torch.compile(flex_attention, dynamic=False, mode=MAX_AUTOTUNE)
_FLASH_STYLE = {"FORCE_USE_FLEX_ATTENTION": True}


def inverse_norm(x: torch.Tensor) -> torch.Tensor:
    """1 / max(|x|, 1e-12) over the last dim, in fp32 or wider: F.normalize's divisor, [windows, heads, N]."""
    norm = torch.linalg.vector_norm(x.to(torch.promote_types(x.dtype, torch.float32)), dim=-1)
    return norm.clamp_min(1e-12).reciprocal()


class Swinv2WindowAttention(_eager.Swinv2WindowAttention):
    def forward(self, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, relative_position_bias: torch.Tensor):
        return self.flex(q, k, v, relative_position_bias, _compiled)

    def flex(self, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, relative_position_bias: torch.Tensor,
             attend: Callable, kernel_options: dict | None = None) -> torch.Tensor:
        """The attention through `attend`: flex_attention itself or a compiled one, with FlexAttention's
        kernel_options."""
        compute = torch.promote_types(q.dtype, torch.float32)
        q_factor = inverse_norm(q) * self.scale(compute).view(-1, 1)  # the head's logit scale rides on q's factor
        k_factor = inverse_norm(k)
        bias = relative_position_bias

        def scaled_cosine_plus_bias(score: torch.Tensor, b: torch.Tensor, h: torch.Tensor, q_idx: torch.Tensor,
                                    kv_idx: torch.Tensor) -> torch.Tensor:
            return score * q_factor[b, h, q_idx] * k_factor[b, h, kv_idx] + bias[h, q_idx, kv_idx]

        return attend(q, k, v, score_mod=scaled_cosine_plus_bias, scale=1.0, kernel_options=kernel_options)


class Swinv2WindowAttentionMaxAutotune(Swinv2WindowAttention):
    def forward(self, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, relative_position_bias: torch.Tensor):
        return self.flex(q, k, v, relative_position_bias, _compiled_max_autotune, _FLASH_STYLE)
