"""`compiled(cls)`: Inductor over a task's production path keeps the interface and the state dict and computes the
same values (on the CPU, through Inductor's C++ backend)."""

from __future__ import annotations

import pytest
import torch

from fastkernels.build import build, eager_classes, reference_state
from fastkernels.compiled import compiled
from fastkernels.implementations import check_interface, load_implementation
from task_library import REGISTRY, case_inputs, eager_class, judged_on_cpu_cases, production_class


def test_a_compiled_production_path_has_the_interface_state_and_values_of_the_original():
    native = production_class("silu_and_mul", "torch_native")
    fused = compiled(native)
    check_interface(fused, REGISTRY.get("silu_and_mul"))
    assert fused.__name__ == native.__name__ and issubclass(fused, native)
    x = torch.randn(5, 2 * 48, generator=torch.Generator().manual_seed(0))
    try:
        out = fused()(x)
    except Exception as error:  # noqa: BLE001 - Inductor's CPU backend needs a working C++ toolchain
        pytest.skip(f"Inductor cannot compile on this machine: {error}")
    torch.testing.assert_close(out, native()(x))


COMPILED = [(name, impl.name) for name in REGISTRY.names for impl in REGISTRY.get(name).implementations.production
            if impl.name.startswith("torch_compile")]


@pytest.mark.parametrize("task, name", COMPILED, ids=[f"{task}-{name}" for task, name in COMPILED])
def test_every_inductor_production_path_passes_its_task_on_the_cpu_cases(task, name):
    """Listed for cuda only (that is where it is timed), but Inductor's C++ backend computes the same graph here
    (under max-autotune too)."""
    impl = next(i for i in REGISTRY.get(task).implementations.production if i.name == name)
    cls = load_implementation(REGISTRY.directory(task), impl, "cuda")
    check_interface(cls, REGISTRY.get(task))
    torch._dynamo.reset()
    try:
        judged_on_cpu_cases(task, cls)
    except (torch._dynamo.exc.BackendCompilerFailed, torch._inductor.exc.InductorError) as error:
        pytest.skip(f"Inductor cannot compile on this machine: {str(error).splitlines()[0]}")


def _entries(cls: type) -> int:
    from torch._dynamo.eval_frame import _debug_get_cache_entry_list

    return len(_debug_get_cache_entry_list(cls._inductor_forward._torchdynamo_orig_callable.__code__))


def test_instances_of_one_case_share_one_compiled_entry_and_a_new_shape_adds_one():
    """A noop candidate runs its baseline's compiled graph and kernels (under max-autotune, the configurations the
    first call tuned), and no instance checks another's guards first."""
    fused = compiled(production_class("silu_and_mul", "torch_native"))
    first, second = fused(), fused()
    torch._dynamo.reset()
    try:
        first(torch.randn(4, 2 * 16))
    except Exception as error:  # noqa: BLE001 - Inductor's CPU backend needs a working C++ toolchain
        pytest.skip(f"Inductor cannot compile on this machine: {error}")
    second(torch.randn(4, 2 * 16))
    first(torch.randn(4, 2 * 16))
    assert _entries(fused) == 1
    second(torch.randn(6, 2 * 16))  # another case's shape (dynamic=False): its own graph
    assert _entries(fused) == 2
    assert _entries(compiled(production_class("silu_and_mul", "torch_native"))) == 0  # each class its own cache


@pytest.mark.parametrize("task, name", COMPILED, ids=[f"{task}-{name}" for task, name in COMPILED])
def test_a_second_instance_of_every_compiled_task_reuses_the_first_ones_entry(task, name):
    """Guards that single out an instance (an attribute matched by identity) would give each instance an entry of
    its own, checked newest first: the later-built noop candidate would then skip the baseline's guards."""
    manifest = REGISTRY.get(task)
    impl = next(i for i in manifest.implementations.production if i.name == name)
    cls = load_implementation(REGISTRY.directory(task), impl, "cuda")
    components = eager_classes(REGISTRY, REGISTRY.closure(task), "cpu")
    case = next(c for c in manifest.cases if c.tier == "cpu")
    state = reference_state(manifest, case, eager_class(task), components, "cpu", 0)
    torch._dynamo.reset()
    with torch.no_grad():
        first = build(cls, case, components, state, "cpu", "baseline")
        try:
            first(**case_inputs(task, case.name, 0))
        except (torch._dynamo.exc.BackendCompilerFailed, torch._inductor.exc.InductorError) as error:
            pytest.skip(f"Inductor cannot compile on this machine: {str(error).splitlines()[0]}")
        entries = _entries(cls)
        second = build(cls, case, components, state, "cpu", "candidate")
        second(**case_inputs(task, case.name, 1))
        first(**case_inputs(task, case.name, 2))
    assert entries >= 1 and _entries(cls) == entries


def test_no_task_compiles_per_instance_outside_compiled():
    """A `torch.compile` inside a forward or constructor gives each instance code of its own (a noop candidate's could
    tune differently from its baseline's): tasks compile through `compiled()` or once at module level."""
    import ast

    from fastkernels.config import TASKS_DIR

    offenders = []
    for path in sorted(TASKS_DIR.rglob("*.py")):
        tree = ast.parse(path.read_text(), str(path))
        for function in (n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))):
            for call in (n for n in ast.walk(function) if isinstance(n, ast.Call)):
                if ast.unparse(call.func) == "torch.compile":
                    offenders.append(f"{path.name}:{call.lineno} in {function.name}")
    assert offenders == []


def test_a_noop_run_against_inductor_compiles_only_the_baseline(tmp_path):
    """End to end through a worker: each case's baseline compiles (its log line names Inductor's cache events), and
    the noop candidate, another instance of the same compiled class, runs the baseline's compiled code and compiles
    nothing (the CPU counterpart of tests/gpu's max-autotune check)."""
    import json
    import subprocess
    import sys

    subprocess.run([sys.executable, "-m", "fastkernels", "baseline=inductor", "agent=noop",
                    "tasks.include=[silu_and_mul]", "harness.warmup=1", "harness.max_iterations=8",
                    f"hydra.run.dir={tmp_path}"], check=True, capture_output=True, timeout=600)
    rows = [json.loads(line) for line in (tmp_path / "results.jsonl").read_text().splitlines()]
    if any("InductorError" in row["reason"] or "BackendCompilerFailed" in row["reason"] for row in rows):
        pytest.skip(f"Inductor cannot compile on this machine: {rows[0]['reason']}")
    assert rows and all(row["status"] == "PASSED" and row["baseline_impl"] == "inductor" for row in rows)
    log = (tmp_path / "workers" / "silu_and_mul.log").read_text().splitlines()
    baselines = [line for line in log if "baseline(s) checked" in line]
    candidates = [line for line in log if ": candidate checked" in line]
    assert len(baselines) == len(candidates) == len(rows)
    assert all("(Inductor: inductor: " in line and "fxgraph_cache_" in line for line in baselines), baselines
    assert not any("(Inductor:" in line for line in candidates), candidates
    # the rows say the same: Inductor's counters for the baseline's first calls, none for the candidate's
    assert all(set(row["compile_events"]) == {"inductor"} for row in rows), [row["compile_events"] for row in rows]
    assert all(any(name.startswith("fxgraph_cache_") for name in row["compile_events"]["inductor"]) for row in rows)
