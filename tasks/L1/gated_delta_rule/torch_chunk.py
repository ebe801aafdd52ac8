"""The gated delta rule in chunks of 64, in PyTorch (fp32), as transformers' Qwen3-Next torch path
(torch_chunk_gated_delta_rule) computes it: within a chunk the delta-rule updates are folded into a WY form, solving
(I + tril(beta K K^T * decay, -1)) U = [beta V | beta K exp(G)] with one batched triangular solve (transformers
does the same solve row by row); a loop over chunks carries the [K, V] state."""

from __future__ import annotations

from pathlib import Path

import torch
import torch.nn.functional as F

from fastkernels.implementations import import_file

# The eager module owns the constructor (one interface for every implementation).
_eager = import_file(Path(__file__).with_name("gated_delta_rule.py"), namespace="tasks.gated_delta_rule")

CHUNK = 64


class ChunkGatedDeltaRule(_eager.ChunkGatedDeltaRule):
    def forward(self, q, k, v, g, beta, initial_state=None):
        batch, seqlen, heads, dv = v.shape
        dk = q.shape[-1]
        group = heads // q.shape[2]
        q32, k32 = q.float(), k.float()
        if self.use_qk_l2norm:
            q32, k32 = _eager.l2norm(q32), _eager.l2norm(k32)
        pad = (-seqlen) % CHUNK
        n = (seqlen + pad) // CHUNK

        def chunked(t: torch.Tensor) -> torch.Tensor:  # [b, T, h, (d)] -> [b, h, n, C, (d)], zero-padded
            t = t.float().transpose(1, 2)
            t = F.pad(t, (0, 0, 0, pad)) if t.dim() == 4 else F.pad(t, (0, pad))
            return t.reshape(batch, heads, n, CHUNK, *t.shape[3:])

        qc = chunked(q32.repeat_interleave(group, dim=2)) * dk ** -0.5
        kc = chunked(k32.repeat_interleave(group, dim=2))
        vc, gc, bc = chunked(v), chunked(g), chunked(beta)
        G = gc.cumsum(dim=-1)                                              # [b, h, n, C]
        lower = torch.tril(torch.ones(CHUNK, CHUNK, dtype=torch.bool, device=q.device))
        decay = (G[..., :, None] - G[..., None, :]).masked_fill(~lower, float("-inf")).exp()
        k_beta = kc * bc[..., None]
        system = (k_beta @ kc.transpose(-1, -2) * decay).tril(-1) + torch.eye(CHUNK, device=q.device)
        rhs = torch.cat([vc * bc[..., None], k_beta * G.exp()[..., None]], dim=-1)
        solved = torch.linalg.solve_triangular(system, rhs, upper=False)
        u, w = solved[..., :dv], solved[..., dv:]                          # new values; decayed keys
        scores = (qc @ kc.transpose(-1, -2) * decay)                       # causal, diagonal included
        q_in = qc * G.exp()[..., None]
        k_out = kc * (G[..., -1:] - G).exp()[..., None]
        last = G[..., -1].exp()
        state = (initial_state.float() if initial_state is not None
                 else q.new_zeros(batch, heads, dk, dv, dtype=torch.float32))
        o = torch.empty_like(vc)
        for c in range(n):
            v_new = u[:, :, c] - w[:, :, c] @ state
            o[:, :, c] = q_in[:, :, c] @ state + scores[:, :, c] @ v_new
            state = last[:, :, c, None, None] * state + k_out[:, :, c].transpose(-1, -2) @ v_new
        o = o.reshape(batch, heads, n * CHUNK, dv)[:, :, :seqlen].transpose(1, 2)
        return o.to(q.dtype), state
