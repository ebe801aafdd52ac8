"""ColBERT's colbert_score as colbert_native (colbert_native.py) runs it, compiled by Inductor (fastkernels.compiled):
the GEMM stays cuBLAS, and the padding mask, max and sum become one fused reduction instead of a boolean index_put
(which synchronises on the mask's nonzero count) and two more passes over the score tensor."""

from __future__ import annotations

from pathlib import Path

from fastkernels.compiled import compiled
from fastkernels.implementations import import_file

_native = import_file(Path(__file__).with_name("colbert_native.py"), namespace="tasks.maxsim")

ColBERTScore = compiled(_native.ColBERTScore)
