"""Buffers a task module keeps in fp32 (or wider) when the module is cast, e.g. to bf16: precomputed rotary tables,
which vLLM and diffusers keep in fp32 inside a bf16 model. Moving the module still moves them."""

from __future__ import annotations

import torch
from torch import nn


class KeepsFp32Buffers(nn.Module):
    """Subclass and name the buffers in `fp32_buffers`; `module.to(dtype)` then leaves their values unrounded."""

    fp32_buffers: tuple[str, ...] = ()

    def _apply(self, fn, recurse=True):
        kept = {name: getattr(self, name) for name in self.fp32_buffers}
        super()._apply(fn, recurse)
        for name, table in kept.items():
            moved = getattr(self, name)
            setattr(self, name, table.to(device=moved.device, dtype=torch.promote_types(moved.dtype, torch.float32)))
        return self
