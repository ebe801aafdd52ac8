"""VocabParallelEmbedding as torch_embedding (torch_embedding.py) runs it, compiled by Inductor (fastkernels.compiled):
the row gather as one generated Triton kernel in place of ATen's index_select, the baseline a one-line
`torch.compile` gives production users. `...MaxAutotune` is the same under max-autotune."""

from __future__ import annotations

from pathlib import Path

from fastkernels.compiled import MAX_AUTOTUNE, compiled
from fastkernels.implementations import import_file

_native = import_file(Path(__file__).with_name("torch_embedding.py"), namespace="tasks.embedding")

VocabParallelEmbedding = compiled(_native.VocabParallelEmbedding)
VocabParallelEmbeddingMaxAutotune = compiled(_native.VocabParallelEmbedding, mode=MAX_AUTOTUNE)
