"""SwinV2's window attention as the eager module writes it (normalize, matmul, logit scale, bias, softmax, matmul,
in fp32), compiled by Inductor (fastkernels.compiled): the normalisations, scale, bias and softmax fused around two
batched GEMMs, where FlexAttention spends a 128-token block on each 64-token window. `...MaxAutotune` is the same
under max-autotune."""

from __future__ import annotations

from pathlib import Path

from fastkernels.compiled import MAX_AUTOTUNE, compiled
from fastkernels.implementations import import_file

_eager = import_file(Path(__file__).with_name("swinv2_window_attention.py"), namespace="tasks.swinv2_window_attention")

Swinv2WindowAttention = compiled(_eager.Swinv2WindowAttention)
Swinv2WindowAttentionMaxAutotune = compiled(_eager.Swinv2WindowAttention, mode=MAX_AUTOTUNE)
