"""`compiled(cls)`: Inductor over a task's production path keeps the interface and the state dict and computes the
same values (on the CPU, through Inductor's C++ backend)."""

from __future__ import annotations

import pytest
import torch

from fastkernels.compiled import compiled
from fastkernels.implementations import check_interface, load_implementation
from task_library import REGISTRY, judged_on_cpu_cases, production_class


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


def test_each_compiled_instance_keeps_its_own_dynamo_cache():
    """Two instances sharing a code object check each other's guards (newest first), so the later-built one, a noop
    candidate, ran faster than the baseline it copies; each instance compiles a private copy of the forward."""
    from torch._dynamo.eval_frame import _debug_get_cache_entry_list

    fused = compiled(production_class("silu_and_mul", "torch_native"))
    first, second = fused(), fused()
    x = torch.randn(4, 2 * 16)
    torch._dynamo.reset()
    try:
        first(x), second(x), first(x)
    except Exception as error:  # noqa: BLE001 - Inductor's CPU backend needs a working C++ toolchain
        pytest.skip(f"Inductor cannot compile on this machine: {error}")
    codes = [module._inductor_forward._torchdynamo_orig_callable.__func__.__code__ for module in (first, second)]
    assert codes[0] is not codes[1] and codes[0] == codes[1]
    assert [len(_debug_get_cache_entry_list(code)) for code in codes] == [1, 1]
