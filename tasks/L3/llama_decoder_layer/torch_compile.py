"""LlamaDecoderLayer as the composed production path builds it (llama_decoder_layer.py over the first production
lower-level classes), its forward compiled by Inductor (fastkernels.compiled): what vLLM's compiled mode runs with
its custom ops disabled: SiluAndMul's native form (a SiLU and a multiply, two kernels over the gate_up output in the
composed module) and the rope's cos/sin gather fused between the cuBLAS GEMMs and SDPA. Less to fuse than in the
encoder blocks: the residual adds already sit inside Liger's fused add-RMSNorm kernel. On the GPU the composed
RMSNorm (plain and fused-add) and rope are Liger's Triton kernels, which Dynamo is to trace as user-defined Triton
kernels (a failure there leaves composed serving; the CPU check binds the eager components, Liger's being
cuda-only)."""

from __future__ import annotations

from pathlib import Path

from fastkernels.compiled import compiled
from fastkernels.implementations import import_file

_composed = import_file(Path(__file__).with_name("llama_decoder_layer.py"), namespace="tasks.llama_decoder_layer")

LlamaDecoderLayer = compiled(_composed.LlamaDecoderLayer)
