"""A production implementation that fails its correctness check, whose library is not installed or whose import
raises, is not a baseline: the next one serves, the row names the missing one under `baseline_alternatives`, and its
`review` says the baseline is weaker than production's (on the H200, FLA's kernels were rejected on three tasks and fp32
fallbacks 20-60x slower served). An adapter whose library kernel does not serve a case says so (`fallback_reason`) and
is left out of that case's choice, so no row credits the library with the fallback path's time."""

from __future__ import annotations

import shutil
from pathlib import Path

from fastkernels.records import Status
from fastkernels.registry import Registry
from fastkernels.runner import run_task
from scoring import cpu_job

TASKS = Path(__file__).resolve().parents[1] / "tasks"

BROKEN = '''
from pathlib import Path

from fastkernels.implementations import import_file

_native = import_file(Path(__file__).with_name("torch_native.py"), namespace="tasks.silu_and_mul")


class SiluAndMul(_native.SiluAndMul):
    def forward(self, x):
        return super().forward(x) * 1.1  # 10% off
'''

PARTIAL = '''
from pathlib import Path

from fastkernels.implementations import import_file

_native = import_file(Path(__file__).with_name("torch_native.py"), namespace="tasks.silu_and_mul")


class SiluAndMul(_native.SiluAndMul):
    """A stand-in library adapter whose kernel serves batches of several tokens and falls back for one token."""

    def fallback_reason(self, inputs):
        return "a single token" if inputs["x"].shape[0] == 1 else ""

    def forward(self, x):
        return super().forward(x)


class BrokenReason(SiluAndMul):
    def fallback_reason(self, inputs):
        return inputs["no_such_input"]
'''


def _score_with_first_production(tmp_path: Path, entry: str) -> list:
    """silu_and_mul's CPU cases with `entry` listed first among its production implementations."""
    task_dir = tmp_path / "tasks" / "L1" / "silu_and_mul"
    shutil.copytree(TASKS / "L1" / "silu_and_mul", task_dir)
    (task_dir / "broken.py").write_text(BROKEN)
    (task_dir / "partial.py").write_text(PARTIAL)
    (task_dir / "raising.py").write_text("raise RuntimeError('an AOT op is not registered\\nsecond line')\n")
    manifest_path = task_dir / "task.yaml"
    manifest_path.write_text(manifest_path.read_text().replace("  production:\n", f"  production:\n    - {entry}\n", 1))
    job, _ = cpu_job(None, tmp_path, "silu_and_mul")
    job = job.model_copy(update={"tasks_root": str(tmp_path / "tasks")})
    return run_task(job, Registry(tmp_path / "tasks").get("silu_and_mul"), tmp_path, lambda row: None)


def test_a_rejected_production_implementation_is_named_and_flagged_for_review(tmp_path):
    rows = _score_with_first_production(
        tmp_path, '{name: broken, source: "broken.py:SiluAndMul", provenance: "a test double, 10% off"}')
    assert rows and all(row.status is Status.PASSED for row in rows), [row.reason for row in rows]
    for row in rows:
        assert row.baseline_impl == "torch_native"
        assert row.baseline_alternatives["broken"].startswith("rejected: broken, round 0")
        assert row.review == ("production implementation(s) broken failed the correctness check, so torch_native is"
                              " the baseline")


def test_a_production_implementation_whose_library_is_missing_is_flagged_for_review(tmp_path):
    rows = _score_with_first_production(tmp_path, '{name: fast_lib, source: "broken.py:SiluAndMul", requires:'
                                                  ' [no_such_kernel_library], provenance: "a library not installed"}')
    assert rows and all(row.status is Status.PASSED for row in rows)
    for row in rows:
        assert row.baseline_alternatives["fast_lib"] == "unavailable: no_such_kernel_library is not installed"
        assert row.review == ("production implementation(s) fast_lib (no_such_kernel_library is not installed)"
                              " cannot run here, so torch_native is the baseline")


