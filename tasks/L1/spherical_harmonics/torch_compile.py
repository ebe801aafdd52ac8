"""gsplat's PyTorch spherical_harmonics (gsplat_torch.py), fp32 inside, compiled by Inductor into fused kernels."""

from __future__ import annotations

from pathlib import Path

import torch

from fastkernels.implementations import import_file

_gsplat = import_file(Path(__file__).with_name("gsplat_torch.py"), namespace="tasks.spherical_harmonics")


@torch.compile(dynamic=False)
def _compiled(degree: int, dirs: torch.Tensor, coeffs: torch.Tensor) -> torch.Tensor:
    return _gsplat.gsplat_spherical_harmonics(degree, dirs.float(), coeffs.float()).to(coeffs.dtype)


class SphericalHarmonics(_gsplat.SphericalHarmonics):
    def forward(self, dirs: torch.Tensor, coeffs: torch.Tensor) -> torch.Tensor:
        return _compiled(self.degrees_to_use, dirs, coeffs)
