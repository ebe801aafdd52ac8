"""The selective scan as transformers' MambaMixer.slow_forward runs it (its torch path when mamba_ssm's CUDA kernel
is absent): every per-step factor exp(delta A) and delta B u computed at once for the whole sequence, then one fused
multiply-add per time step into a preallocated state history, and the C contraction as a single einsum. fp32."""

from __future__ import annotations

from pathlib import Path

import torch

from fastkernels.implementations import import_file

# The eager module owns the constructor (one interface for every implementation).
_eager = import_file(Path(__file__).with_name("selective_scan.py"), namespace="tasks.selective_scan")


class SelectiveScan(_eager.SelectiveScan):
    def forward(self, u, delta, A, B, C, D=None, z=None, delta_bias=None):
        dt, u32 = self.time_steps(delta, delta_bias, torch.float32), u.float()
        # Time-major [seqlen, batch, dim, dstate], so every step reads and writes one contiguous slab.
        dt_t = dt.permute(2, 0, 1).unsqueeze(-1)
        decay = torch.exp(dt_t * A.float())
        inject = (dt_t * u32.permute(2, 0, 1).unsqueeze(-1)) * B.float().permute(2, 0, 1).unsqueeze(2)
        states = torch.empty_like(inject)
        h = torch.zeros_like(inject[0])
        for t in range(u.shape[-1]):
            h = torch.addcmul(inject[t], decay[t], h, out=states[t])
        y = torch.einsum("lbdn,bnl->bdl", states, C.float())
        return self.skip_and_gate(y, u, D, z).to(u.dtype), h.clone()
