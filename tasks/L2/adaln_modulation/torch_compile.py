"""AdaLayerNormZero as the composed production path builds it (adaln_modulation.py over the first production L1
classes), its forward compiled by Inductor (fastkernels.compiled): what `torch.compile` on a diffusers transformer
gives a FLUX or HunyuanVideo deployment, the SiLU, layer norm and modulation fused around the cuBLAS projection."""

from __future__ import annotations

from pathlib import Path

from fastkernels.compiled import compiled
from fastkernels.implementations import import_file

_composed = import_file(Path(__file__).with_name("adaln_modulation.py"), namespace="tasks.adaln_modulation")

AdaLayerNormZero = compiled(_composed.AdaLayerNormZero)
