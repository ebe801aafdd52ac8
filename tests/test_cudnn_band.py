"""sliding_window_attention's cudnn_band baseline: cuDNN's fused attention with a diagonal band, through
cudnn-frontend's Python graph API. Building a cuDNN graph needs libcudnn and a GPU, so here the library is replaced
by its contract (tests/fake_cudnn.py). The keywords the adapter passes are checked against the installed
cudnn-frontend's own signatures."""

from __future__ import annotations

import inspect
import sys

import pytest
import torch
from fake_cudnn import BUILD_STEPS, install, signature_keywords
from task_library import REGISTRY, eager_class, fresh_adapter


@pytest.fixture
def fake_cudnn(monkeypatch):
    return install(monkeypatch)


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
    assert graphs[0].steps == list(BUILD_STEPS)
    assert fake_cudnn["executed_on_stream"] == [0, 0, 0]  # the CPU stand-in's stream; torch's current one on a GPU


def test_float32_falls_back_to_the_eager_module_and_says_why(fake_cudnn):
    module = adapter().SlidingWindowAttention(4, 2, 16, 8)
    x = inputs(1, 20, 4, 2, 16, torch.float32)
    assert module.fallback_reason(x) == "cuDNN's fused attention takes float16 or bfloat16, not float32"
    expected = eager_class("sliding_window_attention")(4, 2, 16, 8)(**x)
    assert torch.equal(module(**x), expected) and not fake_cudnn["graphs"]


def test_every_keyword_the_adapter_passes_is_in_the_installed_cudnn_frontend_signatures(fake_cudnn, monkeypatch):
    adapter().SlidingWindowAttention(4, 2, 16, 8)(**inputs(1, 20, 4, 2, 16))
    monkeypatch.delitem(sys.modules, "cudnn")
    real = pytest.importorskip("cudnn", reason="nvidia-cudnn-frontend is not installed")
    assert fake_cudnn["pygraph_kwargs"][0] <= signature_keywords(real.pygraph.__init__)
    assert fake_cudnn["tensor_kwargs"] <= set(inspect.signature(real.pygraph.tensor).parameters)  # a Python function
    assert set(fake_cudnn["sdpa_kwargs"]) <= signature_keywords(real.pygraph.sdpa)
    assert {"HALF", "BFLOAT16", "FLOAT"} <= set(dir(real.data_type)) and hasattr(real.diagonal_alignment, "TOP_LEFT")
