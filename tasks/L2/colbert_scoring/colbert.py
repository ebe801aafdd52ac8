"""ColBERT's scoring head over encoder outputs (colbert.modeling.colbert.ColBERT: query(), doc(), score()) built
from the linear and maxsim tasks: project BERT's last hidden states to dim (no bias), zero the document's padding
tokens, L2-normalise every token vector, then MaxSim. Query tokens are all kept (ColBERT pads queries with [MASK]
tokens that take part in the score). The classes come from component(...): this one file is the eager module and
the production one.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from fastkernels.composition import component


class ColBERT(nn.Module):
    def __init__(self, hidden_size: int, dim: int) -> None:
        super().__init__()
        self.linear = component("linear")(hidden_size, dim, bias=False)
        self.score = component("maxsim")()

    def forward(self, Q_hidden: torch.Tensor, D_hidden: torch.Tensor, D_mask: torch.Tensor) -> torch.Tensor:
        Q = F.normalize(self.linear(Q_hidden), p=2, dim=2)
        D = self.linear(D_hidden) * D_mask[..., None].to(D_hidden.dtype)
        D = F.normalize(D, p=2, dim=2)
        return self.score(Q, D, D_mask)
