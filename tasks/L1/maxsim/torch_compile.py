"""ColBERT's colbert_score as colbert_native (colbert_native.py) runs it, compiled by Inductor (fastkernels.compiled):
the GEMM stays cuBLAS, and the padding mask, max and sum become one fused reduction instead of a boolean index_put
(which synchronises on the mask's nonzero count) and two more passes over the score tensor. `ColBERTScoreMaxAutotune`
is the same under max-autotune, which also tunes the GEMM."""

from __future__ import annotations

from pathlib import Path

from fastkernels.compiled import MAX_AUTOTUNE, compiled
from fastkernels.implementations import import_file

_native = import_file(Path(__file__).with_name("colbert_native.py"), namespace="tasks.maxsim")

ColBERTScore = compiled(_native.ColBERTScore)
ColBERTScoreMaxAutotune = compiled(_native.ColBERTScore, mode=MAX_AUTOTUNE)
