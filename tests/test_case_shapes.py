"""Every GPU case's shape is what its architecture's config gives (issue #4: cases from real model configs).

The architectures and the per-task derivations live in tests/shapes_*.py, one module a model family; see
tests/case_shapes.py for the rules. A new task needs a derivation, a new case's name must start with a registered
architecture key, and every value in a case's `init` must come out of the derivation.
"""

from __future__ import annotations

import pytest

import shapes_3d_robotics_science  # noqa: F401  (each module registers its family's architectures and derivations)
import shapes_dense_moe_llm  # noqa: F401
import shapes_edge_detection  # noqa: F401
import shapes_linear_attention  # noqa: F401
import shapes_multimodal_encoders  # noqa: F401
import shapes_recommendation  # noqa: F401
import shapes_vision_video_audio  # noqa: F401
import shapes_world_models  # noqa: F401
from case_shapes import DERIVATIONS, mismatches
from task_library import REGISTRY

GPU_CASES = [(task, case) for task in REGISTRY.names for case in REGISTRY.get(task).cases if case.tier == "gpu"]


def test_every_task_has_a_derivation():
    missing = sorted(set(REGISTRY.names) - set(DERIVATIONS))
    assert not missing, f"tasks without a shape derivation in tests/shapes_*.py: {missing}"
    assert not set(DERIVATIONS) - set(REGISTRY.names), "a derivation for a task that does not exist"


def test_every_architecture_is_used_by_some_case():
    families = {family for family, _ in DERIVATIONS.values()}
    used = {(family, family.architecture_of(case.name)[0]) for task, case in GPU_CASES
            for family in [DERIVATIONS[task][0]]}
    unused = [f"{family.name}/{key}" for family in families for key in family.architectures
              if (family, key) not in used]
    assert not unused, f"architectures no case names: {unused}"


@pytest.mark.parametrize(("task", "case"), GPU_CASES, ids=[f"{t}/{c.name}" for t, c in GPU_CASES])
def test_the_case_is_what_its_architecture_feeds_the_module(task, case):
    family, derive = DERIVATIONS[task]
    key, arch = family.architecture_of(case.name)
    problems = mismatches(case, derive(arch, case))
    assert not problems, f"{task}/{case.name} against {key}: " + "; ".join(problems)


def test_a_wrong_or_underived_value_is_named():
    case = REGISTRY.get("rms_norm").case("llama31_8b_decode_1")
    edited = case.model_copy(update={"init": {"hidden_size": 4095, "eps": 1e-5, "elementwise_affine": True}})
    family, derive = DERIVATIONS["rms_norm"]
    assert mismatches(edited, derive(family.architecture_of(edited.name)[1], edited)) == [
        "init['elementwise_affine'] = True is not derived from the architecture",
        "'hidden_size': the manifest says 4095, the architecture gives 4096",
    ]
