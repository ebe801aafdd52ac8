"""harness.instances: eager timing rotates over several instances a side built from the same weights, since where a
module's weights land can change its speed (fastkernels/instances.py)."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import torch

from fastkernels import evaluate
from fastkernels.instances import build_order, instance_count, rotating_call
from fastkernels.records import Status
from scoring import score

CANDIDATES = Path(__file__).parent / "candidates"


def test_input_set_k_runs_on_instance_k_mod_n_and_a_fresh_set_on_the_first():
    sets = [{"x": torch.zeros(1)} for _ in range(5)]
    ran: list[int] = []
    modules = [lambda x, n=n: ran.append(n) for n in range(3)]
    call = rotating_call(modules, sets)
    for inputs in [*sets, {"x": torch.ones(1)}]:
        call(inputs)
    assert ran == [0, 1, 2, 0, 1, 0]


def test_there_are_no_more_instances_than_input_sets():
    state = {"weight": torch.zeros(8)}
    assert instance_count(4, state, sets=3, sides=2, device="cpu") == 3
    assert instance_count(4, state, sets=8, sides=2, device="cpu") == 4
    assert instance_count(1, state, sets=8, sides=2, device="cpu") == 1


def test_the_side_built_first_alternates_from_one_instance_to_the_next():
    assert build_order(["baseline", "candidate"], 1) == ["baseline", "candidate"]
    assert build_order(["baseline", "candidate"], 2) == ["candidate", "baseline"]
    assert build_order(["baseline", "candidate"], 3) == ["baseline", "candidate"]
    assert build_order(["baseline"], 2) == ["baseline"]


def test_the_extra_instances_of_a_case_are_built_in_alternating_order(monkeypatch):
    # the first pair is built baseline first before this is reached; over four a side each side goes first twice
    built: list[str] = []
    monkeypatch.setattr(evaluate, "_instantiate", lambda impl, ctx, state, status, who: built.append(who) or who)
    monkeypatch.setattr(evaluate, "run_rounds", lambda *args: None)
    monkeypatch.setattr(evaluate, "_verify_integrity", lambda *args: None)
    ctx = SimpleNamespace(harness=SimpleNamespace(instances=4, repeat_runs=1), device="cpu", integrity=None,
                          plan=SimpleNamespace(manifest=SimpleNamespace(mutates=())))
    impl = SimpleNamespace(name="torch_native")
    sides = evaluate._more_instances(ctx, {"baseline": (impl, "baseline #1"), "candidate": (impl, "candidate #1")},
                                     {"weight": torch.zeros(4)}, [], lambda *args: None, sets=8)
    assert built == ["candidate #2", "torch_native #2", "torch_native #3", "candidate #3", "candidate #4",
                     "torch_native #4"]
    assert sides == {"baseline": ["baseline #1", "torch_native #2", "torch_native #3", "torch_native #4"],
                     "candidate": ["candidate #1", "candidate #2", "candidate #3", "candidate #4"]}


def test_a_noop_run_over_three_instances_a_side_passes_and_says_so(tmp_path):
    rows = score(None, tmp_path, "rms_norm", "agent=noop", "harness.instances=3")
    assert rows and all(row.status is Status.PASSED and row.instances == 3 for row in rows), [
        (row.status, row.reason, row.instances) for row in rows]


def test_a_candidate_wrong_only_on_its_later_instances_fails_when_several_are_timed(tmp_path):
    (tmp_path / "one").mkdir()
    (tmp_path / "several").mkdir()
    one = score(CANDIDATES / "second_instance_wrong", tmp_path / "one", "rms_norm", "harness.instances=1")
    assert all(row.status is Status.PASSED and row.instances == 1 for row in one)
    several = score(CANDIDATES / "second_instance_wrong", tmp_path / "several", "rms_norm", "harness.instances=2")
    assert several and all(row.status is Status.INCORRECT and "#2" in row.reason for row in several), [
        (row.status, row.reason) for row in several]
