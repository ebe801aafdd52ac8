"""FluxSingleTransformerBlock as the composed production path builds it (dit_block.py over the first production
lower-level classes), its forward compiled by Inductor (fastkernels.compiled): what `torch.compile` on a diffusers
Flux transformer runs: the SiLU, the modulation's shift, scale and gate, the GELU and the gated residual fused around
the cuBLAS GEMMs and SDPA. On the GPU the composed attention's RMSNorm is Liger's Triton kernel, which Dynamo is to
trace as a user-defined Triton kernel (a failure there leaves composed serving; the CPU check binds the eager
components, Liger's being cuda-only)."""

from __future__ import annotations

from pathlib import Path

from fastkernels.compiled import compiled
from fastkernels.implementations import import_file

_composed = import_file(Path(__file__).with_name("dit_block.py"), namespace="tasks.dit_block")

FluxSingleTransformerBlock = compiled(_composed.FluxSingleTransformerBlock)
