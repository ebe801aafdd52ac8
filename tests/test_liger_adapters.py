"""Liger-Kernel adapters map the task's layout onto Liger's exactly. Liger runs only on CUDA, so here its rope op is
replaced by a PyTorch version of its documented semantics (HF rotate_half on [batch, heads, seq, head_dim] with
cos/sin [1, seq, head_dim]); the real kernel is exercised on the device by the noop/reference suites."""

from __future__ import annotations

import sys
import types
from pathlib import Path

import torch

from fastkernels.implementations import import_file

TASK = Path(__file__).resolve().parent.parent / "tasks" / "L1" / "rotary_embedding"


def fake_liger_rope(monkeypatch) -> None:
    def rotate_half(x):
        x1, x2 = x.chunk(2, dim=-1)
        return torch.cat((-x2, x1), dim=-1)

    class LigerRopeFunction:
        @staticmethod
        def apply(q, k, cos, sin):
            cos, sin = cos.unsqueeze(1), sin.unsqueeze(1)  # [1, 1, seq, head_dim]
            rotate = lambda t: (t.float() * cos + rotate_half(t.float()) * sin).to(t.dtype)  # noqa: E731
            return rotate(q), rotate(k)

    for name in ("liger_kernel", "liger_kernel.ops"):
        monkeypatch.setitem(sys.modules, name, types.ModuleType(name))
    rope = types.ModuleType("liger_kernel.ops.rope")
    rope.LigerRopeFunction = LigerRopeFunction
    monkeypatch.setitem(sys.modules, "liger_kernel.ops.rope", rope)


def test_liger_rope_adapter_matches_the_pytorch_production_path(monkeypatch):
    fake_liger_rope(monkeypatch)
    liger = import_file(TASK / "liger.py", namespace="test.liger_adapter")
    native = import_file(TASK / "torch_native.py", namespace="tasks.rotary_embedding")
    args = dict(head_size=16, rotary_dim=16, max_position_embeddings=64, base=10000.0, is_neox_style=True)
    ours, theirs = liger.RotaryEmbedding(**args), native.RotaryEmbedding(**args)
    positions = torch.randint(0, 64, (5,))
    query, key = torch.randn(5, 3 * 16), torch.randn(5, 1 * 16)
    for got, want in zip(ours(positions, query.clone(), key.clone()), theirs(positions, query.clone(), key.clone())):
        torch.testing.assert_close(got, want)
    gptj = dict(args, is_neox_style=False)  # not Liger's layout: the adapter falls back to the PyTorch path
    for got, want in zip(liger.RotaryEmbedding(**gptj)(positions, query, key), native.RotaryEmbedding(**gptj)(positions, query, key)):
        torch.testing.assert_close(got, want)


def test_liger_geglu_adapter_feeds_gate_and_up_and_falls_back_for_exact_gelu(monkeypatch):
    calls = []

    class LigerGELUMulFunction:  # Liger's documented semantics: tanh GELU of gate in fp32, times up
        @staticmethod
        def apply(gate, up):
            calls.append((gate.shape, up.shape))
            return (torch.nn.functional.gelu(gate.float(), approximate="tanh").to(gate.dtype) * up)

    for name in ("liger_kernel", "liger_kernel.ops"):
        monkeypatch.setitem(sys.modules, name, types.ModuleType(name))
    geglu = types.ModuleType("liger_kernel.ops.geglu")
    geglu.LigerGELUMulFunction = LigerGELUMulFunction
    monkeypatch.setitem(sys.modules, "liger_kernel.ops.geglu", geglu)
    task = TASK.parent / "gelu_and_mul"
    liger = import_file(task / "liger.py", namespace="test.liger_geglu")
    native = import_file(task / "torch_native.py", namespace="tasks.gelu_and_mul")
    x = torch.randn(4, 2 * 6)
    torch.testing.assert_close(liger.GeluAndMul("tanh")(x), native.GeluAndMul("tanh")(x))
    assert calls == [(torch.Size([4, 6]), torch.Size([4, 6]))]
    torch.testing.assert_close(liger.GeluAndMul("none")(x), native.GeluAndMul("none")(x))  # vLLM's forward_native
    assert len(calls) == 1
