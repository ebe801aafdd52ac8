"""Mamba2's SSD through flash-linear-attention's chunked Triton kernel for scalar-decay linear attention,
fla.ops.simple_gla.chunk_simple_gla: the SSD scan is simple GLA with q = C, k = B (groups repeated to heads),
v = dt * x, per-head log decay g = dt * A and scale 1 (FLA's own docs call it the Mamba2 SSD form). FLA returns the
state as [batch, heads, dstate, headdim]; mamba_ssm's layout is its transpose. D x and the z gate are added after."""

from __future__ import annotations

from pathlib import Path

import torch
import torch.nn.functional as F
from fla.ops.simple_gla import chunk_simple_gla

from fastkernels.implementations import import_file

# The eager module owns the constructor (one interface for every implementation).
_eager = import_file(Path(__file__).with_name("mamba2_ssd.py"), namespace="tasks.mamba2_ssd")


class MambaChunkScan(_eager.MambaChunkScan):
    def forward(self, x, dt, A, B, C, D=None, z=None, dt_bias=None):
        group = x.shape[2] // B.shape[2]
        step = dt.float() + (dt_bias.float() if dt_bias is not None else 0.0)
        step = F.softplus(step) if self.dt_softplus else step
        o, final_state = chunk_simple_gla(
            q=C.repeat_interleave(group, dim=2),
            k=B.repeat_interleave(group, dim=2),
            v=(x * step[..., None]).to(x.dtype),
            g=step * A.float(),
            scale=1.0,
            output_final_state=True,
        )
        y = o.float()
        if D is not None:
            y = y + x.float() * D.float()[:, None]
        if z is not None:
            y = y * F.silu(z.float())
        return y.to(x.dtype), final_state.transpose(-1, -2).float()
