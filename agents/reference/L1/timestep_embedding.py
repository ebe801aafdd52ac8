"""Sinusoidal timestep embedding (diffusers Timesteps, then the cast to the model dtype) as one Triton kernel.

diffusers launches about ten small kernels (arange, exp, outer product, sin, cos, two cats, the cast); here one
program per timestep computes every frequency, angle, sine and cosine in fp32 registers and writes its row once,
in the output dtype, zero-padding the last column when num_channels is odd.
"""

from __future__ import annotations

import importlib.util
import math
from pathlib import Path

import torch
import triton
import triton.language as tl


def _load_eager():
    """The task's eager module: this class subclasses it, so constructor and state dict are the task's own."""
    path = Path(__file__).resolve().parents[3] / "tasks" / "L1" / "timestep_embedding" / "timestep_embedding.py"
    spec = importlib.util.spec_from_file_location("_reference_eager_timestep_embedding", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


_eager = _load_eager()


@triton.jit
def _timestep_embedding_kernel(t_ptr, out_ptr, num_channels, half, log_max_period, denominator, scale,
                               FLIP: tl.constexpr, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    t = tl.load(t_ptr + row).to(tl.float32)
    cols = tl.arange(0, BLOCK)
    second_half = cols >= half
    i = tl.where(second_half, cols - half, cols).to(tl.float32)
    args = scale * (t * tl.exp(-log_max_period * i / denominator))
    use_cos = second_half != FLIP  # [sin | cos], or [cos | sin] when flipped
    values = tl.where(use_cos, tl.cos(args), tl.sin(args))
    values = tl.where(cols < 2 * half, values, 0.0)  # the zero column of an odd width
    tl.store(out_ptr + row * num_channels + cols, values.to(out_ptr.dtype.element_ty), mask=cols < num_channels)


class Timesteps(_eager.Timesteps):
    def forward(self, timesteps: torch.Tensor) -> torch.Tensor:
        n = timesteps.shape[0]
        out = torch.empty(n, self.num_channels, dtype=timesteps.dtype, device=timesteps.device)
        if n == 0:
            return out
        half = self.num_channels // 2
        _timestep_embedding_kernel[(n,)](
            timesteps.contiguous(), out, self.num_channels, half, math.log(_eager.MAX_PERIOD),
            float(half - self.downscale_freq_shift), float(self.scale), FLIP=bool(self.flip_sin_to_cos),
            BLOCK=triton.next_power_of_2(self.num_channels))
        return out
