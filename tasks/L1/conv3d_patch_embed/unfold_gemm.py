"""The patchify conv as one GEMM: with kernel == stride the tubelets do not overlap, so Conv3d is exactly a linear
layer over unfolded patches. x is rearranged once to [tubelets, in_chans * t * h * w] (channel-major inside a
patch, the order of the flattened Conv3d weight) and multiplied by weight.view(embed_dim, -1) with cuBLAS (bias in
the epilogue), giving the tokens directly in [batch, tubelets, embed_dim] order. This is how vLLM and SGLang run
vision patch embeddings whose kernel equals their stride."""

from __future__ import annotations

from pathlib import Path

import torch
import torch.nn.functional as F

from fastkernels.implementations import import_file

# The eager module owns the constructor and the parameters (one state dict for every implementation).
_eager = import_file(Path(__file__).with_name("conv3d_patch_embed.py"), namespace="tasks.conv3d_patch_embed")


class HunyuanVideoPatchEmbed(_eager.HunyuanVideoPatchEmbed):
    def forward(self, hidden_states: torch.Tensor) -> torch.Tensor:
        b, c, f, h, w = hidden_states.shape
        pt, ph, pw = self.patch_size
        patches = hidden_states.view(b, c, f // pt, pt, h // ph, ph, w // pw, pw)
        patches = patches.permute(0, 2, 4, 6, 1, 3, 5, 7).reshape(-1, c * pt * ph * pw)
        out = F.linear(patches, self.weight.view(self.embed_dim, -1), self.bias)
        return out.view(b, -1, self.embed_dim)
