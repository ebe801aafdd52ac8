"""Causal conv1d through SGLang's Triton prefill kernel (`causal_conv1d_fn` of
sglang.kernels.ops.mamba.causal_conv1d_triton, vLLM's varlen kernel), what SGLang's Mamba2 and GDN (Qwen3-Next)
layers run for prefill on CUDA: they pass x strided and seq_lens_cpu, which sends the srt wrapper
(sglang.srt.layers.attention.mamba.causal_conv1d) to this Triton path rather than its JIT CUDA kernel. It is imported
from the Triton module itself, so nothing of SGLang's JIT (tvm_ffi) build is loaded.

The kernel takes the batch as varlen: x [dim, total_tokens] with any strides, query_start_loc [batch + 1] int32 and
the lengths as a host list (its grid, no host sync). One sequence is x[0] read in place; several have to be packed,
one copy of x, into SGLang's own layout (token-major [total_tokens, dim], channels contiguous, as its layers pass it).
No cache_indices and no has_initial_state: every sequence starts from zeros. The kernel always writes each
sequence's last width - 1 inputs into conv_states (its prefill updates the cache), so a [batch, dim, width - 1]
buffer is kept, with query_start_loc, per (batch, seqlen, dtype, device) and reused (write-only, never read). Per
call: the packing copy when batch > 1 and the kernel's own output allocation. Products are taken in x's dtype and
accumulated in fp32 (the kernel's `acc += x * w`), SiLU on the fp32 sum, one rounding at the store."""

from __future__ import annotations

from pathlib import Path

import torch
# at import, as every library baseline (the worker's integrity snapshot follows the baselines' imports)
from sglang.kernels.ops.mamba.causal_conv1d_triton import causal_conv1d_fn

from fastkernels.implementations import import_file

# The eager module owns the constructor and the parameters (one state dict for every implementation).
_eager = import_file(Path(__file__).with_name("causal_conv1d.py"), namespace="tasks.causal_conv1d")

# The kernel's tap loop (`for j in tl.static_range(KERNEL_WIDTH)`) has branches for widths 2, 3 and 4 only.
WIDTHS = (2, 3, 4)


class CausalConv1d(_eager.CausalConv1d):
    def __init__(self, dim: int, width: int, bias: bool = True, activation: str | None = "silu") -> None:
        if width not in WIDTHS:
            raise ValueError(f"SGLang's Triton causal conv1d handles widths {WIDTHS}, not {width}")
        super().__init__(dim, width, bias, activation)
        # plain attributes, not buffers: the state dict stays the eager module's
        self._varlen_key: tuple | None = None
        self._conv_states = torch.empty(0)
        self._query_start_loc = torch.empty(0, dtype=torch.int32)

    def _varlen(self, batch: int, seqlen: int, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """(conv_states, query_start_loc) for equal-length sequences, built on the first call of a shape."""
        key = (batch, seqlen, x.dtype, x.device)
        if self._varlen_key != key:
            self._conv_states = torch.empty(batch, self.dim, self.width - 1, dtype=x.dtype, device=x.device)
            self._query_start_loc = torch.arange(0, (batch + 1) * seqlen, seqlen, dtype=torch.int32, device=x.device)
            self._varlen_key = key
        return self._conv_states, self._query_start_loc

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        batch, dim, seqlen = x.shape
        conv_states, query_start_loc = self._varlen(batch, seqlen, x)
        packed = x[0] if batch == 1 else x.transpose(1, 2).reshape(batch * seqlen, dim).t()
        out = causal_conv1d_fn(packed, self.weight, self.bias, conv_states, query_start_loc, [seqlen] * batch,
                               activation=self.activation)
        # the output has the packed input's strides (torch.empty_like): a view back to [batch, dim, seqlen]
        return out.unsqueeze(0) if batch == 1 else out.t().view(batch, seqlen, dim).transpose(1, 2)
