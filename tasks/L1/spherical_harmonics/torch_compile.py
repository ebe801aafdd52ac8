"""gsplat's PyTorch spherical_harmonics (gsplat_torch.py), fp32 inside, compiled by Inductor (fastkernels.compiled) into
fused kernels; and the same under max-autotune."""

from __future__ import annotations

from pathlib import Path

from fastkernels.compiled import MAX_AUTOTUNE, compiled
from fastkernels.implementations import import_file

_gsplat = import_file(Path(__file__).with_name("gsplat_torch.py"), namespace="tasks.spherical_harmonics")

SphericalHarmonics = compiled(_gsplat.SphericalHarmonics)
SphericalHarmonicsMaxAutotune = compiled(_gsplat.SphericalHarmonics, mode=MAX_AUTOTUNE)
