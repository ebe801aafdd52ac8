"""Retention in chunks of 64, in PyTorch (fp32): RetNet's chunkwise-recurrent form (torchscale's
chunk_recurrent_forward): within a chunk, (Q K^T * gamma^(i-j) for j <= i) V for every chunk at once; a loop over
chunks carries the [K, V] state, read as gamma^(i+1) Q S and written as gamma^C S + (K gamma^(C-1-j))^T V."""

from __future__ import annotations

from pathlib import Path

import torch

from fastkernels.implementations import import_file

# The eager module owns the constructor (one interface for every implementation).
_eager = import_file(Path(__file__).with_name("retention.py"), namespace="tasks.retention")
# The chunk layout the chunked linear-attention paths share (the gla_chunk task's production PyTorch path).
_chunks = import_file(Path(__file__).parents[1] / "gla_chunk" / "torch_chunk.py", namespace="tasks.gla_chunk")

CHUNK = 64


class ChunkRetention(_eager.ChunkRetention):
    def forward(self, q, k, v, initial_state=None):
        batch, seqlen, heads, dk = q.shape
        dv = v.shape[-1]
        pad = (-seqlen) % CHUNK
        qc, kc, vc = (_chunks.split_chunks(t, CHUNK) for t in (q, k, v))
        qc = qc * dk ** -0.5
        n = qc.shape[2]
        log_gamma = _eager.retention_decay(heads, torch.float32, q.device).log()[:, None]  # [h, 1]
        pos = torch.arange(CHUNK, dtype=torch.float32, device=q.device)
        gap = pos[:, None] - pos[None, :]
        decay = (log_gamma[..., None] * gap).exp().masked_fill(gap < 0, 0.0)    # [h, C, C]
        o = (qc @ kc.transpose(-1, -2) * decay[:, None]) @ vc                   # intra-chunk part
        q_in = qc * (log_gamma * (pos + 1)).exp()[:, None, :, None]             # gamma^(i+1)
        k_out = kc * (log_gamma * (CHUNK - 1 - pos)).exp()[:, None, :, None]    # gamma^(C-1-j)
        # Zero-padded steps at the end would still decay the state: stop the last chunk's state at seqlen.
        steps = [CHUNK] * (n - 1) + [CHUNK - pad]
        state = (initial_state.float() if initial_state is not None
                 else q.new_zeros(batch, heads, dk, dv, dtype=torch.float32))
        for c in range(n):
            o[:, :, c] += q_in[:, :, c] @ state
            if steps[c] == CHUNK:
                state = (log_gamma * CHUNK).exp()[..., None] * state + k_out[:, :, c].transpose(-1, -2) @ vc[:, :, c]
            else:
                m = steps[c]
                k_last = kc[:, :, c, :m] * (log_gamma * (m - 1 - pos[:m])).exp()[..., None]
                state = (log_gamma * m).exp()[..., None] * state + k_last.transpose(-1, -2) @ vc[:, :, c, :m]
        o = _chunks.merge_chunks(o, seqlen)
        return o.to(q.dtype), state
