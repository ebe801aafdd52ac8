"""Fingerprints of live objects: what a candidate that reaches the baseline's instances or the harness's objects
through the interpreter could change without patching a class is named afterwards; ordinary use changes nothing."""

from __future__ import annotations

import torch

from fastkernels.live_objects import differences, fingerprint


class Scale(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.weight = torch.nn.Parameter(torch.ones(4))
        self.register_buffer("shift", torch.zeros(4))

    def forward(self, x):
        self.calls = getattr(self, "calls", 0) + 1  # state a module may keep: not callable, not compared
        return x * self.weight + self.shift


def test_running_a_module_changes_nothing():
    module = Scale()
    before = fingerprint("baseline", module)
    module(torch.randn(2, 4))
    assert differences(before, fingerprint("baseline", module)) == []


def test_a_forward_written_into_the_instance_is_named():
    module = Scale()
    before = fingerprint("baseline", module)
    module.__dict__["forward"] = lambda x: x
    assert differences(before, fingerprint("baseline", module)) == ["baseline.forward appeared"]


def test_a_hook_on_the_instance_or_a_submodule_is_named():
    outer = torch.nn.Sequential(Scale())
    before = fingerprint("baseline", outer)
    outer[0].register_forward_pre_hook(lambda module, args: None)
    changed = differences(before, fingerprint("baseline", outer))
    assert len(changed) == 1 and changed[0].startswith("baseline.0._forward_pre_hooks () -> (")


def test_weights_moved_to_new_storage_are_named():
    module = Scale()
    before = fingerprint("baseline", module)
    module.weight.data = module.weight.data.clone()
    changed = differences(before, fingerprint("baseline", module))
    assert len(changed) == 1 and changed[0].startswith("baseline.weight: storage (")


def test_a_replaced_closure_cell_or_method_of_a_harness_object_is_named():
    target = [1]

    def flush() -> None:
        target.append(1)

    before = fingerprint("the cache flush", flush)
    flush.__closure__[0].cell_contents = []
    assert differences(before, fingerprint("the cache flush", flush)) == ["the cache flush closure cell 0 replaced"]

    class Clock:
        def __init__(self) -> None:
            self.read = len

        def time(self) -> int:
            return self.read([])

    clock = Clock()
    before = fingerprint("the clock", clock)
    clock.last = 3.0  # plain state: not compared
    assert differences(before, fingerprint("the clock", clock)) == []
    clock.read = lambda _: 0
    clock.time = lambda: 0
    assert differences(before, fingerprint("the clock", clock)) == ["the clock.read replaced", "the clock.time appeared"]


def test_a_fixed_setting_of_a_harness_object_is_compared_by_value():
    class Clock:
        FIXED_SETTINGS = ("_first_cycles",)

        def __init__(self) -> None:
            self._first_cycles = 100_000
            self._pads = {}

    clock = Clock()
    before = fingerprint("the clock", clock)
    clock._pads["task/case"] = 400_000  # its own state, growing as it should: not compared
    assert differences(before, fingerprint("the clock", clock)) == []
    clock._first_cycles = 0  # no launch pad: host latency in every interval
    assert differences(before, fingerprint("the clock", clock)) == ["the clock._first_cycles (100000,) -> (0,)"]


def test_the_compiled_function_a_compiled_baselines_class_runs_cannot_be_swapped_unnamed():
    """Every instance of a compiled class runs the function its class's forward closes over (fastkernels.compiled):
    a candidate reaching the class through sys.modules could put a slow one in that cell without patching a name."""
    from fastkernels.compiled import compiled

    fused = compiled(Scale)
    module = fused()
    before = fingerprint("baseline", module)
    cell = next(c for c in fused.__dict__["forward"].__closure__ if c.cell_contents is fused._inductor_forward)
    cell.cell_contents = lambda self, x: x * 0
    assert differences(before, fingerprint("baseline", module)) == [
        "baseline: class forward closure cell 0 replaced"]
