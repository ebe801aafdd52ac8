"""gsplat's PyTorch implementation of spherical_harmonics (gsplat.cuda._torch_impl._spherical_harmonics: normalise,
Sloan's fast SH recurrence for the bases, weighted sum of the coefficients), run in fp32 as gsplat runs it and
rounded once; gsplat's CUDA kernel is not installable here. torch_compile.py fuses the same code with Inductor."""

from __future__ import annotations

from pathlib import Path

import torch
import torch.nn.functional as F

from fastkernels.implementations import import_file

_eager = import_file(Path(__file__).with_name("spherical_harmonics.py"), namespace="tasks.spherical_harmonics")


def eval_sh_bases_fast(basis_dim: int, dirs: torch.Tensor) -> torch.Tensor:
    """gsplat's _eval_sh_bases_fast up to degree 3 (Sloan, Efficient Spherical Harmonic Evaluation, JCGT 2013)."""
    result = torch.empty((*dirs.shape[:-1], basis_dim), dtype=dirs.dtype, device=dirs.device)
    result[..., 0] = 0.2820947917738781
    if basis_dim <= 1:
        return result
    x, y, z = dirs.unbind(-1)
    fTmpA = -0.48860251190292
    result[..., 2] = -fTmpA * z
    result[..., 3] = fTmpA * x
    result[..., 1] = fTmpA * y
    if basis_dim <= 4:
        return result
    z2 = z * z
    fTmpB = -1.092548430592079 * z
    fTmpA = 0.5462742152960395
    fC1 = x * x - y * y
    fS1 = 2 * x * y
    result[..., 6] = 0.9461746957575601 * z2 - 0.3153915652525201
    result[..., 7] = fTmpB * x
    result[..., 5] = fTmpB * y
    result[..., 8] = fTmpA * fC1
    result[..., 4] = fTmpA * fS1
    if basis_dim <= 9:
        return result
    fTmpC = -2.285228997322329 * z2 + 0.4570457994644658
    fTmpB = 1.445305721320277 * z
    fTmpA = -0.5900435899266435
    fC2 = x * fC1 - y * fS1
    fS2 = x * fS1 + y * fC1
    result[..., 12] = z * (1.865881662950577 * z2 - 1.119528997770346)
    result[..., 13] = fTmpC * x
    result[..., 11] = fTmpC * y
    result[..., 14] = fTmpB * fC1
    result[..., 10] = fTmpB * fS1
    result[..., 15] = fTmpA * fC2
    result[..., 9] = fTmpA * fS2
    return result


def gsplat_spherical_harmonics(degree: int, dirs: torch.Tensor, coeffs: torch.Tensor) -> torch.Tensor:
    """gsplat's _spherical_harmonics."""
    dirs = F.normalize(dirs, p=2, dim=-1)
    num_bases = (degree + 1) ** 2
    bases = torch.zeros_like(coeffs[..., 0])
    bases[..., :num_bases] = eval_sh_bases_fast(num_bases, dirs)
    return (bases[..., None] * coeffs).sum(dim=-2)


class SphericalHarmonics(_eager.SphericalHarmonics):
    def forward(self, dirs: torch.Tensor, coeffs: torch.Tensor) -> torch.Tensor:
        return gsplat_spherical_harmonics(self.degrees_to_use, dirs.float(), coeffs.float()).to(coeffs.dtype)
