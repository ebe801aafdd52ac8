"""WhisperConvFrontend as the composed production path builds it (whisper_conv_frontend.py over the first production L1
classes), its forward compiled by Inductor (fastkernels.compiled): what `torch.compile` on a transformers Whisper
encoder runs: each GELU fused after its cuDNN convolution, the permute and position-embedding add with the second."""

from __future__ import annotations

from pathlib import Path

from fastkernels.compiled import compiled
from fastkernels.implementations import import_file

_composed = import_file(Path(__file__).with_name("whisper_conv_frontend.py"), namespace="tasks.whisper_conv_frontend")

WhisperConvFrontend = compiled(_composed.WhisperConvFrontend)
