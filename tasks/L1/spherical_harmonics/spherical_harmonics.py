"""View-dependent colour of 3D Gaussians from real spherical harmonics (gsplat spherical_harmonics), in plain
PyTorch. Also the float64 oracle.

Written as 3D Gaussian splatting's computeColorFromSH (diff-gaussian-rasterization) spells the basis out, degree by
degree, on the normalised direction; gsplat evaluates the same real SH basis with Sloan's recurrence (the
production path here), so the two are independent formulations of one function. Only the first
(degrees_to_use + 1)^2 coefficients are used (gsplat raises the degree during training). No +0.5 offset or clamp:
gsplat applies those in the rasteriser. fp32 (float64 for the oracle) math, one rounding.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

C0 = 0.28209479177387814
C1 = 0.4886025119029199
C2 = (1.0925484305920792, -1.0925484305920792, 0.31539156525252005, -1.0925484305920792, 0.5462742152960396)
C3 = (-0.5900435899266435, 2.890611442640554, -0.4570457994644658, 0.3731763325901154, -0.4570457994644658,
      1.445305721320277, -0.5900435899266435)


def sh_basis(degree: int, d: torch.Tensor) -> list[torch.Tensor]:
    """The (degree + 1)^2 real SH basis values at unit directions d [..., 3], 3DGS's signs and order."""
    x, y, z = d.unbind(-1)
    basis = [torch.full_like(x, C0)]
    if degree > 0:
        basis += [-C1 * y, C1 * z, -C1 * x]
    if degree > 1:
        xx, yy, zz = x * x, y * y, z * z
        basis += [C2[0] * x * y, C2[1] * y * z, C2[2] * (2 * zz - xx - yy), C2[3] * x * z, C2[4] * (xx - yy)]
    if degree > 2:
        basis += [
            C3[0] * y * (3 * xx - yy), C3[1] * x * y * z, C3[2] * y * (4 * zz - xx - yy),
            C3[3] * z * (2 * zz - 3 * xx - 3 * yy), C3[4] * x * (4 * zz - xx - yy), C3[5] * z * (xx - yy),
            C3[6] * x * (xx - 3 * yy),
        ]
    return basis


class SphericalHarmonics(nn.Module):
    def __init__(self, degrees_to_use: int) -> None:
        super().__init__()
        assert 0 <= degrees_to_use <= 3, "3DGS stores SH up to degree 3"
        self.degrees_to_use = degrees_to_use

    def forward(self, dirs: torch.Tensor, coeffs: torch.Tensor) -> torch.Tensor:
        compute = torch.promote_types(coeffs.dtype, torch.float32)
        d = F.normalize(dirs.to(compute), p=2, dim=-1)
        c = coeffs.to(compute)
        color = torch.zeros(c.shape[:-2] + c.shape[-1:], dtype=compute, device=c.device)
        for k, b in enumerate(sh_basis(self.degrees_to_use, d)):
            color = color + b[..., None] * c[..., k, :]
        return color.to(coeffs.dtype)
