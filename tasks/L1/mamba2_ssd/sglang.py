"""Mamba2's SSD through the Triton kernels this task mirrors: mamba_ssm's mamba_chunk_scan_combined (chunk cumsum,
chunk states, state passing, C B^T per chunk, chunk scan), as SGLang ships them for its Mamba2 layers
(sglang.kernels.ops.mamba.triton_ops). mamba_ssm itself needs a CUDA build; SGLang's copy is Triton source.

SGLang's variant writes y into a preallocated `out` (as vLLM's does) and keeps the states in `state_dtype`: float32
here, the dtype this task returns the final state in (vLLM and SGLang keep Mamba2's SSM cache in float32 where a
model asks for it)."""

from __future__ import annotations

from pathlib import Path

import torch
# at import, as every library baseline (the worker's integrity snapshot follows the baselines' imports)
from sglang.kernels.ops.mamba.triton_ops import mamba_chunk_scan_combined

from fastkernels.implementations import import_file

_eager = import_file(Path(__file__).with_name("mamba2_ssd.py"), namespace="tasks.mamba2_ssd")


class MambaChunkScan(_eager.MambaChunkScan):
    def forward(self, x, dt, A, B, C, D=None, z=None, dt_bias=None):
        out = torch.empty_like(x)
        final_state = mamba_chunk_scan_combined(
            x, dt, A, B, C, self.chunk_size, D=D, z=z, dt_bias=dt_bias, dt_softplus=self.dt_softplus, out=out,
            return_final_states=True, state_dtype=torch.float32,
        )
        return out, final_state.float()
