"""WhisperEncoderLayer as the composed production path builds it (whisper_encoder_layer.py over the first production
L1 classes), its forward compiled by Inductor (fastkernels.compiled): what `torch.compile` on a transformers Whisper
encoder runs: the residual adds, the biases of out_proj and fc2 with them, fc1's bias and the erf GELU fused
around the cuBLAS GEMMs and SDPA. On the GPU the composed LayerNorm is Liger's Triton kernel, which Dynamo is to
trace as a user-defined Triton kernel (a failure there leaves composed serving; the CPU check binds the eager
components, Liger's being cuda-only)."""

from __future__ import annotations

from pathlib import Path

from fastkernels.compiled import compiled
from fastkernels.implementations import import_file

_composed = import_file(Path(__file__).with_name("whisper_encoder_layer.py"), namespace="tasks.whisper_encoder_layer")

WhisperEncoderLayer = compiled(_composed.WhisperEncoderLayer)
