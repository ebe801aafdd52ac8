"""Gated linear attention in chunks of 32 steps, in PyTorch (fp32), the form FLA's chunk kernels compute:
within a chunk, o_i gets sum_{j<=i} (q_i . (k_j * exp(G_i - G_j))) v_j with G the cumulative log gates, every
chunk at once; across chunks, a loop carries the [K, V] state (o_i also gets (q_i * exp(G_i)) S). Every exponent
is a sum of log gates over a causal span, so it is <= 0 and nothing overflows whatever the gates."""

from __future__ import annotations

from pathlib import Path

import torch
import torch.nn.functional as F

from fastkernels.implementations import import_file

# The eager module owns the constructor (one interface for every implementation).
_eager = import_file(Path(__file__).with_name("gla_chunk.py"), namespace="tasks.gla_chunk")

CHUNK = 32


def split_chunks(t: torch.Tensor, size: int) -> torch.Tensor:
    """[b, T, h, d] -> [b, h, n, size, d] in fp32, T zero-padded to a multiple of `size` (the chunked linear-attention
    layout; retention and rwkv7_wkv's chunked paths use it too)."""
    batch, seqlen, heads, dim = t.shape
    pad = (-seqlen) % size
    t = F.pad(t.float(), (0, 0, 0, 0, 0, pad))
    return t.reshape(batch, (seqlen + pad) // size, size, heads, dim).permute(0, 3, 1, 2, 4)


def merge_chunks(o: torch.Tensor, seqlen: int) -> torch.Tensor:
    """split_chunks undone: [b, h, n, C, d] -> [b, seqlen, h, d], the padding dropped."""
    batch, heads, n, size, dim = o.shape
    return o.permute(0, 2, 3, 1, 4).reshape(batch, n * size, heads, dim)[:, :seqlen]


class ChunkGLA(_eager.ChunkGLA):
    def forward(self, q, k, v, g, initial_state=None):
        batch, seqlen, heads, dk = q.shape
        dv = v.shape[-1]
        qc, kc, vc, gc = (split_chunks(t, CHUNK) for t in (q, k, v, g))
        qc = qc * dk ** -0.5
        n = qc.shape[2]
        G = gc.cumsum(dim=3)                                                  # [b, h, n, C, K]
        causal = torch.tril(torch.ones(CHUNK, CHUNK, dtype=torch.bool, device=q.device))
        diff = (G[:, :, :, :, None, :] - G[:, :, :, None, :, :]).masked_fill(~causal[:, :, None], float("-inf"))
        scores = torch.einsum("bhnik,bhnjk,bhnijk->bhnij", qc, kc, diff.exp())
        o = scores @ vc                                                       # intra-chunk part
        q_in = qc * G.exp()                                                   # reads the incoming state
        k_out = kc * (G[:, :, :, -1:] - G).exp()                              # writes the outgoing state
        last = G[:, :, :, -1].exp()                                           # [b, h, n, K]
        state = (initial_state.float() if initial_state is not None
                 else q.new_zeros(batch, heads, dk, dv, dtype=torch.float32))
        for c in range(n):
            o[:, :, c] += q_in[:, :, c] @ state
            state = last[:, :, c, :, None] * state + k_out[:, :, c].transpose(-1, -2) @ vc[:, :, c]
        return merge_chunks(o, seqlen).to(q.dtype), state
