"""Causal conv1d through Dao-AILab's CUDA kernel (`causal_conv1d_cuda.causal_conv1d_fwd`, causal-conv1d 1.7.0), what
transformers' Mamba, Jamba and Falcon-Mamba run (causal_conv1d_fn in cuda_kernels_forward) when causal-conv1d is
installed: one pass over x [batch, dim, seqlen] in its channel-first layout, the width taps in registers, bias and
SiLU fused, products accumulated in fp32 and rounded once. The calls are CausalConv1dFn.forward's and
causal_conv1d_fwd_function's (causal_conv1d/causal_conv1d_interface.py, cpp_functions.py) verbatim: x made contiguous
only when neither its last nor its channel stride is 1, the bias contiguous, out allocated like x, no seq_idx, no
initial or final states. The kernel handles widths 2 to 4 (every Mamba's d_conv is 4).

causal-conv1d has no wheel for the device's platform: scripts/build_cuda_extension.py compiles the extension from its
source distribution there (its four sources unchanged, its setup.py's flags, sm_90) and puts it on PYTHONPATH."""

from __future__ import annotations

from pathlib import Path

import torch
# at import, as every library baseline (the worker's integrity snapshot follows the baselines' imports)
import causal_conv1d_cuda

from fastkernels.implementations import import_file

# The eager module owns the constructor and the parameters (one state dict for every implementation).
_eager = import_file(Path(__file__).with_name("causal_conv1d.py"), namespace="tasks.causal_conv1d")

WIDTHS = (2, 3, 4)


class CausalConv1d(_eager.CausalConv1d):
    def __init__(self, dim: int, width: int, bias: bool = True, activation: str | None = "silu") -> None:
        if width not in WIDTHS:
            raise ValueError(f"Dao-AILab's causal conv1d kernel handles widths {WIDTHS}, not {width}")
        super().__init__(dim, width, bias, activation)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if x.stride(2) != 1 and x.stride(1) != 1:
            x = x.contiguous()
        bias = self.bias.contiguous() if self.bias is not None else None
        out = torch.empty_like(x)
        causal_conv1d_cuda.causal_conv1d_fwd(x, self.weight, bias, None, None, out, None,
                                             self.activation in ("silu", "swish"))
        return out