def test_a_production_implementation_that_raises_at_import_is_named_and_the_next_serves(tmp_path):
    # 2026-12-07 (H100): SGLang's fused MoE imported AOT kernels that were not installed, and the task's every case was
    # BASELINE_ERROR, though two other production implementations could serve
    rows = _score_with_first_production(tmp_path, '{name: raising_lib, source: "raising.py:SiluAndMul", provenance:'
                                                  ' "a library whose import chain raises"}')
    assert rows and all(row.status is Status.PASSED for row in rows), [row.reason for row in rows]
    for row in rows:
        assert row.baseline_impl == "torch_native"
        assert row.baseline_alternatives["raising_lib"] == (
            "unavailable: raised at import: RuntimeError: an AOT op is not registered")
        assert row.review == ("production implementation(s) raising_lib (raised at import: RuntimeError: an AOT op is"
                              " not registered) cannot run here, so torch_native is the baseline")
    log = (tmp_path / "silu_and_mul.log").read_text()  # the worker's log keeps where it raised
    assert "raising_lib (raising.py:SiluAndMul) raised at import" in log and 'raising.py", line 1' in log


def test_a_composite_built_without_a_component_s_raising_implementation_says_so(tmp_path):
    # before, the raising import surfaced as the composite's BASELINE_ERROR; passed over silently it would hide that
    # the composite ran on a weaker lower-level kernel
    for level, task in (("L1", "linear"), ("L1", "silu_and_mul"), ("L2", "llama_mlp")):
        shutil.copytree(TASKS / level / task, tmp_path / "tasks" / level / task)
    component = tmp_path / "tasks" / "L1" / "silu_and_mul"
    (component / "raising.py").write_text("raise RuntimeError('an AOT op is not registered')\n")
    manifest_path = component / "task.yaml"
    entry = "    - {name: raising_lib, source: 'raising.py:SiluAndMul', provenance: x}\n"
    manifest_path.write_text(manifest_path.read_text().replace("  production:\n", "  production:\n" + entry, 1))
    job, _ = cpu_job(None, tmp_path, "llama_mlp")
    job = job.model_copy(update={"tasks_root": str(tmp_path / "tasks")})
    rows = run_task(job, Registry(tmp_path / "tasks").get("llama_mlp"), tmp_path, lambda row: None)
    assert rows and all(row.status is Status.PASSED for row in rows), [row.reason for row in rows]
    for row in rows:
        assert ("lower-level production implementation(s) silu_and_mul.raising_lib (raised at import: RuntimeError: an"
                " AOT op is not registered) could not be composed") in row.review, row.review
        # what the serving baseline was built from: each component's first implementation that runs on the CPU
        assert row.baseline_components == {"linear": "torch_cublas", "silu_and_mul": "torch_native"}, row


def test_rows_of_a_healthy_task_carry_no_review_note_and_an_l1_task_no_components(tmp_path):
    job, manifest = cpu_job(None, tmp_path, "silu_and_mul")
    rows = run_task(job, manifest, tmp_path, lambda row: None)
    assert rows and all(row.status is Status.PASSED and row.review == "" for row in rows)
    assert all(row.baseline_components == {} for row in rows)


def test_an_implementation_that_would_fall_back_on_a_case_is_left_out_of_that_cases_choice(tmp_path):
    rows = _score_with_first_production(
        tmp_path, '{name: partial_lib, source: "partial.py:SiluAndMul", provenance: "a library for several tokens"}')
    assert rows and all(row.status is Status.PASSED for row in rows), [row.reason for row in rows]
    by_case = {row.case: row for row in rows}
    single = by_case["cpu_decode_1"]
    assert single.baseline_alternatives["partial_lib"] == (
        "not used: a single token (its forward would run a fallback path here)")
    assert single.baseline_impl != "partial_lib" and single.review == ""  # production itself falls back here
    several = by_case["cpu_odd"]
    assert isinstance(several.baseline_alternatives.get("partial_lib", 0.0), float) or \
        several.baseline_impl == "partial_lib"  # timed: served, or a contender with its median


def test_an_adapter_whose_fallback_reason_raises_is_rejected_by_name_and_the_next_serves(tmp_path):
    rows = _score_with_first_production(
        tmp_path, '{name: partial_lib, source: "partial.py:BrokenReason", provenance: "a broken adapter"}')
    assert rows and all(row.status is Status.PASSED and row.baseline_impl == "torch_native" for row in rows)
    assert all(row.baseline_alternatives["partial_lib"] == "rejected: its fallback_reason raised: KeyError: "
               "'no_such_input' (at partial.py:21)" for row in rows), [row.baseline_alternatives for row in rows]
