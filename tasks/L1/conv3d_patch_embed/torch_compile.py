"""The patchify GEMM of unfold_gemm.py compiled by Inductor (fastkernels.compiled): the rearrange fused into one
copy kernel or, under max-autotune, into a Triton GEMM template's loads, and the GEMM's shapes padded where Inductor
finds them misaligned (HunyuanVideo 1.5's 65 input channels make K = 65). `...MaxAutotune` is the same under
max-autotune."""

from __future__ import annotations

from pathlib import Path

from fastkernels.compiled import MAX_AUTOTUNE, compiled
from fastkernels.implementations import import_file

_unfold_gemm = import_file(Path(__file__).with_name("unfold_gemm.py"), namespace="tasks.conv3d_patch_embed")

HunyuanVideoPatchEmbed = compiled(_unfold_gemm.HunyuanVideoPatchEmbed)
HunyuanVideoPatchEmbedMaxAutotune = compiled(_unfold_gemm.HunyuanVideoPatchEmbed, mode=MAX_AUTOTUNE)
