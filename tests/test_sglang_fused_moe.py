"""moe_experts' SGLang baseline (tasks/L1/moe_experts/sglang.py) hands SGLang's outplace_fused_experts the task's
weights in SGLang's w13 / w2 layouts, the fp32 top-k weights and int32 ids, without expert parallelism. SGLang is not
installed for CI, so here its module is a PyTorch version of the contract (each slot's expert in fp32, gate_up and
the activation rounded to the input dtype, the routing weight on the down GEMM's fp32 result, slots summed), made by
an import hook that, like SGLang's module on CUDA, imports `moe_sum_reduce` from sgl_kernel while it loads."""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import sys
import types

import pytest
import torch
import torch.nn.functional as F
from task_library import REGISTRY, judged_on_cpu_cases

from fastkernels.implementations import import_file

FUSED_MOE = "sglang.srt.layers.moe.moe_runner.triton_utils.fused_moe"


def outplace_fused_experts(hidden_states, w1, w2, topk_weights, topk_ids, b1=None, b2=None, activation="silu",
                           is_gated=True, **options):
    outplace_fused_experts.calls.append(dict(ids=topk_ids.dtype, weights=topk_weights.dtype, b1=b1, b2=b2,
                                             activation=activation, is_gated=is_gated, options=options))
    dtype = hidden_states.dtype
    tokens, top_k = topk_ids.shape
    slots = torch.empty(tokens, top_k, w2.shape[1], dtype=dtype)
    for t in range(tokens):
        for s in range(top_k):
            e = int(topk_ids[t, s])
            gate_up = (hidden_states[t].float() @ w1[e].float().T).to(dtype).float()
            gate, up = gate_up.chunk(2)
            act = (F.silu(gate) * up).to(dtype).float()
            slots[t, s] = ((act @ w2[e].float().T) * topk_weights[t, s]).to(dtype)
    out = torch.empty_like(hidden_states)
    if top_k == 2:
        torch.add(slots[:, 0], slots[:, 1], out=out)
    else:  # what the module bound from sgl_kernel while it loaded
        sys.modules[FUSED_MOE].moe_sum_reduce(slots, out, 1.0)
    return out


class FakeFusedMoE(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Makes FUSED_MOE the way SGLang's file loads on CUDA: its import of sgl_kernel.moe_sum_reduce runs first."""

    def find_spec(self, name, path=None, target=None):
        return importlib.machinery.ModuleSpec(name, self) if name == FUSED_MOE else None

    def create_module(self, spec):
        return None

    def exec_module(self, module):
        from sgl_kernel import moe_sum_reduce  # noqa: F401 - raises as SGLang's module does without sgl_kernel
        module.moe_sum_reduce = moe_sum_reduce
        module.outplace_fused_experts = outplace_fused_experts


def moe_sum_reduce_triton(input, output, routed_scaling_factor):
    moe_sum_reduce_triton.calls += 1
    output.copy_((input.float().sum(1) * routed_scaling_factor).to(output.dtype))


@pytest.fixture
def fake_sglang(monkeypatch):
    outplace_fused_experts.calls = []
    moe_sum_reduce_triton.calls = 0
    parents = [FUSED_MOE.rsplit(".", depth)[0] for depth in range(FUSED_MOE.count("."), 0, -1)]
    for name in (*parents, "sglang.kernels", "sglang.kernels.ops", "sglang.kernels.ops.moe", "tvm_ffi"):
        package = types.ModuleType(name)
        package.__path__ = []
        monkeypatch.setitem(sys.modules, name, package)
    kernels = types.ModuleType("sglang.kernels.ops.moe.fused_moe_triton_kernels")
    kernels.moe_sum_reduce_triton = moe_sum_reduce_triton
    monkeypatch.setitem(sys.modules, kernels.__name__, kernels)
    published: list[tuple[str, str]] = []
    context = types.ModuleType("sglang.srt.runtime_context")

    def get_exec():
        if not published:
            raise ValueError("config namespace 'exec' not published")

    context.get_exec = get_exec
    context.publish = lambda server_args, role: published.append((server_args.model_path, role))
    server_args = types.ModuleType("sglang.srt.server_args")
    server_args.ServerArgs = lambda model_path: types.SimpleNamespace(model_path=model_path)
    monkeypatch.setitem(sys.modules, context.__name__, context)
    monkeypatch.setitem(sys.modules, server_args.__name__, server_args)
    outplace_fused_experts.published = published
    monkeypatch.delitem(sys.modules, FUSED_MOE, raising=False)
    monkeypatch.delitem(sys.modules, "sgl_kernel", raising=False)
    finder = FakeFusedMoE()
    monkeypatch.setattr(sys, "meta_path", [finder, *sys.meta_path])
    return outplace_fused_experts.calls


def adapter_module() -> types.ModuleType:
    adapter_module.count = getattr(adapter_module, "count", 0) + 1
    return import_file(REGISTRY.directory("moe_experts") / "sglang.py",
                       namespace=f"test.sglang_fused_moe_{adapter_module.count}")


def test_the_task_passes_through_sglang_s_fused_experts_as_its_layer_calls_it(fake_sglang):
    judged_on_cpu_cases("moe_experts", adapter_module().FusedMoEExperts)
    assert fake_sglang and all(
        call["ids"] == torch.int32 and call["weights"] == torch.float32 and call["b1"] is None
        and call["b2"] is None and call["activation"] == "silu" and call["is_gated"]
        and call["options"] == {"filter_expert": False} for call in fake_sglang)
    assert moe_sum_reduce_triton.calls > 0  # the CPU case with top_k 4 sums its slots through the stand-in


def test_without_sgl_kernel_its_stand_in_binds_sglang_s_triton_sum_and_is_gone_after_the_import(fake_sglang):
    module = adapter_module()
    assert sys.modules[FUSED_MOE].moe_sum_reduce is moe_sum_reduce_triton
    assert "sgl_kernel" not in sys.modules and module._fused_moe is sys.modules[FUSED_MOE]


def test_a_real_sgl_kernel_is_used_as_it_is(fake_sglang, monkeypatch):
    real = types.ModuleType("sgl_kernel")
    real.moe_sum_reduce = lambda input, output, scale: None
    monkeypatch.setitem(sys.modules, "sgl_kernel", real)
    adapter_module()
    assert sys.modules[FUSED_MOE].moe_sum_reduce is real.moe_sum_reduce and sys.modules["sgl_kernel"] is real


def test_sglang_s_default_settings_are_published_once_where_no_server_published_them(fake_sglang):
    adapter_module()
    adapter_module()
    assert outplace_fused_experts.published == [("dummy", "scheduler")]
