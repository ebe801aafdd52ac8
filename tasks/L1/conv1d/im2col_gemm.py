"""Conv1d as im2col plus one cuBLAS GEMM: every output position's input window is gathered once into a
[batch * positions, in_channels * kernel_size] matrix (zeros where the window reaches into the padding), and one
F.linear with the flattened weight multiplies it, bias in the GEMM's epilogue (fp32 accumulation, rounded once).

Not what the frameworks run: transformers' and vLLM's Whisper encoders call nn.Conv1d, which is cuDNN (the `cudnn`
and `cudnn_channels_last` implementations). It is the textbook lowering of a convolution onto a GEMM library, here
because cuDNN's bf16 conv1d reaches 12-47% of the H200's GEMM rate on Whisper's stem (docs/baselines.md, 2026-12-02)
while the same arithmetic as one GEMM with K = in_channels * kernel_size (384 and 3840) is the shape cuBLAS runs
near its peak: a candidate should have to beat cuBLAS on this arithmetic, not only cuDNN's slow path. The row names
the implementation that served and keeps the others' times, so a candidate's time against cuDNN stays readable.
The gather costs one pass over the windows, as the channels_last path pays one layout conversion of x. Returns
[batch, out, positions] strided channels-innermost, as the channels_last adapter does."""

from __future__ import annotations

from pathlib import Path

import torch
import torch.nn.functional as F

from fastkernels.implementations import import_file

# The eager module owns the constructor and the parameters (one state dict for every implementation).
_eager = import_file(Path(__file__).with_name("conv1d.py"), namespace="tasks.conv1d")


class Conv1d(_eager.Conv1d):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        batch, channels, length = x.shape
        positions = (length + 2 * self.padding - self.kernel_size) // self.stride + 1
        windows = x.new_empty(batch, positions, channels, self.kernel_size)
        # output positions whose window lies inside x need no padding: one strided copy gathers all of them
        first = min(-(-self.padding // self.stride), positions)  # ceil(padding / stride)
        start = first * self.stride - self.padding
        inner = 0 if length - start < self.kernel_size else (length - start - self.kernel_size) // self.stride + 1
        inner = max(0, min(inner, positions - first))
        for low, high in ((0, first), (first, first + inner), (first + inner, positions)):
            if low < high:
                self._gather(x, windows, low, high)
        out = F.linear(windows.view(batch * positions, channels * self.kernel_size),
                       self.weight.view(self.out_channels, channels * self.kernel_size), self.bias)
        return out.view(batch, positions, self.out_channels).permute(0, 2, 1)

    def _gather(self, x: torch.Tensor, windows: torch.Tensor, low: int, high: int) -> None:
        """windows[:, low:high] = the input windows of output positions low..high-1, zero-padded where they leave x."""
        length = x.shape[-1]
        span_low = low * self.stride - self.padding
        span_high = (high - 1) * self.stride - self.padding + self.kernel_size  # exclusive
        inside_low = max(span_low, 0)
        inside = x[:, :, inside_low:max(inside_low, min(span_high, length))]
        if inside.shape[-1] == 0:
            windows[:, low:high].zero_()
            return
        left, right = max(0, -span_low), max(0, span_high - length)
        padded = F.pad(inside, (left, right)) if left or right else inside
        windows[:, low:high].copy_(padded.unfold(2, self.kernel_size, self.stride).permute(0, 2, 1, 3))
