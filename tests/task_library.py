"""Test helper: the task library's classes and inputs as the harness builds them, for the per-family task tests.

Imports nothing of Triton, so a test file can set TRITON_INTERPRET before its own first triton import."""

from __future__ import annotations

from pathlib import Path

import torch

from fastkernels.implementations import import_file, load_implementation
from fastkernels.inputs import generator, make_inputs, stream_seed
from fastkernels.registry import Registry

ROOT = Path(__file__).resolve().parents[1]
REGISTRY = Registry()


def eager_class(task: str) -> type:
    return load_implementation(REGISTRY.directory(task), REGISTRY.get(task).implementations.eager, "cpu")


def production_class(task: str, name: str) -> type:
    impl = next(i for i in REGISTRY.get(task).implementations.production if i.name == name)
    return load_implementation(REGISTRY.directory(task), impl, "cpu")


def candidate_class(task: str, level: int = 1) -> type:
    module = import_file(ROOT / "agents" / "reference" / f"L{level}" / f"{task}.py", "test_candidates")
    return getattr(module, REGISTRY.get(task).interface.class_name)


def case_inputs(task: str, case_name: str, r: int = 0, seed: int = 0) -> dict[str, torch.Tensor]:
    """Round r's inputs of a case, drawn exactly as the worker draws them."""
    manifest = REGISTRY.get(task)
    case = manifest.case(case_name)
    return make_inputs(manifest, case, "cpu", generator("cpu", stream_seed(seed, task, case.name, "round", r)))
