"""Paged decode attention as a gather of every sequence's pages into a padded [batch, max_len] K/V followed by one
torch scaled_dot_product_attention call with a key-padding mask and enable_gqa: the native-PyTorch route (vLLM's
pure-torch decode path gathers pages the same way). vLLM's own PagedAttention and FlashInfer/FlashAttention paged
kernels are not installable here."""

from __future__ import annotations

from pathlib import Path

import torch
import torch.nn.functional as F

from fastkernels.implementations import import_file

_eager = import_file(Path(__file__).with_name("paged_decode_attention.py"), namespace="tasks.paged_decode_attention")


class PagedDecodeAttention(_eager.PagedDecodeAttention):
    def forward(self, query: torch.Tensor, key_cache: torch.Tensor, value_cache: torch.Tensor,
                block_tables: torch.Tensor, seq_lens: torch.Tensor) -> torch.Tensor:
        batch, max_blocks = block_tables.shape
        max_len = max_blocks * self.block_size
        blocks = block_tables.long()
        k = key_cache[blocks].view(batch, max_len, self.num_kv_heads, self.head_dim).transpose(1, 2)
        v = value_cache[blocks].view(batch, max_len, self.num_kv_heads, self.head_dim).transpose(1, 2)
        valid = torch.arange(max_len, device=query.device)[None, :] < seq_lens[:, None]  # [batch, max_len]
        out = F.scaled_dot_product_attention(
            query.unsqueeze(2), k, v, attn_mask=valid[:, None, None, :], scale=self.softmax_scale,
            enable_gqa=self.num_kv_heads != self.num_heads,
        )
        return out.squeeze(2)
