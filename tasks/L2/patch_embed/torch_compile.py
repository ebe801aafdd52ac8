"""PatchEmbed as the composed production path builds it (patch_embed.py over the first production L1 classes), its
forward compiled by Inductor (fastkernels.compiled): what `torch.compile` on a diffusers transformer runs: the
flatten, transpose and position-embedding add fused after the cuDNN convolution."""

from __future__ import annotations

from pathlib import Path

from fastkernels.compiled import compiled
from fastkernels.implementations import import_file

_composed = import_file(Path(__file__).with_name("patch_embed.py"), namespace="tasks.patch_embed")

PatchEmbed = compiled(_composed.PatchEmbed)
