"""paged_decode_attention's cudnn_paged baseline: cuDNN's fused attention reading the paged KV cache in place, through
cudnn-frontend's Python graph API, checked against its contract (tests/fake_cudnn.py): the caches declared as
containers of pages through strides, the block table as both page tables, a padding mask from seq_lens. The keywords
the adapter passes are checked against the installed cudnn-frontend's own signatures."""

from __future__ import annotations

import inspect
import sys

import pytest
import torch
from fake_cudnn import BUILD_STEPS, install, signature_keywords
from task_library import REGISTRY, case_inputs, eager_class, fresh_adapter

TASK = "paged_decode_attention"
CPU_CASES = [c for c in REGISTRY.get(TASK).cases if c.tier == "cpu"]


@pytest.fixture
def fake_cudnn(monkeypatch):
    return install(monkeypatch)


def adapter():
    """The adapter imported afresh: it binds `cudnn` (and starts an empty graph cache) at import."""
    return fresh_adapter(TASK, "cudnn_paged.py")


def init_args(case) -> tuple[int, int, int, int]:
    return tuple(case.init[k] for k in ("num_heads", "num_kv_heads", "head_dim", "block_size"))


def bf16(x: dict[str, torch.Tensor]) -> dict[str, torch.Tensor]:
    return {n: t.bfloat16() if t.is_floating_point() else t for n, t in x.items()}


@pytest.mark.parametrize("case", CPU_CASES, ids=lambda c: c.name)
def test_each_cpu_case_matches_the_float64_oracle_in_bfloat16_and_leaves_its_inputs(fake_cudnn, case):
    x = bf16(case_inputs(TASK, case.name))
    saved = {n: t.clone() for n, t in x.items()}
    out = adapter().PagedDecodeAttention(*init_args(case))(**x)
    oracle = {n: t.double() if t.is_floating_point() else t for n, t in saved.items()}
    expected = eager_class(TASK)(*init_args(case))(**oracle)
    assert out.dtype == torch.bfloat16 and out.shape == x["query"].shape and out.is_contiguous()
    assert torch.allclose(out.double(), expected, atol=2e-2, rtol=1.6e-2)
    assert all(torch.equal(x[n], saved[n]) for n in x), "inputs must not be modified"


def test_the_table_is_both_page_tables_and_the_padding_mask_reads_seq_lens(fake_cudnn):
    case = CPU_CASES[0]
    x = bf16(case_inputs(TASK, case.name))
    adapter().PagedDecodeAttention(*init_args(case))(**x)
    sdpa = fake_cudnn["sdpa_kwargs"]
    assert sdpa["paged_attention_k_table"] is sdpa["paged_attention_v_table"]
    assert sdpa["use_padding_mask"] is True and sdpa["generate_stats"] is False
    capacity = x["block_tables"].shape[1] * case.init["block_size"]
    assert sdpa["paged_attention_max_seq_len_kv"] == capacity
    assert sdpa["attn_scale"] == pytest.approx(case.init["head_dim"] ** -0.5)


def test_a_block_named_twice_and_a_sequence_of_one_token_are_read_as_the_eager_module_reads_them(fake_cudnn):
    g = torch.Generator().manual_seed(7)
    heads, kv_heads, dim, block = 4, 2, 8, 4
    x = {"query": torch.randn(3, heads, dim, generator=g).bfloat16(),
         "key_cache": torch.randn(6, block, kv_heads, dim, generator=g).bfloat16(),
         "value_cache": torch.randn(6, block, kv_heads, dim, generator=g).bfloat16(),
         "block_tables": torch.tensor([[2, 2, 5], [0, 1, 3], [4, 0, 0]], dtype=torch.int32),
         "seq_lens": torch.tensor([12, 7, 1], dtype=torch.int32)}
    out = adapter().PagedDecodeAttention(heads, kv_heads, dim, block)(**x)
    expected = eager_class(TASK)(heads, kv_heads, dim, block)(
        **{n: t.double() if t.is_floating_point() else t for n, t in x.items()})
    assert torch.allclose(out.double(), expected, atol=2e-2, rtol=1.6e-2)
    one_token = x["value_cache"][4, 0].double().repeat_interleave(2, 0)  # its only key: its kv head's v row
    assert torch.allclose(out[2].double(), one_token, atol=1e-2)


def test_one_graph_is_built_per_shape_and_every_execute_follows_binding_the_stream(fake_cudnn):
    case = CPU_CASES[0]
    module = adapter().PagedDecodeAttention(*init_args(case))
    for r in (0, 1):
        module(**bf16(case_inputs(TASK, case.name, r)))
    other = CPU_CASES[1]
    adapter_module = module.__class__  # same module: one more shape adds one graph
    adapter_module(*init_args(other))(**bf16(case_inputs(TASK, other.name)))
    graphs = fake_cudnn["graphs"]
    assert len(graphs) == 2 and graphs[0].steps == list(BUILD_STEPS)
    assert fake_cudnn["executed_on_stream"] == [0, 0, 0]  # the CPU stand-in's stream; torch's current one on a GPU


def test_float32_falls_back_to_the_eager_module_and_says_why(fake_cudnn):
    case = CPU_CASES[0]
    module = adapter().PagedDecodeAttention(*init_args(case))
    x = {n: t.float() if t.is_floating_point() else t for n, t in case_inputs(TASK, case.name).items()}
    assert module.fallback_reason(x) == "cuDNN's fused attention takes float16 or bfloat16, not float32"
    assert torch.equal(module(**x), eager_class(TASK)(*init_args(case))(**x)) and not fake_cudnn["graphs"]


def test_every_keyword_the_adapter_passes_is_in_the_installed_cudnn_frontend_signatures(fake_cudnn, monkeypatch):
    case = CPU_CASES[0]
    adapter().PagedDecodeAttention(*init_args(case))(**bf16(case_inputs(TASK, case.name)))
    monkeypatch.delitem(sys.modules, "cudnn")
    real = pytest.importorskip("cudnn", reason="nvidia-cudnn-frontend is not installed")
    assert fake_cudnn["pygraph_kwargs"][0] <= signature_keywords(real.pygraph.__init__)
    assert fake_cudnn["tensor_kwargs"] <= set(inspect.signature(real.pygraph.tensor).parameters)  # a Python function
    assert set(fake_cudnn["sdpa_kwargs"]) <= signature_keywords(real.pygraph.sdpa)
    assert {"HALF", "BFLOAT16", "FLOAT", "INT32"} <= set(dir(real.data_type))
