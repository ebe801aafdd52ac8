"""Test helper: the task library's classes and inputs as the harness builds them, for the per-family task tests.

Imports nothing of Triton, so a test file can set TRITON_INTERPRET before its own first triton import."""

from __future__ import annotations

import itertools
from pathlib import Path
from types import ModuleType

import torch

from fastkernels.build import build, eager_classes, oracle_inputs, reference_state
from fastkernels.correctness import judge
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


_FRESH = itertools.count()


def fresh_adapter(task: str, filename: str) -> ModuleType:
    """A task's adapter file imported afresh, under a name of its own: it binds its library at import, so each test
    sees the library (or the fake of it) that is in sys.modules now."""
    return import_file(REGISTRY.directory(task) / filename, namespace=f"test.fresh_adapter_{next(_FRESH)}")


def case_inputs(task: str, case_name: str, r: int = 0, seed: int = 0) -> dict[str, torch.Tensor]:
    """Round r's inputs of a case, drawn exactly as the worker draws them."""
    manifest = REGISTRY.get(task)
    case = manifest.case(case_name)
    return make_inputs(manifest, case, "cpu", generator("cpu", stream_seed(seed, task, case.name, "round", r)))


def judged_on_cpu_cases(task: str, cls: type) -> None:
    """`cls` built like a baseline on every CPU case of `task`: passes the task's tolerance on three rounds and
    leaves its inputs unchanged, but those the task lets it modify (`mutates`)."""
    manifest = REGISTRY.get(task)
    components = eager_classes(REGISTRY, REGISTRY.closure(task), "cpu")
    eager = eager_class(task)
    for case in (c for c in manifest.cases if c.tier == "cpu"):
        tol = manifest.tolerance.get(case.dtype)
        atol, rtol = (tol.atol, tol.rtol) if tol else (1e-2, 1.6e-2)
        state = reference_state(manifest, case, eager, components, "cpu", 0)
        with torch.no_grad():
            oracle = build(eager, case, components, state, "cpu", "oracle", torch.float64)
            template = build(eager, case, components, state, "cpu", "eager")
            module = build(cls, case, components, state, "cpu", "candidate")
            for r in range(3):
                inputs = case_inputs(task, case.name, r)
                saved = {k: v.clone() for k, v in inputs.items()}
                verdict = judge(module(**inputs), template(**saved), oracle(**oracle_inputs(saved)), atol, rtol,
                                manifest.output_tolerances(case.dtype))
                assert verdict.passed, f"{case.name}, round {r}: {verdict.reason}"
                kept = [k for k in inputs if k not in manifest.mutates]
                assert all(torch.equal(inputs[k], saved[k]) for k in kept), "inputs must not be modified"
