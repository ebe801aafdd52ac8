"""sliding_window_attention's cudnn_band baseline: cuDNN's fused attention with a diagonal band, through
cudnn-frontend's Python graph API. Building a cuDNN graph needs libcudnn and a GPU, so here the library is replaced
by its contract: a pygraph holds tensors declared by dims and strides; its sdpa node keeps keys
i - diagonal_band_left_bound < j <= i + diagonal_band_right_bound (TOP_LEFT alignment) and maps query head h to kv
head h // (heads / kv_heads); execute reads and writes the buffers through the declared strides. The keywords the
adapter passes are checked against the installed cudnn-frontend's own signatures."""

from __future__ import annotations

import inspect
import re
import sys
import types

import pytest
import torch
from task_library import REGISTRY, eager_class, fresh_adapter



class FakeTensor:
    def __init__(self, name: str, dim: list[int], stride: list[int]) -> None:
        self.name, self.dim, self.stride = name, dim, stride

    def set_output(self, _: bool) -> FakeTensor:
        return self

    def set_dim(self, dim: list[int]) -> FakeTensor:
        self.dim = dim
        return self

    def set_stride(self, stride: list[int]) -> FakeTensor:
        self.stride = stride
        return self

    def set_data_type(self, _: object) -> FakeTensor:
        return self


class FakeGraph:
    """cudnn.pygraph's contract for one SDPA node; records what the adapter declares and calls."""

    def __init__(self, log: dict, **kwargs) -> None:
        self.log, self.steps = log, []
        log["graphs"].append(self)
        log["pygraph_kwargs"].append(set(kwargs))

    def tensor(self, **kwargs) -> FakeTensor:
        self.log["tensor_kwargs"] |= set(kwargs)
        return FakeTensor(kwargs["name"], kwargs["dim"], kwargs["stride"])

    def sdpa(self, **kwargs) -> list:
        self.log["sdpa_kwargs"] = kwargs
        self.sdpa_args = kwargs
        self.o = FakeTensor("o", [], [])
        return [self.o, None]

    def __getattr__(self, step: str):
        if step in ("validate", "build_operation_graph", "create_execution_plans", "check_support", "build_plans"):
            return lambda *args: self.steps.append(step)
        raise AttributeError(step)

    def get_workspace_size(self) -> int:
        return 64

    def execute(self, buffers: dict, workspace: torch.Tensor, handle: object) -> None:
        self.log["executed_on_stream"].append(self.log["stream"])
        args = self.sdpa_args
        q, k, v = (torch.as_strided(buffers[args[name]], args[name].dim, args[name].stride).float()
                   for name in ("q", "k", "v"))
        group = q.shape[1] // k.shape[1]
        scores = q @ k.repeat_interleave(group, 1).transpose(-1, -2) * args["attn_scale"]
        i = torch.arange(q.shape[2])[:, None]
        j = torch.arange(k.shape[2])[None, :]
        kept = (j > i - args["diagonal_band_left_bound"]) & (j <= i + args["diagonal_band_right_bound"])
        probs = torch.softmax(scores.masked_fill(~kept, float("-inf")), dim=-1)
        out = torch.as_strided(buffers[self.o], self.o.dim, self.o.stride)
        out.copy_(probs @ v.repeat_interleave(group, 1))


@pytest.fixture
def fake_cudnn(monkeypatch):
    log = {"graphs": [], "pygraph_kwargs": [], "tensor_kwargs": set(), "stream": None, "executed_on_stream": []}
    module = types.ModuleType("cudnn")
    module.data_type = types.SimpleNamespace(HALF="half", BFLOAT16="bf16", FLOAT="float")
    module.diagonal_alignment = types.SimpleNamespace(TOP_LEFT="top_left")
    module.heur_mode = types.SimpleNamespace(A="a", FALLBACK="fallback")
    module.create_handle = lambda: "handle"
    module.set_stream = lambda handle, stream: log.update(stream=stream)
    module.pygraph = lambda **kwargs: FakeGraph(log, **kwargs)
    monkeypatch.setitem(sys.modules, "cudnn", module)
    return log


def adapter():
    """The adapter imported afresh: it binds `cudnn` (and starts an empty graph cache) at import."""
    return fresh_adapter("sliding_window_attention", "cudnn_band.py")


