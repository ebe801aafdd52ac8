"""The selective scan as transformers' MambaMixer.slow_forward runs it with `use_mambapy=True`: exp(delta A) and
delta B u for the whole sequence, then mambapy's parallel (Blelloch) scan over time, 2 log2(seqlen) passes instead of
seqlen steps, and the C contraction as one batched matmul. fp32. The sequence is padded to a power of two here, in
the layout pscan transposes back to contiguous, so every length takes the same path."""

from __future__ import annotations

from pathlib import Path

import torch
import torch.nn.functional as F
from mambapy.pscan import pscan

from fastkernels.implementations import import_file

# The eager module owns the constructor (one interface for every implementation).
_eager = import_file(Path(__file__).with_name("selective_scan.py"), namespace="tasks.selective_scan")


class SelectiveScan(_eager.SelectiveScan):
    def forward(self, u, delta, A, B, C, D=None, z=None, delta_bias=None):
        dt, u32 = self.time_steps(delta, delta_bias, torch.float32), u.float()
        seqlen = u.shape[-1]
        padded = 1 << max(seqlen - 1, 0).bit_length()
        # [batch, dim, seqlen, dstate], as transformers builds discrete_A and deltaB_u
        decay = torch.exp(A.float()[None, :, None, :] * dt[:, :, :, None])
        inject = dt[:, :, :, None] * B.float().transpose(1, 2)[:, None, :, :] * u32[:, :, :, None]
        if padded != seqlen:  # trailing steps that decay to 0 and inject nothing: the real states are unchanged
            decay, inject = (F.pad(t, (0, 0, 0, padded - seqlen)) for t in (decay, inject))
        states = pscan(decay.transpose(1, 2), inject.transpose(1, 2))[:, :seqlen]  # [batch, seqlen, dim, dstate]
        y = (states @ C.float().transpose(1, 2).unsqueeze(-1)).squeeze(3).transpose(1, 2)
        return self.skip_and_gate(y, u, D, z).to(u.dtype), states[:, -1].clone()
