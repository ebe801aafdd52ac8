"""The selective scan through mamba_ssm's CUDA kernel (`selective_scan_cuda.fwd`), what transformers' MambaMixer,
Jamba and Falcon-Mamba run (cuda_kernels_forward) when mamba-ssm is installed: one fused kernel a (batch, channel
block) that keeps the dstate states in registers, walks the sequence in 2048-step chunks and writes y gated by
silu(z) plus each chunk's last state. The calls are SelectiveScanFn.forward's (mamba_ssm 2.3.2
ops/selective_scan_interface.py) verbatim: inputs made contiguous only where their last stride is not 1, B and C
given a group axis, the last state read from the chunk states as x[:, :, -1, 1::2].

mamba-ssm has no wheel for the device's platform: scripts/build_cuda_extension.py compiles the extension from its
source distribution there (forward files unchanged, its setup.py's flags, sm_90) and puts it on PYTHONPATH."""

from __future__ import annotations

from pathlib import Path

import torch
# at import, as every library baseline (the worker's integrity snapshot follows the baselines' imports)
import selective_scan_cuda

from fastkernels.implementations import import_file

_eager = import_file(Path(__file__).with_name("selective_scan.py"), namespace="tasks.selective_scan")


class SelectiveScan(_eager.SelectiveScan):
    def forward(self, u, delta, A, B, C, D=None, z=None, delta_bias=None):
        u = u if u.stride(-1) == 1 else u.contiguous()
        delta = delta if delta.stride(-1) == 1 else delta.contiguous()
        D = D.contiguous() if D is not None else None
        B = B if B.stride(-1) == 1 else B.contiguous()
        C = C if C.stride(-1) == 1 else C.contiguous()
        z = z if z is None or z.stride(-1) == 1 else z.contiguous()
        if B.dim() == 3:
            B = B.unsqueeze(1)  # "b dstate l -> b 1 dstate l"
        if C.dim() == 3:
            C = C.unsqueeze(1)
        out, x, *rest = selective_scan_cuda.fwd(u, delta, A, B, C, D, z, delta_bias, self.delta_softplus)
        last_state = x[:, :, -1, 1::2]  # (batch, dim, dstate)
        return (out if z is None else rest[0]), last_state