def inputs(batch: int, seq: int, heads: int, kv_heads: int, dim: int, dtype=torch.bfloat16) -> dict:
    g = torch.Generator().manual_seed(seq)
    return {"q": (3 * torch.randn(batch, seq, heads, dim, generator=g)).to(dtype),
            "k": torch.randn(batch, seq, kv_heads, dim, generator=g).to(dtype),
            "v": torch.randn(batch, seq, kv_heads, dim, generator=g).to(dtype)}


@pytest.mark.parametrize("case", [c for c in REGISTRY.get("sliding_window_attention").cases if c.tier == "cpu"],
                         ids=lambda c: c.name)
def test_the_band_is_the_task_s_window_on_each_cpu_case_s_shapes_in_bfloat16(fake_cudnn, case):
    init, dims = case.init, case.dims
    args = (init["num_heads"], init["num_kv_heads"], init["head_dim"], init["sliding_window"])
    x = inputs(dims["batch"], dims["seq"], init["num_heads"], init["num_kv_heads"], init["head_dim"])
    saved = {name: t.clone() for name, t in x.items()}
    out = adapter().SlidingWindowAttention(*args)(**x)
    expected = eager_class("sliding_window_attention")(*args)(**{n: t.double() for n, t in saved.items()})
    assert out.dtype == torch.bfloat16 and out.shape == x["q"].shape and out.is_contiguous()
    assert torch.allclose(out.double(), expected, atol=2e-2, rtol=1.6e-2)
    assert all(torch.equal(x[n], saved[n]) for n in x), "inputs must not be modified"
    band = fake_cudnn["sdpa_kwargs"]
    assert (band["diagonal_band_left_bound"], band["diagonal_band_right_bound"]) == (init["sliding_window"], 0)
    assert band["generate_stats"] is False and band["attn_scale"] == pytest.approx(init["head_dim"] ** -0.5)


def test_one_graph_is_built_per_shape_and_every_execute_follows_binding_the_stream(fake_cudnn):
    module = adapter().SlidingWindowAttention(4, 2, 16, 8)
    for seq in (20, 20, 33):
        module(**inputs(1, seq, 4, 2, 16))
    graphs = fake_cudnn["graphs"]
    assert len(graphs) == 2  # seq 20 once, seq 33 once
    assert graphs[0].steps == ["validate", "build_operation_graph", "create_execution_plans", "check_support",
                               "build_plans"]
    assert fake_cudnn["executed_on_stream"] == [0, 0, 0]  # the CPU stand-in's stream; torch's current one on a GPU


def test_float32_falls_back_to_the_eager_module_and_says_why(fake_cudnn):
    module = adapter().SlidingWindowAttention(4, 2, 16, 8)
    x = inputs(1, 20, 4, 2, 16, torch.float32)
    assert module.fallback_reason(x) == "cuDNN's fused attention takes float16 or bfloat16, not float32"
    expected = eager_class("sliding_window_attention")(4, 2, 16, 8)(**x)
    assert torch.equal(module(**x), expected) and not fake_cudnn["graphs"]


def signature_keywords(function: object) -> set[str]:
    """The keyword names in a pybind11 function's signature line (its docstring's first line)."""
    return set(re.findall(r"(\w+): ", function.__doc__.splitlines()[0]))


def test_every_keyword_the_adapter_passes_is_in_the_installed_cudnn_frontend_signatures(fake_cudnn, monkeypatch):
    adapter().SlidingWindowAttention(4, 2, 16, 8)(**inputs(1, 20, 4, 2, 16))
    monkeypatch.delitem(sys.modules, "cudnn")
    real = pytest.importorskip("cudnn", reason="nvidia-cudnn-frontend is not installed")
    assert fake_cudnn["pygraph_kwargs"][0] <= signature_keywords(real.pygraph.__init__)
    assert fake_cudnn["tensor_kwargs"] <= set(inspect.signature(real.pygraph.tensor).parameters)  # a Python function
    assert set(fake_cudnn["sdpa_kwargs"]) <= signature_keywords(real.pygraph.sdpa)
    assert {"HALF", "BFLOAT16", "FLOAT"} <= set(dir(real.data_type)) and hasattr(real.diagonal_alignment, "TOP_LEFT")
