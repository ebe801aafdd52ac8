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


class ChunkGLA(_eager.ChunkGLA):
    def forward(self, q, k, v, g, initial_state=None):
        batch, seqlen, heads, dk = q.shape
        dv = v.shape[-1]
        pad = (-seqlen) % CHUNK
        n = (seqlen + pad) // CHUNK

        def chunked(t: torch.Tensor) -> torch.Tensor:  # [b, T, h, d] -> [b, h, n, C, d], fp32, zero-padded
            t = F.pad(t.float(), (0, 0, 0, 0, 0, pad))
            return t.reshape(batch, n, CHUNK, heads, t.shape[-1]).permute(0, 3, 1, 2, 4)

        qc, kc, vc, gc = chunked(q) * dk ** -0.5, chunked(k), chunked(v), chunked(g)
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
        o = o.permute(0, 2, 3, 1, 4).reshape(batch, n * CHUNK, heads, dv)[:, :seqlen]
        return o.to(q.dtype), state
