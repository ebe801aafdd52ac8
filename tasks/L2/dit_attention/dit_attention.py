"""FLUX's single-stream attention (diffusers FluxAttention with FluxAttnProcessor, pre_only, as in
FluxSingleTransformerBlock) built from the L1 tasks: to_q / to_k / to_v -> per-head RMSNorm of q and k -> FLUX's
axial rotary embedding -> non-causal attention. There is no output projection here: FLUX fuses it with the MLP's
(FluxSingleTransformerBlock.proj_out), see the dit_block task.

Linear, RMSNorm and EncoderAttention come from component(...), so this one file is the eager module (eager
components; in float64, the oracle) and the production one. The rotary embedding stays inline, as diffusers'
apply_rotary_emb: x * cos + rotate_pairs(x) * sin in fp32, rounded to x's dtype. Its cos/sin table is FluxPosEmbed's
for this layout (text tokens at position 0, then image tokens at (0, row, column) of the packed latent grid, axes
of 16, 56 and 56 channels, theta 10000), built once in float64, stored in fp32, and kept fp32 in a bf16 module.
"""

from __future__ import annotations

import torch

from fastkernels.composition import component
from fastkernels.fp32_buffers import KeepsFp32Buffers

AXES_DIM = (16, 56, 56)
THETA = 10000.0


def flux_rope_table(text_seq_len: int, height: int, width: int) -> tuple[torch.Tensor, torch.Tensor]:
    """FluxPosEmbed(theta=10000, axes_dim=[16, 56, 56]) of cat([txt_ids, img_ids]): cos and sin [tokens, 128]."""
    rows = torch.arange(height, dtype=torch.float64)[:, None].expand(height, width)
    cols = torch.arange(width, dtype=torch.float64)[None, :].expand(height, width)
    image = torch.stack([torch.zeros(height * width, dtype=torch.float64), rows.flatten(), cols.flatten()], dim=1)
    ids = torch.cat([torch.zeros(text_seq_len, 3, dtype=torch.float64), image])
    cos, sin = [], []
    for axis, dim in enumerate(AXES_DIM):
        freqs = 1.0 / (THETA ** (torch.arange(0, dim, 2, dtype=torch.float64)[: dim // 2] / dim))
        angles = torch.outer(ids[:, axis], freqs)
        cos.append(angles.cos().repeat_interleave(2, dim=1))
        sin.append(angles.sin().repeat_interleave(2, dim=1))
    return torch.cat(cos, dim=-1).float(), torch.cat(sin, dim=-1).float()


class FluxSingleAttention(KeepsFp32Buffers):
    fp32_buffers = ("rope_cos", "rope_sin")  # Module.to(bf16) must not round the tables

    def __init__(self, query_dim: int, heads: int, dim_head: int, eps: float, text_seq_len: int, height: int,
                 width: int) -> None:
        super().__init__()
        if dim_head != sum(AXES_DIM):
            raise ValueError(f"FLUX's rotary axes cover {sum(AXES_DIM)} channels, not dim_head {dim_head}")
        Linear = component("linear")
        RMSNorm = component("rms_norm")
        EncoderAttention = component("encoder_attention")
        self.heads = heads
        self.dim_head = dim_head
        self.to_q = Linear(query_dim, heads * dim_head, bias=True)
        self.to_k = Linear(query_dim, heads * dim_head, bias=True)
        self.to_v = Linear(query_dim, heads * dim_head, bias=True)
        self.norm_q = RMSNorm(dim_head, eps=eps)
        self.norm_k = RMSNorm(dim_head, eps=eps)
        self.attn = EncoderAttention(heads, dim_head)
        cos, sin = flux_rope_table(text_seq_len, height, width)
        self.register_buffer("rope_cos", cos, persistent=False)
        self.register_buffer("rope_sin", sin, persistent=False)

    def rotate(self, x: torch.Tensor) -> torch.Tensor:
        """diffusers apply_rotary_emb(use_real=True, use_real_unbind_dim=-1) on [batch, tokens, heads, dim_head]."""
        real, imag = x.reshape(*x.shape[:-1], -1, 2).unbind(-1)
        rotated = torch.stack([-imag, real], dim=-1).flatten(3)
        compute = torch.promote_types(x.dtype, torch.float32)
        cos, sin = self.rope_cos[None, :, None, :].to(compute), self.rope_sin[None, :, None, :].to(compute)
        return (x.to(compute) * cos + rotated.to(compute) * sin).to(x.dtype)

    def forward(self, hidden_states: torch.Tensor) -> torch.Tensor:
        batch, tokens, _ = hidden_states.shape
        heads = (batch, tokens, self.heads, self.dim_head)
        query = self.rotate(self.norm_q(self.to_q(hidden_states).view(heads)))
        key = self.rotate(self.norm_k(self.to_k(hidden_states).view(heads)))
        value = self.to_v(hidden_states).view(heads)
        return self.attn(query, key, value).flatten(2, 3)
