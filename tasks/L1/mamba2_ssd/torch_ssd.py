"""Mamba2's chunked SSD in PyTorch, as transformers' Mamba2Mixer.torch_forward computes it (its path without
mamba_ssm's Triton kernels): within each chunk the masked decay matrix exp(segsum(dt A)) turns the scan into
C B^T-weighted attention; chunk-final states are decayed across chunks by one small matrix product; the output adds
each chunk's inflow from earlier chunks. fp32 throughout."""

from __future__ import annotations

from pathlib import Path

import torch
import torch.nn.functional as F

from fastkernels.implementations import import_file

# The eager module owns the constructor (one interface for every implementation).
_eager = import_file(Path(__file__).with_name("mamba2_ssd.py"), namespace="tasks.mamba2_ssd")


def segsum(x: torch.Tensor) -> torch.Tensor:
    """[..., T] -> [..., T, T]: out[i, j] = x[j+1] + ... + x[i] for j <= i, -inf above the diagonal."""
    T = x.shape[-1]
    x = x[..., None].expand(*x.shape, T)
    below = torch.tril(torch.ones(T, T, dtype=torch.bool, device=x.device), diagonal=-1)
    x = x.masked_fill(~below, 0)
    out = torch.cumsum(x, dim=-2)
    keep = torch.tril(torch.ones(T, T, dtype=torch.bool, device=x.device), diagonal=0)
    return out.masked_fill(~keep, float("-inf"))


class MambaChunkScan(_eager.MambaChunkScan):
    def forward(self, x, dt, A, B, C, D=None, z=None, dt_bias=None):
        batch, seqlen, nheads, headdim = x.shape
        group = nheads // B.shape[2]
        cs = min(self.chunk_size, seqlen)
        pad = (-seqlen) % cs
        step = dt.float() + (dt_bias.float() if dt_bias is not None else 0.0)
        step = F.softplus(step) if self.dt_softplus else step
        # Padded steps have dt = 0: no decay, no input, so the final state is the one after the last real step.
        step = F.pad(step, (0, 0, 0, pad))
        xdt = F.pad(x.float(), (0, 0, 0, 0, 0, pad)) * step[..., None]
        Bh = F.pad(B.float(), (0, 0, 0, 0, 0, pad)).repeat_interleave(group, dim=2)
        Ch = F.pad(C.float(), (0, 0, 0, 0, 0, pad)).repeat_interleave(group, dim=2)
        chunks = (seqlen + pad) // cs
        xdt, Bh, Ch = (t.reshape(batch, chunks, cs, *t.shape[2:]) for t in (xdt, Bh, Ch))
        a = (step * A.float()).reshape(batch, chunks, cs, nheads).permute(0, 3, 1, 2)  # [b, h, c, l]
        a_cumsum = torch.cumsum(a, dim=-1)
        # 1. within chunks: y = (C B^T * L) (x dt)
        scores = torch.einsum("bclhn,bcshn->bhcls", Ch, Bh) * torch.exp(segsum(a))
        y = torch.einsum("bhcls,bcshp->bclhp", scores, xdt)
        # 2. each chunk's final state from its own inputs
        decay_states = torch.exp(a_cumsum[..., -1:] - a_cumsum)
        states = torch.einsum("bclhn,bhcl,bclhp->bchpn", Bh, decay_states, xdt)
        # 3. carry states across chunks
        states = torch.cat([torch.zeros_like(states[:, :1]), states], dim=1)
        decay_chunk = torch.exp(segsum(F.pad(a_cumsum[..., -1], (1, 0))))
        states = torch.einsum("bhzc,bchpn->bzhpn", decay_chunk, states)
        states, final_state = states[:, :-1], states[:, -1]
        # 4. inflow of earlier chunks' state into each position
        y = y + torch.einsum("bclhn,bchpn,bhcl->bclhp", Ch, states, torch.exp(a_cumsum))
        y = y.reshape(batch, chunks * cs, nheads, headdim)[:, :seqlen]
        if D is not None:
            y = y + x.float() * D.float()[:, None]
        if z is not None:
            y = y * F.silu(z.float())
        return y.to(x.dtype), final_state
