"""V-JEPA 2's 3-D RoPE through SGLang's interleaved matrix-RoPE Triton kernel (`apply_matrix_rope` of
sglang.kernels.ops.diffusion.rope.matrix_rope), what SGLang's Kandinsky 6 DiT runs on CUDA for its 3-D (frame, row,
column) video RoPE: one fp32 2x2 matrix a token and adjacent channel pair, out[2i] = x[2i] r00 + x[2i + 1] r01 and
out[2i + 1] = x[2i] r10 + x[2i + 1] r11.

SGLang's plain diffusion rotary kernel (rope.rotary_triton.apply_rotary_embedding) cannot serve: it turns each pair
(2i, 2i + 1) by one angle, while V-JEPA 2 gives the two channels of a pair different angles (its m angles repeated
twice along a segment, channel j taking a_{j mod m}), a map that is no rotation. The matrix kernel takes it as it is:
pair (2i, 2i + 1) gets [[cos A, -sin A], [sin B, cos B]], A and B the angles of its two channels, and the pairs past
the three segments angle 0, the identity (exactly: x * 1 + x' * -0).

The table, [1, tokens, 1, head_dim / 2, 2, 2] fp32 in Kandinsky 6's layout and shared by the batch and the heads, is
built from position_ids in every call: each channel's axis position times its frequency (constants of head_dim, kept
per device), cos, sin, one stack. Per call: a few small kernels and the table (tokens * head_dim * 8 bytes), then one
kernel, with its output allocation, for each of q and k. Products in fp32 (not contracted), one rounding at the
store."""

from __future__ import annotations

from pathlib import Path

import torch
# at import, as every library baseline (the worker's integrity snapshot follows the baselines' imports); importing
# it registers the op torch.ops.sglang.diffusion_apply_matrix_rope
from sglang.kernels.ops.diffusion.rope.matrix_rope import apply_matrix_rope

from fastkernels.implementations import import_file

# The eager module owns the constructor (one interface for every implementation).
_eager = import_file(Path(__file__).with_name("rope_3d.py"), namespace="tasks.rope_3d")


class VJEPA2RotaryEmbedding3D(_eager.VJEPA2RotaryEmbedding3D):
    def __init__(self, head_dim: int, grid_size: int) -> None:
        if head_dim % 2:
            raise ValueError(f"SGLang's matrix RoPE works on channel pairs: head_dim {head_dim} is odd")
        super().__init__(head_dim, grid_size)
        # plain attributes, not buffers: the state dict stays the eager module's
        self._channels_device: torch.device | None = None
        self._axis = torch.empty(0, dtype=torch.long)
        self._omega = torch.empty(0)

    def _channels(self, device: torch.device) -> tuple[torch.Tensor, torch.Tensor]:
        """(axis [head_dim], frequency [head_dim] fp32) of every channel, as the eager module computes them; the
        pass-through channels read axis 0 at frequency 0."""
        if self._channels_device != device:
            d, m = self.axis_dim, self.axis_dim // 2
            omega = 1.0 / _eager.THETA ** (torch.arange(m, dtype=torch.float32, device=device) / (d / 2.0))
            rest = torch.zeros(self.head_dim - 3 * d, device=device)
            self._omega = torch.cat([omega.repeat(2)] * 3 + [rest])
            self._axis = torch.arange(self.head_dim, device=device) // max(d, 1) % 3
            self._channels_device = device
        return self._axis, self._omega

    def table(self, position_ids: torch.Tensor) -> torch.Tensor:
        """The [1, tokens, 1, head_dim / 2, 2, 2] fp32 matrices of the tokens at position_ids."""
        axis, omega = self._channels(position_ids.device)
        positions = torch.stack(self.positions(position_ids), dim=-1).to(torch.float32)  # [tokens, 3]
        angles = positions[:, axis] * omega  # [tokens, head_dim], 0 past the three segments
        cos, sin = angles.cos(), angles.sin()
        rope = torch.stack((cos[:, 0::2], -sin[:, 0::2], sin[:, 1::2], cos[:, 1::2]), dim=-1)
        return rope.view(1, -1, 1, self.head_dim // 2, 2, 2)

    def forward(self, q: torch.Tensor, k: torch.Tensor, position_ids: torch.Tensor):
        rope = self.table(position_ids)
        return apply_matrix_rope(q.contiguous(), rope), apply_matrix_rope(k.contiguous(), rope)
