"""topk_routing's SGLang baseline (tasks/L1/topk_routing/sglang.py) calls SGLang's fused router as SGLang's fused_topk
does on CUDA for softmax scoring, and widens its int32 ids to the task's int64. SGLang is not installed for CI, so
here the router is replaced by a PyTorch version of its contract as SGLang 0.5.23's moe_fused_gate.py defines it
(fp32 softmax over the row, the top_k largest sorted largest first, divided by their sum when renormalize; fp32
weights, int32 ids); where SGLang is installed its real Triton kernel runs too, under the Triton interpreter."""

from __future__ import annotations

import importlib.util
import sys
import types

import pytest
import torch
from task_library import REGISTRY, judged_on_cpu_cases

from fastkernels.implementations import import_file


def adapter_class() -> type:
    """The adapter imported afresh (it binds the router at import), against whatever `sglang` is there now."""
    adapter_class.count = getattr(adapter_class, "count", 0) + 1
    module = import_file(REGISTRY.directory("topk_routing") / "sglang.py",
                         namespace=f"test.sglang_router_{adapter_class.count}")
    return module.TopKRouter


@pytest.fixture
def fake_router(monkeypatch):
    calls: list[dict] = []

    def moe_fused_gate(scores, bias, topk, scoring_func="sigmoid", num_fused_shared_experts=0, renormalize=True,
                       routed_scaling_factor=1.0, apply_routed_scaling_factor_on_output=False, **rest):
        calls.append(dict(bias=bias, topk=topk, scoring_func=scoring_func, renormalize=renormalize,
                          shared=num_fused_shared_experts, scale_output=apply_routed_scaling_factor_on_output,
                          rest=rest))
        probs = torch.softmax(scores.float(), dim=-1)
        weights, ids = torch.topk(probs, topk, dim=-1)
        if renormalize:
            weights = weights / weights.sum(-1, keepdim=True)
        return weights, ids.to(torch.int32)

    for name in ("sglang", "sglang.kernels", "sglang.kernels.ops", "sglang.kernels.ops.moe"):
        monkeypatch.setitem(sys.modules, name, types.ModuleType(name))
    module = types.ModuleType("sglang.kernels.ops.moe.moe_fused_gate")
    module.moe_fused_gate = moe_fused_gate
    monkeypatch.setitem(sys.modules, module.__name__, module)
    return calls


def test_the_router_gets_what_fused_topk_hands_it_and_the_task_passes(fake_router):
    judged_on_cpu_cases("topk_routing", adapter_class())
    seen = {(call["topk"], call["renormalize"]) for call in fake_router}
    assert seen == {(3, True), (5, False)}  # the two CPU cases
    assert all(call["bias"] is None and call["scoring_func"] == "softmax" and call["shared"] == 0
               and not call["scale_output"] and not call["rest"] for call in fake_router)


def test_its_int32_ids_come_back_as_the_task_s_int64(fake_router):
    weights, ids = adapter_class()(8, 2, True)(torch.randn(4, 8))
    assert ids.dtype == torch.int64 and weights.dtype == torch.float32 and ids.shape == weights.shape == (4, 2)


REAL_SGLANG = importlib.util.find_spec("sglang") is not None


@pytest.mark.skipif(not REAL_SGLANG, reason="needs SGLang and its import chain (scripts/pack-sglang.sh)")
def test_sglang_s_real_router_passes_every_cpu_case_under_the_triton_interpreter():
    judged_on_cpu_cases("topk_routing", adapter_class())
